/*
 * radix_sort.h --- sorting runs by their start block in linear time.
 *
 * The map sorts every run every inode owns, the planner every segment of
 * its space map: millions of them, where a comparison sort costs more
 * than the scan that found them.  An LSD radix sort by the start, 12 bits
 * a pass, as many passes as the largest start needs, stable.  Inline, so
 * that each caller's element size and key offset are constants and the
 * copies compile to moves.
 */
#ifndef RADIX_SORT_H
#define RADIX_SORT_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ext2fs/ext2fs.h>

#include "e2frag.h"	/* util_huge_pages */

/* The blk64_t at offset KEY in the element at P. */
static inline blk64_t radix_key(const char *p, size_t key)
{
	blk64_t k;

	memcpy(&k, p + key, sizeof(k));
	return k;
}

/* The LSD passes over N elements at V, TMP (N elements) and COUNT their scratch. */
static inline void radix_sort_passes(char *v, uint64_t n, size_t size,
				     size_t key, blk64_t max, char *tmp,
				     uint64_t *count)
{
	enum { BITS = 12, BUCKETS = 1 << BITS };
	char *src = v, *dst = tmp;
	unsigned shift;

	for (shift = 0; shift < 64 && (max >> shift); shift += BITS) {
		uint64_t i, sum = 0;
		char *t;

		memset(count, 0, BUCKETS * sizeof(*count));
		for (i = 0; i < n; i++)
			count[(radix_key(src + i * size, key) >> shift) & (BUCKETS - 1)]++;
		for (i = 0; i < BUCKETS; i++) {
			uint64_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			memcpy(dst + size * count[(radix_key(src + i * size, key) >> shift) &
						  (BUCKETS - 1)]++,
			       src + i * size, size);
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * size);
}

/*
 * Sort the N elements of SIZE bytes at V by the blk64_t at offset KEY in
 * each, keeping the order of equal ones.  MAX is the largest key (or
 * more).  ENOMEM, V unchanged, when the scratch space cannot be had.
 *
 * The scratch is half the array, not all of it: each half is sorted on
 * its own, then the first half, copied out, is merged with the second
 * (equal keys from the first half first: stable).  A copy of the whole
 * array would be the peak of memory for the map and the planner on a
 * large filesystem.
 */
static inline errcode_t radix_sort_by_start(void *v, uint64_t n, size_t size,
					    size_t key, blk64_t max)
{
	char *tmp, *a = v;
	uint64_t *count, h = n / 2, i, j, o;

	if (n < 2)
		return 0;
	tmp = malloc((n - h) * size);
	count = malloc((1 << 12) * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return ENOMEM;
	}
	util_huge_pages(tmp, (n - h) * size);	/* all of it is written */
	radix_sort_passes(a, h, size, key, max, tmp, count);
	radix_sort_passes(a + h * size, n - h, size, key, max, tmp, count);
	memcpy(tmp, a, h * size);
	/* Output never overtakes the second half's reading: o = i + (j - h) <= j. */
	for (i = 0, j = h, o = 0; i < h && j < n; o++) {
		if (radix_key(a + j * size, key) < radix_key(tmp + i * size, key))
			memcpy(a + o * size, a + j++ * size, size);
		else
			memcpy(a + o * size, tmp + i++ * size, size);
	}
	memcpy(a + o * size, tmp + i * size, (h - i) * size);
	free(tmp);
	free(count);
	return 0;
}

#endif /* RADIX_SORT_H */
