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
	uint64_t	interleaved_cap, partners_cap, alternations_cap;
};

static inline uint32_t interleave_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

static inline void interleave_union(uint32_t *parent, uint32_t x, uint32_t y)
{
	parent[interleave_root(parent, x)] = interleave_root(parent, y);
}

/*
 * layout->interleaved is complete, each entry's set field holding the
 * file's dense number; W->parent joins the partners.  Make the sets, give
 * each entry its set, and index the entries by file.
 */
errcode_t interleave_fill_sets(struct layout *layout, struct interleave_work *w);

#endif
