/*
 * plan.c --- the planner's frame: its setup (the space map, the
 * candidates, the units), the order of the steps, and the figures of the
 * finished plan.  Each move it records goes through filestate.c.
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

uint32_t plan_pieces(const struct layout_piece *runs, size_t nruns)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < nruns; i++)
		if (!i || runs[i - 1].start + runs[i - 1].len != runs[i].start)
			n++;
	return n;
}

double plan_read_seconds(const struct layout *layout,
			 const struct layout_piece *runs, size_t nruns)
{
	double bs = layout->fs->blocksize, t = 0;
	blk64_t blocks = 0;
	size_t i;

	for (i = 0; i < nruns; i++) {
		blocks += runs[i].len;
		if (i)
			t += readmodel_jump_seconds(&layout->model,
				((double)runs[i].start -
				 (double)(runs[i - 1].start + runs[i - 1].len)) * bs);
	}
	return t + readmodel_transfer_seconds(&layout->model, blocks * bs);
}

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

/* ---------------------------------------------------------------- figures */

static const struct plan_file untouched;	/* OUT_NONE */

/* 1 + the index of file I's line in plan->files, or 0. */
static uint64_t line_at(const struct plan *plan, uint64_t i)
{
	uint64_t w, bit = (uint64_t)1 << (i & 63);

	if (i >= plan->layout_files || !plan->line_bits)
		return 0;
	w = plan->line_bits[i >> 6];
	if (!(w & bit))
		return 0;
	return plan->line_rank[i >> 6] + (uint64_t)__builtin_popcountll(w & (bit - 1)) + 1;
}

const struct plan_file *plan_file(const struct plan *plan, uint64_t i)
{
	uint64_t at = line_at(plan, i);

	return at ? &plan->files[at - 1] : &untouched;
}

int plan_has_line(const struct plan *plan, uint64_t i)
{
	return i < plan->layout_files && plan->line_bits &&
	       (plan->line_bits[i >> 6] >> (i & 63) & 1);
}

uint64_t plan_next_line(const struct plan *plan, uint64_t i)
{
	uint64_t w;

	while (plan->line_bits && i < plan->layout_files) {
		w = plan->line_bits[i >> 6] >> (i & 63);
		if (w) {
			i += (uint64_t)__builtin_ctzll(w);
			return i < plan->layout_files ? i : UINT64_MAX;
		}
		i = (i | 63) + 1;
	}
	return UINT64_MAX;
}

/* What a line takes from a file's state, kept while the states go. */
struct state_figures {
	double		read_now;	/* planner_read_now */
	uint32_t	pieces_now;	/* planner_pieces_now */
	uint8_t		skip;
};

/* Whether FILE gets a line of the plan: selected or moved. */
static int has_line(const struct planner *p, uint64_t file)
{
	return (p->sel->flags[file] & SEL_CANDIDATE) || planner_moves(p, file);
}

/*
 * The figures the lines need from the states of the files with a line
 * (by state index, in *OUT), and the states given back: at a million
 * files the states of the quarter million files a plan moves are 16 MB,
 * and the lines as many again; together they were the planner's peak.
 */
static errcode_t take_state_figures(struct planner *p, struct state_figures **out)
{
	struct state_figures *fig;
	uint64_t i;

	fig = calloc(p->nstates ? p->nstates : 1, sizeof(*fig));
	if (!fig)
		return ENOMEM;
	/* Written all over: in huge pages, a fault each, not one per 4 KiB. */
	util_huge_pages(fig, p->nstates * sizeof(*fig));
	for (i = 0; i < p->layout->nfiles; i++) {
		const struct pstate *st = planner_state_if(p, i);
		struct state_figures *g;

		if (!st || !has_line(p, i))
			continue;
		g = &fig[p->pf[i].st - 1];
		g->read_now = planner_read_now(p, i);
		g->pieces_now = planner_pieces_now(p, i);
		g->skip = st->skip;
	}
	planner_free_states(p);
#ifdef __GLIBC__
	/*
	 * Their chunks were carved from the heap's free room, which free()
	 * keeps resident: handed back before the lines take as much again.
	 */
	malloc_trim(0);
#endif
	*out = fig;
	return 0;
}

/*
 * The plan's lines, made now from the files' states (what was moved, and
 * how) for the files selected and the files moved, in layout order; and
 * the figures.  The states are gone after (their figures taken first).
 */
static errcode_t finish_figures(struct planner *p)
{
	struct plan *plan = p->plan;
	struct layout *layout = p->layout;
	struct state_figures *fig;
	uint64_t i, k, n = 0;
	errcode_t ret;

	ret = take_state_figures(p, &fig);
	if (ret)
		return ret;
	for (i = 0; i < layout->nfiles; i++)
		n += has_line(p, i);
	plan->line_bits = calloc(layout->nfiles / 64 + 1, sizeof(*plan->line_bits));
	plan->line_rank = calloc(layout->nfiles / 64 + 1, sizeof(*plan->line_rank));
	plan->files = alloc_written((n ? n : 1) * sizeof(*plan->files));
	if (!plan->line_bits || !plan->line_rank || !plan->files) {
		free(fig);
		return ENOMEM;
	}
	memset(plan->files, 0, (n ? n : 1) * sizeof(*plan->files));
	plan->files_cap = n;
	for (i = 0; i < layout->nfiles; i++) {
		uint32_t s = p->pf[i].st;
		struct plan_file *r;

		if (!has_line(p, i))
			continue;	/* neither selected nor moved */
		if (!(plan->line_bits[i >> 6]))
			plan->line_rank[i >> 6] = plan->nfiles;
		plan->line_bits[i >> 6] |= (uint64_t)1 << (i & 63);
		r = &plan->files[plan->nfiles++];
		r->file = i;
		if (s && fig[s - 1].skip) {
			r->outcome = OUT_SKIPPED;
			r->reason = fig[s - 1].skip;
		}
	}
	for (k = 0; k < plan->nmoves; k++) {
		struct plan_file *r = &plan->files[line_at(plan, plan->moves[k].file) - 1];

		r->moves++;
		r->consolidate_moves += plan->moves[k].joining;
		r->moved_blocks += plan->moves[k].copy_blocks;
	}
	/* In layout order (the lines' order), as the sums were always made. */
	for (k = 0; k < plan->nfiles; k++) {
		struct plan_file *r = &plan->files[k];
		const struct layout_file *f = &layout->files[r->file];
		int candidate = p->sel->flags[r->file] & SEL_CANDIDATE;

		i = r->file;
		r->pieces_before = layout_file_pieces(layout, f);
		r->best = planner_best(p, i);
		layout_file_times(layout, f, &r->read_before, &r->ideal);
		if (r->moves && p->pf[i].st) {
			r->pieces_after = fig[p->pf[i].st - 1].pieces_now;
			r->read_after = fig[p->pf[i].st - 1].read_now;
		} else if (r->moves) {
			/* No state: as the scan found it (no state is read). */
			r->pieces_after = planner_pieces_now(p, i);
			r->read_after = planner_read_now(p, i);
		} else {
			r->pieces_after = layout_file_pieces(layout, f);
			r->read_after = r->read_before;
		}
		if (!candidate) {
			if (r->moves)
				r->outcome = r->moves == r->consolidate_moves ?
					OUT_CONSOLIDATED : OUT_EVACUATED;
			continue;
		}
		if (p->sel->flags[i] & SEL_UNMOVABLE) {
			r->outcome = OUT_SKIPPED;
			r->reason = p->sel->reason[i];
		} else if (r->outcome != OUT_SKIPPED) {
			r->outcome = !r->moves ? OUT_NO_ROOM :
				r->pieces_after <= r->best ? OUT_BEST : OUT_PARTIAL;
		}
		plan->selected++;
		switch (r->outcome) {
		case OUT_BEST: plan->best++; break;
		case OUT_PARTIAL: plan->partial++; break;
		case OUT_NO_ROOM: plan->no_room++; break;
		default: plan->skipped++; break;
		}
		if (r->moves)
			plan->needed_blocks += layout_stream_blocks(layout, f);
		plan->pieces_before += r->pieces_before;
		plan->pieces_after += r->pieces_after;
		plan->read_before += r->read_before;
		plan->read_after += r->read_after;
		plan->ideal += r->ideal;
	}
	for (i = 0; i < plan->nfiles; i++) {
		if (plan->files[i].outcome == OUT_EVACUATED)
			plan->evacuated++;
		if (plan->files[i].outcome == OUT_CONSOLIDATED)
			plan->consolidated++;
		if (plan->files[i].consolidate_moves)
			plan->consolidate_files++;
	}
	free(fig);
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
 * blocks alone miss the zone a file short of best fills: on the 2 GiB
 * near-full ext2 95% disk, packing with direct moves left /rec0010.ts in
 * 13,204 blocks of a zone with no free block, the only zone with room for
 * /rec0019.ts (11,981 blocks); the four freest had 4,016-11,482 blocks of
 * room, so /rec0019.ts stayed in 2 pieces.  And a zone once packed is not
 * packed again in its rank's stead (ranks change as zones are packed: on
 * the ext4 90% disk the same zone came up twice and the zone with room
 * for the last recording never did).
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
		err = psnap_pending(p, &left, &nleft);
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
	*keep = !err && complete && (p->lenient || !psnap_any_worse(p)) &&
		psnap_gain(p);
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
		err = psnap_take(p);
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
				   (blk64_t)(needed_blocks(p) * CONSOLIDATE_AMPLIFICATION)))) {
			if (keep)
				psnap_forget(p);
			else
				psnap_restore(p);
			p->chunk_div = 0;
			*kept = keep;
			return 0;
		}
		psnap_restore(p);
	}
	if (!err && best != SIZE_MAX) {
		p->chunk_div = divs[best];
		err = psnap_take(p);
		if (!err) {
			err = compact_once(p, u, n, zone, &keep, &stuck);
			if (err || !keep)
				psnap_restore(p);
			else
				psnap_forget(p);
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
 * than the gaps' ends give it (e2fragimg's 16 MiB ext2 4 KiB 95% disk,
 * seed 2: 2 pieces, not 3).
 */
static errcode_t compact_all_or_nothing(struct planner *p, const struct unit *u,
					size_t n, int64_t zone)
{
	errcode_t err;
	int kept;

	if (p->split == SPLIT_ALWAYS && zone < 0)
		p->splitting = 1;
	err = compact_tries(p, u, n, zone, &kept);
	if (!err && !kept && zone < 0 && n && p->split == SPLIT_FALLBACK) {
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
	return p->plan->copy_blocks >
	       (blk64_t)(needed_blocks(p) * CONSOLIDATE_AMPLIFICATION);
}

/*
 * Zone Z packed for the files LEFT short of best (compact_all_or_nothing),
 * taken back when it brings no more of them to best and takes the plan
 * past the write target: it only gave a file left short of best fewer
 * pieces for now (the fewer-pieces step that follows finds them some
 * anyway), and a plan within the target is not given up for that
 * (e2fragimg's 32 MiB ext4 1 KiB 85% disk, seed 5: zone 4 packed for
 * the two recordings no zone holds, 1.42 -> 1.99 times what needed
 * moving, and both still in 2 pieces at the end).
 */
static errcode_t compact_zone(struct planner *p, const struct unit *left,
			      size_t nleft, int64_t z)
{
	uint64_t short0 = not_best(p);
	int over0 = over_target(p);
	errcode_t err;

	err = psnap_take(p);
	if (err)
		return err;
	err = compact_all_or_nothing(p, left, nleft, z);
	if (!err && !over0 && not_best(p) >= short0 && over_target(p))
		psnap_restore(p);
	else
		psnap_forget(p);
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
 * What a second run would do first, done now: consolidation moves files
 * and joins free runs, where a selected file left short of best may now
 * find fewer pieces (2 GiB near-full ext3 95%: two recordings in 3 pieces
 * that a second run put in 2).  So such files get the fewer-pieces step
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
			err = psnap_take(p);
			if (err)
				break;
			err = place_partial(p, i);
			if (!err && planner_moves(p, i) && planner_pieces_now(p, i) < pieces &&
			    planner_read_now(p, i) < read0)
				psnap_forget(p);
			else
				psnap_restore(p);
		}
		if (p->plan->nmoves == moves)
			break;
	}
	return err;
}

/*
 * Placing taken back, as psnap_restore leaves a plan: every file's flags
 * (those of the files it changed as they were then), progress and the
 * direct moves counted (the plan's lines are made at the end, from the
 * files' states: finish_figures).  Placing is under a light snapshot
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
	const struct psnap_changed *ch;
	size_t nch, i;
	errcode_t err;

	err = psnap_changed(p, &ch, &nch);
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
 * from there, may find the files still short of best fewer pieces (a
 * 32 MiB ext4 4 KiB 95% disk, seed 5: /rec0005.ts 3 -> 2 pieces, 11 MiB
 * written by the second run).  So those files get their turns once more
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
	err = psnap_take(p);
	if (err)
		return err;
	err = place_all(p, 0);
	for (i = 0; i < p->layout->nfiles; i++)
		p->pf[i].flags &= ~PF_PENDING;
	if (!err && psnap_gain(p) && !psnap_any_worse(p) &&
	    p->plan->copy_blocks <=
	    (blk64_t)(needed_blocks(p) * CONSOLIDATE_AMPLIFICATION))
		psnap_forget(p);
	else
		psnap_restore(p);
	return err;
}

/*
 * One plan: units placed in turn first, or (PACK_FIRST) all packed at once;
 * LENIENT and NO_DIRECT as struct planner says; SPLIT allows a file with
 * no place to be packed in pieces (compact_split.c).  AGAIN (normally NULL):
 * a plan whose placing was taken back, planned again without it.
 */
static errcode_t plan_once(struct layout *layout, const struct selection *sel,
			   const struct plan_opts *opts, int pack_first,
			   int lenient, int no_direct, int split, const struct replan *again,
			   struct plan **ret)
{
	struct planner p;
	struct plan *plan;
	struct replan redo = { 0 };
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
	p.lenient = lenient;
	p.no_direct = no_direct;
	p.split = split;
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
	 * With --pack, so is placing that leaves more free runs than before
	 * even after consolidation (the holes a selected file leaves among
	 * files that may not move, as a PATH leaves the rest of its set).
	 * Without it, a plan taken back is planned again (struct replan).
	 */
	if (!err && again) {
		err = replan_apply(&p, again);
	} else if (!err) {
		int light = !(opts && opts->pack), keep;

		err = light ? psnap_take_light(&p) : psnap_take(&p);
		if (!err) {
			err = place_all(&p, pack_first);
			keep = !err && psnap_gain(&p);
		}
		if (!err && keep && !light) {
			uint64_t ext;
			blk64_t fb, big;

			err = consolidate(&p, needed_blocks(&p), plan->largest_free_before,
					  1, &plan->consolidate_over_budget);
			spacemap_free_stats(&p.sm, &ext, &fb, &big);
			keep = !err && ext <= plan->free_extents_before;
		}
		if (!err && !keep && light) {
			const struct psnap_changed *ch;
			size_t nch = 0;

			/* Moves to take back: planned again (a light level keeps no log). */
			err = psnap_changed(&p, &ch, &nch);
			if (!err && nch)
				err = replan_save(&p, &redo);
		}
		if (err || !keep)
			psnap_restore(&p);	/* a light one: nothing changed, or dropped */
		else
			psnap_forget(&p);
		spacemap_trim(&p.sm);	/* placing's series are over */
		consolidated = !err && keep && !light;
		if (!err && redo.flags)
			goto out;
	}
	if (!err && !consolidated)
		err = consolidate(&p, needed_blocks(&p), plan->largest_free_before,
				  opts && opts->pack, &plan->consolidate_over_budget);
	spacemap_trim(&p.sm);
	if (!err)
		err = settle_partial(&p);
	if (!err && split)
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
		fmap_close_free(&p.close);
		planner_run_offsets_free(&p);
		err = finish_figures(&p);
	}
out:
	planner_free_states(&p);
	free(p.pf);
	free(p.etb);
	free(p.units);
	free(p.members);
	free(p.member_keys);
	free(p.owner_count);
	free(p.changes);
	fmap_close_free(&p.close);
	planner_run_offsets_free(&p);
	while (p.snap)
		psnap_forget(&p);
	spacemap_free(&p.sm);
	if (!err && redo.flags) {
		plan_free(plan);
		err = plan_once(layout, sel, opts, pack_first, lenient, no_direct,
				split, &redo, &plan);
	}
	free(redo.flags);
	if (err) {
		plan_free(plan);
		return err;
	}
	*ret = plan;
	return 0;
}

/* Whether PLAN leaves a file it moves in more pieces than it had. */
static int plan_any_worse(const struct plan *plan)
{
	uint64_t i;

	for (i = 0; i < plan->nfiles; i++)
		if (plan->files[i].moves &&
		    plan->files[i].pieces_after > plan->files[i].pieces_before)
			return 1;
	return 0;
}

/*
 * A lenient plan (NO_DIRECT: without direct moves), kept in place of *A
 * if it brings more files to best and leaves no selected file worse than
 * it was.
 */
static errcode_t plan_lenient(struct layout *layout, const struct selection *sel,
			      const struct plan_opts *opts, int no_direct, int split,
			      struct plan **a)
{
	struct plan *b;
	errcode_t err;

	err = plan_once(layout, sel, opts, 0, 1, no_direct, split, NULL, &b);
	if (err)
		return err;
	if (b->best > (*a)->best && !plan_any_worse(b)) {
		plan_free(*a);
		*a = b;
	} else {
		plan_free(b);
	}
	return 0;
}

/* Whether PLAN writes more than the target times what needed moving. */
static int plan_over_budget(const struct plan *plan)
{
	return plan->copy_blocks > (blk64_t)(plan->needed_blocks * CONSOLIDATE_AMPLIFICATION);
}

/*
 * Placing files one by one into the best free run can leave free space cut
 * so that the last ones find no room where packing them all together
 * would have fitted every one (a zone that holds one recording and not
 * two).  So when the first plan leaves files short of best, or gets them
 * all there only by writing more than the target (packing whole zones
 * for the last ones: 1.75x on a 16 MiB near-full ext2 disk where packing
 * first writes 1.07x), plan again packing first, and keep whichever
 * brings more files to best (then writes less).
 */
static errcode_t plan_build_with(struct layout *layout, const struct selection *sel,
				 const struct plan_opts *opts, int no_direct, int split,
				 struct plan **ret)
{
	struct plan *a, *b = NULL;
	errcode_t err;

	err = plan_once(layout, sel, opts, 0, 0, no_direct, split, NULL, &a);
	if (err)
		return err;
	if (a->partial || a->no_room || plan_over_budget(a)) {
		err = plan_once(layout, sel, opts, 1, 0, no_direct, split, NULL, &b);
		if (err) {
			plan_free(a);
			return err;
		}
		if (b->best > a->best ||
		    (b->best == a->best && b->copy_blocks < a->copy_blocks)) {
			plan_free(a);
			a = b;
		} else {
			plan_free(b);
		}
	}
	/*
	 * Still short: packings were taken back because a file they moved
	 * out of the way would have been left in more pieces, though later
	 * turns may place it (what a second run then does).  So plan once
	 * more letting them stand (plan_lenient).
	 */
	if (a->partial || a->no_room)
		err = plan_lenient(layout, sel, opts, no_direct, split, &a);
	if (err) {
		plan_free(a);
		return err;
	}
	*ret = a;
	return 0;
}

/* Whether PLAN leaves more free runs than before and than block groups. */
static int plan_cuts_free(const struct layout *layout, const struct plan *plan)
{
	return plan->free_extents_after > plan->free_extents_before &&
	       plan->free_extents_after > layout->fs->group_desc_count;
}

/*
 * Direct moves (compact.c) make most packings write less, but they change
 * where free space lies while a packing goes on, and so what later turns
 * place and where free space ends (e2fragimg's mixed ext4 1K disk: free
 * space in 10 runs with them, 7 without, 8 groups; on the 2 GiB near-full
 * disks they used to cost a recording its best until zones were packed
 * by their room, roomiest_zone).
 * So a plan that made any is planned again without them, and the one
 * bringing more files to best, then keeping the free-space promise, then
 * writing less, is kept.
 */
static errcode_t plan_build_split(struct layout *layout, const struct selection *sel,
				  const struct plan_opts *opts, int split,
				  struct plan **ret)
{
	struct plan *a, *b;
	errcode_t err;

	err = plan_build_with(layout, sel, opts, 0, split, &a);
	if (!err && a->direct_moves) {
		err = plan_build_with(layout, sel, opts, 1, split, &b);
		if (err) {
			plan_free(a);
			return err;
		}
		if (b->best > a->best ||
		    (b->best == a->best &&
		     (plan_cuts_free(layout, a) > plan_cuts_free(layout, b) ||
		      (plan_cuts_free(layout, a) == plan_cuts_free(layout, b) &&
		       b->copy_blocks < a->copy_blocks)))) {
			plan_free(a);
			a = b;
		} else {
			plan_free(b);
		}
	}
	if (err)
		return err;
	*ret = a;
	return 0;
}

/*
 * Whether plan B, with files packed in pieces, is better than A: more
 * files at best, and neither more free runs (past the promise's bound)
 * nor more writes than the target where A kept them.  Not for as many in
 * fewer pieces: the run after a plan without pieces would then find such
 * a packing where the first did not (a 16 MiB ext4 4 KiB 90% disk: one
 * recording left in 3 pieces, a second run took it to 2), and one run is
 * to be a fixed point; except where A writes more than the target and B,
 * as many at best in no more pieces, does not.
 */
static int split_better(const struct layout *layout, const struct plan *a,
			const struct plan *b)
{
	if (b->best < a->best)
		return 0;
	if (plan_cuts_free(layout, b) && !plan_cuts_free(layout, a))
		return 0;
	/*
	 * As many at best, within the write target where A is not: a disk
	 * the kernel wrote (64 MiB ext4 1 KiB 95%, seed 3) gets the same
	 * five recordings to best either way, 1.84 times what needed moving
	 * without pieces and 1.29 times with.  In no more pieces, or else
	 * with no file in more pieces than it had: the write target is a
	 * promise, a file short of best in 2 pieces rather than 3 is not
	 * (e2fragimg's 16 MiB ext4 1 KiB 85% disk, seed 3: three of four
	 * recordings at best either way; with pieces the one left short
	 * goes 5 -> 3 and the run writes 1.01 times what needed moving,
	 * without, another goes 9 -> 2 and it writes 1.78 times).
	 */
	if (b->best == a->best)
		return plan_over_budget(a) && !plan_over_budget(b) &&
		       (b->pieces_after <= a->pieces_after || !plan_any_worse(b));
	return !plan_over_budget(b) || plan_over_budget(a);
}

/*
 * The plans of plan_build_split; when they leave files short of best,
 * or write more than the target, planned again letting packings give a file no zone has room for a place
 * in pieces (compact_split.c), kept when split_better.  Not always: where
 * the packing taken back lets later turns find such a file fewer pieces
 * (e2fragimg's 16 MiB ext2 4 KiB 95% disk, seed 2: 2 pieces, where the
 * gaps' ends give it 3), the plan without is the better one.
 */
errcode_t plan_build(struct layout *layout, const struct selection *sel,
		     const struct plan_opts *opts, struct plan **ret)
{
	struct plan *a, *b;
	errcode_t err;
	int split;

	err = plan_build_split(layout, sel, opts, SPLIT_NONE, &a);
	if (err)
		return err;
	/*
	 * Packings split when no other is kept, then all: each changes what
	 * later turns find (the 16 MiB ext2 4 KiB 95% disk, seed 3: the
	 * first brings 6 of 7 recordings to best writing 1.51 times what
	 * needed moving, the second 1.45 times).  Also when every file is
	 * at best but past the write target: a 64 MiB ext4 1 KiB 95% disk
	 * the kernel wrote (bench/kernel-nearfull.sh, seed 2) has all seven
	 * recordings at best only in the lenient plan, 1.77 times what
	 * needed moving, and at 1.02 times when packings may split.
	 */
	for (split = SPLIT_FALLBACK; !err && split <= SPLIT_ALWAYS &&
	     (a->partial || a->no_room || plan_over_budget(a)); split++) {
		err = plan_build_split(layout, sel, opts, split, &b);
		if (err)
			break;
		if (split_better(layout, a, b)) {
			plan_free(a);
			a = b;
		} else {
			plan_free(b);
		}
	}
	if (err) {
		plan_free(a);
		return err;
	}
	if (opts && opts->progress)
		opts->progress(opts->progress_priv, E2F_PHASE_PLAN, sel->candidates,
			       sel->candidates);
	*ret = a;
	return 0;
}

void plan_free(struct plan *plan)
{
	if (!plan)
		return;
	free(plan->moves);
	free(plan->segs);
	free(plan->meta);
	free(plan->files);
	free(plan->line_bits);
	free(plan->line_rank);
	free(plan);
}
