/*
 * zonewalk.c --- a stream laid out across zones: from a start block on,
 * block after block, the fixed metadata between zones skipped.  This is
 * how a file larger than a zone reaches its best: the end of one zone and
 * the start of the next, as few boundaries crossed as its size needs.
 * Compaction (compact*.c) gives such files a place by its start block and
 * finds every other block of it through here.
 */
#include "planner_int.h"

blk64_t zonewalk_blk(const struct planner *p, blk64_t start, blk64_t off,
		     blk64_t *left)
{
	const struct layout *layout = p->layout;
	int64_t z = planner_zone_of(p, start);

	while (z >= 0 && (uint64_t)z < layout->nzones) {
		blk64_t end = layout->zones[z].start + layout->zones[z].len;

		if (start + off < end) {
			if (left)
				*left = end - (start + off);
			return start + off;
		}
		off -= end - start;
		if ((uint64_t)++z >= layout->nzones)
			break;
		start = layout->zones[z].start;
	}
	/* Past the last zone (or not in one): plain addresses, nothing left. */
	if (left)
		*left = 0;
	return start + off;
}

blk64_t zonewalk_off(const struct planner *p, blk64_t start, blk64_t blk)
{
	const struct layout *layout = p->layout;
	int64_t z = planner_zone_of(p, start);
	blk64_t off = 0;

	if (blk <= start)
		return 0;
	while (z >= 0 && (uint64_t)z < layout->nzones) {
		blk64_t end = layout->zones[z].start + layout->zones[z].len;

		if (blk < end)
			return off + (blk - start);
		off += end - start;
		if ((uint64_t)++z >= layout->nzones ||
		    blk < layout->zones[z].start)
			return off;	/* in the metadata: where the next zone starts */
		start = layout->zones[z].start;
	}
	return off + (blk - start);
}

uint32_t zonewalk_cross(const struct planner *p, blk64_t start, blk64_t len)
{
	blk64_t off = 0, left;
	uint32_t n = 0;

	while (len) {
		zonewalk_blk(p, start, off, &left);
		if (!left || left >= len)
			break;
		off += left;
		len -= left;
		n++;
	}
	return n;
}
