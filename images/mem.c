/*
 * mem.c --- the one growable-array helper the builder's lists share.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "img.h"

errcode_t img_grow(void *ptrp, uint32_t *cap, uint32_t need, size_t size)
{
	void *p;
	uint64_t n;

	if (need <= *cap)
		return 0;
	n = *cap ? (uint64_t)*cap * 2 : 8;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	if (n < need || n > SIZE_MAX / size)
		return ENOMEM;
	memcpy(&p, ptrp, sizeof(p));
	p = realloc(p, n * size);
	if (!p)
		return ENOMEM;
	memset((char *)p + (size_t)*cap * size, 0, (n - *cap) * size);
	memcpy(ptrp, &p, sizeof(p));
	*cap = (uint32_t)n;
	return 0;
}
