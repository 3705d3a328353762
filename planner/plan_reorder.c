/*
 * plan_reorder.c --- a plan's moves put in another order, span by span
 * (and where each move's segments and mapping blocks are, and the runs
 * it gains).
 *
 * The caller (e2defrag, which knows the units and what each gains) says
 * which spans of moves go in which order; it answers for the order being
 * one the moves can go in (each move's new blocks free when it comes, each
 * file's moves in turn).  A move's segments and new mapping blocks are
 * the next ones of plan->segs and plan->meta, so they travel with it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"

void plan_move_offsets(const struct plan *plan, uint64_t *seg_at, uint64_t *meta_at)
{
	uint64_t m;

	seg_at[0] = meta_at[0] = 0;
	for (m = 0; m < plan->nmoves; m++) {
		seg_at[m + 1] = seg_at[m] + plan_move_nsegs(&plan->moves[m]);
		meta_at[m + 1] = meta_at[m] + plan->moves[m].nmeta;
	}
}

int plan_move_gains(const struct layout *layout, const struct plan *plan, uint64_t m,
		    const uint64_t *seg_at, const uint64_t *meta_at,
		    int (*fn)(void *priv, blk64_t start, blk64_t len), void *priv)
{
	const struct plan_move *mv = &plan->moves[m];
	uint32_t j;
	int stop = 0;

	if (mv->whole)
		stop = fn(priv, plan_move_whole_at(mv),
			  layout_stream_blocks(layout, &layout->files[mv->file]));
	for (j = 0; !stop && j < plan_move_nsegs(mv); j++)
		stop = fn(priv, plan->segs[seg_at[m] + j].pblk, plan->segs[seg_at[m] + j].len);
	for (j = 0; !stop && j < mv->nmeta; j++)
		stop = fn(priv, plan->meta[meta_at[m] + j].start, plan->meta[meta_at[m] + j].len);
	return stop;
}

/* Append items [FROM, TO) of SRC (SIZE bytes each) to DST at *N. */
static void append(void *dst, uint64_t *n, const void *src, uint64_t from, uint64_t to,
		   size_t size)
{
	if (to == from)
		return;	/* SRC may be NULL then: a plan without segments */
	memcpy((char *)dst + *n * size, (const char *)src + from * size, (to - from) * size);
	*n += to - from;
}

errcode_t plan_reorder(struct plan *plan, const uint64_t *first, const uint64_t *end,
		       uint64_t nspans)
{
	uint64_t *seg_at = NULL, *meta_at = NULL, k, m, nm = 0, ns = 0, nmeta = 0;
	uint8_t *seen = NULL;
	struct plan_move *moves = NULL;
	struct runs_change *segs = NULL;
	struct layout_piece *meta = NULL;
	errcode_t ret = ENOMEM;

	seg_at = malloc((plan->nmoves + 1) * sizeof(*seg_at));
	meta_at = malloc((plan->nmoves + 1) * sizeof(*meta_at));
	moves = malloc((plan->nmoves ? plan->nmoves : 1) * sizeof(*moves));
	segs = malloc((plan->nsegs ? plan->nsegs : 1) * sizeof(*segs));
	meta = malloc((plan->nmeta ? plan->nmeta : 1) * sizeof(*meta));
	seen = calloc(plan->nmoves + 1, 1);
	if (!seg_at || !meta_at || !moves || !segs || !meta || !seen)
		goto out;
	plan_move_offsets(plan, seg_at, meta_at);
	ret = EINVAL;
	for (k = 0; k < nspans; k++) {
		if (first[k] > end[k] || end[k] > plan->nmoves ||
		    nm + (end[k] - first[k]) > plan->nmoves)
			goto out;
		for (m = first[k]; m < end[k]; m++)
			if (seen[m]++)
				goto out;	/* a move twice */
		append(moves, &nm, plan->moves, first[k], end[k], sizeof(*moves));
		append(segs, &ns, plan->segs, seg_at[first[k]], seg_at[end[k]], sizeof(*segs));
		append(meta, &nmeta, plan->meta, meta_at[first[k]], meta_at[end[k]],
		       sizeof(*meta));
	}
	/* Every move once: the spans cover the plan. */
	if (nm != plan->nmoves)
		goto out;
	memcpy(plan->moves, moves, nm * sizeof(*moves));
	if (ns)
		memcpy(plan->segs, segs, ns * sizeof(*segs));
	if (nmeta)
		memcpy(plan->meta, meta, nmeta * sizeof(*meta));
	ret = 0;
out:
	free(seen);
	free(seg_at);
	free(meta_at);
	free(moves);
	free(segs);
	free(meta);
	return ret;
}
