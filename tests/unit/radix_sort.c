/*
 * radix_sort.c --- radix_sort_by_start (lib/radix_sort.h) against a
 * stable insertion sort, its oracle: arrays of every size from 0 to 300
 * and a few large ones, with keys from a narrow range (many equal, where
 * stability shows) and from the whole 64 bits, in 16- and 24-byte
 * elements with the key at different offsets.  The sort works on two
 * halves merged: odd sizes, halves of one element and a second half
 * wholly before or after the first must all come out as the oracle's.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"
#include "../lib/tap.h"
#include "xorshift.h"

struct e16 { uint32_t tag; uint32_t pad; blk64_t key; };	/* key at 8 */
struct e24 { blk64_t key; uint64_t tag, more; };		/* key at 0 */

/* Keys for case K: few distinct, sorted halves, reversed, or anything. */
static blk64_t key_for(int k, size_t i, size_t n)
{
	switch (k) {
	case 0: return rnd() % 7;
	case 1: return i < n / 2 ? 1000 + i : i;	/* second half wholly before */
	case 2: return n - i;
	case 3: return rnd() >> (rnd() % 64);
	default: return rnd() % 5000;
	}
}

/*
 * Whether OUT is IN stably sorted: every tag (its index in IN) once, with
 * its key, in (key, tag) order.  SEEN has room for N.
 */
#define CHECK_SORTED(out, in, n, seen, ok)					\
	do {									\
		memset(seen, 0, n);						\
		ok = 1;								\
		for (size_t i_ = 0; ok && i_ < (n); i_++) {			\
			uint64_t t_ = (out)[i_].tag;				\
			ok = t_ < (n) && !seen[t_] && (in)[t_].key == (out)[i_].key &&	\
			     (!i_ || (out)[i_ - 1].key < (out)[i_].key ||	\
			      ((out)[i_ - 1].key == (out)[i_].key &&		\
			       (out)[i_ - 1].tag < t_));			\
			if (ok)							\
				seen[t_] = 1;					\
		}								\
	} while (0)

int main(void)
{
	size_t sizes[320], nsizes = 0, s;
	long bad16 = 0, bad24 = 0, runs = 0;
	int k;

	tap_plan(2);
	for (s = 0; s <= 300; s++)
		sizes[nsizes++] = s;
	sizes[nsizes++] = 4097;
	sizes[nsizes++] = 20000;
	sizes[nsizes++] = 65537;
	for (s = 0; s < nsizes; s++)
		for (k = 0; k < 5; k++) {
			size_t n = sizes[s], i;
			struct e16 *a = malloc((n + 1) * sizeof(*a)), *ia = malloc((n + 1) * sizeof(*ia));
			struct e24 *b = malloc((n + 1) * sizeof(*b)), *ib = malloc((n + 1) * sizeof(*ib));
			unsigned char *seen = malloc(n + 1);
			blk64_t max = 0;
			int ok;

			if (!a || !ia || !b || !ib || !seen)
				return 99;
			for (i = 0; i < n; i++) {
				blk64_t key = key_for(k, i, n);

				a[i] = (struct e16){ (uint32_t)i, 0, key };
				b[i] = (struct e24){ key, i, ~(uint64_t)i };
				if (key > max)
					max = key;
			}
			memcpy(ia, a, n * sizeof(*a));
			memcpy(ib, b, n * sizeof(*b));
			if (radix_sort_by_start(a, n, sizeof(*a), offsetof(struct e16, key), max) ||
			    radix_sort_by_start(b, n, sizeof(*b), offsetof(struct e24, key), max))
				return 99;
			CHECK_SORTED(a, ia, n, seen, ok);
			bad16 += !ok;
			CHECK_SORTED(b, ib, n, seen, ok);
			for (i = 0; ok && i < n; i++)
				ok = b[i].more == ~b[i].tag;	/* moved whole */
			bad24 += !ok;
			runs++;
			free(a);
			free(ia);
			free(b);
			free(ib);
			free(seen);
		}
	tap_ok(!bad16, "16-byte elements, key at 8: %ld of %ld arrays not stably sorted",
	       bad16, runs);
	tap_ok(!bad24, "24-byte elements, key at 0: %ld of %ld arrays not stably sorted",
	       bad24, runs);
	return tap_done();
}
