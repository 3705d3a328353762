/*
 * blkindex.h --- a block number to slot map (open addressing, linear
 * probing): where the journal finds a block of its open transaction
 * without walking all of them (journal.c).  A batch of a tree's moves
 * holds thousands of blocks, and every read the writer makes asks
 * whether one of them is newer than the disk.
 */
#ifndef WRITER_BLKINDEX_H
#define WRITER_BLKINDEX_H

#include <stddef.h>
#include <stdint.h>

struct blkindex {
	uint64_t	*key;		/* BLKINDEX_EMPTY: a free slot */
	uint32_t	*val;
	size_t		cap;		/* a power of two, or 0 */
	size_t		n;
};

#define BLKINDEX_EMPTY	UINT64_MAX

/*
 * BLK maps to VAL from now on (added or replaced).  ENOMEM, else 0: a
 * block mapped already never fails.
 */
int blkindex_put(struct blkindex *x, uint64_t blk, uint32_t val);
/* Whether BLK is mapped, its value in *VAL. */
int blkindex_get(const struct blkindex *x, uint64_t blk, uint32_t *val);
/* BLK maps to nothing. */
void blkindex_del(struct blkindex *x, uint64_t blk);
/* Nothing is mapped (the memory is kept). */
void blkindex_clear(struct blkindex *x);
void blkindex_free(struct blkindex *x);

#endif /* WRITER_BLKINDEX_H */
