/*
 * place.c --- where one unit goes.
 *
 * In order of preference:
 *   1. a free run that holds the whole unit (best fit), or, for a single
 *      file, a place around one of its own large pieces, which then stays
 *      where it is and only the rest is copied (less to write);
 *   2. a window cleared by moving smaller files out of the way (window.c);
 *   3. for an interleave set that does not fit as a whole, each member on
 *      its own;
 * and, once every unit had its turn and compact.c packed what is left,
 *   4. fewer pieces in the largest free runs, when nothing better exists.
 * Extent tree blocks go just before the data they map.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"
#include "compare.h"
#include "lower_bound.h"

/* Candidates for keeping a piece in place: the longest few pieces. */
#define IN_PLACE_CANDIDATES 8
/*
 * Step 4's windows: at most this many zones, cleared for at most this
 * share of the file's blocks (its own staged out of the way).
 */
#define PARTIAL_WINDOW_ZONES	4
#define PARTIAL_WINDOW_SHARE	0.5

errcode_t place_need(struct planner *p, uint32_t file, int splits, blk64_t *need)
{
	const struct file_state *st;
	errcode_t ret;

	/* Once read and checked, the map's figures are in the state. */
	ret = planner_map_figures(p, file, NULL);
	if (ret)
		return ret;
	st = planner_state_if(p, file);
	/* (planner_fmap checked that the map has the layout's stream.) */
	*need = layout_stream_blocks(p->layout, &p->layout->files[file]);
	if (st->own & FILE_STATE_EXTENTS)
		*need += fmap_build_tree_blocks(p->fs, planner_extents_contig(p, file) + splits);
	return 0;
}

/* Take LEN blocks from the window cursor into RUNS (appending). */
static int take(const struct layout_piece *w, size_t nw, size_t *wi, blk64_t *wo,
		blk64_t len, struct layout_piece *runs, size_t *nruns, size_t cap)
{
	while (len) {
		blk64_t n;

		while (*wi < nw && *wo >= w[*wi].len) {
			(*wi)++;
			*wo = 0;
		}
		if (*wi >= nw || *nruns >= cap)
			return -1;
		n = w[*wi].len - *wo < len ? w[*wi].len - *wo : len;
		if (*nruns && runs[*nruns - 1].start + runs[*nruns - 1].len ==
		    w[*wi].start + *wo)
			runs[*nruns - 1].len += n;
		else
			runs[(*nruns)++] = (struct layout_piece){ w[*wi].start + *wo, n };
		*wo += n;
		len -= n;
	}
	return 0;
}

/*
 * Extent tree blocks FILE needs at stream target RUNS, which hold its
 * whole stream: PLAN_ERR_BUG when they do not.
 */
static errcode_t tree_need(struct planner *p, uint32_t file,
			   const struct layout_piece *runs, size_t nruns,
			   uint32_t *need)
{
	struct fmap_target t = { runs, nruns };
	struct fmap *m;
	size_t n;
	int fits;
	errcode_t ret;

	/* A block map's room is its stream: no map made for that. */
	ret = planner_map_figures(p, file, NULL);
	if (ret)
		return ret;
	*need = 0;
	if (!(planner_state_if(p, file)->own & FILE_STATE_EXTENTS))
		return 0;
	ret = planner_fmap(p, file, &m);
	if (ret)
		return ret;
	ret = fmap_build_extents(m, &t, NULL, &n, &fits);
	if (!ret && !fits)
		ret = PLAN_ERR_BUG;
	if (ret)
		return ret;
	*need = fmap_build_tree_blocks(p->fs, n);
	return 0;
}

errcode_t place_members(struct planner *p, const struct unit *u,
			const struct layout_piece *w, size_t nw, int *placed)
{
	size_t wi = 0, cap = nw + 2;
	blk64_t wo = 0;
	uint32_t k;
	struct layout_piece *runs, *meta;
	int done;
	errcode_t ret = 0;

	*placed = 0;
	runs = malloc(cap * sizeof(*runs));
	meta = malloc(cap * sizeof(*meta));
	if (!runs || !meta) {
		ret = ENOMEM;
		goto out;
	}
	for (k = 0; k < u->n; k++) {
		uint32_t file = p->members[u->first + k], need, e;
		size_t nruns = 0, nmeta = 0, used, i;
		blk64_t room;

		ret = place_need(p, file, (int)nw - 1, &room);
		if (ret)
			goto out;
		e = room - layout_stream_blocks(p->layout, &p->layout->files[file]);
		if (take(w, nw, &wi, &wo, e, meta, &nmeta, cap) ||
		    take(w, nw, &wi, &wo, layout_stream_blocks(p->layout, &p->layout->files[file]),
			 runs, &nruns, cap))
			goto out;	/* the window is too short */
		ret = tree_need(p, file, runs, nruns, &need);
		if (ret || need > e)
			goto out;	/* (need > e: no room for its tree) */
		/* Fewer tree blocks than room was made for: leave the rest free. */
		for (i = 0, used = 0; i < nmeta; i++) {
			if (used + meta[i].len > need)
				meta[i].len = need - used;
			used += meta[i].len;
		}
		while (nmeta && !meta[nmeta - 1].len)
			nmeta--;
		ret = planner_commit(p, file, MOVE_PLACE, runs, nruns, meta, nmeta, &done);
		if (ret || !done)
			goto out;
	}
	*placed = 1;
out:
	free(runs);
	free(meta);
	return ret;
}

errcode_t evacuee_need(struct planner *p, uint32_t file, blk64_t *need)
{
	errcode_t ret = place_need(p, file, 0, need);

	if (ret == E2F_ERR_CORRUPT_INODE || ret == PLAN_ERR_CHANGED ||
	    ret == EXT2_ET_INLINE_DATA_NO_BLOCK) {
		*need = 0;
		return 0;
	}
	return ret;
}

errcode_t place_evacuee(struct planner *p, uint32_t file,
			enum plan_move_kind kind, blk64_t at,
			blk64_t excl_start, blk64_t excl_end, int *ok)
{
	struct layout_piece run;
	struct unit one;
	blk64_t need, stretch;
	errcode_t ret;

	*ok = 0;
	ret = evacuee_need(p, file, &need);
	if (ret || !need)
		return ret;	/* (!need: cannot move it, the window is not usable) */
	if (!at) {
		if (spacemap_best_fit(&p->sm, need, planner_limit(p, file),
				      excl_start, excl_end, &at, &stretch))
			return 0;
		at = planner_edge(p, &p->sm, at, stretch, need, &file, 1);
	}
	if (!spacemap_is(&p->sm, at, need, SM_FREE))
		return 0;
	run.start = at;
	run.len = need;
	/* place_members wants a unit: this file alone. */
	one.first = planner_member_at(p, file);
	if (one.first == NO_MEMBER)
		one.first = p->nmembers;
	if (one.first == p->nmembers || kind != MOVE_EVACUATE) {
		/* Not a candidate (or not its own move): commit directly. */
		struct layout_piece meta = { at, need - layout_stream_blocks(p->layout, &p->layout->files[file]) };
		struct layout_piece data = { at + meta.len, layout_stream_blocks(p->layout, &p->layout->files[file]) };

		ret = planner_commit(p, file, kind, &data, 1, &meta,
				     meta.len ? 1 : 0, ok);
	} else {
		one.n = 1;
		one.blocks = layout_stream_blocks(p->layout, &p->layout->files[file]);
		ret = place_members(p, &one, &run, 1, ok);
	}
	return ret;
}

/* Stream offsets of FILE's current runs (same order). */
static blk64_t run_offset(const struct layout_piece *r, uint32_t i)
{
	blk64_t o = 0;
	uint32_t k;

	for (k = 0; k < i; k++)
		o += r[k].len;
	return o;
}

/*
 * Cost (blocks to write) of laying FILE out at [T, T+N) keeping whatever
 * of it is already at the right place there; ~0 when impossible.
 */
static blk64_t in_place_cost(struct planner *p, uint32_t file, blk64_t t,
			     blk64_t n)
{
	const struct layout_piece *r;
	struct layout_piece sole;
	const struct spacemap *sm = &p->sm;
	uint32_t nr, i;
	blk64_t own = 0, kept = 0, o = 0;
	size_t s;
	struct fmap *m;

	if (t < sm->first || t + n > planner_limit(p, file) ||
	    planner_zone_of(p, t) < 0 ||
	    planner_zone_of(p, t) != planner_zone_of(p, t + n - 1))
		return ~(blk64_t)0;
	for (s = spacemap_find(sm, t); s < sm->n && SM_SEG(sm, s).start < t + n; s++) {
		const struct sm_seg gv = SM_SEG(sm, s), *g = &gv;
		blk64_t a = g->start > t ? g->start : t;
		blk64_t b = g->start + g->len < t + n ? g->start + g->len : t + n;

		if (g->owner == SM_FILE0 + file)
			own += b - a;
		else if (g->owner != SM_FREE)
			return ~(blk64_t)0;
	}
	r = planner_runs(p, file, &nr, &sole);
	for (i = 0; i < nr; o += r[i].len, i++)
		if (r[i].start >= o && r[i].start - o == t)
			kept += r[i].len;
	if (own != kept)
		return ~(blk64_t)0;	/* its own blocks at other offsets are in the way */
	if (planner_fmap(p, file, &m))
		return ~(blk64_t)0;
	if (!m->extents) {
		struct layout_piece one = { t, n };
		struct fmap_target tg = { &one, 1 };

		if (!fmap_build_stays_valid(p->fs, m, &tg))
			return ~(blk64_t)0;
	}
	return n - kept;
}

/* Best place keeping one of FILE's pieces: *T and its cost. */
static void best_in_place(struct planner *p, uint32_t file, blk64_t *best_t,
			  blk64_t *best_cost)
{
	const struct layout_piece *r;
	struct layout_piece sole;
	uint32_t nr, i, k, pick[IN_PLACE_CANDIDATES], npick = 0;
	blk64_t n = layout_stream_blocks(p->layout, &p->layout->files[file]);

	*best_cost = ~(blk64_t)0;
	r = planner_runs(p, file, &nr, &sole);
	/* The longest pieces, longest first. */
	for (i = 0; i < nr; i++) {
		for (k = npick; k > 0 && r[pick[k - 1]].len < r[i].len; k--)
			if (k < IN_PLACE_CANDIDATES)
				pick[k] = pick[k - 1];
		if (k < IN_PLACE_CANDIDATES) {
			pick[k] = i;
			if (npick < IN_PLACE_CANDIDATES)
				npick++;
		}
	}
	for (k = 0; k < npick; k++) {
		blk64_t o = run_offset(r, pick[k]), t, cost;

		if (r[pick[k]].start < o)
			continue;
		t = r[pick[k]].start - o;
		cost = in_place_cost(p, file, t, n);
		if (cost < *best_cost || (cost == *best_cost && t < *best_t)) {
			*best_cost = cost;
			*best_t = t;
		}
	}
}

/* Place FILE around its own piece at T, tree blocks wherever they fit best. */
static errcode_t commit_in_place(struct planner *p, uint32_t file, blk64_t t,
				 int *ok)
{
	blk64_t n = layout_stream_blocks(p->layout, &p->layout->files[file]), at, stretch;
	struct layout_piece run = { t, n }, meta = { 0, 0 };
	uint32_t need;
	errcode_t ret;

	*ok = 0;
	ret = tree_need(p, file, &run, 1, &need);
	if (ret)
		return ret;
	if (need) {
		if (spacemap_best_fit(&p->sm, need, ext2fs_blocks_count(p->fs->super),
				      t, t + n, &at, &stretch))
			return 0;
		meta.start = at;
		meta.len = need;
	}
	ret = planner_commit(p, file, MOVE_PLACE, &run, 1, &meta, need ? 1 : 0, ok);
	if (!ret && !*ok)
		ret = PLAN_ERR_BUG;	/* in_place_cost found the place its own or free */
	return ret;
}

/* Step 1: one free run for the whole unit, or (one file) around its own piece. */
static errcode_t place_fit(struct planner *p, const struct unit *u, int *placed)
{
	blk64_t need = 0, limit = ext2fs_blocks_count(p->fs->super), start, stretch;
	blk64_t t = 0, cost = ~(blk64_t)0;
	struct layout_piece w;
	uint32_t k;
	errcode_t ret;

	*placed = 0;
	for (k = 0; k < u->n; k++) {
		uint32_t file = p->members[u->first + k];
		blk64_t n;

		ret = place_need(p, file, 0, &n);
		if (ret)
			return ret;
		need += n;
		if (planner_limit(p, file) < limit)
			limit = planner_limit(p, file);
	}
	if (need > p->largest_zone)
		return 0;
	if (u->n == 1)
		best_in_place(p, p->members[u->first], &t, &cost);
	if (!spacemap_best_fit(&p->sm, need, limit, 0, 0, &start, &stretch) &&
	    need <= cost) {
		w.start = planner_edge(p, &p->sm, start, stretch, need,
				       p->members + u->first, u->n);
		w.len = need;
		return place_members(p, u, &w, 1, placed);
	}
	if (cost != ~(blk64_t)0)
		return commit_in_place(p, p->members[u->first], t, placed);
	return 0;
}

/* Free stretches of SM below LIMIT, longest first. */
static errcode_t free_stretches(const struct spacemap *sm, blk64_t limit,
				struct layout_piece **out, size_t *n)
{
	struct layout_piece *f;
	size_t i;

	*n = 0;
	f = malloc((sm->n + 1) * sizeof(*f));
	if (!f)
		return ENOMEM;
	for (i = 0; i < sm->n && SM_SEG(sm, i).start < limit; i++) {
		const struct sm_seg gv = SM_SEG(sm, i), *g = &gv;

		if (g->owner != SM_FREE)
			continue;
		f[*n].start = g->start;
		f[(*n)++].len = g->start + g->len > limit ? limit - g->start : g->len;
	}
	sort_n(f, *n, sizeof(*f), runs_cmp_len_desc);
	*out = f;
	return 0;
}

static int piece_holds(const void *pieces, uint64_t i, const void *len)
{
	return ((const struct layout_piece *)pieces)[i].len >= *(const blk64_t *)len;
}

/*
 * The fewest of the stretches F (longest first) that hold LEFT blocks, the
 * last one a best fit, into RUNS (at most MAX); 0 when they do not.
 */
static uint32_t pick_runs(const struct layout_piece *f, size_t nf, blk64_t left,
			  struct layout_piece *runs, uint32_t max)
{
	uint32_t n = 0;
	size_t i = 0;

	while (left) {
		size_t lo;

		if (n >= max || i >= nf)
			return 0;
		if (f[i].len < left) {
			runs[n++] = f[i++];
			left -= runs[n - 1].len;
			continue;
		}
		/* The last: the shortest stretch that holds the rest. */
		lo = last_at_or_before(i, nf, piece_holds, f, &left);
		runs[n++] = (struct layout_piece){ f[lo].start, left };
		left = 0;
	}
	return n;
}

/*
 * Step 4, by free runs: the fewest that hold FILE (fewer than BEFORE),
 * largest first and the last one a best fit, in address order so that
 * reading runs forward; its extent tree at the start of the largest.
 * *NRUNS 0: none that reads faster than READ_NOW.
 */
static errcode_t partial_runs(struct planner *p, uint32_t file, uint32_t before,
			      double read_now, struct layout_piece *runs,
			      uint32_t *nruns, struct layout_piece *meta)
{
	struct layout_piece *f = NULL;
	blk64_t n = layout_stream_blocks(p->layout, &p->layout->files[file]);
	uint32_t need = 0, reserve = 0, tries;
	size_t nf;
	errcode_t ret;

	*nruns = 0;
	ret = free_stretches(&p->sm, planner_limit(p, file), &f, &nf);
	if (ret || !nf || before < 2)
		goto out;
	/* Room for the tree in the largest stretch; its size depends on the runs. */
	for (tries = 0; tries < 4; tries++) {
		if (f[0].len <= reserve)
			goto none;
		f[0].start += reserve;
		f[0].len -= reserve;
		*nruns = pick_runs(f, nf, n, runs, before - 1);
		f[0].start -= reserve;
		f[0].len += reserve;
		if (!*nruns)
			goto out;	/* no fewer pieces than now: leave it */
		sort_n(runs, *nruns, sizeof(*runs), compare_piece_start);
		ret = tree_need(p, file, runs, *nruns, &need);
		if (ret)
			goto none;
		if (need <= reserve)
			break;
		reserve = need + 1;
	}
	if (need > reserve)
		goto none;
	/* Fewer pieces further apart can read slower: only if it reads faster. */
	if (plan_read_seconds(p->layout, runs, *nruns) >= read_now)
		goto none;
	*meta = (struct layout_piece){ f[0].start, need };
	goto out;
none:
	*nruns = 0;
out:
	free(f);
	return ret;
}

/*
 * Step 4: fewer pieces than FILE had (as the scan found it), where best
 * is out of reach.  First a window of as few consecutive zones as take
 * it, holding nothing but free blocks and, for an extent-mapped file, its
 * own, which are staged out first (a write of at most
 * PARTIAL_WINDOW_SHARE of it): the pieces it leaves behind then join the
 * free space around the window instead of cutting it.  Else the largest
 * free runs (partial_runs), when that is fewer pieces.  A file the plan
 * put in fewer pieces already (compaction's turn for it) moves again only
 * into fewer still: the same number elsewhere would be a move for nothing.
 */
errcode_t place_partial(struct planner *p, uint32_t file)
{
	uint32_t now = planner_moves(p, file) ? planner_pieces_now(p, file) : 0;
	struct layout_piece *runs = NULL, meta = { 0, 0 };
	blk64_t stream = layout_stream_blocks(p->layout, &p->layout->files[file]), need;
	uint32_t before = layout_file_pieces(p->layout, &p->layout->files[file]), nruns = 0, most;
	int m, placed = 0;
	errcode_t ret;

	runs = malloc(((size_t)before + 1) * sizeof(*runs));
	if (!runs)
		return ENOMEM;
	ret = partial_runs(p, file, before, file_read_seconds(p, file), runs,
			   &nruns, &meta);
	most = nruns ? nruns : before;
	if (now && now < before) {
		if (nruns >= now)
			nruns = 0;
		if (most > now)
			most = now;
	}
	for (m = 1; !ret && !placed && m + 1 < (int)most &&
	     m <= PARTIAL_WINDOW_ZONES - 1; m++) {
		ret = place_need(p, file, m, &need);
		if (!ret)
			ret = window_partial(p, file, need, m,
					     (blk64_t)(stream * PARTIAL_WINDOW_SHARE),
					     &placed);
	}
	if (!ret && !placed && nruns)
		ret = planner_commit(p, file, MOVE_PARTIAL, runs, nruns, &meta,
				     meta.len ? 1 : 0, &placed);
	free(runs);
	return ret;
}


/* One file, all steps. */
static errcode_t place_single(struct planner *p, const struct unit *u)
{
	uint32_t file = p->members[u->first];
	uint32_t best = planner_best(p, file);
	blk64_t need;
	int placed = 0;
	errcode_t ret;

	if (best <= 1) {
		ret = place_fit(p, u, &placed);
		if (!ret && !placed) {
			ret = place_need(p, file, 0, &need);
			if (!ret)
				ret = window_place(p, u, need, 0, &placed);
		}
	} else {
		ret = place_need(p, file, best - 1, &need);
		if (!ret)
			ret = window_place(p, u, need, best - 1, &placed);
	}
	return ret;
}

errcode_t place_unit(struct planner *p, const struct unit *u, int *placed)
{
	uint32_t k;
	blk64_t need = 0, n;
	errcode_t ret;

	*placed = 0;
	if (u->n == 1)
		return place_single(p, u);
	for (k = 0; k < u->n; k++) {
		ret = place_need(p, p->members[u->first + k], 0, &n);
		if (ret)
			return ret;
		need += n;
	}
	ret = place_fit(p, u, placed);
	if (!ret && !*placed && need <= p->largest_zone)
		ret = window_place(p, u, need, 0, placed);
	if (ret || *placed)
		return ret;
	/* The set as a whole has no room: each member on its own. */
	for (k = 0; k < u->n; k++)
		p->pf[p->members[u->first + k]].flags &= ~PF_IN_SET;
	for (k = 0; k < u->n; k++) {
		struct unit one = { u->first + k, 1,
			layout_stream_blocks(p->layout, &p->layout->files[p->members[u->first + k]]) };

		if (!(p->pf[p->members[one.first]].flags & PF_PENDING))
			continue;
		ret = place_single(p, &one);
		if (ret)
			return ret;
	}
	return 0;
}
