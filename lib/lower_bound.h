/*
 * lower_bound.h --- the one binary search of the project: over anything
 * sorted, the first index at which a predicate stops holding.
 *
 * Every sorted table here (files by inode, names, zones, runs by end,
 * chunks by their largest end, the planner's segments) is searched the
 * same way; the caller says only what "before the key" means.  The
 * helper is inline so that the compiler sees the predicate and the loop
 * costs what a hand-written one does.
 */
#ifndef LOWER_BOUND_H
#define LOWER_BOUND_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

/*
 * BEFORE(ARRAY, I, KEY) is true for the indices before some point in
 * [LO, HI) and false from it on; that point is returned (HI when BEFORE
 * holds everywhere).  E.g. the first element >= KEY in an ascending array.
 */
static inline uint64_t lower_bound(uint64_t lo, uint64_t hi,
				   int (*before)(const void *array, uint64_t i,
						 const void *key),
				   const void *array, const void *key)
{
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (before(array, mid, key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The other form: the last index in [LO, HI) at which BEFORE holds, and
 * LO when it holds nowhere after LO (BEFORE need not hold at LO itself).
 * "The run holding X" in a table of run starts: LO is the first run,
 * which holds whatever comes before the second.
 */
static inline uint64_t last_at_or_before(uint64_t lo, uint64_t hi,
					 int (*before)(const void *array, uint64_t i,
						       const void *key),
					 const void *array, const void *key)
{
	return lower_bound(lo + 1, hi, before, array, key) - 1;
}

/*
 * The predicate most searches want, over an ascending array of block
 * numbers (blk64_t; ends of runs, largest ends of chunks): the first
 * element above *KEY, i.e. the first run that reaches past a block.
 */
static inline int blk_at_or_before(const void *array, uint64_t i, const void *key)
{
	return ((const blk64_t *)array)[i] <= *(const blk64_t *)key;
}

/* The same over an ascending blk64_t array: the first element >= *KEY. */
static inline int blk_before(const void *array, uint64_t i, const void *key)
{
	return ((const blk64_t *)array)[i] < *(const blk64_t *)key;
}

#endif /* LOWER_BOUND_H */
