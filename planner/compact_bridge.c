/*
 * compact_bridge.c --- packing the whole disk, the settled files that part
 * two gaps of one zone, which may join the packing so that the two become
 * one.
 *
 * A gap ends at any block of a file not taking part (compact.c), so a
 * small settled file in the middle of a zone cuts the zone's room in two,
 * though the near-full promise counts the zone whole (its other files may
 * move within it: that costs writes, not room).  A recording of best 2
 * that needs more of such a zone than either part leaves goes across the
 * next boundary instead, where it may take the only zone that could hold
 * another recording at its best; moved out of the way, the small file
 * leaves the zone whole (tests/cli/defrag-nearfull.sh's nf-ext4-1k-85 is
 * such a disk).
 */
#include <errno.h>
#include <stdlib.h>

#include "compact_int.h"
#include "array.h"

/* Whether segment S of the space map is in a gap (free, or taking part). */
static int in_gap(const struct compact *c, const struct sm_seg *s)
{
	return s->owner == SM_FREE ||
	       (s->owner >= SM_FILE0 && c->member[s->owner - SM_FILE0]);
}

/*
 * Whether the file owning segment S may join: settled, movable, whole in
 * its zone Z and in one run (a file in pieces is not settled), its tree as
 * it would be contiguous.
 */
static int may_join(struct compact *c, const struct sm_seg *s, int64_t z)
{
	struct planner *p = c->p;
	uint32_t f = s->owner - SM_FILE0, n;
	struct layout_piece sole;
	blk64_t need;

	if (c->member[f] || (p->pf[f].flags & (PF_UNMOVABLE | PF_PENDING)) ||
	    planner_best(p, f) > 1 || !compact_within_zone(p, f, z))
		return 0;
	planner_runs(p, f, &n, &sole);
	if (n != 1 || place_need(p, f, 0, &need))
		return 0;
	return planner_etb_contig(p, f) == planner_etb_now(p, f);
}

errcode_t compact_bridge_files(struct compact *c, blk64_t budget, uint32_t **out,
			size_t *nout)
{
	const struct spacemap *sm = &c->p->sm;
	uint32_t *x = NULL;
	size_t n = 0, cap = 0, i, j;
	blk64_t taken = 0;

	*out = NULL;
	*nout = 0;
	for (i = 1; i + 1 < sm->n; i = j) {
		const struct sm_seg prev = SM_SEG(sm, i - 1);
		struct sm_seg s = SM_SEG(sm, i), next;	/* end to end: no holes */
		int64_t z = planner_zone_of(c->p, s.start);
		blk64_t len = 0;

		j = i + 1;
		if (s.owner < SM_FILE0 || in_gap(c, &s) || !in_gap(c, &prev) || z < 0 ||
		    planner_zone_of(c->p, prev.start) != z)
			continue;
		/* The settled files from here on, up to the next gap's start. */
		for (j = i; j < sm->n; j++) {
			s = SM_SEG(sm, j);
			if (in_gap(c, &s) || s.owner < SM_FILE0 ||
			    planner_zone_of(c->p, s.start) != z || !may_join(c, &s, z))
				break;
			len += s.len;
		}
		if (j == i || j == sm->n) {
			j = i + 1;
			continue;
		}
		next = SM_SEG(sm, j);
		if (!in_gap(c, &next) || planner_zone_of(c->p, next.start) != z ||
		    taken + len > budget)
			continue;
		for (; i < j; i++) {
			if (grow_n(&x, &cap, n + 1, sizeof(*x))) {
				free(x);
				return ENOMEM;
			}
			x[n++] = SM_SEG(sm, i).owner - SM_FILE0;
		}
		taken += len;
	}
	*out = x;
	*nout = n;
	return 0;
}
