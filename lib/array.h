/*
 * array.h --- small helpers for arrays the libraries above lib/ share:
 * copying and sorting arrays that may be empty (and then NULL, which
 * memcpy and qsort must never be given), and growing them (util_grow's,
 * with an inline fast path).
 */
#ifndef LIB_ARRAY_H
#define LIB_ARRAY_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "e2frag.h"

/*
 * Room for NEED elements of SIZE bytes in *ARRAY (a pointer to the array
 * pointer), whose room is *CAP: lib's util_grow (doubling, overflow
 * checked), with the common case, room enough, inline.  0, or ENOMEM
 * with the array as it was.
 */
/*
 * SIZE bytes for an array that will be written whole and never grown
 * (free() gives them back): from 2 MiB on, aligned to a huge page and
 * advised so, each huge page one page fault where its 512 small pages
 * would be one each (page faults are dear, the more so in a VM).  The
 * advice stops at SIZE, the huge pages before
 * its tail: past it the block's slack, where a huge page khugepaged made
 * would be resident whole.
 */
static inline void *alloc_written(size_t size)
{
	const size_t huge = (size_t)2 << 20;
	void *p;

	if (size < huge)
		return malloc(size);
	if (posix_memalign(&p, huge, size))
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, size & ~(huge - 1), MADV_HUGEPAGE);
#endif
	return p;
}

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

/*
 * Arrays of at most SORT_FEW elements of at most SORT_FEW_SIZE bytes are
 * sorted by insertion, here: most sorts the planner makes are of a few
 * elements (a move's space-map changes, a join's files), tens of
 * thousands of them, where qsort's set-up and calls through a pointer
 * cost more than the sort.  Both are stable (glibc's qsort is a merge
 * sort), so the order is the same.
 */
#define SORT_FEW	8
#define SORT_FEW_SIZE	64

/* Insertion sort of N (<= SORT_FEW) elements: CMP with ARG, or CMP2 without. */
static inline void sort_few(char *v, size_t n, size_t size,
			    int (*cmp2)(const void *, const void *),
			    int (*cmp)(const void *, const void *, void *),
			    void *arg)
{
	char x[SORT_FEW_SIZE];
	size_t i, j;

	for (i = 1; i < n; i++) {
		memcpy(x, v + i * size, size);
		for (j = i; j > 0 && (cmp2 ? cmp2(v + (j - 1) * size, x) :
				      cmp(v + (j - 1) * size, x, arg)) > 0; j--)
			memcpy(v + j * size, v + (j - 1) * size, size);
		if (j != i)
			memcpy(v + j * size, x, size);
	}
}

static inline void sort_n(void *base, size_t n, size_t size,
			  int (*cmp)(const void *, const void *))
{
	if (n > 1 && n <= SORT_FEW && size <= SORT_FEW_SIZE)
		sort_few(base, n, size, cmp, NULL, NULL);
	else if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void sort_n_r(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *, void *),
			    void *arg)
{
	if (n > 1 && n <= SORT_FEW && size <= SORT_FEW_SIZE)
		sort_few(base, n, size, NULL, cmp, arg);
	else if (n > 1)
		qsort_r(base, n, size, cmp, arg);
}

/*
 * Growable arrays: N elements in use of CAP at V (NULL while empty).  The
 * one shape of every list the libraries above lib/ build a piece at a
 * time, so that a function takes one argument where it took the array,
 * its count and its room.  Zeroed to start; *_free gives the room back.
 */
struct piece_vec {
	struct layout_piece *v;
	size_t		n, cap;
};

struct blk_vec {
	blk64_t		*v;
	size_t		n, cap;
};

/* Append the run [START, END) (nothing when END <= START); 0 or ENOMEM. */
static inline int piece_vec_add(struct piece_vec *a, blk64_t start, blk64_t end)
{
	if (end <= start)
		return 0;
	if (grow_n(&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return ENOMEM;
	a->v[a->n++] = (struct layout_piece){ start, end - start };
	return 0;
}

static inline int blk_vec_add(struct blk_vec *a, blk64_t blk)
{
	if (grow_n(&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return ENOMEM;
	a->v[a->n++] = blk;
	return 0;
}

static inline void piece_vec_free(struct piece_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

static inline void blk_vec_free(struct blk_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

#endif /* LIB_ARRAY_H */
