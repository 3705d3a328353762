/*
 * plan_reorder.c --- a plan's moves put in another order, span by span.
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
	seg_at[0] = meta_at[0] = 0;
	for (m = 0; m < plan->nmoves; m++) {
		seg_at[m + 1] = seg_at[m] + plan_move_nsegs(&plan->moves[m]);
		meta_at[m + 1] = meta_at[m] + plan->moves[m].nmeta;
	}
	ret = EINVAL;
	for (k = 0; k < nspans; k++) {
		if (first[k] > end[k] || end[k] > plan->nmoves ||
		    nm + (end[k] - first[k]) > plan->nmoves)
			goto out;
		for (m = first[k]; m < end[k]; m++)
			if (seen[m]++)
				goto out;	/* a move twice */
		memcpy(moves + nm, plan->moves + first[k], (end[k] - first[k]) * sizeof(*moves));
		nm += end[k] - first[k];
		memcpy(segs + ns, plan->segs + seg_at[first[k]],
		       (seg_at[end[k]] - seg_at[first[k]]) * sizeof(*segs));
		ns += seg_at[end[k]] - seg_at[first[k]];
		memcpy(meta + nmeta, plan->meta + meta_at[first[k]],
		       (meta_at[end[k]] - meta_at[first[k]]) * sizeof(*meta));
		nmeta += meta_at[end[k]] - meta_at[first[k]];
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
