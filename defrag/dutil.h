/*
 * dutil.h --- small helpers the engine's files share: copying and sorting
 * arrays that may be empty (and then NULL, which memcpy and qsort must
 * never be given).
 */
#ifndef DEFRAG_DUTIL_H
#define DEFRAG_DUTIL_H

#include <stdlib.h>
#include <string.h>

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
