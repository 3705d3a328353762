/*
 * compact_move.c --- the two kinds of move compaction makes: clearing a
 * file's blocks out of the chunk at hand, and filling a file's part of
 * the chunk in; each with the indirect blocks the move changes, and a new
 * extent tree where one is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"
#include "lower_bound.h"

/* An indirect block's new place, from staging: stage_mapping's for F. */
struct close_alloc {
	struct compact	*c;
	uint32_t	f;
};

static int close_stage(void *priv, blk64_t pos, blk64_t *pblk)
{
	struct close_alloc *a = priv;

	return stage_mapping(a->c, a->f, pos, pblk);
}

/*
 * CH for F with the indirect blocks it changes moved too, their places
 * from ALLOC (filemap/fmap_close.c); the runs' offsets kept from move to
 * move (runs_index.c).  Extent files: CH as it is.  CH must fit F's
 * stream (sorted, apart, within it): PLAN_ERR_BUG when not.
 */
static errcode_t close_changes(struct compact *c, uint32_t f,
			       const struct runs_change *ch, size_t nch,
			       fmap_close_alloc_fn alloc, void *priv,
			       struct runs_change **out, size_t *nout)
{
	struct planner *p = c->p;
	const struct layout_piece *cur = NULL;
	struct layout_piece sole;
	const blk64_t *co = NULL;
	struct fmap *m;
	uint32_t ncur = 0;
	int fits;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	ret = planner_fmap(p, f, &m);
	if (!ret && !m->extents) {
		cur = planner_runs(p, f, &ncur, &sole);
		ret = planner_run_offsets(p, f, cur, ncur, &co);
	}
	if (ret)
		return ret;
	ret = fmap_close_changes(&p->close, m, cur, co, ncur, ch, nch, alloc,
				 priv, out, nout, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;
	return ret;
}

/* Stream positions of F's indirect blocks in [A, B) (fmap_close_positions). */
static errcode_t close_positions(struct compact *c, uint32_t f, blk64_t a,
				 blk64_t b, int incomplete, blk64_t **out,
				 size_t *nout)
{
	struct fmap *m;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	ret = planner_fmap(c->p, f, &m);
	return ret ? ret : fmap_close_positions(m, a, b, incomplete, out, nout);
}

/*
 * Extent tree blocks FILE needs with CHANGES applied, which must fit its
 * stream: PLAN_ERR_BUG when not.
 */
static errcode_t tree_blocks_after(struct compact *c, uint32_t f,
				   const struct runs_change *ch, size_t nch,
				   uint32_t *need)
{
	struct planner *p = c->p;
	const struct layout_piece *cur;
	struct layout_piece sole;
	struct fmap_target t;
	struct fmap *m;
	size_t ext;
	uint32_t ncur;
	int fits;
	errcode_t ret;

	ret = planner_fmap(p, f, &m);
	if (ret)
		return ret;
	*need = 0;
	if (!m->extents)
		return 0;	/* indirect blocks are in the stream */
	cur = planner_runs(p, f, &ncur, &sole);
	ret = runs_apply_into(cur, ncur, ch, nch, &p->after_runs, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;
	if (ret)
		return ret;
	t.runs = p->after_runs.v;
	t.nruns = p->after_runs.n;
	ret = fmap_build_extents(m, &t, NULL, &ext, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;	/* the runs of its whole stream */
	if (!ret)
		*need = fmap_build_tree_blocks(p->fs, ext);
	return ret;
}

/*
 * Commit CH for F, with the indirect blocks it changes moved too and a
 * tree in staging space (or at TREE_AT when nonzero).  *ok 0: no room.
 */
static errcode_t commit_with_tree(struct compact *c, uint32_t f,
				  enum plan_move_kind kind, struct runs_change *ch0,
				  size_t nch0, blk64_t tree_at, int *ok)
{
	struct piece_vec meta = { 0 };
	struct runs_change *ch = NULL;
	size_t nch = 0;
	/*
	 * Where the staging list was: a move that does not go through gives
	 * back what it walked, as the list is only walked on.  A direct move
	 * holding nearly all the free space as its final places can walk the
	 * list to its end looking for blocks for its indirect blocks and
	 * fail; kept walked, the list would leave the chunk nothing to stage
	 * into though its blocks are free, and the packing would be stuck
	 * (tests/cli/defrag-nearfull.sh's nf-ext3-1k-95-3).
	 */
	size_t next = c->cand_next;
	blk64_t off = c->cand_off;
	struct close_alloc alloc = { c, f };
	uint32_t need;
	int done;
	errcode_t ret;

	*ok = 0;
	ret = close_changes(c, f, ch0, nch0, close_stage, &alloc, &ch, &nch);
	if (ret == E2F_ERR_NO_SPACE) {
		c->want.n = 0;
		c->cand_next = next;
		c->cand_off = off;
		return 0;
	}
	if (!ret)
		ret = tree_blocks_after(c, f, ch, nch, &need);
	if (ret)
		goto out;
	if (need && tree_at) {
		ret = piece_vec_add(&meta, tree_at, tree_at + need);
		if (ret)
			goto out;
	} else if (need && stage_take(c, need, &meta)) {
		goto out;
	}
	ret = stage_release(c);
	if (!ret)
		ret = planner_commit_changes(c->p, f, kind, ch, nch, meta.v, meta.n,
					     &done);
	if (!ret && !done)
		goto out;
	if (!ret)
		ret = stage_reserve_wanted(c, f);
	if (!ret)
		*ok = 1;
out:
	if (!ret)
		ret = stage_release(c);
	if (!*ok) {
		c->cand_next = next;
		c->cand_off = off;
	}
	c->want.n = 0;
	piece_vec_free(&meta);
	free(ch);
	return ret;
}

/*
 * A file with no place of its own that no free run holds whole: into the
 * fewest runs where free space stays, if that is fewer pieces than it has
 * (then it is not touched again).  *DONE: 1 moved so, 0 not possible (no
 * runs that few, or no room for its tree): the caller clears it bit by bit.
 */
static errcode_t clear_in_fewer_pieces(struct compact *c, uint32_t f, int *done)
{
	const struct layout_piece *cur;
	struct layout_piece sole;
	struct layout_piece *runs = NULL;
	struct piece_vec meta = { 0 };
	size_t nruns = 0;
	uint32_t ncur, need = 0;
	errcode_t ret;

	*done = 0;
	cur = planner_runs(c->p, f, &ncur, &sole);
	if (plan_pieces(cur, ncur) < 2)
		return 0;
	ret = stage_fewest(c, layout_stream_blocks(c->p->layout, &c->p->layout->files[f]),
			   plan_pieces(cur, ncur) - 1, &runs, &nruns);
	if (ret || !nruns)
		goto out;
	{
		struct runs_change *ch = malloc(nruns * sizeof(*ch));
		blk64_t off = 0;
		size_t k;

		if (!ch) {
			ret = ENOMEM;
			goto out;
		}
		for (k = 0; k < nruns; k++) {
			ch[k] = (struct runs_change){ off, runs[k].len, runs[k].start };
			off += runs[k].len;
		}
		ret = tree_blocks_after(c, f, ch, nruns, &need);
		free(ch);
	}
	if (ret)
		goto out;
	if (need) {
		/* The tree's blocks must not be taken from the runs just chosen. */
		size_t k;

		for (k = 0; !ret && k < nruns; k++)
			ret = piece_vec_add(&c->held, runs[k].start,
					    runs[k].start + runs[k].len);
		if (!ret)
			ret = stage_hold(c, SM_RESERVED);
		if (!ret && stage_take(c, need, &meta)) {
			ret = stage_release(c);
			goto out;
		}
		if (!ret)
			ret = stage_release(c);
		if (ret)
			goto out;
	}
	ret = planner_commit(c->p, f, MOVE_STAGE, runs, nruns, meta.v, meta.n, done);
out:
	free(runs);
	piece_vec_free(&meta);
	return ret;
}

/* Step 1: move out of [LO, HI) every block of F not in its final place. */
errcode_t compact_move_clear(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
			    int *ok)
{
	const struct layout_piece *cur, *meta;
	struct layout_piece sole;
	struct change_vec ch = { 0 }, rest = { 0 };
	struct piece_vec st = { 0 };
	size_t k, j, nind = 0;
	uint32_t ncur, nmeta, i;
	blk64_t off = 0, left, *ind = NULL;
	int meta_inside = 0, done, ind_known = 0;
	errcode_t ret = 0;

	*ok = 1;
	/*
	 * No place of its own in the packing: out of the way whole, where free
	 * space stays, rather than bit by bit into staging.
	 */
	if (c->member[f] != 1) {
		struct layout_piece whole, meta1;
		blk64_t need, at;

		ret = place_need(c->p, f, 0, &need);
		if (!ret && !stage_whole(c, need, &at)) {
			blk64_t n = layout_stream_blocks(c->p->layout, &c->p->layout->files[f]);

			whole = (struct layout_piece){ at + (need - n), n };
			meta1 = (struct layout_piece){ at, need - n };
			ret = planner_commit(c->p, f, MOVE_PLACE, &whole, 1, &meta1,
					     meta1.len ? 1 : 0, &done);
			if (ret || done)
				return ret;
		}
		if (ret)
			return ret;
		ret = clear_in_fewer_pieces(c, f, &done);
		if (ret || done)
			return ret;
	}
	cur = planner_runs(c->p, f, &ncur, &sole);
	for (i = 0; i < ncur && !ret; off += cur[i].len, i++) {
		blk64_t a = cur[i].start > lo ? cur[i].start : lo;
		blk64_t b = cur[i].start + cur[i].len < hi ? cur[i].start + cur[i].len : hi;
		size_t from, to;

		if (a >= b)
			continue;
		if (!(c->member[f] == 1 && compact_fin(c, f, off, &left) == cur[i].start &&
		      left >= cur[i].len)) {
			ret = stage_split_direct(c, f, off + (a - cur[i].start), b - a, lo, hi,
						 &ch, &rest);
			continue;
		}
		/*
		 * In its final place already: stays, but for indirect blocks,
		 * whose contents will change when the blocks they map are
		 * filled in: the fill puts them back.
		 */
		if (!ind_known) {
			/*
			 * Every indirect block's position in the stream, once:
			 * asked for each piece's share, a file in many pieces
			 * would walk its whole map once a piece.
			 */
			ret = close_positions(c, f, 0, layout_stream_blocks(
					c->p->layout, &c->p->layout->files[f]),
					0, &ind, &nind);
			ind_known = 1;
		}
		from = lower_bound(0, nind, blk_before, ind,
				   &(blk64_t){ off + (a - cur[i].start) });
		to = lower_bound(from, nind, blk_before, ind,
				 &(blk64_t){ off + (b - cur[i].start) });
		for (k = from; !ret && k < to; k++)
			ret = change_vec_add(&rest, ind[k], 1, 0);
	}
	/* Hold the direct places first, so that staging does not hand them out too. */
	if (!ret)
		ret = stage_hold(c, SM_RESERVED);
	for (j = 0; !ret && j < rest.n; j++) {
		blk64_t so = rest.v[j].off;

		st.n = 0;
		if (stage_take(c, rest.v[j].len, &st)) {
			*ok = 0;
			break;
		}
		for (k = 0; !ret && so < rest.v[j].off + rest.v[j].len; k++) {
			ret = change_vec_add(&ch, so, st.v[k].len, st.v[k].start);
			so += st.v[k].len;
		}
	}
	if (ret || !*ok)
		goto out;
	sort_n(ch.v, ch.n, sizeof(*ch.v), runs_change_cmp_off);
	meta = planner_meta(c->p, f, &nmeta);
	for (i = 0; i < nmeta; i++)
		if (meta[i].start < hi && meta[i].start + meta[i].len > lo)
			meta_inside = 1;
	if (ch.n || meta_inside)
		ret = commit_with_tree(c, f, MOVE_STAGE, ch.v, ch.n, 0, ok);
out:
	if (c->held.n) {
		errcode_t r2 = stage_release(c);

		if (!ret)
			ret = r2;
	}
	free(ind);
	change_vec_free(&ch);
	change_vec_free(&rest);
	piece_vec_free(&st);
	return ret;
}

/*
 * Step 2: the part of F's stream whose final place is in [LO, HI); the
 * whole of it once that part is its last.
 */
errcode_t compact_move_fill(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
			   int *ok)
{
	blk64_t n = layout_stream_blocks(c->p->layout, &c->p->layout->files[f]);
	/* The stream positions whose final places lie in [LO, HI). */
	blk64_t s = compact_off(c, f, lo);
	blk64_t e = compact_off(c, f, hi);
	struct change_vec ch = { 0 };
	blk64_t *inc = NULL;
	size_t ninc = 0, k;
	errcode_t ret;

	*ok = 1;
	if (e > n)
		e = n;
	if (s >= e)
		return 0;
	if (e == n) {
		blk64_t tree = 0, left, at = compact_fin(c, f, n, &left);
		uint32_t need;

		/* Its last part: everything to its final place, reserved slots too. */
		ret = stage_unreserve(c, f);
		if (!ret)
			ret = compact_segs(c, f, 0, n, &ch);
		/* Its tree right after it, unless that runs into the next zone. */
		if (!ret && c->need[f] > n) {
			need = c->need[f] - n;
			tree = left >= need ? at : 0;
		} else if (!ret) {
			tree = at;
		}
		if (!ret)
			ret = commit_with_tree(c, f, MOVE_PLACE, ch.v, ch.n, tree, ok);
		change_vec_free(&ch);
		return ret;
	}
	/*
	 * Indirect blocks still mapping blocks ahead wait where they are (the
	 * clearing moved them out of the chunk), their final places reserved.
	 */
	ret = close_positions(c, f, s, e, 1, &inc, &ninc);
	if (ret)
		return ret;
	for (k = 0; !ret && k <= ninc; k++) {
		blk64_t stop = k < ninc ? inc[k] : e;

		if (stop > s)
			ret = compact_segs(c, f, s, stop, &ch);
		if (!ret && k < ninc) {
			if (stage_want_slot(c, compact_fin(c, f, inc[k], NULL)))
				ret = ENOMEM;
			s = inc[k] + 1;
		}
	}
	if (!ret)
		ret = commit_with_tree(c, f, MOVE_FILL, ch.v, ch.n, 0, ok);
	c->want.n = 0;
	change_vec_free(&ch);
	free(inc);
	return ret;
}

/*
 * Push positions [SO, SO+LEN) of F to their final places from FIN on
 * (free, one zone), leaving out the indirect blocks at IND[*K..NIND):
 * those change while the blocks they map move, and reach their final
 * places with the file's last part (compact_move_fill).
 */
/*
 * A direct move is made when it moves at least this many times the
 * blocks it rewrites besides (indirect blocks, extent tree): else the
 * blocks wait for a larger batch or the frontier.  A smaller gain makes
 * many more moves to write hardly less, a larger one writes more (so it
 * came out on the images of tests/cli/defrag-nearfull.sh).
 */
#define DIRECT_GAIN	8

static errcode_t direct_push(struct compact *c, blk64_t so, blk64_t len,
			     blk64_t fin, const blk64_t *ind, size_t nind,
			     size_t *k, struct change_vec *ch)
{
	errcode_t ret = 0;

	while (*k < nind && ind[*k] < so)
		(*k)++;
	while (len && !ret) {
		blk64_t n = len;

		if (*k < nind && ind[*k] < so + len)
			n = ind[*k] - so;
		if (n) {
			ret = change_vec_add(ch, so, n, fin);
			if (!ret)
				ret = piece_vec_add(&c->held, fin, fin + n);
		}
		if (n < len) {		/* skip the indirect block */
			n++;
			(*k)++;
		}
		so += n;
		fin += n;
		len -= n;
	}
	return ret;
}

/* fmap_close_alloc_fn that only counts. */
static int count_alloc(void *priv, blk64_t pos, blk64_t *pblk)
{
	(void)pos;
	*pblk = 0;
	(*(uint32_t *)priv)++;
	return 0;
}

/* Blocks besides its stream a move of F by CH writes: indirect blocks or tree. */
static errcode_t direct_extra(struct compact *c, uint32_t f,
			      const struct runs_change *ch, size_t nch,
			      uint32_t *extra)
{
	struct runs_change *all = NULL;
	size_t nall = 0;
	errcode_t ret;

	*extra = 0;
	ret = close_changes(c, f, ch, nch, count_alloc, extra, &all, &nall);
	free(all);
	if (!ret && !*extra)
		ret = tree_blocks_after(c, f, ch, nch, extra);
	return ret;
}

errcode_t compact_move_direct(struct compact *c, uint32_t f, blk64_t *moved)
{
	const struct spacemap *sm = &c->p->sm;
	const struct layout_piece *cur;
	struct layout_piece sole;
	struct change_vec ch = { 0 };
	blk64_t *ind = NULL, off = 0, n;
	size_t nind = 0, k = 0, j;
	uint32_t ncur, i;
	int ok = 1;
	errcode_t ret;

	*moved = 0;
	if (c->member[f] != 1 || !c->final[f])
		return 0;
	n = layout_stream_blocks(c->p->layout, &c->p->layout->files[f]);
	ret = close_positions(c, f, 0, n, 0, &ind, &nind);
	cur = planner_runs(c->p, f, &ncur, &sole);
	for (i = 0; i < ncur && !ret; off += cur[i].len, i++) {
		blk64_t o = off, b = cur[i].start, e = off + cur[i].len;

		while (o < e && !ret) {
			blk64_t left, fin = compact_fin(c, f, o, &left), m = e - o;
			struct sm_seg gv;
			const struct sm_seg *g = &gv;

			if (left && left < m)
				m = left;	/* the rest goes to the next zone */
			gv = SM_SEG(sm, spacemap_find(sm, fin));
			if (g->start + g->len - fin < m)
				m = g->start + g->len - fin;
			if (fin != b && g->owner == SM_FREE)
				ret = direct_push(c, o, m, fin, ind, nind, &k, &ch);
			o += m;
			b += m;
		}
	}
	for (j = 0; j < ch.n; j++)
		*moved += ch.v[j].len;
	/*
	 * Each such move rewrites the indirect blocks mapping what it moves
	 * (or the extent tree): worth it only for enough blocks at once.
	 */
	if (!ret && ch.n) {
		uint32_t extra = 0;

		ret = direct_extra(c, f, ch.v, ch.n, &extra);
		if (!ret && *moved < DIRECT_GAIN * (blk64_t)extra)
			ch.n = *moved = 0;
	}
	if (!ret && ch.n)
		ret = stage_hold(c, SM_RESERVED);
	if (!ret && ch.n)
		ret = commit_with_tree(c, f, MOVE_FILL, ch.v, ch.n, 0, &ok);
	if (!ok)
		*moved = 0;
	if (c->held.n) {
		errcode_t r2 = stage_release(c);

		if (!ret)
			ret = r2;
	}
	change_vec_free(&ch);
	free(ind);
	return ret;
}
