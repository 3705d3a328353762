/*
 * selfstage.c --- a file's own blocks out of the window it is to go to.
 *
 * A file cannot be copied onto its own blocks in one move: its old copy
 * must stay whole until the switch.  So when the window chosen for a file
 * holds some of its blocks elsewhere than the window puts them (a file
 * with no room for its best, whose pieces lie in the zones it could use
 * best), one MOVE_STAGE first sends those blocks, and its extent tree if
 * that lies in the window, to free space outside; the file's own move
 * into the window follows.  Without it such a file could only take the
 * free runs around its pieces, and the pieces it leaves would cut free
 * space into more runs than before.  rebuild.c stages the same way, any
 * file (block-mapped too) and outside its whole region: stage_out_of.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"

errcode_t stage_room(const struct planner *p, blk64_t limit,
		     blk64_t lo, blk64_t hi, blk64_t xlo, blk64_t xhi,
		     struct layout_piece **out, size_t *n)
{
	const struct spacemap *sm = &p->sm;
	struct layout_piece *f;
	size_t i;

	*n = 0;
	f = malloc((2 * sm->n + 1) * sizeof(*f));
	if (!f)
		return ENOMEM;
	for (i = 0; i < sm->n && SM_SEG(sm, i).start < limit; i++) {
		const struct sm_seg gv = SM_SEG(sm, i), *g = &gv;
		blk64_t a = g->start, b = g->start + g->len;

		if (g->owner != SM_FREE)
			continue;
		if (b > limit)
			b = limit;
		if (xlo < xhi && a < xhi && b > xlo) {
			/* Clipped to the second exclusion: [XLO, XHI) covers [LO, HI). */
			if (a < xlo)
				f[(*n)++] = (struct layout_piece){ a, xlo - a };
			if (b > xhi)
				f[(*n)++] = (struct layout_piece){ xhi, b - xhi };
			continue;
		}
		if (a < lo)
			f[(*n)++] = (struct layout_piece){ a, (b < lo ? b : lo) - a };
		if (b > hi)
			f[(*n)++] = (struct layout_piece){ a > hi ? a : hi,
							   b - (a > hi ? a : hi) };
	}
	sort_n(f, *n, sizeof(*f), runs_cmp_len_desc);
	*out = f;
	return 0;
}

int stage_room_take(const struct layout_piece *f, size_t nf, size_t *fi,
		    blk64_t *fo, blk64_t off, blk64_t len, struct change_vec *out)
{
	while (len) {
		blk64_t n;

		while (*fi < nf && *fo >= f[*fi].len) {
			(*fi)++;
			*fo = 0;
		}
		if (*fi >= nf)
			return -1;
		n = f[*fi].len - *fo < len ? f[*fi].len - *fo : len;
		if (change_vec_add(out, off, n, f[*fi].start + *fo))
			return -1;
		*fo += n;
		off += n;
		len -= n;
	}
	return 0;
}

int stage_cursor_alloc(void *priv, blk64_t pos, blk64_t *pblk)
{
	struct stage_cursor *c = priv;
	struct change_vec one = { 0 };
	int none;

	none = stage_room_take(c->f, c->nf, c->fi, c->fo, pos, 1, &one);
	if (!none)
		*pblk = one.v[0].pblk;
	change_vec_free(&one);
	return none;
}

errcode_t stage_close(struct planner *p, uint32_t file, struct fmap *m,
		      struct change_vec *ch, fmap_close_alloc_fn alloc, void *priv)
{
	const struct layout_piece *cur;
	struct layout_piece sole;
	struct runs_change *out = NULL;
	const blk64_t *co;
	size_t nout = 0;
	uint32_t ncur;
	int fits;
	errcode_t ret;

	cur = planner_runs(p, file, &ncur, &sole);
	ret = planner_run_offsets(p, file, cur, ncur, &co);
	if (!ret)
		ret = fmap_close_changes(&p->close, m, cur, co, ncur, ch->v, ch->n,
					 alloc, priv, &out, &nout, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;	/* CH are its own stretches, in order */
	if (ret) {
		free(out);
		return ret;
	}
	free(ch->v);
	ch->v = out;
	ch->n = ch->cap = nout;
	return 0;
}

errcode_t selfstage_out(struct planner *p, uint32_t file, blk64_t lo,
			blk64_t hi, int *ok)
{
	struct fmap *m;
	errcode_t ret;

	*ok = 0;
	ret = planner_fmap(p, file, &m);
	if (ret || !m->extents)
		return ret;	/* (block-mapped: its indirect blocks would move too) */
	return stage_out_of(p, file, lo, hi, 0, 0, NULL, ok);
}

errcode_t stage_out_of(struct planner *p, uint32_t file, blk64_t lo,
		       blk64_t hi, blk64_t xlo, blk64_t xhi,
		       const int64_t *keep_shift, int *ok)
{
	const struct layout_piece *cur, *meta;
	struct layout_piece sole, *f = NULL, *after = NULL, *tree = NULL;
	struct change_vec segs = { 0 };
	size_t nf = 0, fi = 0, nafter = 0, next = 0, ntree = 0;
	blk64_t fo = 0, off = 0;
	uint32_t ncur, nmeta, need, i;
	int tree_inside = 0, fits;
	struct fmap_target t;
	struct fmap *m;
	errcode_t ret;

	*ok = 0;
	ret = planner_fmap(p, file, &m);
	if (ret)
		return ret;
	meta = planner_meta(p, file, &nmeta);
	for (i = 0; i < nmeta; i++)
		if (meta[i].start < hi && meta[i].start + meta[i].len > lo)
			tree_inside = 1;
	ret = stage_room(p, planner_limit(p, file), lo, hi, xlo, xhi, &f, &nf);
	if (ret)
		return ret;
	cur = planner_runs(p, file, &ncur, &sole);
	for (i = 0; i < ncur; off += cur[i].len, i++) {
		blk64_t a = cur[i].start > lo ? cur[i].start : lo;
		blk64_t b = cur[i].start + cur[i].len < hi ?
			cur[i].start + cur[i].len : hi;

		/* Where its place is here already: stays. */
		if (a < b && keep_shift && (int64_t)(off + (a - cur[i].start)) ==
		    (int64_t)(a - lo) + *keep_shift)
			continue;
		if (a < b && stage_room_take(f, nf, &fi, &fo, off + (a - cur[i].start),
				       b - a, &segs))
			goto out;	/* no room outside */
	}
	if (!segs.n && !tree_inside) {
		*ok = 1;	/* nothing of it in the way */
		goto out;
	}
	sort_n(segs.v, segs.n, sizeof(*segs.v), runs_change_cmp_off);
	if (!m->extents) {
		/* The indirect blocks over what moves move too, outside as well. */
		struct stage_cursor sc = { f, nf, &fi, &fo };

		ret = stage_close(p, file, m, &segs, stage_cursor_alloc, &sc);
		if (ret == E2F_ERR_NO_SPACE)
			ret = 0;	/* no room outside: *OK 0 */
		if (ret || !segs.n)
			goto out;
	}
	/* Its tree is rebuilt by the move: in the room left outside. */
	ret = runs_apply(cur, ncur, segs.v, segs.n, &after, &nafter, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;	/* SEGS are its own stretches, in order */
	if (ret)
		goto out;
	t.runs = after;
	t.nruns = nafter;
	if (m->extents) {
		ret = fmap_build_extents(m, &t, NULL, &next, &fits);
		if (!ret && !fits)
			ret = PLAN_ERR_BUG;
		if (ret)
			goto out;
	}
	need = m->extents ? fmap_build_tree_blocks(p->fs, next) : 0;
	if (need) {
		struct change_vec ts = { 0 };
		size_t k;

		/* A separate cursor would do as well: the tree takes what is left. */
		if (stage_room_take(f, nf, &fi, &fo, 0, need, &ts)) {
			change_vec_free(&ts);
			goto out;
		}
		tree = malloc(ts.n * sizeof(*tree));
		if (!tree) {
			change_vec_free(&ts);
			ret = ENOMEM;
			goto out;
		}
		for (k = 0; k < ts.n; k++)
			tree[k] = (struct layout_piece){ ts.v[k].pblk, ts.v[k].len };
		ntree = ts.n;
		change_vec_free(&ts);
	}
	ret = planner_commit_changes(p, file, MOVE_STAGE, segs.v, segs.n, tree, ntree,
				     ok);
out:
	free(f);
	free(after);
	free(tree);
	change_vec_free(&segs);
	return ret;
}
