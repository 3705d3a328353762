/*
 * blockpool.c --- block images for the journal, carved from large regions
 * (see blockpool.h for why).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blockpool.h"
#include "e2frag.h"

/* A transparent huge page on x86-64 and arm64 (4 KiB pages). */
#define REGION_BYTES	((size_t)2 << 20)

void blockpool_init(struct blockpool *p, size_t bs)
{
	memset(p, 0, sizeof(*p));
	p->bs = bs;
}

static int new_region(struct blockpool *p)
{
	size_t bytes = p->bs > REGION_BYTES ? p->bs : REGION_BYTES;
	void *r;

	if (util_grow(&p->regions, &p->cap, p->nregions + 1, sizeof(*p->regions)))
		return -1;
	if (posix_memalign(&r, REGION_BYTES, bytes))
		return -1;
	/* Advice only: where the kernel gives none, pages fault in as before. */
	util_huge_pages(r, bytes);
	p->regions[p->nregions++] = r;
	p->carve = r;
	p->left = bytes;
	return 0;
}

char *blockpool_get(struct blockpool *p)
{
	char *image;

	if (p->free) {
		image = p->free;
		memcpy(&p->free, image, sizeof(p->free));
		return image;
	}
	if (p->left < p->bs && new_region(p))
		return NULL;
	image = p->carve;
	p->carve += p->bs;
	p->left -= p->bs;
	return image;
}

void blockpool_put(struct blockpool *p, char *image)
{
	if (!image)
		return;
	memcpy(image, &p->free, sizeof(p->free));
	p->free = image;
}

void blockpool_free(struct blockpool *p)
{
	size_t i;

	for (i = 0; i < p->nregions; i++)
		free(p->regions[i]);
	free(p->regions);
	blockpool_init(p, p->bs);
}
