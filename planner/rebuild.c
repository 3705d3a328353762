/*
 * rebuild.c --- a file with no room for its best, rebuilt where the fewest
 * blocks of others must step aside, a zone at a time.
 *
 * A recording larger than the free space finds no free run and no window
 * whose files fit, whole, in the free space outside it: what must leave
 * the window is more than the free space, until the recording itself
 * leaves its old blocks.  But it can leave them bit by bit.  So the
 * target region is chosen where the fewest blocks of other files lie
 * (its own blocks and free blocks cost nothing), and it is cleared and
 * filled one chunk at a time, each a stretch of one zone no larger than
 * the free space outside the region: what lies in the chunk steps aside
 * (another file moved whole into free space outside the region where a
 * free run holds it, else just its blocks in the chunk; the file's own
 * blocks that are not where the region puts them staged out, as
 * selfstage.c does), then that part of the file moves in, and the blocks
 * it leaves are free for the next chunk.  The file's own blocks are the
 * staging room.  Others cut into more pieces on the way are given a place
 * again once the file is in; unless every one of them ends in no more
 * pieces than it had, and the whole writes no more than
 * REBUILD_AMPLIFICATION times the blocks that needed moving, the rebuild
 * is taken back (snapshot.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"

/* Blocks kept free beyond a chunk for the extent trees of the moves. */
#define REBUILD_SLACK		64
#define REBUILD_MAX_CHUNKS	4096
/* Files cut on the way rebuilt in turn, to this depth. */
#define REBUILD_DEPTH		2
/*
 * Regions tried for a file, by depth (the file short of best, a file it
 * cut, a file that one cut): each try below the first is a search of its
 * own, so the deeper, the fewer.  The one a file needs may cost more
 * blocks than a dozen that cut a file with nowhere to go.
 */
static const int rebuild_candidates[REBUILD_DEPTH + 1] = { 16, 4, 3 };
#define REBUILD_CANDIDATES	16
/* Regions tried first as the fewest blocks of others in them rank them. */
#define REBUILD_CHEAPEST	3
/* Regions ranked by the files they cut, per region tried. */
#define REBUILD_RANKED		8
/* Files a region's cut is counted for (more are counted again). */
#define REBUILD_CUT_SEEN	64

/* A segment of the space map in addresses that skip the fixed metadata. */
struct rb_seg {
	blk64_t		vstart, len;
	uint64_t	cum;		/* others' blocks before it */
	uint32_t	blocked;	/* segments before it that must not move */
	uint32_t	owner;
};

struct rb_cand {
	blk64_t		x;
	uint64_t	cut;		/* the blocks of the files it cuts */
	uint64_t	cost;		/* their blocks in it */
};

/* What a segment of OWNER costs a region for FILE: 0, its length, or -1 (blocked). */
static int64_t seg_cost(const struct planner *p, uint32_t file, uint32_t owner,
			blk64_t len)
{
	const struct planner_file *f;

	if (owner == SM_FREE || owner == SM_FILE0 + file)
		return 0;
	if (owner < SM_FILE0)
		return -1;
	f = &p->pf[owner - SM_FILE0];
	if ((f->flags & (PF_UNMOVABLE | PF_REBUILT)) || ((f->flags & PF_IN_SET) && (f->flags & PF_PENDING)))
		return -1;
	return (int64_t)len;
}

static size_t seg_at(const struct rb_seg *v, size_t n, blk64_t x)
{
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].vstart <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The zone holding virtual X, ZV being the NZONES zones' virtual starts. */
static size_t zone_at(const blk64_t *zv, size_t nzones, blk64_t x)
{
	size_t lo = 0, hi = nzones;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (zv[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Others' blocks before virtual X (and the blocked segments begun before it). */
static uint64_t cum_at(const struct rb_seg *v, size_t n, blk64_t x,
		       uint32_t *blocked)
{
	size_t i;
	uint64_t c;

	if (!n || x <= v[0].vstart) {
		*blocked = 0;
		return 0;
	}
	i = seg_at(v, n, x);
	c = v[i].cum;
	*blocked = v[i].blocked;
	if (x > v[i].vstart) {
		blk64_t in = x - v[i].vstart < v[i].len ? x - v[i].vstart : v[i].len;

		if (i + 1 < n) {
			uint64_t seg = v[i + 1].cum - v[i].cum;

			c += seg ? in : 0;
			*blocked = v[i + 1].blocked;
		}
	}
	return c;
}

/* The blocks of the files other than FILE with blocks in [X, X+NEED) (V: N segments). */
static uint64_t cut_blocks(const struct planner *p, uint32_t file,
			   const struct rb_seg *v, size_t n, blk64_t x, blk64_t need)
{
	uint32_t seen[REBUILD_CUT_SEEN];
	size_t i, k, nseen = 0;
	uint64_t cut = 0;

	for (i = seg_at(v, n, x); i < n && v[i].vstart < x + need; i++) {
		uint32_t owner = v[i].owner;

		if (owner < SM_FILE0 || owner == SM_FILE0 + file ||
		    v[i].vstart + v[i].len <= x)
			continue;
		for (k = 0; k < nseen && seen[k] != owner; k++)
			;
		if (k < nseen)
			continue;
		if (nseen < REBUILD_CUT_SEEN)
			seen[nseen++] = owner;
		cut += layout_stream_blocks(p->layout,
					    &p->layout->files[owner - SM_FILE0]);
	}
	return cut;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct rb_cand *x = a, *y = b;

	if (x->cut != y->cut)
		return x->cut < y->cut ? -1 : 1;
	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->x < y->x ? -1 : x->x > y->x;
}

/*
 * The cheapest regions of NEED blocks for FILE crossing at most MAXCROSS
 * zone boundaries (*N of them, at most MAX), in CAND: virtual starts.
 * First the REBUILD_CHEAPEST with the fewest blocks of others in them;
 * then, ranked by the blocks of the files they cut (each is written
 * again, whole or rebuilt in turn, where it finds a place: a region that
 * cuts a smaller file out of its place may succeed where one that cuts a
 * few blocks off a large file fails), then by their blocks in them, those
 * at least half a region from every one chosen (regions a few blocks
 * apart cut the same files, and fail alike).  ZV: each zone's virtual
 * start, and the total.
 */
static errcode_t find_regions(struct planner *p, uint32_t file, blk64_t need,
			      int maxcross, blk64_t **zvp, struct rb_cand *cand,
			      int max, int *ncand)
{
	const struct layout *layout = p->layout;
	const struct spacemap *sm = &p->sm;
	struct rb_seg *v;
	struct rb_cand *all;
	blk64_t *zv, total = 0;
	size_t nv = 0, nall = 0, first, i, z = 0;
	uint64_t cum = 0;
	uint32_t blocked = 0;
	int k;

	*ncand = 0;
	zv = malloc((layout->nzones + 1) * sizeof(*zv));
	v = malloc((sm->n + 1) * sizeof(*v));
	all = malloc((2 * sm->n + 1) * sizeof(*all));
	if (!zv || !v || !all) {
		free(zv);
		free(v);
		free(all);
		return ENOMEM;
	}
	for (i = 0; i < layout->nzones; i++) {
		zv[i] = total;
		total += layout->zones[i].len;
	}
	zv[layout->nzones] = total;
	for (i = 0; i < sm->n; i++) {
		const struct sm_seg g = SM_SEG(sm, i);
		int64_t c;

		if (g.owner == SM_META)
			continue;
		while (z < layout->nzones &&
		       layout->zones[z].start + layout->zones[z].len <= g.start)
			z++;
		if (z >= layout->nzones)
			break;
		c = seg_cost(p, file, g.owner, g.len);
		v[nv] = (struct rb_seg){ zv[z] + (g.start - layout->zones[z].start),
					 g.len, cum, blocked, g.owner };
		nv++;
		if (c < 0)
			blocked++;
		else
			cum += (uint64_t)c;
	}
	v[nv] = (struct rb_seg){ total, 0, cum, blocked, SM_FREE };
	/* Regions beginning or ending where a segment does. */
	for (i = 0; i < 2 * nv; i++) {
		const struct rb_seg *g = &v[i / 2];
		uint32_t b0, b1;
		blk64_t x;
		uint64_t cost;
		size_t z0, z1, s;

		if (i % 2 == 0)
			x = g->vstart;
		else if (g->vstart + g->len >= need)
			x = g->vstart + g->len - need;
		else
			continue;
		if (x + need > total)
			continue;
		cost = cum_at(v, nv + 1, x + need, &b1) - cum_at(v, nv + 1, x, &b0);
		/* A blocked segment overlapping the region: begun inside or before. */
		if (b1 != b0)
			continue;
		s = seg_at(v, nv + 1, x);
		if (seg_cost(p, file, v[s].owner, 1) < 0 && v[s].vstart + v[s].len > x)
			continue;
		z0 = zone_at(zv, layout->nzones, x);
		z1 = zone_at(zv, layout->nzones, x + need - 1);
		if ((int)(z1 - z0) > maxcross)
			continue;
		all[nall++] = (struct rb_cand){ x, 0, cost };
	}
	/*
	 * The cheapest by blocks first, as they come (regions a block apart
	 * may cut different files), then the rest ranked by the files they
	 * cut, each at least half a region from every one chosen.
	 */
	qsort(all, nall, sizeof(*all), cand_cmp);
	for (i = 0; i < nall && *ncand < max && *ncand < REBUILD_CHEAPEST; i++)
		cand[(*ncand)++] = all[i];
	if (nall > (size_t)max * REBUILD_RANKED)
		nall = (size_t)max * REBUILD_RANKED;
	for (; i < nall; i++)
		all[i].cut = cut_blocks(p, file, v, nv, all[i].x, need);
	first = (size_t)*ncand;
	if (nall > first)
		qsort(all + first, nall - first, sizeof(*all), cand_cmp);
	for (i = first; i < nall && *ncand < max; i++) {
		for (k = 0; k < *ncand; k++)
			if (all[i].x < cand[k].x + need / 2 &&
			    cand[k].x < all[i].x + need / 2)
				break;
		if (k == *ncand)
			cand[(*ncand)++] = all[i];
	}
	free(all);
	free(v);
	*zvp = zv;
	return 0;
}

/* The region at virtual X, NEED blocks, as physical runs (in order). */
static errcode_t region_runs(const struct planner *p, const blk64_t *zv,
			     blk64_t x, blk64_t need, struct piece_vec *out)
{
	const struct layout *layout = p->layout;
	size_t z = 0;

	while (z + 1 < layout->nzones && zv[z + 1] <= x)
		z++;
	while (need && z < layout->nzones) {
		blk64_t at = layout->zones[z].start + (x - zv[z]);
		blk64_t n = zv[z + 1] - x < need ? zv[z + 1] - x : need;

		if (piece_vec_add(out, at, at + n))
			return ENOMEM;
		need -= n;
		x += n;
		z++;
	}
	return need ? PLAN_ERR_BUG : 0;
}

/* Free blocks outside [LO, HI). */
static blk64_t free_outside(const struct planner *p, blk64_t lo, blk64_t hi)
{
	blk64_t n = 0;
	size_t i;

	for (i = 0; i < p->sm.n; i++) {
		const struct sm_seg g = SM_SEG(&p->sm, i);
		blk64_t a = g.start, b = g.start + g.len;

		if (g.owner != SM_FREE)
			continue;
		n += g.len;
		if (a < lo)
			a = lo;
		if (b > hi)
			b = hi;
		if (a < b)
			n -= b - a;
	}
	return n;
}

/* The files other than FILE with blocks in [LO, HI), into OUT (each once). */
static errcode_t others_in(const struct planner *p, uint32_t file, blk64_t lo,
			   blk64_t hi, struct blk_vec *out)
{
	size_t i = spacemap_find(&p->sm, lo), k;

	out->n = 0;
	for (; i < p->sm.n; i++) {
		const struct sm_seg g = SM_SEG(&p->sm, i);

		if (g.start >= hi)
			break;
		if (g.owner == SM_FREE || g.owner == SM_FILE0 + file)
			continue;
		if (g.owner < SM_FILE0)
			return PLAN_ERR_CHANGED;	/* must not move: no region here */
		for (k = 0; k < out->n; k++)
			if (out->v[k] == g.owner - SM_FILE0)
				break;
		if (k == out->n && blk_vec_add(out, g.owner - SM_FILE0))
			return ENOMEM;
	}
	return 0;
}

/* Block the region W puts at position POS. */
static blk64_t region_blk(const struct piece_vec *w, blk64_t pos)
{
	size_t r;

	for (r = 0; r < w->n && pos >= w->v[r].len; r++)
		pos -= w->v[r].len;
	return r < w->n ? w->v[r].start + pos : 0;
}

/*
 * Where the indirect blocks a move of a block-mapped file changes go
 * (fmap_close_changes): to their place in the region when it is free and
 * their contents are final after the move (they map nothing past the
 * stream the region holds so far: not in INC), else to staging outside.
 */
struct fill_alloc {
	struct planner	*p;
	const struct piece_vec *w;
	blk64_t		tree;
	const blk64_t	*inc;
	size_t		ninc;
	struct stage_cursor sc;
};

static int fill_alloc(void *priv, blk64_t pos, blk64_t *pblk)
{
	struct fill_alloc *a = priv;
	size_t k;

	for (k = 0; k < a->ninc && a->inc[k] != pos; k++)
		;
	if (k == a->ninc) {
		blk64_t b = region_blk(a->w, a->tree + pos);

		if (b && spacemap_is(&a->p->sm, b, 1, SM_FREE)) {
			*pblk = b;
			return 0;
		}
	}
	return stage_cursor_alloc(&a->sc, pos, pblk);
}

/*
 * CH, changes to block-mapped FILE (M), closed over the indirect blocks
 * they change (fill_alloc; INC as there), committed as a MOVE_FILL.
 */
static errcode_t commit_closed(struct planner *p, uint32_t file, struct fmap *m,
			       const struct piece_vec *w, blk64_t xlo, blk64_t xhi,
			       const blk64_t *inc, size_t ninc,
			       struct change_vec *ch, int *ok)
{
	struct layout_piece *room = NULL;
	size_t nroom = 0, fi = 0;
	blk64_t fo = 0;
	struct fill_alloc a = { p, w, 0, inc, ninc, { NULL, 0, &fi, &fo } };
	errcode_t ret;

	*ok = 0;
	ret = stage_room(p, planner_limit(p, file), xlo, xhi, 0, 0, &room, &nroom);
	if (ret)
		return ret;
	a.sc.f = room;
	a.sc.nf = nroom;
	ret = stage_close(p, file, m, ch, fill_alloc, &a);
	if (ret == E2F_ERR_NO_SPACE)
		ret = 0;	/* no room for them: *OK 0 */
	else if (!ret && ch->n)
		ret = planner_commit_changes(p, file, MOVE_FILL, ch->v, ch->n,
					     NULL, 0, ok);
	free(room);
	return ret;
}

/*
 * FILE's stream [OFF, OFF+LEN) into [AT, AT+LEN), its extent tree (the
 * runs that leaves need) at TREE_AT when nonzero, else in free space
 * outside [XLO, XHI).  A block-mapped file's indirect blocks there that
 * still map blocks past OFF+LEN go to staging instead, and their place in
 * the region stays free for them (rebuild_last).  *OK 0: no room for the
 * tree, or it does not fit.
 */
static errcode_t fill(struct planner *p, uint32_t file, const struct piece_vec *w,
		      blk64_t off, blk64_t len, blk64_t at, blk64_t tree_at,
		      blk64_t xlo, blk64_t xhi, int *ok)
{
	struct runs_change ch = { off, len, at };
	const struct layout_piece *cur;
	struct layout_piece sole, *after = NULL, tree = { 0, 0 };
	struct fmap_target t;
	struct fmap *m;
	size_t nafter = 0, next = 0;
	uint32_t ncur;
	blk64_t stretch;
	int fits;
	errcode_t ret;

	*ok = 0;
	ret = planner_fmap(p, file, &m);
	if (ret)
		return ret;
	if (!m->extents) {
		struct change_vec cv = { 0 };
		blk64_t *inc = NULL, o = off;
		size_t ninc = 0, k;

		ret = fmap_close_positions(m, 0, off + len, 1, &inc, &ninc);
		for (k = 0; !ret && k <= ninc; k++) {
			blk64_t e = k < ninc ? inc[k] : off + len;

			if (e < off)
				continue;
			if (e > o && change_vec_add(&cv, o, e - o, at + (o - off)))
				ret = ENOMEM;
			o = e + 1;
		}
		if (!ret)
			ret = commit_closed(p, file, m, w, xlo, xhi, inc, ninc, &cv, ok);
		if (!ret && !cv.n)
			*ok = 1;	/* (nothing to move here but what waits) */
		free(inc);
		change_vec_free(&cv);
		return ret;
	}
	cur = planner_runs(p, file, &ncur, &sole);
	ret = runs_apply(cur, ncur, &ch, 1, &after, &nafter, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;
	t.runs = after;
	t.nruns = nafter;
	if (!ret)
		ret = fmap_build_extents(m, &t, NULL, &next, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;
	free(after);
	if (ret)
		return ret;
	tree.len = fmap_build_tree_blocks(p->fs, next);
	if (tree.len && tree_at) {
		tree.start = tree_at;
	} else if (tree.len) {
		if (spacemap_best_fit(&p->sm, tree.len, planner_limit(p, file), xlo, xhi,
				      &tree.start, &stretch))
			return 0;
	}
	if (tree.len && !spacemap_is(&p->sm, tree.start, tree.len, SM_FREE))
		return 0;
	return planner_commit_changes(p, file, MOVE_FILL, &ch, 1, &tree,
				      tree.len ? 1 : 0, ok);
}

/* Block FILE's stream has at POS now. */
static blk64_t stream_blk(struct planner *p, uint32_t file, blk64_t pos)
{
	const struct layout_piece *cur;
	struct layout_piece sole;
	uint32_t ncur, i;

	cur = planner_runs(p, file, &ncur, &sole);
	for (i = 0; i < ncur && pos >= cur[i].len; i++)
		pos -= cur[i].len;
	return i < ncur ? cur[i].start + pos : 0;
}

/*
 * Last, a block-mapped file's indirect blocks that waited in staging (or
 * had to leave their place when what they map moved) into their places in
 * the region W: each round moves those not there yet, and their parents
 * as they change, until all are.  *OK 0: some are not.
 */
static errcode_t rebuild_last(struct planner *p, uint32_t file,
			      const struct piece_vec *w, blk64_t xlo, blk64_t xhi,
			      int *ok)
{
	struct fmap *m;
	blk64_t *pos = NULL, stream;
	size_t npos = 0, k, n;
	int round;
	errcode_t ret;

	*ok = 1;
	ret = planner_fmap(p, file, &m);
	if (ret || m->extents)
		return ret;
	stream = layout_stream_blocks(p->layout, &p->layout->files[file]);
	ret = fmap_close_positions(m, 0, stream, 0, &pos, &npos);
	for (round = 0; !ret && *ok && round < 4; round++) {
		struct change_vec cv = { 0 };

		for (k = 0; !ret && k < npos; k++) {
			blk64_t b = region_blk(w, pos[k]);

			if (stream_blk(p, file, pos[k]) != b &&
			    change_vec_add(&cv, pos[k], 1, b))
				ret = ENOMEM;
		}
		if (!ret && cv.n)
			ret = commit_closed(p, file, m, w, xlo, xhi, NULL, 0, &cv, ok);
		n = cv.n;
		change_vec_free(&cv);
		if (!n)
			break;
	}
	free(pos);
	return ret;
}

/*
 * Clear [C0, C1) of everything but FILE's blocks already where the region
 * puts them: other files moved whole outside [XLO, XHI) when a free run
 * holds them there, else their blocks here (recorded in SETTLE); FILE's
 * own staged out, but for the blocks already in place (stream offset =
 * distance from C0 + SHIFT).  *OK 0: no room.
 */
static errcode_t clear_chunk(struct planner *p, uint32_t file, blk64_t c0,
			     blk64_t c1, blk64_t xlo, blk64_t xhi, int64_t shift,
			     struct blk_vec *settle, int *ok)
{
	struct blk_vec in = { 0 };
	struct fmap *m;
	size_t k, j;
	errcode_t ret;

	*ok = 0;
	ret = others_in(p, file, c0, c1, &in);
	for (k = 0; !ret && k < in.n; k++) {
		uint32_t g = in.v[k];
		int moved = 0;

		if (p->pf[g].flags & (PF_UNMOVABLE | PF_REBUILT))
			goto out;	/* (the region search left these out) */
		ret = place_evacuee(p, g, MOVE_EVACUATE, 0, xlo, xhi, &moved);
		if (!ret && !moved) {
			ret = stage_out_of(p, g, c0, c1, xlo, xhi, NULL, &moved);
			for (j = 0; j < settle->n && settle->v[j] != g; j++)
				;
			if (!ret && moved && j == settle->n && blk_vec_add(settle, g))
				ret = ENOMEM;
		}
		if (!ret && !moved)
			goto out;
	}
	/*
	 * A block-mapped file's blocks all leave: an indirect block kept in
	 * place could not change when what it maps moves in.
	 */
	if (!ret)
		ret = planner_fmap(p, file, &m);
	if (!ret)
		ret = stage_out_of(p, file, c0, c1, xlo, xhi,
				   m->extents ? &shift : NULL, ok);
out:
	free(in.v);
	if (ret == PLAN_ERR_CHANGED)
		ret = 0;
	return ret;
}

static errcode_t rebuild_depth(struct planner *p, uint32_t file, int depth,
				int *placed);

/*
 * The files cut on the way (SETTLE), whole again where a free run holds
 * them, else rebuilt in turn (at most REBUILD_DEPTH deep: the files
 * rebuilt before them stay where they are), else (a candidate) in fewer
 * pieces.  Whether that leaves none worse is the caller's to check.
 */
static errcode_t settle(struct planner *p, const struct blk_vec *settle,
			int depth)
{
	size_t k;
	errcode_t ret = 0;
	int ok;

	for (k = 0; !ret && k < settle->n; k++) {
		uint32_t g = settle->v[k];

		if (planner_pieces_now(p, g) <= planner_best(p, g))
			continue;
		ret = place_evacuee(p, g, MOVE_EVACUATE, 0, 0, 0, &ok);
		if (!ret && !ok && depth < REBUILD_DEPTH)
			ret = rebuild_depth(p, g, depth + 1, &ok);
		if (!ret && !ok && (p->sel->flags[g] & SEL_CANDIDATE))
			ret = place_partial(p, g);
	}
	return ret;
}

/*
 * FILE into the region at virtual X (NEED blocks, TREE of them its
 * tree's), and the files cut on the way settled (DEPTH: rebuilds around).
 */
static errcode_t rebuild_at(struct planner *p, uint32_t file, const blk64_t *zv,
			    blk64_t x, blk64_t need, blk64_t tree, int depth,
			    int *done)
{
	struct piece_vec w = { 0 };
	struct blk_vec cut = { 0 };
	blk64_t stream = need - tree, xlo, xhi, pos = 0;
	size_t r, chunks = 0;
	errcode_t ret;
	int ok = 1;

	*done = 0;
	ret = region_runs(p, zv, x, need, &w);
	if (ret || !w.n)
		goto out;
	if (w.v[0].len < tree + 1)
		goto out;	/* the tree goes before the stream, in one run */
	xlo = w.v[0].start;
	xhi = w.v[w.n - 1].start + w.v[w.n - 1].len;
	for (r = 0; !ret && ok && r < w.n; r++) {
		blk64_t at = w.v[r].start, end = at + w.v[r].len;

		while (!ret && ok && at < end) {
			blk64_t room = free_outside(p, xlo, xhi), len, c1, o0;

			ret = planner_check(p);
			if (ret || room <= REBUILD_SLACK || ++chunks > REBUILD_MAX_CHUNKS) {
				ok = 0;
				break;
			}
			len = room - REBUILD_SLACK;
			c1 = end - at < len ? end : at + len;
			ret = clear_chunk(p, file, at, c1, xlo, xhi,
					  (int64_t)pos - (int64_t)tree, &cut, &ok);
			if (ret || !ok)
				break;
			/* The stream's part here: past the tree's blocks at the start. */
			if (pos + (c1 - at) > tree) {
				blk64_t skip = pos < tree ? tree - pos : 0;

				o0 = pos + skip - tree;
				ret = fill(p, file, &w, o0, c1 - at - skip, at + skip,
					   o0 + (c1 - at - skip) == stream && tree ?
					   xlo : 0, xlo, xhi, &ok);
			}
			pos += c1 - at;
			at = c1;
		}
	}
	if (!ret && ok)
		ret = rebuild_last(p, file, &w, xlo, xhi, &ok);
	if (!ret && ok && planner_pieces_now(p, file) <= planner_best(p, file)) {
		p->pf[file].flags |= PF_REBUILT;	/* stays where it is now */
		ret = settle(p, &cut, depth);
		*done = !ret;
	}
out:
	piece_vec_free(&w);
	free(cut.v);
	return ret;
}

errcode_t rebuild_file(struct planner *p, uint32_t file, int *placed)
{
	return rebuild_depth(p, file, 0, placed);
}

static errcode_t rebuild_depth(struct planner *p, uint32_t file, int depth,
				int *placed)
{
	struct rb_cand cand[REBUILD_CANDIDATES];
	uint32_t best = planner_best(p, file);
	blk64_t need, stream, *zv = NULL;
	int ncand = 0, k, done;
	errcode_t ret;

	*placed = 0;
	if (p->pf[file].flags & PF_UNMOVABLE)
		return 0;
	stream = layout_stream_blocks(p->layout, &p->layout->files[file]);
	ret = place_need(p, file, best ? best - 1 : 0, &need);
	if (ret == E2F_ERR_CORRUPT_INODE || ret == PLAN_ERR_CHANGED ||
	    ret == EXT2_ET_INLINE_DATA_NO_BLOCK)
		return 0;
	if (!ret)
		ret = find_regions(p, file, need, best ? best - 1 : 0, &zv, cand,
				   rebuild_candidates[depth], &ncand);
	for (k = 0; !ret && !*placed && k < ncand; k++) {
		ret = snapshot_take(p);
		if (ret)
			break;
		ret = rebuild_at(p, file, zv, cand[k].x, need, need - stream, depth,
				 &done);
		/*
		 * Over the write target, another region may not be: the
		 * files it cuts are others.  (A file rebuilt in turn is
		 * held to the target by the file that cut it.)
		 */
		if (!ret && done && !snapshot_any_worse(p) &&
		    planner_pieces_now(p, file) <= best &&
		    (depth || p->plan->copy_blocks <= planner_write_target(p))) {
			p->pf[file].flags |= PF_REBUILT;
			snapshot_forget(p);
			*placed = 1;
		} else {
			snapshot_restore(p);
		}
	}
	free(zv);
	return ret;
}
