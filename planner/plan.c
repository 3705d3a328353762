/*
 * plan.c --- one plan of the planner: its setup (the space map, the
 * candidates, the units), the order of its steps, and what a second run
 * would do first, done now.  Which variants are made and which is kept
 * is plan_search.c's; the figures of the finished plan are
 * plan_figures.c's.  Each move it records goes through filestate.c.
 *
 * The plan is a list of moves carried out in order.  Planning simulates
 * them on a space map (spacemap.c): a move's new blocks must be free when
 * it is planned, and its old blocks are free for the moves after it, as
 * they will be on disk once its switch is durable.  So executing the
 * moves in order never writes over a block in use.
 *
 * Units are placed largest first: big files get the best chance at the
 * large free runs, and the small ones fill the holes the big ones leave
 * (best fit keeps the large runs large).  The policies for one unit are
 * in place.c, making room in window.c; what is left after that is packed
 * by compact.c, and what is left then gets fewer pieces (place.c).
 */
#include <errno.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>	/* malloc_trim */
#endif
#include <string.h>

#include "planner_int.h"
#include "array.h"

/* More turns for the files still left, while each round places some. */
#define PLACE_ROUNDS	4
/* Zones packed whole, at most, to make room for what is left. */
#define CONSOLIDATE_ZONES	4

errcode_t planner_owner_count(struct planner *p)
{
	if (!p->owner_count)
		p->owner_count = calloc(p->layout->nfiles + SM_FILE0,
					sizeof(*p->owner_count));
	return p->owner_count ? 0 : ENOMEM;
}

errcode_t planner_check(struct planner *p)
{
	/* Packing and consolidating come after the last file's turn: not done yet. */
	uint64_t done = p->steps_done < p->steps_total ? p->steps_done :
		p->steps_total ? p->steps_total - 1 : 0;

	if (p->progress && p->progress(p->progress_priv, E2F_PHASE_PLAN, done,
				       p->steps_total))
		return E2F_ERR_CANCELLED;
	return 0;
}

/* Whether candidate F is not at best: pending, or placed in more pieces than best. */
static int short_of_best(const struct planner *p, uint32_t f)
{
	if (planner_member_at(p, f) == NO_MEMBER || (p->pf[f].flags & PF_UNMOVABLE))
		return 0;
	return (p->pf[f].flags & PF_PENDING) ||
	       (planner_moves(p, f) && planner_pieces_now(p, f) > planner_best(p, f));
}

/* Candidates not at best. */
static uint64_t not_best(const struct planner *p)
{
	uint64_t i, n = 0;

	for (i = 0; i < p->nmembers; i++)
		n += short_of_best(p, p->members[i]);
	return n;
}

/*
 * The zone not yet TRIED with the most room for the files short of best,
 * or -1.  Packing a zone gives them its free blocks and their own blocks
 * there (one that does not fit moves out), so both count, as
 * tests/cli/defrag-nearfull.py's zone_room counts a zone's room.  Free
 * blocks alone miss the zone a file short of best fills: a zone with no
 * free block may be the only one with room for another file once the
 * file filling it moves out.  And a zone once packed is not packed again
 * in its rank's stead: ranks change as zones are packed, and the same
 * zone coming up twice would keep the one with room for the last file
 * from ever coming up.
 */
static int64_t roomiest_zone(const struct planner *p, const uint8_t *tried)
{
	const struct layout *layout = p->layout;
	blk64_t *room, best = 0;
	int64_t z = -1;
	uint64_t i;
	size_t s;

	room = calloc(layout->nzones + 1, sizeof(*room));
	if (!room)
		return -1;
	for (s = 0; s < p->sm.n; s++) {
		const struct sm_seg g = SM_SEG(&p->sm, s);
		int64_t k;

		if (g.owner != SM_FREE &&
		    (g.owner < SM_FILE0 || !short_of_best(p, g.owner - SM_FILE0)))
			continue;
		k = planner_zone_of(p, g.start);
		if (k >= 0)
			room[k] += g.len;
	}
	for (i = 0; i < layout->nzones; i++)
		if (!tried[i] && room[i] > best) {
			best = room[i];
			z = i;
		}
	free(room);
	return z;
}

/* Index of FILE in p->members, for a unit of its own; -1 if not a candidate. */
static int64_t member_index(const struct planner *p, uint32_t file)
{
	uint32_t m = planner_member_at(p, file);

	return m == NO_MEMBER ? -1 : (int64_t)m;
}

/* Stream blocks of the candidates the plan moves (below). */
static blk64_t needed_blocks(const struct planner *p);

/* What the plan may write (plan_write_target). */
static blk64_t write_target(const struct planner *p)
{
	return plan_write_target(needed_blocks(p), planner_rebuilt_blocks(p));
}

/*
 * One compaction (compact_place), and what it leaves: files it moved out
 * of the way without finding them a place get a turn of their own.
 * *KEEP: it completed, leaves no file in more pieces than before and
 * gains something (a selected file in fewer pieces); *STUCK: it ran out
 * of room half-way.
 */
static errcode_t compact_once(struct planner *p, const struct unit *u,
			      size_t n, int64_t zone, int *keep, int *stuck)
{
	uint32_t *left = NULL;
	size_t nleft = 0, i;
	int complete = 0, placed;
	errcode_t err;

	*keep = 0;
	*stuck = 0;
	err = compact_place(p, u, n, zone, &complete);
	if (!err && complete)
		err = snapshot_pending(p, &left, &nleft);
	for (i = 0; !err && complete && i < nleft; i++) {
		int64_t m = member_index(p, left[i]);
		struct unit one;

		if (m < 0 || !(p->pf[left[i]].flags & PF_PENDING))
			continue;
		one.first = m;
		one.n = 1;
		one.blocks = layout_stream_blocks(p->layout, &p->layout->files[left[i]]);
		p->pf[left[i]].flags &= ~PF_IN_SET;
		err = place_unit(p, &one, &placed);
		if (!err && (p->pf[left[i]].flags & PF_PENDING))
			err = place_partial(p, left[i]);
	}
	free(left);
	*keep = !err && complete && (p->variant->lenient || !snapshot_any_worse(p)) &&
		snapshot_gain(p);
	*stuck = !err && !complete;
	return err;
}

/*
 * Compaction, taken back unless it is kept (compact_once).  The frontier
 * moves a chunk as large as the free space at a time; a block in a chunk
 * that is not in its final place and could not go there directly before
 * is staged out and moved again, even one whose place is in the same
 * chunk, so smaller chunks stage less on some disks and more on others
 * (indirect blocks are put back once per chunk).  When the whole plan
 * then writes more than the target of
 * CONSOLIDATE_AMPLIFICATION times what needed moving, or got stuck for
 * want of room (a smaller chunk needs less), smaller chunks are tried
 * too, and the one that leaves the fewest files short of best, then
 * writes least, is kept (planned again: planning is deterministic).
 */
static errcode_t compact_tries(struct planner *p, const struct unit *u,
			       size_t n, int64_t zone, int *kept)
{
	static const int divs[] = { 1, 2, 4, 8 };
	uint64_t best_short = UINT64_MAX;
	blk64_t best_copy = 0;
	size_t k, best = SIZE_MAX;
	int keep = 0, stuck = 0;
	errcode_t err = 0;

	*kept = 0;

	for (k = 0; !err && k < sizeof(divs) / sizeof(*divs); k++) {
		p->chunk_div = divs[k];
		err = snapshot_take(p);
		if (err)
			break;
		err = compact_once(p, u, n, zone, &keep, &stuck);
		if (!err && keep && (not_best(p) < best_short ||
				     (not_best(p) == best_short &&
				      p->plan->copy_blocks < best_copy))) {
			best = k;
			best_short = not_best(p);
			best_copy = p->plan->copy_blocks;
		}
		/*
		 * Within the target at the first try: that one.  Not kept
		 * for another reason than running out of room: none.
		 */
		if (!err && !k && ((!keep && !stuck) || (keep && p->plan->copy_blocks <=
				   write_target(p)))) {
			if (keep)
				snapshot_forget(p);
			else
				snapshot_restore(p);
			p->chunk_div = 0;
			*kept = keep;
			return 0;
		}
		snapshot_restore(p);
	}
	if (!err && best != SIZE_MAX) {
		p->chunk_div = divs[best];
		err = snapshot_take(p);
		if (!err) {
			err = compact_once(p, u, n, zone, &keep, &stuck);
			if (err || !keep)
				snapshot_restore(p);
			else
				snapshot_forget(p);
			*kept = !err && keep;
		}
	}
	p->chunk_div = 0;
	return err;
}

/*
 * Compact_tries; with SPLIT_FALLBACK, when no packing of the whole disk
 * is kept, once more with the files it leaves with no place packed too,
 * in pieces; with SPLIT_ALWAYS, so packed at once.  Not at first (the
 * plan without comes first): where the frontier moves such a file
 * out of the way whole or in a few free runs, that can be fewer pieces
 * than the gaps' ends give it.
 */
static errcode_t compact_all_or_nothing(struct planner *p, const struct unit *u,
					size_t n, int64_t zone)
{
	errcode_t err;
	int kept;

	if (p->variant->split == SPLIT_ALWAYS && zone < 0)
		p->splitting = 1;
	err = compact_tries(p, u, n, zone, &kept);
	if (!err && !kept && zone < 0 && n && p->variant->split == SPLIT_FALLBACK) {
		p->splitting = 1;
		err = compact_tries(p, u, n, zone, &kept);
	}
	p->splitting = 0;
	return err;
}

static uint64_t count_pending(const struct planner *p)
{
	uint64_t i, n = 0;

	for (i = 0; i < p->layout->nfiles; i++)
		n += !!(p->pf[i].flags & PF_PENDING);
	return n;
}

/* The units of U with a member still pending, appended to LEFT. */
static int unit_pending(const struct planner *p, const struct unit *u)
{
	uint32_t k;

	for (k = 0; k < u->n; k++)
		if (p->pf[p->members[u->first + k]].flags & PF_PENDING)
			return 1;
	return 0;
}

/* Whether the plan writes more than the target times what needed moving. */
static int over_target(const struct planner *p)
{
	return p->plan->copy_blocks > write_target(p);
}

/*
 * Zone Z packed for the files LEFT short of best (compact_all_or_nothing),
 * taken back when it brings no more of them to best and takes the plan
 * past the write target: it only gave a file left short of best fewer
 * pieces for now (the fewer-pieces step that follows finds them some
 * anyway), and a plan within the target is not given up for that.
 */
static errcode_t compact_zone(struct planner *p, const struct unit *left,
			      size_t nleft, int64_t z)
{
	uint64_t short0 = not_best(p);
	int over0 = over_target(p);
	errcode_t err;

	err = snapshot_take(p);
	if (err)
		return err;
	err = compact_all_or_nothing(p, left, nleft, z);
	if (!err && !over0 && not_best(p) >= short0 && over_target(p))
		snapshot_restore(p);
	else
		snapshot_forget(p);
	return err;
}

/*
 * FILE rebuilt (rebuild.c), kept when the plan then writes no more than
 * its target, which the rebuild raises by REBUILD_AMPLIFICATION's share
 * of the file's blocks.
 */
static errcode_t rebuild_within_target(struct planner *p, uint32_t file)
{
	errcode_t err;
	int placed = 0;

	err = planner_check(p);
	if (!err)
		err = snapshot_take(p);
	if (err)
		return err;
	err = rebuild_file(p, file, &placed);
	if (!err && placed && p->plan->copy_blocks <= write_target(p))
		snapshot_forget(p);
	else
		snapshot_restore(p);
	return err;
}

/*
 * Every unit in turn; what is left is packed.  Moves change where free
 * space is, so what is still left then gets more turns, file by file,
 * while that helps; what is left after that gets fewer pieces.
 */
static errcode_t place_all(struct planner *p, int pack_first)
{
	struct unit *left;
	uint8_t *tried = NULL;
	uint64_t i, nleft = 0, before;
	int round, placed;
	errcode_t err = 0;

	left = malloc((p->nmembers + p->nunits + 1) * sizeof(*left));
	if (!left)
		return ENOMEM;
	for (i = 0; !err && i < p->nunits; i++) {
		const struct unit *u = &p->units[i];

		/* Files moved out of another's way earlier are placed already. */
		if (!unit_pending(p, u))
			continue;
		p->steps_done += u->n;
		err = planner_check(p);
		if (!err && !pack_first)
			err = place_unit(p, u, &placed);
		if (unit_pending(p, u))
			left[nleft++] = *u;
	}
	if (!err)
		err = compact_all_or_nothing(p, left, nleft, -1);
	for (round = 0; !err && round < PLACE_ROUNDS; round++) {
		before = count_pending(p);
		if (!before)
			break;
		for (i = 0, nleft = 0; !err && i < p->nmembers; i++) {
			struct unit one = { i, 1, 0 };

			if (!(p->pf[p->members[i]].flags & PF_PENDING))
				continue;
			err = planner_check(p);
			if (err)
				break;
			p->pf[p->members[i]].flags &= ~PF_IN_SET;
			one.blocks = layout_stream_blocks(p->layout, &p->layout->files[p->members[i]]);
			err = place_unit(p, &one, &placed);
			if (!err && unit_pending(p, &one))
				left[nleft++] = one;
		}
		if (!err)
			err = compact_all_or_nothing(p, left, nleft, -1);
		if (count_pending(p) >= before)
			break;
	}
	/* Still no room: pack whole zones, the roomiest first, to make some. */
	tried = calloc(p->layout->nzones + 1, 1);
	if (!tried)
		err = ENOMEM;
	for (round = 0; !err && round < CONSOLIDATE_ZONES && not_best(p); round++) {
		int64_t z = roomiest_zone(p, tried);

		if (z < 0)
			break;
		tried[z] = 1;
		for (i = 0, nleft = 0; i < p->nmembers; i++) {
			uint32_t f = p->members[i];

			/* Files left in fewer pieces but not best have another go. */
			if (!(p->pf[f].flags & PF_UNMOVABLE) && planner_moves(p, f) &&
			    planner_pieces_now(p, f) > planner_best(p, f))
				p->pf[f].flags |= PF_PENDING;
			if (p->pf[f].flags & PF_PENDING)
				left[nleft++] = (struct unit){ i, 1,
					layout_stream_blocks(p->layout, &p->layout->files[f]) };
		}
		err = compact_zone(p, left, nleft, z);
	}
	/* Still short: rebuilt where others step aside, where that reaches best. */
	for (i = 0; !err && p->variant->rebuild && i < p->layout->nfiles; i++)
		if (short_of_best(p, i))
			err = rebuild_within_target(p, i);
	for (i = 0; !err && i < p->layout->nfiles; i++)
		if (p->pf[i].flags & PF_PENDING) {
			err = planner_check(p);
			if (!err)
				err = place_partial(p, i);
		}
	free(tried);
	free(left);
	return err;
}

blk64_t planner_rebuilt_blocks(const struct planner *p)
{
	blk64_t n = 0;
	uint64_t i;

	for (i = 0; i < p->layout->nfiles; i++)
		if ((p->pf[i].flags & PF_REBUILT) && planner_moves(p, i))
			n += layout_stream_blocks(p->layout, &p->layout->files[i]);
	return n;
}

blk64_t planner_write_target(const struct planner *p)
{
	return write_target(p);
}

/* Stream blocks of the candidates the plan moves: what needed moving. */
static blk64_t needed_blocks(const struct planner *p)
{
	blk64_t needed = 0;
	uint64_t i;

	for (i = 0; i < p->layout->nfiles; i++)
		if ((p->sel->flags[i] & SEL_CANDIDATE) && planner_moves(p, i))
			needed += layout_stream_blocks(p->layout, &p->layout->files[i]);
	return needed;
}

/*
 * With --pack, the most free runs a plan may leave: as many as there were
 * before, or as there are block groups, the promise of doc/design.md.
 * Not just as many as before: placing the files that the run without
 * --pack brings to best leaves holes no packing of a zone closes where
 * free space began in fewer runs than there are zones, and taking that
 * placing back left those files further from best than the run without
 * --pack does, and the turns settle_partial gives them then cut free
 * space into more runs than placing them would.
 */
static uint64_t free_runs_cap(const struct planner *p)
{
	uint64_t groups = p->fs->group_desc_count;

	return p->plan->free_extents_before > groups ?
		p->plan->free_extents_before : groups;
}

/* Whether, with --pack, free space is now in more runs than free_runs_cap. */
static int free_runs_over_cap(struct planner *p)
{
	uint64_t ext;
	blk64_t fb, big;

	if (!p->free_runs_cap)
		return 0;
	spacemap_free_stats(&p->sm, &ext, &fb, &big);
	return ext > p->free_runs_cap;
}

/*
 * What a second run would do first, done now: consolidation moves files
 * and joins free runs, where a selected file left short of best may now
 * find fewer pieces, which a second run would give it.  So such files get the fewer-pieces step
 * again (place_partial moves a file only into fewer pieces than it has),
 * kept where it is faster to read than now, while that moves any, at most
 * a few rounds.
 */
static errcode_t settle_partial(struct planner *p)
{
	uint64_t i, moves;
	double read0;
	int round;
	errcode_t err = 0;

	for (round = 0; !err && round < 4; round++) {
		moves = p->plan->nmoves;
		for (i = 0; !err && i < p->layout->nfiles; i++) {
			uint32_t pieces;

			if (!(p->sel->flags[i] & SEL_CANDIDATE) ||
			    (p->pf[i].flags & PF_UNMOVABLE))
				continue;
			pieces = planner_moves(p, i) ? planner_pieces_now(p, i) :
				layout_file_pieces(p->layout, &p->layout->files[i]);
			if (pieces <= planner_best(p, i))
				continue;
			/*
			 * Kept only if faster to read than the file is now, as a
			 * second run would judge it (place_partial compares with
			 * its layout before the run).
			 */
			read0 = planner_moves(p, i) ? planner_read_now(p, i) :
				file_read_seconds(p, i);
			err = snapshot_take(p);
			if (err)
				break;
			err = place_partial(p, i);
			if (!err && planner_moves(p, i) && planner_pieces_now(p, i) < pieces &&
			    planner_read_now(p, i) < read0 && !free_runs_over_cap(p))
				snapshot_forget(p);
			else
				snapshot_restore(p);
		}
		if (p->plan->nmoves == moves)
			break;
	}
	return err;
}

/*
 * Placing taken back, as snapshot_restore leaves a plan: every file's flags
 * (those of the files it changed as they were then), progress and the
 * direct moves counted (the plan's lines are made at the end, from the
 * files' states: plan_figures.c).  Placing is under a light snapshot
 * (snapshot.c), so that a plan kept, nearly every one, pays for no copies
 * of what it changed; one taken back is planned again from the start
 * with this.
 */
struct replan {
	uint8_t		*flags;		/* per layout file */
	uint64_t	steps_done, direct_moves;
};

/* What taking back the placing under the light snapshot leaves, into *R. */
static errcode_t replan_save(const struct planner *p, struct replan *r)
{
	const struct snapshot_change *ch;
	size_t nch, i;
	errcode_t err;

	err = snapshot_changes(p, &ch, &nch);
	if (err)
		return err;
	r->flags = malloc(p->layout->nfiles + 1);
	if (!r->flags)
		return ENOMEM;
	for (i = 0; i < p->layout->nfiles; i++)
		r->flags[i] = p->pf[i].flags;
	for (i = 0; i < nch; i++)
		r->flags[ch[i].file] = ch[i].flags;
	r->steps_done = p->steps_done;
	r->direct_moves = p->plan->direct_moves;
	return 0;
}

/* Start from where R says placing left the plan once taken back. */
static errcode_t replan_apply(struct planner *p, const struct replan *r)
{
	uint64_t i;

	for (i = 0; i < p->layout->nfiles; i++)
		p->pf[i].flags = r->flags[i];
	p->steps_done = r->steps_done;
	p->plan->direct_moves = r->direct_moves;
	return 0;
}

/*
 * A plan that packs files in pieces (compact_split.c) moves files where
 * the turns before it found no room, and a second run, planning afresh
 * from there, may find the files still short of best fewer pieces.
 * So those files get their turns once more
 * now, as a second run would give them; kept when that gains, leaves no
 * file worse and stays within the write target.
 */
static errcode_t settle_split(struct planner *p)
{
	uint64_t i;
	errcode_t err;

	for (i = 0; i < p->layout->nfiles; i++)
		if (short_of_best(p, i))
			p->pf[i].flags |= PF_PENDING;
	err = snapshot_take(p);
	if (err)
		return err;
	err = place_all(p, 0);
	for (i = 0; i < p->layout->nfiles; i++)
		p->pf[i].flags &= ~PF_PENDING;
	if (!err && snapshot_gain(p) && !snapshot_any_worse(p) &&
	    p->plan->copy_blocks <= write_target(p) && !free_runs_over_cap(p))
		snapshot_forget(p);
	else
		snapshot_restore(p);
	return err;
}

/*
 * One attempt at plan V: a planner set up afresh, the units placed, free
 * space consolidated, the figures made (*RET).  AGAIN (NULL at first):
 * the placing of an attempt taken back, to start from instead of placing.
 * When placing is taken back under the light snapshot (no --pack), *REDO
 * gets what it left and *RET is NULL: the caller plans again from it.
 */
static errcode_t plan_attempt(struct layout *layout, const struct selection *sel,
			      const struct plan_opts *opts,
			      const struct plan_variant *v,
			      const struct replan *again, struct replan *redo,
			      struct plan **ret)
{
	struct planner p;
	struct plan *plan;
	uint64_t i;
	errcode_t err;
	int consolidated = 0;

	*ret = NULL;
	memset(&p, 0, sizeof(p));
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return ENOMEM;
	p.layout = layout;
	p.fs = layout->fs;
	p.sel = sel;
	p.plan = plan;
	p.variant = v;
	if (opts) {
		p.progress = opts->progress;
		p.progress_priv = opts->progress_priv;
	}
	plan->layout_files = layout->nfiles;
	p.pf = calloc(layout->nfiles + 1, sizeof(*p.pf));
	if (!p.pf) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < layout->nfiles; i++) {
		if (sel->flags[i] & SEL_UNMOVABLE)
			p.pf[i].flags |= PF_UNMOVABLE;
		else if (sel->flags[i] & SEL_CANDIDATE)
			p.pf[i].flags |= PF_PENDING;
		p.steps_total += !!(p.pf[i].flags & PF_PENDING);
	}
	for (i = 0; i < layout->nzones; i++)
		if (layout->zones[i].len > p.largest_zone)
			p.largest_zone = layout->zones[i].len;
	/* Planning has begun: say so before the setup (a second or more on a million files). */
	err = planner_check(&p);
	if (!err)
		err = planner_build_space(&p);
	if (!err)
		err = planner_check(&p);
	if (err)
		goto out;
	spacemap_free_stats(&p.sm, &plan->free_extents_before, &plan->free_blocks,
			    &plan->largest_free_before);
	err = planner_check_candidates(&p);
	if (!err)
		err = planner_build_units(&p);
	/*
	 * Placing that gains nothing is taken back whole: no move for nothing.
	 * With --pack, so is placing that leaves more free runs than the
	 * promise allows even after consolidation (the holes a selected file
	 * leaves among files that may not move, as a PATH leaves the rest of
	 * its set).  Without it, a plan taken back is planned again (struct
	 * replan).
	 */
	if (opts && opts->pack)
		p.free_runs_cap = free_runs_cap(&p);
	if (!err && again) {
		err = replan_apply(&p, again);
	} else if (!err && v->idle) {
		/* No file placed: what consolidation alone does, or nothing. */
	} else if (!err) {
		int light = !(opts && opts->pack), keep;

		err = light ? snapshot_take_light(&p) : snapshot_take(&p);
		if (!err) {
			err = place_all(&p, v->pack_first);
			keep = !err && snapshot_gain(&p);
		}
		if (!err && keep && !light) {
			uint64_t ext;
			blk64_t fb, big;

			err = consolidate(&p, needed_blocks(&p), plan->largest_free_before,
					  1, &plan->consolidate_over_budget);
			spacemap_free_stats(&p.sm, &ext, &fb, &big);
			keep = !err && ext <= p.free_runs_cap;
		}
		if (!err && !keep && light) {
			const struct snapshot_change *ch;
			size_t nch = 0;

			/* Moves to take back: planned again (a light level keeps no log). */
			err = snapshot_changes(&p, &ch, &nch);
			if (!err && nch)
				err = replan_save(&p, redo);
		}
		if (err || !keep)
			snapshot_restore(&p);	/* a light one: nothing changed, or dropped */
		else
			snapshot_forget(&p);
		spacemap_trim(&p.sm);	/* placing's series are over */
		consolidated = !err && keep && !light;
		if (!err && redo->flags)
			goto out;
	}
	if (!err && !consolidated && v->idle != IDLE_ALL)
		err = consolidate(&p, needed_blocks(&p), plan->largest_free_before,
				  opts && opts->pack, &plan->consolidate_over_budget);
	spacemap_trim(&p.sm);
	if (!err && !v->idle)
		err = settle_partial(&p);
	if (!err && v->split)
		err = settle_split(&p);
	if (!err) {
		blk64_t fb;

		spacemap_free_stats(&p.sm, &plan->free_extents_after, &fb,
				    &plan->largest_free_after);
		/* The plan's lines take the room of the map, gone first. */
		if (!p.snap)
			spacemap_free(&p.sm);
		free(p.owner_count);
		p.owner_count = NULL;
		free(p.window_segs);
		p.window_segs = NULL;
		piece_vec_free(&p.after_runs);
		fmap_close_free(&p.close);
		planner_run_offsets_free(&p);
		err = plan_finish_figures(&p);
	}
out:
	planner_free_states(&p);
	free(p.pf);
	free(p.tree_blocks);
	free(p.units);
	free(p.members);
	free(p.member_keys);
	free(p.owner_count);
	free(p.window_segs);
	piece_vec_free(&p.after_runs);
	free(p.commit.changes);
	fmap_close_free(&p.close);
	planner_run_offsets_free(&p);
	while (p.snap)
		snapshot_forget(&p);
	spacemap_free(&p.sm);
	if (err || (redo && redo->flags)) {
		plan_free(plan);
		return err;
	}
	*ret = plan;
	return 0;
}

errcode_t plan_once(struct layout *layout, const struct selection *sel,
		    const struct plan_opts *opts, const struct plan_variant *v,
		    struct plan **ret)
{
	struct replan redo = { 0 };
	errcode_t err;

	err = plan_attempt(layout, sel, opts, v, NULL, &redo, ret);
	/* Placing taken back: once more from where that leaves the plan. */
	if (!err && redo.flags)
		err = plan_attempt(layout, sel, opts, v, &redo, NULL, ret);
	free(redo.flags);
	return err;
}
