/*
 * blockpool.c --- the journal's block images (writer/blockpool.c): random
 * gets and puts, for block sizes of 1 KiB, 4 KiB, 64 KiB and one larger
 * than a region; each live image filled with its own pattern, and after
 * each step every live image still whole (no two share a byte), images
 * given back used again before a region is added, the regions no more
 * than the most images live at once need.
 */
#include <stdlib.h>
#include <string.h>

#include "blockpool.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define SLOTS	1500
#define STEPS	6000

static void fill(char *p, size_t bs, uint32_t tag)
{
	size_t i;

	for (i = 0; i + sizeof(tag) <= bs; i += sizeof(tag))
		memcpy(p + i, &tag, sizeof(tag));
}

static int whole(const char *p, size_t bs, uint32_t tag)
{
	size_t i;

	for (i = 0; i + sizeof(tag) <= bs; i += sizeof(tag))
		if (memcmp(p + i, &tag, sizeof(tag)))
			return 0;
	return 1;
}

static int cmp_ptr(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;

	return x < y ? -1 : x > y;
}

/* One block size: how many checks failed. */
static size_t run(size_t bs, size_t slots, size_t steps, size_t *most_out)
{
	struct blockpool p;
	char **img = calloc(slots, sizeof(*img)), **sorted = calloc(slots, sizeof(*sorted));
	uint32_t *tag = calloc(slots, sizeof(*tag));
	size_t i, k, n = 0, most = 0, wrong = 0, freed = 0;
	const size_t region = (size_t)2 << 20;

	if (!img || !sorted || !tag)
		abort();
	blockpool_init(&p, bs);
	for (i = 0; i < steps; i++) {
		uint64_t r = rnd();
		uint64_t regions = p.nregions;

		k = (size_t)(r % slots);
		if (!img[k] && (r >> 32) % 3) {
			img[k] = blockpool_get(&p);
			if (!img[k])
				abort();
			/* One given back is used before a region is added. */
			if (freed && p.nregions != regions)
				wrong++;
			freed -= !!freed;
			tag[k] = (uint32_t)(r >> 16) | 1;
			fill(img[k], bs, tag[k]);
			n++;
		} else if (img[k]) {
			if (!whole(img[k], bs, tag[k]))
				wrong++;
			blockpool_put(&p, img[k]);
			img[k] = NULL;
			freed++;
			n--;
		}
		if (n > most)
			most = n;
		/* Every few steps, every live image whole and apart. */
		if (i % 97 == 0 || i + 1 == steps) {
			size_t m = 0;

			for (k = 0; k < slots; k++)
				if (img[k]) {
					wrong += !whole(img[k], bs, tag[k]);
					sorted[m++] = img[k];
				}
			qsort(sorted, m, sizeof(*sorted), cmp_ptr);
			for (k = 1; k < m; k++)
				wrong += (size_t)(sorted[k] - sorted[k - 1]) < bs;
		}
	}
	/* No more regions than the most images live at once fill. */
	if (p.nregions > (bs >= region ? most : (most * bs + region - 1) / region))
		wrong++;
	blockpool_put(&p, NULL);	/* nothing to give back: no change */
	blockpool_free(&p);
	if (p.nregions || p.free || p.left)
		wrong++;
	free(img);
	free(sorted);
	free(tag);
	*most_out = most;
	return wrong;
}

int main(void)
{
	static const size_t sizes[] = { 1024, 4096, 65536, (size_t)3 << 20 };
	size_t i;

	tap_plan(4);
	for (i = 0; i < 4; i++) {
		size_t most, slots = sizes[i] > 65536 ? 12 : SLOTS;
		size_t steps = sizes[i] > 65536 ? 200 : STEPS;
		size_t wrong = run(sizes[i], slots, steps, &most);

		tap_ok(!wrong && most > slots / 3,
		       "%zu-byte images: %zu steps, up to %zu live, %zu checks failed",
		       sizes[i], steps, most, wrong);
	}
	return tap_done();
}
