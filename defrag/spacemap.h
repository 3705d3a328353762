/*
 * spacemap.h --- who owns each run of the block space, as the planner
 * sees it while it plans moves one after another.
 *
 * The whole block space [first data block, blocks count) is cut into
 * segments, each with one owner: free, fixed metadata, pinned (used by
 * something that never moves: an EA block, a file that is skipped), or
 * a file of the layout.  Adjacent segments never have the same owner.
 * Planning a move is two assignments: the old runs become free, the new
 * ones the file's.
 */
#ifndef DEFRAG_SPACEMAP_H
#define DEFRAG_SPACEMAP_H

#include "e2frag.h"

enum {
	SM_FREE = 0,
	SM_META,	/* fixed metadata: between zones */
	SM_PINNED,	/* in use, never moved */
	SM_RESERVED,	/* free, but kept for a block's final place (compact.c) */
	SM_FILE0	/* SM_FILE0 + i: layout->files[i] */
};

struct sm_seg {
	blk64_t		start;
	blk64_t		len;
	uint32_t	owner;
};

struct spacemap {
	struct sm_seg	*seg;
	size_t		n, cap;
	blk64_t		first, end;	/* the block space */
};

/*
 * Build SM over [FIRST, END) from RUNS (any order, not overlapping: the
 * caller resolved shared blocks); blocks in no run are free when clear in
 * USED, else pinned.  E2F_ERR_CORRUPT_INODE when runs overlap.
 */
errcode_t spacemap_build(struct spacemap *sm, blk64_t first, blk64_t end,
			 struct sm_seg *runs, size_t nruns,
			 ext2fs_block_bitmap used);
void spacemap_free(struct spacemap *sm);
errcode_t spacemap_copy(struct spacemap *dst, const struct spacemap *src);

/* Index of the segment holding BLK (FIRST <= BLK < END). */
size_t spacemap_find(const struct spacemap *sm, blk64_t blk);

/* Give [START, START+LEN) to OWNER. */
errcode_t spacemap_assign(struct spacemap *sm, blk64_t start, blk64_t len,
			  uint32_t owner);

/*
 * Apply CHANGES (sorted by start, not overlapping): each run goes to its
 * owner.  One pass over the map, for moves that change many runs.
 */
errcode_t spacemap_apply(struct spacemap *sm, const struct sm_seg *changes,
			 size_t n);

/* Whether all of [START, START+LEN) belongs to OWNER. */
int spacemap_is(const struct spacemap *sm, blk64_t start, blk64_t len,
		uint32_t owner);

/*
 * The smallest free stretch of at least LEN blocks lying wholly below
 * LIMIT and outside [EXCL_START, EXCL_END) (free segments are clipped to
 * that), lowest first among equals.  Returns its start and length, or -1.
 */
int spacemap_best_fit(const struct spacemap *sm, blk64_t len, blk64_t limit,
		      blk64_t excl_start, blk64_t excl_end,
		      blk64_t *start, blk64_t *stretch);

/* Free-space figures: number of free segments, free blocks, largest. */
void spacemap_free_stats(const struct spacemap *sm, uint64_t *extents,
			 blk64_t *blocks, blk64_t *largest);

#endif /* DEFRAG_SPACEMAP_H */
