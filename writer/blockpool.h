/*
 * blockpool.h --- block images for the journal, carved from large regions.
 *
 * A run that logs data keeps thousands of block images until the
 * journal's checkpoint (e2defrag's kernel-written tree: 24 MiB of them).
 * malloc'd one by one, each page was first touched by a fault of its
 * own, a fifth of that run's CPU on a virtual machine; the regions here
 * are 2 MiB, aligned and marked for transparent huge pages, so that a
 * region comes in with one fault where the kernel allows it, and images
 * given back are used again.  Memory is returned when the pool is freed.
 */
#ifndef E2F_BLOCKPOOL_H
#define E2F_BLOCKPOOL_H

#include <stddef.h>
#include <stdint.h>

struct blockpool {
	size_t	bs;		/* the size of an image */
	void	*free;		/* images given back: each holds the next */
	char	*carve;		/* the rest of the newest region */
	size_t	left;		/* ... its bytes */
	void	**regions;
	uint64_t nregions, cap;
};

void blockpool_init(struct blockpool *p, size_t bs);
/* An image of p->bs bytes (its contents undefined), or NULL. */
char *blockpool_get(struct blockpool *p);
/* IMAGE, from this pool (or NULL), is free again. */
void blockpool_put(struct blockpool *p, char *image);
/* Every region back to the system: no image of the pool may be used after. */
void blockpool_free(struct blockpool *p);

#endif
