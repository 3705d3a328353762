/*
 * interleave_int.h --- what interleave.c (finding the pairs) hands to
 * interleave_sets.c (grouping them into sets).
 */
#ifndef INTERLEAVE_INT_H
#define INTERLEAVE_INT_H

#include "e2frag.h"

struct interleave_work {
	uint32_t	*parent;	/* union-find over the dense file numbers */
	uint32_t	ndense;
	uint64_t	interleaved_cap, partners_cap, top_cap;
};

static inline uint32_t interleave_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Whether pair X is stronger than Y: more alternations, then the lower inodes. */
static inline int interleave_pair_better(const struct layout_pair *x,
					 const struct layout_pair *y)
{
	if (x->alternations != y->alternations)
		return x->alternations > y->alternations;
	if (x->a != y->a)
		return x->a < y->a;
	return x->b < y->b;
}

/*
 * Keep P among the LAYOUT_OUTLINE_PAIRS strongest pairs in TOP (*N of
 * them, strongest first: most alternations, then the lower inodes).
 */
void interleave_keep_pair(struct layout_pair *top, uint32_t *n, struct layout_pair p);

/*
 * layout->interleaved is complete, each entry's set field holding the
 * file's dense number; W->parent joins the partners.  Make the sets, give
 * each entry its set, and index the entries by file.
 */
errcode_t interleave_fill_sets(struct layout *layout, struct interleave_work *w);

#endif
