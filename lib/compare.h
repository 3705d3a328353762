/*
 * compare.h --- the comparators qsort is given in more than one place,
 * each written once: runs by their start, files' extra blocks by inode,
 * 32-bit numbers (inode and file numbers).
 *
 * Inline, so that each file that sorts gets its own copy of a few
 * instructions and no library depends on another for them.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdint.h>

#include "e2frag.h"

/* Runs (struct layout_piece) by start block, ascending. */
static inline int compare_piece_start(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Files' extra blocks (struct layout_aux) by inode, then by block. */
static inline int compare_aux_ino(const void *a, const void *b)
{
	const struct layout_aux *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* uint32_t (ext2_ino_t, file numbers), ascending. */
static inline int compare_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

#endif /* COMPARE_H */
