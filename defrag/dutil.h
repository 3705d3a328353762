/*
 * dutil.h --- small helpers the engine's files share: copying and sorting
 * arrays that may be empty (and then NULL, which memcpy and qsort must
 * never be given), and growing them (util_grow's, with an inline fast
 * path).
 */
#ifndef DEFRAG_DUTIL_H
#define DEFRAG_DUTIL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"

/*
 * Room for NEED elements of SIZE bytes in *ARRAY (a pointer to the array
 * pointer), whose room is *CAP: lib's util_grow (doubling, overflow
 * checked), with the common case, room enough, inline.  0, or ENOMEM
 * with the array as it was.
 */
static inline int grow_n(void *array, size_t *cap, size_t need, size_t size)
{
	uint64_t c = *cap;

	if (need <= *cap)
		return 0;
	if (util_grow(array, &c, need, size))
		return ENOMEM;
	*cap = (size_t)c;	/* util_grow keeps c * size within a size_t */
	return 0;
}

static inline void copy_n(void *dst, const void *src, size_t bytes)
{
	if (bytes)
		memcpy(dst, src, bytes);
}

static inline void move_n(void *dst, const void *src, size_t bytes)
{
	if (bytes)
		memmove(dst, src, bytes);
}

static inline void sort_n(void *base, size_t n, size_t size,
			  int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void sort_n_r(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *, void *),
			    void *arg)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

#endif /* DEFRAG_DUTIL_H */
