/*
 * consolidate.c --- after every file had its turn, leave free space in
 * few large runs.
 *
 * Placing files and packing them leaves holes where they were: between
 * two free runs of a zone there is often nothing but a small file or two
 * (a tree untarred among recordings, a directory).  Moving those into a
 * hole elsewhere joins the two runs into one.  So:
 *
 *   - a *join* is a pair of free runs next to each other in a zone and
 *     the files between them, when every one of those files may move
 *     (settled: not waiting for a move of its own, in one piece, all its
 *     blocks between the two runs);
 *   - its cost is the blocks of those files;
 *   - joins are made cheapest first, each file going to the smallest free
 *     run outside the two that holds it, at the end that keeps the rest
 *     of that run whole (planner_edge), so every join means one free run
 *     less (two when a file fills a hole exactly), never more;
 *   - a join is taken back if it would leave the largest free run smaller
 *     than it is, or smaller than it was before the run when it is larger
 *     now;
 *   - until the write budget is spent (a share of what needed moving, and
 *     no more than the whole run's cap leaves after placing) or no join
 *     is possible.  What is left is at most one free run per zone, plus
 *     the holes no join could close (a file between them that must not
 *     move, or that fits nowhere else).
 *
 * Every join is a handful of whole-file moves to free blocks, crash-safe
 * like any other.  Joins reach a fixed point: a second run over the
 * result finds the same joins impossible (and a run with nothing else to
 * do has no budget unless asked to pack).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"

struct join {
	blk64_t		lo, hi;		/* the files between the runs: [lo, hi) */
	blk64_t		cost;		/* blocks they own */
};

/* A segment between two free runs: its file and blocks. */
struct sep {
	uint32_t	file;
	blk64_t		blocks;
};

struct consolidate_state {
	struct planner	*p;
	blk64_t		budget;		/* blocks joins may still write */
	blk64_t		copy_cap;	/* copy_blocks the plan may reach (restore) */
	blk64_t		largest_before;	/* before the run */
	int		over_budget;	/* a join or restore was left for want of budget */
	struct join	*joins;
	size_t		njoins, cap;
	uint32_t	*files;		/* the files of the join at hand */
	size_t		nfiles;
	struct sep	*sep;		/* separator_files' scratch */
	size_t		sep_cap;
	uint32_t	*slot;		/* ... and its table of files: sep index + 1, 0 empty */
	size_t		slot_cap;
};

/* Whether FILE may move to close a hole: settled and in one piece. */
static int settled(const struct planner *p, uint32_t file)
{
	const struct layout_piece *r;
	const struct file_state *st;
	struct layout_piece sole;
	uint32_t n;

	if (p->pf[file].flags & (PF_UNMOVABLE | PF_PENDING))
		return 0;
	/*
	 * One run is one piece: most files here, told by the count alone
	 * (every segment of a stretch asks; the runs are elsewhere in memory).
	 */
	st = planner_state_if(p, file);
	if ((st ? st->nruns : layout_file_pieces(p->layout, &p->layout->files[file])) == 1)
		return 1;
	r = planner_runs(p, file, &n, &sole);
	return plan_pieces(r, n) == 1;
}

/* Blocks FILE owns now: its stream and its extent tree. */
static blk64_t owned(const struct planner *p, uint32_t file)
{
	return layout_stream_blocks(p->layout, &p->layout->files[file]) + planner_etb_now(p, file);
}

/*
 * The blocks of a join past which it is no use: over the budget, when
 * that was found before (over_budget says nothing more then).  Once the
 * budget is spent, a round's scan of the whole map stops a step into
 * each stretch between free runs instead of walking all its files.
 */
static blk64_t no_use_past(const struct consolidate_state *c)
{
	return c->over_budget ? c->budget : ~(blk64_t)0;
}

/*
 * Join the entries of c->sep[0, N) that have the same file, each file's
 * blocks summed into its first entry; *N becomes their number, the
 * files in the order first seen.  An open-addressed table of twice as
 * many slots as entries, made on the spot: most stretches hold a few
 * files, and a sort by file made a comparison call per step.
 */
static errcode_t tally_sep(struct consolidate_state *c, size_t *n)
{
	size_t size = 4, mask, k, m = 0;

	if (*n < 2)
		return 0;
	while (size < 2 * *n)
		size *= 2;
	if (grow_n(&c->slot, &c->slot_cap, size, sizeof(*c->slot)))
		return ENOMEM;
	mask = size - 1;
	memset(c->slot, 0, size * sizeof(*c->slot));
	for (k = 0; k < *n; k++) {
		uint32_t f = c->sep[k].file;
		size_t h = (f * 2654435761u) & mask;

		while (c->slot[h] && c->sep[c->slot[h] - 1].file != f)
			h = (h + 1) & mask;
		if (c->slot[h]) {
			c->sep[c->slot[h] - 1].blocks += c->sep[k].blocks;
		} else {
			c->sep[m] = c->sep[k];
			c->slot[h] = (uint32_t)++m;
		}
	}
	*n = m;
	return 0;
}

/*
 * The files between the free runs around [LO, HI) into c->files, if every
 * block there belongs to a settled file with all its blocks there, and
 * they are no more than LIMIT blocks; 0 otherwise.  *COST: their blocks.
 * Their segments are tallied per file in c->sep through a small hash
 * table of the files seen (a count for every file of the filesystem
 * would be pages touched for a few files; sorting the segments by file,
 * a sort for each of thousands of joins tried); the order of c->files
 * does not matter (try_join sorts them).
 */
static errcode_t separator_files(struct consolidate_state *c, blk64_t lo, blk64_t hi,
				 blk64_t limit, blk64_t *cost, int *ok)
{
	struct planner *p = c->p;
	const struct spacemap *sm = &p->sm;
	blk64_t walked = 0;
	size_t s, k, n = 0;

	c->nfiles = 0;
	*cost = 0;
	*ok = 1;
	for (s = spacemap_find(sm, lo); s < sm->n && SM_SEG(sm, s).start < hi; s++) {
		const struct sm_seg g = SM_SEG(sm, s);

		walked += g.len;
		if (g.owner < SM_FILE0 || walked > limit || !settled(p, g.owner - SM_FILE0)) {
			*ok = 0;
			return 0;
		}
		if (grow_n(&c->sep, &c->sep_cap, n + 1, sizeof(*c->sep)))
			return ENOMEM;
		c->sep[n].file = g.owner - SM_FILE0;
		c->sep[n++].blocks = g.len;
	}
	if (tally_sep(c, &n))
		return ENOMEM;
	for (k = 0; k < n; k++) {
		uint32_t f = c->sep[k].file;

		/* A block of it elsewhere would be a new hole when it moves. */
		if (c->sep[k].blocks != owned(p, f))
			*ok = 0;
		c->files[c->nfiles++] = f;
		*cost += c->sep[k].blocks;
	}
	return 0;
}

static int cmp_join(const void *a, const void *b)
{
	const struct join *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every join the budget allows, cheapest first. */
static errcode_t find_joins(struct consolidate_state *c)
{
	const struct spacemap *sm = &c->p->sm;
	size_t s, last = SIZE_MAX;

	c->njoins = 0;
	for (s = 0; s < sm->n; s++) {
		const struct sm_seg gv = SM_SEG(sm, s), *g = &gv;
		blk64_t lo, hi, cost;
		errcode_t ret;
		int ok;

		if (g->owner == SM_META)
			last = SIZE_MAX;	/* the next zone */
		if (g->owner != SM_FREE)
			continue;
		if (last != SIZE_MAX) {
			lo = SM_SEG(sm, last).start + SM_SEG(sm, last).len;
			hi = g->start;
			/* Not when something between them must stay. */
			ret = separator_files(c, lo, hi, no_use_past(c), &cost, &ok);
			if (ret)
				return ret;
			if (ok) {
				if (cost > c->budget)
					c->over_budget = 1;
				else if (grow_n(&c->joins, &c->cap, c->njoins + 1,
						sizeof(*c->joins)))
					return ENOMEM;
				else
					c->joins[c->njoins++] = (struct join){ lo, hi, cost };
			}
		}
		last = s;
	}
	sort_n(c->joins, c->njoins, sizeof(*c->joins), cmp_join);
	return 0;
}

/* FILE, whole, to AT: its extent tree first, then its stream (*DONE 0: no fit). */
static errcode_t commit_whole(struct planner *p, uint32_t file, blk64_t at,
			      blk64_t need, int *done)
{
	blk64_t n = layout_stream_blocks(p->layout, &p->layout->files[file]);
	struct layout_piece meta = { at, need - n }, data = { at + (need - n), n };

	return planner_commit(p, file, MOVE_CONSOLIDATE, &data, 1, &meta,
			      meta.len ? 1 : 0, done);
}

/* Largest first, then by file: the order a join's files move in. */
static int cmp_sep_desc(const void *a, const void *b)
{
	const struct sep *x = a, *y = b;

	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/*
 * c->files largest first.  separator_files left them in c->sep with their
 * blocks, all they own (the join stands): sorted there, no file's
 * figures looked up again at each comparison.
 */
static void files_largest_first(struct consolidate_state *c)
{
	size_t k;

	sort_n(c->sep, c->nfiles, sizeof(*c->sep), cmp_sep_desc);
	for (k = 0; k < c->nfiles; k++)
		c->files[k] = c->sep[k].file;
}

/*
 * Move the files of join J (c->files) out, largest first, each to the
 * smallest free run outside the two runs it joins.  *DONE 0: taken back
 * (no room, or the largest run would shrink).
 */
static errcode_t try_join(struct consolidate_state *c, const struct join *j, int *done)
{
	struct planner *p = c->p;
	const struct spacemap *sm = &p->sm;
	uint64_t ext0, ext1;
	blk64_t free0, free1, big0, big1, left, right, copy0;
	size_t k, s;
	errcode_t ret;

	*done = 0;
	s = spacemap_find(sm, j->lo - 1);
	left = SM_SEG(sm, s).start;
	s = spacemap_find(sm, j->hi);
	right = SM_SEG(sm, s).start + SM_SEG(sm, s).len;
	spacemap_free_stats(sm, &ext0, &free0, &big0);
	files_largest_first(c);
	ret = snapshot_take(p);
	if (ret)
		return ret;
	copy0 = p->plan->copy_blocks;
	for (k = 0; !ret && k < c->nfiles; k++) {
		uint32_t f = c->files[k];
		blk64_t need, at, stretch;
		int moved;

		ret = evacuee_need(p, f, &need);
		if (ret || !need)
			break;	/* (!need: cannot move it, no join here) */
		if (spacemap_best_fit(&p->sm, need, planner_limit(p, f), left, right,
				      &at, &stretch))
			break;
		at = planner_edge(p, &p->sm, at, stretch, need, &f, 1);
		ret = commit_whole(p, f, at, need, &moved);
		if (!ret && !moved)
			break;
	}
	if (!ret && k == c->nfiles) {
		spacemap_free_stats(&p->sm, &ext1, &free1, &big1);
		*done = ext1 < ext0 && p->plan->copy_blocks - copy0 <= c->budget &&
			big1 >= (big0 < c->largest_before ? big0 : c->largest_before);
	}
	if (ret || !*done) {
		snapshot_restore(p);
		*done = 0;
		return ret;
	}
	c->budget -= p->plan->copy_blocks - copy0;
	snapshot_forget(p);
	return 0;
}

/* Whether the files between [LO, HI) still join two free runs (*OK). */
static errcode_t still_joins(struct consolidate_state *c, const struct join *j,
			     blk64_t *cost, int *ok)
{
	const struct spacemap *sm = &c->p->sm;

	*ok = 0;
	if (!spacemap_is(sm, j->lo - 1, 1, SM_FREE) || !spacemap_is(sm, j->hi, 1, SM_FREE))
		return 0;
	return separator_files(c, j->lo, j->hi, no_use_past(c), cost, ok);
}

/* Joins, in rounds: a join makes runs larger, and new joins of them possible. */
static errcode_t join_all(struct consolidate_state *c)
{
	errcode_t ret = 0;
	int any = 1;

	while (any && !ret) {
		size_t i;

		any = 0;
		ret = find_joins(c);
		for (i = 0; !ret && i < c->njoins; i++) {
			blk64_t cost;
			int done, ok;

			ret = planner_check(c->p);
			if (ret)
				break;
			if (c->joins[i].cost > c->budget) {
				/* Cheapest first: none after it fits either. */
				c->over_budget = 1;
				break;
			}
			ret = still_joins(c, &c->joins[i], &cost, &ok);
			if (ret)
				break;
			if (!ok)
				continue;
			if (cost > c->budget) {
				c->over_budget = 1;
				continue;
			}
			ret = try_join(c, &c->joins[i], &done);
			any |= done;
		}
	}
	return ret;
}

/*
 * Try clearing the cheapest window of the largest free run's old size,
 * writing at most BUDGET blocks, the whole plan within copy_cap: the files
 * in it move to holes elsewhere.  It works when that leaves no more free
 * runs than now; *WORKS says whether it did, and with KEEP the plan keeps
 * it (else it is always taken back).
 */
static errcode_t clear_largest(struct consolidate_state *c, blk64_t budget, int keep,
			       int *works)
{
	struct planner *p = c->p;
	uint64_t ext0, ext1;
	blk64_t fb, big0, big1;
	int cleared = 0;
	errcode_t ret;

	*works = 0;
	spacemap_free_stats(&p->sm, &ext0, &fb, &big0);
	if (big0 >= c->largest_before)
		return 0;
	ret = planner_check(p);
	if (!ret)
		ret = snapshot_take(p);
	if (ret)
		return ret;
	ret = window_clear(p, c->largest_before, budget, &cleared);
	if (!ret && cleared) {
		spacemap_free_stats(&p->sm, &ext1, &fb, &big1);
		*works = ext1 <= ext0 && big1 >= c->largest_before &&
			(!keep || p->plan->copy_blocks <= c->copy_cap);
	}
	if (ret || !*works || !keep)
		snapshot_restore(p);
	else
		snapshot_forget(p);
	return ret;
}

/*
 * When the largest free run is smaller than before the run (files that
 * had nowhere else to go took part of it), bring it back if the budget
 * allows (clear_largest).  *DONE: it did.
 */
static errcode_t restore_largest(struct consolidate_state *c, int *done)
{
	struct planner *p = c->p;
	blk64_t budget;
	int would = 0;
	errcode_t ret;

	*done = 0;
	budget = c->copy_cap > p->plan->copy_blocks ?
		c->copy_cap - p->plan->copy_blocks : 0;
	ret = clear_largest(c, budget, 1, done);
	/* Would a window have worked with more to spend? */
	if (!ret && !*done && c->copy_cap != ~(blk64_t)0)
		ret = clear_largest(c, ~(blk64_t)0, 0, &would);
	c->over_budget |= would;
	return ret;
}

/* Free runs in zone Z, counted up to 2. */
static int zone_runs(const struct planner *p, int64_t z)
{
	const struct layout_zone *zn = &p->layout->zones[z];
	const struct spacemap *sm = &p->sm;
	size_t s;
	int n = 0;

	for (s = spacemap_find(sm, zn->start);
	     s < sm->n && SM_SEG(sm, s).start < zn->start + zn->len && n < 2; s++)
		n += SM_SEG(sm, s).owner == SM_FREE;
	return n;
}

/*
 * With --pack, what joins left: every zone with more than one free run
 * packed whole (compact.c): its files slide to the start of each stretch
 * between what must not move, its free space to the end.  Taken back
 * unless that leaves fewer free runs, the largest no smaller, and no
 * file in more pieces.
 */
static errcode_t pack_zones(struct consolidate_state *c)
{
	struct planner *p = c->p;
	uint64_t z, ext0, ext1;
	blk64_t fb, big0, big1;
	errcode_t ret = 0;

	for (z = 0; !ret && z < p->layout->nzones; z++) {
		int complete = 0, keep = 0;

		if (zone_runs(p, z) < 2)
			continue;
		ret = planner_check(p);
		if (!ret)
			ret = snapshot_take(p);
		if (ret)
			break;
		spacemap_free_stats(&p->sm, &ext0, &fb, &big0);
		ret = compact_place(p, NULL, 0, z, &complete);
		if (!ret && complete && !snapshot_any_worse(p)) {
			spacemap_free_stats(&p->sm, &ext1, &fb, &big1);
			keep = ext1 < ext0 &&
				big1 >= (big0 < c->largest_before ? big0 : c->largest_before);
		}
		if (ret || !keep)
			snapshot_restore(p);
		else
			snapshot_forget(p);
	}
	return ret;
}

errcode_t consolidate(struct planner *p, blk64_t needed, blk64_t largest_before,
		      int pack, int *over_budget)
{
	struct consolidate_state c;
	blk64_t room;
	errcode_t ret;
	int done = 0;

	memset(&c, 0, sizeof(c));
	c.p = p;
	c.budget = pack ? ~(blk64_t)0 : (blk64_t)(needed * CONSOLIDATE_JOIN_SHARE);
	c.copy_cap = pack ? ~(blk64_t)0 :
		plan_write_target(needed, planner_rebuilt_blocks(p));
	c.largest_before = largest_before;
	/* Joins too stay within the whole run's cap: placing spent some of it. */
	room = c.copy_cap > p->plan->copy_blocks ? c.copy_cap - p->plan->copy_blocks : 0;
	if (c.budget > room)
		c.budget = room;
	c.files = malloc((p->layout->nfiles + 1) * sizeof(*c.files));
	if (!c.files)
		return ENOMEM;
	p->consolidating = 1;
	ret = join_all(&c);
	if (!ret)
		ret = restore_largest(&c, &done);
	if (!ret && done) {
		/* What the repair left of the whole run's cap bounds the joins too. */
		room = c.copy_cap > p->plan->copy_blocks ?
			c.copy_cap - p->plan->copy_blocks : 0;
		if (c.budget > room)
			c.budget = room;
		ret = join_all(&c);
	}
	if (!ret && pack) {
		ret = pack_zones(&c);
		if (!ret)
			ret = join_all(&c);
	}
	p->consolidating = 0;
	*over_budget = c.over_budget;
	free(c.joins);
	free(c.files);
	free(c.sep);
	free(c.slot);
	return ret;
}
