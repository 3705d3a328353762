/*
 * window.c --- making room: when no free run holds a unit, find the
 * window of the block space that is cheapest to clear, move the files in
 * it out of the way, and put the unit there.
 *
 * The search runs over the zones laid end to end ("virtual" addresses
 * that skip the fixed metadata), so that a file larger than any zone can
 * be given a window that crosses just as many zone boundaries as its
 * `best` allows.  A window's cost is the blocks of the files that would
 * have to move out of it, each whole (a file cut in two would be worse
 * off); a window holding anything that must not move (metadata is skipped
 * by the addressing; pinned blocks, EA blocks, the unit's own blocks,
 * members of other interleave sets waiting their turn) is not a
 * candidate.  Files still waiting for their own move cost almost nothing:
 * moving them now to a contiguous place is their move.  The cheapest few
 * windows are then checked in order: every file to clear must fit,
 * contiguous, in the free space outside the window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"
#include "lower_bound.h"

#define WINDOW_CANDIDATES	8
#define COST_INF		(~(uint64_t)0)
/* Pieces of a file whose aligned windows are tried (the largest). */
#define ALIGNED_PIECES		8
/* Owners a sweep keeps owner_cost's answer for (direct-mapped). */
#define OWNER_CACHE		256

/* A segment of the space map in virtual addresses. */
struct window_seg {
	blk64_t		vstart;
	blk64_t		len;
	uint32_t	owner;
};

struct cand {
	blk64_t		x;
	uint64_t	cost;
};

struct sweep {
	struct planner	*p;
	struct window_seg	*v;
	size_t		nv;
	blk64_t		*zv;		/* virtual start of each zone, plus the total */
	blk64_t		total;
	blk64_t		need;
	int		maxcross;
	enum plan_move_kind kind;	/* of the moves out of the way */
	int		self_stage;	/* the unit's own blocks may be staged out */
	int		partial;	/* window_partial: no other file moves */
	uint64_t	budget;		/* candidates costing more are not tried (0: any) */
	struct cand	cand[WINDOW_CANDIDATES];
	int		ncand;
	/* window state */
	size_t		lo, hi;
	uint64_t	cost;
	uint64_t	blocked;	/* segments in the window that must not move */
	/*
	 * owner_cost's answers, which the planner's state fixes while the
	 * sweep and the aligned candidates cost windows: each owner enters
	 * and leaves the window at every segment of it, and each time its
	 * cost walked the file's extent tree blocks (planner_etb_now).  On
	 * a disk of a few large files in hundreds of thousands of pieces
	 * that walk was a sixth of the planning.  Owner + 1: 0 is none.
	 */
	uint64_t	known_owner[OWNER_CACHE];
	uint64_t	known_cost[OWNER_CACHE];
};

/*
 * What clearing OWNER's blocks from a window of NEED blocks costs, or
 * COST_INF.  Only files smaller than the window are moved out of its way.
 */
static uint64_t owner_cost(const struct planner *p, uint32_t owner, blk64_t need)
{
	blk64_t size;
	const struct planner_file *f;
	uint32_t file;

	if (owner == SM_FREE)
		return 0;
	if (owner < SM_FILE0)
		return COST_INF;
	file = owner - SM_FILE0;
	f = &p->pf[file];
	if (f->flags & (PF_UNMOVABLE | PF_IN_UNIT))
		return COST_INF;
	if ((f->flags & PF_IN_SET) && (f->flags & PF_PENDING))
		return COST_INF;
	/* A file still waiting for its own move is not consolidation's to move. */
	if (p->consolidating && (f->flags & PF_PENDING))
		return COST_INF;
	size = layout_stream_blocks(p->layout, &p->layout->files[file]) + planner_etb_now(p, file);
	if (size >= need)
		return COST_INF;
	return f->flags & PF_PENDING ? 1 : size;
}

/* owner_cost for the sweep S, kept (see known_owner). */
static uint64_t sweep_owner_cost(struct sweep *s, uint32_t owner)
{
	size_t i = owner % OWNER_CACHE;

	if (s->known_owner[i] != (uint64_t)owner + 1) {
		s->known_owner[i] = (uint64_t)owner + 1;
		s->known_cost[i] = owner_cost(s->p, owner, s->need);
	}
	return s->known_cost[i];
}

static errcode_t build_virtual(struct sweep *s)
{
	const struct layout *layout = s->p->layout;
	const struct spacemap *sm = &s->p->sm;
	size_t i, z = 0;

	s->zv = malloc((layout->nzones + 1) * sizeof(*s->zv));
	if (!s->zv || util_grow(&s->p->window_segs, &s->p->window_segs_cap,
				sm->n ? sm->n : 1, sizeof(*s->v)))
		return ENOMEM;
	s->v = s->p->window_segs;	/* the planner's, kept for the next window */
	s->total = 0;
	for (i = 0; i < layout->nzones; i++) {
		s->zv[i] = s->total;
		s->total += layout->zones[i].len;
	}
	s->zv[layout->nzones] = s->total;
	for (i = 0; i < sm->n; i++) {
		const struct sm_seg gv = SM_SEG(sm, i), *g = &gv;

		if (g->owner == SM_META)
			continue;
		while (z < layout->nzones &&
		       layout->zones[z].start + layout->zones[z].len <= g->start)
			z++;
		if (z >= layout->nzones || g->start < layout->zones[z].start ||
		    g->start + g->len > layout->zones[z].start + layout->zones[z].len)
			return PLAN_ERR_BUG;	/* zones and map disagree */
		s->v[s->nv].vstart = s->zv[z] + (g->start - layout->zones[z].start);
		s->v[s->nv].len = g->len;
		s->v[s->nv++].owner = g->owner;
	}
	return 0;
}

/* Zone holding virtual address X. */
static size_t vzone(const struct sweep *s, blk64_t x)
{
	return last_at_or_before(0, s->p->layout->nzones, blk_at_or_before,
				 s->zv, &x);
}

/* Whether G is the unit's own, to be staged out of the window (selfstage.c). */
static int own_staged(const struct sweep *s, const struct window_seg *g)
{
	return s->self_stage && g->owner >= SM_FILE0 &&
		(s->p->pf[g->owner - SM_FILE0].flags & PF_IN_UNIT);
}

/*
 * What window [X, X+NEED) costs for segment G: owner_cost, but for a
 * partial window (window_partial) only free blocks and the unit's own
 * (staged out, when it may be) are no obstacle.
 */
static uint64_t seg_cost(struct sweep *s, const struct window_seg *g)
{
	if (s->partial && g->owner != SM_FREE && !own_staged(s, g))
		return COST_INF;
	return sweep_owner_cost(s, g->owner);
}

static void seg_enter(struct sweep *s, const struct window_seg *g)
{
	uint64_t c = seg_cost(s, g);

	if (own_staged(s, g))
		s->cost += g->len;
	else if (c == COST_INF)
		s->blocked++;
	else if (g->owner != SM_FREE && s->p->owner_count[g->owner]++ == 0)
		s->cost += c;
}

static void seg_leave(struct sweep *s, const struct window_seg *g)
{
	uint64_t c = seg_cost(s, g);

	if (own_staged(s, g))
		s->cost -= g->len;
	else if (c == COST_INF)
		s->blocked--;
	else if (g->owner != SM_FREE && --s->p->owner_count[g->owner] == 0)
		s->cost -= c;
}

static void keep_candidate(struct sweep *s, blk64_t x)
{
	int i, j;

	for (i = 0; i < s->ncand; i++) {
		if (s->cand[i].x == x)
			return;
		if (s->cost < s->cand[i].cost)
			break;
	}
	if (i >= WINDOW_CANDIDATES)
		return;
	j = s->ncand < WINDOW_CANDIDATES ? s->ncand++ : WINDOW_CANDIDATES - 1;
	for (; j > i; j--)
		s->cand[j] = s->cand[j - 1];
	s->cand[i].x = x;
	s->cand[i].cost = s->cost;
}

/* Window [X, X+NEED): bring the segments overlapping it in and out. */
static void slide_to(struct sweep *s, blk64_t x)
{
	while (s->hi < s->nv && s->v[s->hi].vstart < x + s->need)
		seg_enter(s, &s->v[s->hi++]);
	while (s->lo < s->hi && s->v[s->lo].vstart + s->v[s->lo].len <= x)
		seg_leave(s, &s->v[s->lo++]);
}

static void sweep_all(struct sweep *s)
{
	size_t a = 0, b = 0;
	blk64_t last = ~(blk64_t)0;

	if (s->need > s->total)
		return;
	/* Windows starting where a segment starts or ending where one ends. */
	while (a < s->nv || b < s->nv) {
		blk64_t xa = a < s->nv ? s->v[a].vstart : ~(blk64_t)0;
		blk64_t xb = ~(blk64_t)0, x;

		while (b < s->nv && s->v[b].vstart + s->v[b].len < s->need)
			b++;
		if (b < s->nv)
			xb = s->v[b].vstart + s->v[b].len - s->need;
		if (xa <= xb) {
			x = xa;
			a++;
		} else {
			x = xb;
			b++;
		}
		if (x == last || x + s->need > s->total)
			continue;
		last = x;
		slide_to(s, x);
		if (s->blocked)
			continue;
		if ((int)(vzone(s, x + s->need - 1) - vzone(s, x)) > s->maxcross)
			continue;
		keep_candidate(s, x);
	}
	/* Leave the shared counters zeroed for the next search. */
	while (s->lo < s->hi)
		seg_leave(s, &s->v[s->lo++]);
}

/* Virtual address of physical block BLK; -1 when BLK is in no zone. */
static int virt_of(const struct sweep *s, blk64_t blk, blk64_t *v)
{
	int64_t z = planner_zone_of(s->p, blk);

	if (z < 0)
		return -1;
	*v = s->zv[z] + (blk - s->p->layout->zones[z].start);
	return 0;
}

/*
 * What window [X, X+NEED) costs FILE, a unit of its own whose stream
 * starts TREE blocks in: the blocks of the others to clear, plus the
 * blocks of FILE that are not already where the window puts them (those
 * that are stay, written not at all).  COST_INF when the window holds
 * something that must not move, or blocks of FILE elsewhere than the
 * window puts them (they would have to move out first).
 */
static uint64_t aligned_cost(struct sweep *s, uint32_t file, blk64_t tree,
			     blk64_t x)
{
	const struct planner *p = s->p;
	const struct layout_piece *r;
	struct layout_piece sole;
	uint64_t cost = 0, kept = 0;
	blk64_t off = 0, v;
	uint32_t n, i, self = SM_FILE0 + file;
	size_t a, k;

	if (x + s->need > s->total ||
	    (int)(vzone(s, x + s->need - 1) - vzone(s, x)) > s->maxcross)
		return COST_INF;
	/* Its own runs: in place, or in the window at the wrong place. */
	r = planner_runs(p, file, &n, &sole);
	for (i = 0; i < n; off += r[i].len, i++) {
		if (virt_of(s, r[i].start, &v))
			return COST_INF;
		if (v == x + tree + off)
			kept += r[i].len;
		else if (v < x + s->need && v + r[i].len > x)
			return COST_INF;
	}
	/* The others in the window, each once. */
	for (a = 0; a < s->nv && s->v[a].vstart + s->v[a].len <= x; a++)
		;
	for (k = a; k < s->nv && s->v[k].vstart < x + s->need; k++) {
		uint32_t o = s->v[k].owner;
		uint64_t c;

		if (o == SM_FREE || o == self)
			continue;
		c = sweep_owner_cost(s, o);
		if (c == COST_INF) {
			cost = COST_INF;
			break;
		}
		if (!p->owner_count[o]++)
			cost += c;
	}
	for (k = a; k < s->nv && s->v[k].vstart < x + s->need; k++)
		if (s->v[k].owner >= SM_FILE0)
			p->owner_count[s->v[k].owner] = 0;
	if (cost == COST_INF)
		return COST_INF;
	return cost + (layout_stream_blocks(p->layout, &p->layout->files[file]) - kept);
}

/*
 * A unit of one extent-mapped file may be given a window that holds part
 * of it already in place: for each of its pieces, the window that puts
 * that piece where the file's stream goes.  Staying costs no write, so on
 * a disk where the file is in a few large pieces among small files, the
 * window around its largest piece is often far cheaper than any window
 * clear of it.  (A block-mapped file's indirect blocks would have to be
 * rewritten in place: not for those.)  The candidates found by the sweep
 * are costed the same way first: their file is written whole.
 */
static void aligned_candidates(struct sweep *s, const struct unit *u)
{
	struct planner *p = s->p;
	uint32_t file = p->members[u->first], n, i;
	const struct layout_piece *r;
	struct layout_piece sole;
	blk64_t stream = layout_stream_blocks(p->layout, &p->layout->files[file]);
	blk64_t tree = s->need - stream, off = 0, v;
	struct layout_piece top[ALIGNED_PIECES];
	blk64_t topoff[ALIGNED_PIECES];
	int k, ntop = 0;

	for (k = 0; k < s->ncand; k++)
		s->cand[k].cost += stream;
	if (u->n != 1 || !(p->layout->files[file].flags & LAYOUT_F_EXTENTS) ||
	    s->need < stream)
		return;
	/* Its largest pieces only: each costs a pass over all of them. */
	r = planner_runs(p, file, &n, &sole);
	for (i = 0; i < n; off += r[i].len, i++) {
		int j;

		if (ntop == ALIGNED_PIECES && top[ntop - 1].len >= r[i].len)
			continue;
		j = ntop < ALIGNED_PIECES ? ntop++ : ALIGNED_PIECES - 1;
		for (; j > 0 && top[j - 1].len < r[i].len; j--) {
			top[j] = top[j - 1];
			topoff[j] = topoff[j - 1];
		}
		top[j] = (struct layout_piece){ r[i].start, r[i].len };
		topoff[j] = off;
	}
	for (k = 0; k < ntop; k++) {
		uint64_t c;

		if (virt_of(s, top[k].start, &v) || v < tree + topoff[k])
			continue;
		c = aligned_cost(s, file, tree, v - tree - topoff[k]);
		if (c == COST_INF)
			continue;
		s->cost = c;
		keep_candidate(s, v - tree - topoff[k]);
	}
}

/* Physical runs of virtual window [X, X+NEED). */
static size_t window_runs(const struct sweep *s, blk64_t x,
			  struct layout_piece *runs, size_t cap)
{
	const struct layout *layout = s->p->layout;
	blk64_t left = s->need;
	size_t z = vzone(s, x), n = 0;

	while (left && z < layout->nzones && n < cap) {
		blk64_t off = x - s->zv[z];
		blk64_t len = layout->zones[z].len - off < left ?
			layout->zones[z].len - off : left;

		runs[n].start = layout->zones[z].start + off;
		runs[n++].len = len;
		left -= len;
		x += len;
		z++;
	}
	return left ? 0 : n;
}

static int cmp_evacuee(const void *a, const void *b, void *arg)
{
	const struct planner *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	blk64_t sx = layout_stream_blocks(p->layout, &p->layout->files[x]) + planner_etb_now(p, x);
	blk64_t sy = layout_stream_blocks(p->layout, &p->layout->files[y]) + planner_etb_now(p, y);

	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Whether RUN holds nothing but free blocks and the unit's own. */
static int clear_but_unit(const struct planner *p, const struct layout_piece *run)
{
	const struct spacemap *sm = &p->sm;
	size_t g;

	for (g = spacemap_find(sm, run->start);
	     g < sm->n && SM_SEG(sm, g).start < run->start + run->len; g++) {
		uint32_t o = SM_SEG(sm, g).owner;

		if (o != SM_FREE &&
		    (o < SM_FILE0 || !(p->pf[o - SM_FILE0].flags & PF_IN_UNIT)))
			return 0;
	}
	return 1;
}

/*
 * Clear candidate window X and place U in it (none when U is NULL).
 * *placed 0: it could not be cleared (nothing changed), or clearing
 * started and then failed (some files moved out: the caller takes them
 * back, snapshot.c).
 */
static errcode_t try_window(struct sweep *s, const struct unit *u, blk64_t x,
			    int *placed)
{
	struct planner *p = s->p;
	struct layout_piece runs[64];
	uint32_t *ev = NULL;
	blk64_t *at = NULL, excl_s, excl_e, stretch;
	size_t nruns, nev = 0, evcap = 0, i, k, mark;
	errcode_t ret = 0;
	int ok;

	*placed = 0;
	nruns = window_runs(s, x, runs, 64);
	if (!nruns)
		return 0;
	excl_s = runs[0].start;
	excl_e = runs[nruns - 1].start + runs[nruns - 1].len;
	for (k = 0; u && k < u->n; k++)
		if (excl_e > planner_limit(p, p->members[u->first + k]))
			return 0;
	/* The files in the window, largest first. */
	for (i = 0; i < nruns && !ret; i++) {
		const struct spacemap *sm = &p->sm;
		size_t g;

		for (g = spacemap_find(sm, runs[i].start);
		     g < sm->n && SM_SEG(sm, g).start < runs[i].start + runs[i].len; g++) {
			uint32_t o = SM_SEG(sm, g).owner;

			/* The unit's own blocks here are in place (aligned_cost). */
			if (o < SM_FILE0 || (p->pf[o - SM_FILE0].flags & PF_IN_UNIT) ||
			    p->owner_count[o]++)
				continue;
			ret = grow_n(&ev, &evcap, nev + 1, sizeof(*ev));
			if (ret)
				break;
			ev[nev++] = o - SM_FILE0;
		}
	}
	for (i = 0; i < nev; i++)
		p->owner_count[ev[i] + SM_FILE0] = 0;
	if (!ret && !(at = malloc((nev + 1) * sizeof(*at))))
		ret = ENOMEM;
	if (ret)
		goto out;
	sort_n_r(ev, nev, sizeof(*ev), cmp_evacuee, p);

	/* Will they all fit outside?  Try, then take the try back. */
	mark = spacemap_mark(&p->sm);
	for (i = 0; i < nev; i++) {
		blk64_t need;

		/* The size place_evacuee() will give it, or the edge is off. */
		ret = evacuee_need(p, ev[i], &need);
		if (ret || !need)
			break;
		if (spacemap_best_fit(&p->sm, need, planner_limit(p, ev[i]),
				      excl_s, excl_e, &at[i], &stretch))
			break;
		at[i] = planner_edge(p, &p->sm, at[i], stretch, need, &ev[i], 1);
		ret = spacemap_assign(&p->sm, at[i], need, SM_FILE0 + ev[i]);
		if (ret)
			break;
	}
	spacemap_rollback(&p->sm, mark);
	if (!ret)
		ret = p->sm.err;
	if (ret || i < nev)
		goto out;
	/* They do: move them, then the unit. */
	for (i = 0; i < nev; i++) {
		ret = place_evacuee(p, ev[i], s->kind, at[i], excl_s, excl_e, &ok);
		if (ret || !ok)
			goto out;
	}
	if (s->self_stage) {
		ret = selfstage_out(p, p->members[u->first], excl_s, excl_e, &ok);
		if (ret || !ok)
			goto out;
	}
	for (i = 0; i < nruns; i++)
		if (!clear_but_unit(p, &runs[i]))
			goto out;
	if (!u) {
		*placed = 1;
		goto out;
	}
	ret = place_members(p, u, runs, nruns, placed);
out:
	free(ev);
	free(at);
	return ret;
}

/* window_place, and (PARTIAL) window_partial with SELF_STAGE and BUDGET. */
static errcode_t place_in_window(struct planner *p, const struct unit *u,
				 blk64_t need, int maxcross, int partial,
				 int self_stage, uint64_t budget, int *placed)
{
	struct sweep s;
	uint32_t k;
	int i;
	errcode_t ret;

	*placed = 0;
	ret = planner_owner_count(p);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.need = need;
	s.maxcross = maxcross;
	s.kind = MOVE_EVACUATE;
	s.partial = partial;
	s.self_stage = self_stage;
	s.budget = budget;
	for (k = 0; k < u->n; k++)
		p->pf[p->members[u->first + k]].flags |= PF_IN_UNIT;
	ret = build_virtual(&s);
	if (!ret) {
		sweep_all(&s);
		if (!self_stage)
			aligned_candidates(&s, u);
	}
	/*
	 * A window that cannot be finished is taken back, the files moved
	 * out of it included: they would have moved for nothing.
	 */
	for (i = 0; !ret && i < s.ncand && !*placed; i++) {
		if (budget && s.cand[i].cost > budget)
			continue;
		ret = snapshot_take(p);
		if (ret)
			break;
		ret = try_window(&s, u, s.cand[i].x, placed);
		if (ret || !*placed)
			snapshot_restore(p);
		else
			snapshot_forget(p);
	}
	for (k = 0; k < u->n; k++)
		p->pf[p->members[u->first + k]].flags &= ~PF_IN_UNIT;
	free(s.zv);
	return ret;
}

errcode_t window_place(struct planner *p, const struct unit *u, blk64_t need,
		       int maxcross, int *placed)
{
	return place_in_window(p, u, need, maxcross, 0, 0, 0, placed);
}

errcode_t window_partial(struct planner *p, uint32_t file, blk64_t need,
			 int maxcross, blk64_t budget, int *placed)
{
	struct unit one = { planner_member_at(p, file), 1,
		layout_stream_blocks(p->layout, &p->layout->files[file]) };

	*placed = 0;
	if (one.first == NO_MEMBER || !budget)
		return 0;
	/* A block-mapped file's own blocks stay in the way (selfstage.c). */
	return place_in_window(p, &one, need, maxcross, 1,
			       !!(p->layout->files[file].flags & LAYOUT_F_EXTENTS),
			       budget, placed);
}

errcode_t window_clear(struct planner *p, blk64_t need, blk64_t budget,
		       int *cleared)
{
	struct sweep s;
	int i;
	errcode_t ret;

	*cleared = 0;
	ret = planner_owner_count(p);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.need = need;
	s.kind = MOVE_CONSOLIDATE;
	ret = build_virtual(&s);
	if (!ret)
		sweep_all(&s);
	for (i = 0; !ret && i < s.ncand && !*cleared; i++) {
		if (s.cand[i].cost > budget)
			continue;
		ret = snapshot_take(p);
		if (ret)
			break;
		ret = try_window(&s, NULL, s.cand[i].x, cleared);
		if (ret || !*cleared)
			snapshot_restore(p);
		else
			snapshot_forget(p);
	}
	free(s.zv);
	return ret;
}
