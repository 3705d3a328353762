/*
 * blkindex.c --- the journal's block to slot map (writer/blkindex.c)
 * against a plain array: random puts, replacements, gets and deletions
 * over a few hundred block numbers, clustered (a batch's blocks run
 * together) and spread, through growth and clearing; every block asked
 * after each step.  Deletion shifts probe chains back: a wrong shift
 * loses an entry further down the chain, which a later get finds.
 */
#include <stdlib.h>
#include <string.h>

#include "blkindex.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define KEYS	600
#define STEPS	20000

int main(void)
{
	struct blkindex x;
	uint64_t key[KEYS];
	uint32_t want[KEYS], got;
	int mapped[KEYS];
	size_t i, k, wrong = 0, n = 0, dels = 0, clears = 0, most = 0;

	memset(&x, 0, sizeof(x));
	for (i = 0; i < KEYS; i++) {
		/* Half in one run of blocks, half anywhere (block 0 too). */
		key[i] = i < KEYS / 2 ? 1000000 + i : (i == KEYS / 2 ? 0 : rnd() >> 16);
		mapped[i] = 0;
	}
	tap_plan(3);
	for (i = 0; i < STEPS; i++) {
		uint64_t r = rnd();

		k = (size_t)(r % KEYS);
		switch ((r >> 32) % 8) {
		case 0: case 1: case 2: case 3:
			if (blkindex_put(&x, key[k], (uint32_t)(r >> 40)))
				abort();
			n += !mapped[k];
			mapped[k] = 1;
			want[k] = (uint32_t)(r >> 40);
			break;
		case 4: case 5: case 6:
			blkindex_del(&x, key[k]);
			n -= mapped[k];
			dels += mapped[k];
			mapped[k] = 0;
			break;
		default:
			if ((r >> 48) % 64 == 0) {
				blkindex_clear(&x);
				memset(mapped, 0, sizeof(mapped));
				n = 0;
				clears++;
			}
		}
		if (n > most)
			most = n;
		for (k = 0; k < KEYS; k++) {
			int has = blkindex_get(&x, key[k], &got);

			if (has != mapped[k] || (has && got != want[k]))
				wrong++;
		}
		if (x.n != n)
			wrong++;
	}
	tap_ok(!wrong, "every block found as the array says after each of %d steps (%zu wrong)",
	       STEPS, wrong);
	tap_ok(dels > 1000 && clears > 0 && most > 200,
	       "the steps deleted %zu mapped blocks, cleared %zu times, held up to %zu",
	       dels, clears, most);
	blkindex_free(&x);
	tap_ok(!x.cap && !x.n && !blkindex_get(&x, key[0], &got), "freed: empty");
	return tap_done();
}
