/*
 * blkindex.c --- a block number to slot map: open addressing with linear
 * probing, at most half full, deletion by shifting the probe chain back
 * (no tombstones: a batch adds and drops blocks many times over).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blkindex.h"

static size_t slot_of(const struct blkindex *x, uint64_t blk)
{
	/* Fibonacci hashing: consecutive blocks spread over the table. */
	return (size_t)((blk * 0x9e3779b97f4a7c15ULL) >> 20) & (x->cap - 1);
}

static int grow(struct blkindex *x)
{
	size_t cap = x->cap ? 2 * x->cap : 64, i;
	uint64_t *key = malloc(cap * sizeof(*key)), *old_key = x->key;
	uint32_t *val = malloc(cap * sizeof(*val)), *old_val = x->val;
	size_t old_cap = x->cap;

	if (!key || !val) {
		free(key);
		free(val);
		return ENOMEM;
	}
	for (i = 0; i < cap; i++)
		key[i] = BLKINDEX_EMPTY;
	x->key = key;
	x->val = val;
	x->cap = cap;
	x->n = 0;
	for (i = 0; i < old_cap; i++)
		if (old_key[i] != BLKINDEX_EMPTY)
			(void)blkindex_put(x, old_key[i], old_val[i]);
	free(old_key);
	free(old_val);
	return 0;
}

/* BLK's slot, or the empty one that ends its chain. */
static size_t probe(const struct blkindex *x, uint64_t blk)
{
	size_t i;

	for (i = slot_of(x, blk); x->key[i] != BLKINDEX_EMPTY && x->key[i] != blk;
	     i = (i + 1) & (x->cap - 1))
		;
	return i;
}

int blkindex_put(struct blkindex *x, uint64_t blk, uint32_t val)
{
	size_t i;

	/* A block mapped already changes its value: no growth, no failure. */
	if (x->cap && x->key[i = probe(x, blk)] == blk) {
		x->val[i] = val;
		return 0;
	}
	if (2 * (x->n + 1) > x->cap && grow(x))
		return ENOMEM;
	i = probe(x, blk);
	x->key[i] = blk;
	x->val[i] = val;
	x->n++;
	return 0;
}

int blkindex_get(const struct blkindex *x, uint64_t blk, uint32_t *val)
{
	size_t i;

	if (!x->n || x->key[i = probe(x, blk)] != blk)
		return 0;
	*val = x->val[i];
	return 1;
}

void blkindex_del(struct blkindex *x, uint64_t blk)
{
	size_t i, j, home, mask = x->cap - 1;

	if (!x->n || x->key[i = probe(x, blk)] != blk)
		return;
	/*
	 * Shift back each later entry of the chain whose home is not
	 * between the hole and it (cyclically): a lookup then finds every
	 * entry without passing an empty slot.
	 */
	for (j = (i + 1) & mask; x->key[j] != BLKINDEX_EMPTY; j = (j + 1) & mask) {
		home = slot_of(x, x->key[j]);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			x->key[i] = x->key[j];
			x->val[i] = x->val[j];
			i = j;
		}
	}
	x->key[i] = BLKINDEX_EMPTY;
	x->n--;
}

void blkindex_clear(struct blkindex *x)
{
	size_t i;

	if (!x->n)
		return;
	for (i = 0; i < x->cap; i++)
		x->key[i] = BLKINDEX_EMPTY;
	x->n = 0;
}

void blkindex_free(struct blkindex *x)
{
	free(x->key);
	free(x->val);
	memset(x, 0, sizeof(*x));
}
