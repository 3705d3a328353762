/*
 * mem.c --- the builder's lists grow with the core's util_grow, and their
 * new room is zeroed (the lists rely on it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

errcode_t img_grow(void *ptrp, uint32_t *cap, uint32_t need, size_t size)
{
	uint64_t room = *cap;
	char *p;

	if (need <= *cap)
		return 0;
	if (util_grow(ptrp, &room, need, size))
		return ENOMEM;
	if (room > UINT32_MAX)
		room = UINT32_MAX;
	memcpy(&p, ptrp, sizeof(p));
	memset(p + (size_t)*cap * size, 0, (size_t)(room - *cap) * size);
	*cap = (uint32_t)room;
	return 0;
}
