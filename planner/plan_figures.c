/*
 * plan_figures.c --- what a finished plan says: its lines (one for each
 * file it selects or moves, made from the files' states once planning
 * ends), the figures summed from them, and the questions the front end
 * asks of a plan (plan_file, plan_next_line).
 */
#include <errno.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>	/* malloc_trim */
#endif
#include <string.h>

#include "planner_int.h"
#include "array.h"

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
 * (by state index, in *OUT), and the states given back: a plan may move
 * a quarter of a large filesystem's files, and their states and their
 * lines together would be the planner's peak.
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
		const struct file_state *st = planner_state_if(p, i);
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
errcode_t plan_finish_figures(struct planner *p)
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
			/* Moved in no fewer pieces (out of another's way): unchanged. */
			r->outcome = r->moves && r->pieces_after <= r->best ? OUT_BEST :
				r->moves && r->pieces_after < r->pieces_before ? OUT_PARTIAL :
				OUT_NO_ROOM;
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
