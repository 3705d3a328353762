/*
 * spacemap.c --- e2defrag's space map (planner/spacemap.c) against a
 * brute-force reference kept here: one owner per block, changed block by
 * block, with free runs, best fits and figures worked out by plain loops
 * over every block.  The map gets there by chunks of segments, a treap of
 * free runs and an undo log; the reference by none of that.
 *
 * Random operations (a fixed seed): assignments, batches of changes,
 * nested marks rolled back or kept, on a map of some thousands of
 * segments (many chunks, split and emptied as it goes), each followed by
 * a full comparison and random queries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spacemap.h"
#include "memory_fs.h"
#include "../lib/tap.h"

#define NBLOCKS		20000
#define FIRST		1
#define NOWNERS		(SM_FILE0 + 40)
#define OPS		3000
#define MAX_DEPTH	3

static uint32_t seed = 4242;

static uint32_t rnd(uint32_t n)
{
	seed = seed * 1103515245 + 12345;
	return ((seed >> 8) ^ (seed << 7)) % n;
}

static uint32_t ref[NBLOCKS];
static uint32_t saved[MAX_DEPTH][NBLOCKS];

/* The map's segments against the reference, block by block; canonical. */
static int same_as_ref(const struct spacemap *sm, char *why, size_t whylen)
{
	blk64_t pos = FIRST, b;
	size_t i;

	for (i = 0; i < sm->n; i++) {
		const struct sm_seg gv = spacemap_seg(sm, i), *g = &gv;

		if (g->start != pos || !g->len) {
			snprintf(why, whylen, "segment %zu starts at %llu, not %llu",
				 i, (unsigned long long)g->start, (unsigned long long)pos);
			return 0;
		}
		if (i && spacemap_seg(sm, i - 1).owner == g->owner) {
			snprintf(why, whylen, "segments %zu and %zu have the same owner", i - 1, i);
			return 0;
		}
		for (b = g->start; b < g->start + g->len; b++)
			if (ref[b] != g->owner) {
				snprintf(why, whylen, "block %llu: owner %u, want %u",
					 (unsigned long long)b, g->owner, ref[b]);
				return 0;
			}
		pos = g->start + g->len;
	}
	if (pos != NBLOCKS) {
		snprintf(why, whylen, "segments end at %llu", (unsigned long long)pos);
		return 0;
	}
	return 1;
}

/* Best fit by the definition, over the reference's maximal free runs. */
static int ref_best_fit(blk64_t len, blk64_t limit, blk64_t xs, blk64_t xe,
			blk64_t *start, blk64_t *stretch)
{
	blk64_t s, e, best_s = 0, best_len = 0, c[2][2];
	int found = 0, k, nc;

	if (!len)
		len = 1;
	for (s = FIRST; s < NBLOCKS; s = e) {
		for (e = s + 1; e < NBLOCKS && (ref[e] == SM_FREE) == (ref[s] == SM_FREE); e++)
			;
		if (ref[s] != SM_FREE || s >= limit)
			continue;
		nc = 0;
		{
			blk64_t ce = e > limit ? limit : e;

			if (xe > xs && s < xe && ce > xs) {
				c[nc][0] = s; c[nc++][1] = xs;
				c[nc][0] = xe; c[nc++][1] = ce;
			} else {
				c[nc][0] = s; c[nc++][1] = ce;
			}
		}
		for (k = 0; k < nc; k++) {
			blk64_t a = c[k][0], b = c[k][1];

			if (b <= a || b - a < len)
				continue;
			if (!found || b - a < best_len || (b - a == best_len && a < best_s)) {
				found = 1;
				best_s = a;
				best_len = b - a;
			}
		}
	}
	if (!found)
		return -1;
	*start = best_s;
	*stretch = best_len;
	return 0;
}

static void ref_stats(uint64_t *ext, blk64_t *blocks, blk64_t *largest)
{
	blk64_t b, run = 0;

	*ext = 0;
	*blocks = 0;
	*largest = 0;
	for (b = FIRST; b <= NBLOCKS; b++) {
		if (b < NBLOCKS && ref[b] == SM_FREE) {
			if (!run)
				(*ext)++;
			run++;
			(*blocks)++;
			continue;
		}
		if (run > *largest)
			*largest = run;
		run = 0;
	}
}

/* Random queries: find, is, best fit, the figures. */
static int queries(const struct spacemap *sm, char *why, size_t whylen)
{
	uint64_t e1, e2;
	blk64_t b1, b2, l1, l2;
	int q;

	spacemap_free_stats(sm, &e1, &b1, &l1);
	ref_stats(&e2, &b2, &l2);
	if (e1 != e2 || b1 != b2 || l1 != l2) {
		snprintf(why, whylen, "free figures %llu/%llu/%llu, want %llu/%llu/%llu",
			 (unsigned long long)e1, (unsigned long long)b1,
			 (unsigned long long)l1, (unsigned long long)e2,
			 (unsigned long long)b2, (unsigned long long)l2);
		return 0;
	}
	for (q = 0; q < 6; q++) {
		blk64_t blk = FIRST + rnd(NBLOCKS - FIRST), len = 1 + rnd(q < 3 ? 8 : 300);
		const struct sm_seg gv = spacemap_seg(sm, spacemap_find(sm, blk)), *g = &gv;
		blk64_t limit = rnd(4) ? NBLOCKS : FIRST + rnd(NBLOCKS - FIRST);
		blk64_t xs = 0, xe = 0, s1 = 0, s2 = 0, st1 = 0, st2 = 0, b;
		int r1, r2, want_is = 1;

		if (g->start > blk || g->start + g->len <= blk || g->owner != ref[blk]) {
			snprintf(why, whylen, "find(%llu) gives the wrong segment",
				 (unsigned long long)blk);
			return 0;
		}
		for (b = blk; b < blk + len; b++)
			if (b >= NBLOCKS || ref[b] != ref[blk])
				want_is = 0;
		if (spacemap_is(sm, blk, len, ref[blk]) != want_is) {
			snprintf(why, whylen, "is(%llu, %llu) wrong", (unsigned long long)blk,
				 (unsigned long long)len);
			return 0;
		}
		if (rnd(2)) {
			xs = FIRST + rnd(NBLOCKS - FIRST);
			xe = xs + rnd(rnd(3) ? 200 : 5000);
		}
		r1 = spacemap_best_fit(sm, len, limit, xs, xe, &s1, &st1);
		r2 = ref_best_fit(len, limit, xs, xe, &s2, &st2);
		if (r1 != r2 || (!r1 && (s1 != s2 || st1 != st2))) {
			snprintf(why, whylen, "best fit of %llu below %llu outside [%llu, %llu): "
				 "%d %llu+%llu, want %d %llu+%llu", (unsigned long long)len,
				 (unsigned long long)limit, (unsigned long long)xs,
				 (unsigned long long)xe, r1, (unsigned long long)s1,
				 (unsigned long long)st1, r2, (unsigned long long)s2,
				 (unsigned long long)st2);
			return 0;
		}
	}
	return 1;
}

static uint32_t random_owner(void)
{
	uint32_t r = rnd(10);

	if (r < 4)
		return SM_FREE;
	if (r == 4)
		return SM_PINNED;
	return SM_FILE0 + rnd(NOWNERS - SM_FILE0);
}

int main(void)
{
	char why[256] = "";
	struct sm_run *runs;
	struct spacemap sm;
	ext2_filsys fs;
	size_t nruns = 0, marks[MAX_DEPTH];
	int depth = 0, op, ok = 1, splits = 0;
	size_t chunks_max = 0;
	blk64_t b;

	fs = memory_fs(NBLOCKS, 0);
	if (!fs) {
		tap_skip_all("no filesystem in memory (ext2fs_initialize)");
		return 0;
	}
	tap_plan(8);

	/* Short runs of random owners: thousands of segments; some blocks used, no run. */
	ext2fs_clear_block_bitmap(fs->block_map);
	runs = malloc(NBLOCKS * sizeof(*runs));
	for (b = FIRST; b < NBLOCKS;) {
		blk64_t len = 1 + rnd(6);
		uint32_t o = random_owner();

		if (b + len > NBLOCKS)
			len = NBLOCKS - b;
		if (o == SM_FREE) {
			if (rnd(3) == 0) {	/* used, in no run: pinned */
				ext2fs_mark_block_bitmap_range2(fs->block_map, b, len);
				o = SM_PINNED;
			}
		} else {
			runs[nruns++] = (struct sm_run){ b, len, o };
		}
		for (blk64_t k = b; k < b + len; k++)
			ref[k] = o;
		b += len;
	}
	/* The runs come in any order. */
	for (size_t i = nruns; i > 1; i--) {
		size_t j = rnd(i);
		struct sm_run t = runs[i - 1];

		runs[i - 1] = runs[j];
		runs[j] = t;
	}
	ok = !spacemap_build(&sm, FIRST, NBLOCKS, runs, nruns, fs->block_map);
	tap_ok(ok, "spacemap_build");
	ok = ok && same_as_ref(&sm, why, sizeof(why)) && queries(&sm, why, sizeof(why));
	if (!ok)
		printf("# %s\n", why);
	tap_ok(ok && sm.nchunks > 10, "built map matches the reference (%zu segments, %zu chunks)",
	       sm.n, sm.nchunks);

	chunks_max = sm.nchunks;
	for (op = 0; ok && op < OPS; op++) {
		uint32_t r = rnd(20);

		if (r == 0 && depth < MAX_DEPTH) {
			memcpy(saved[depth], ref, sizeof(ref));
			marks[depth++] = spacemap_mark(&sm);
		} else if (r == 1 && depth) {
			depth--;
			spacemap_rollback(&sm, marks[depth]);
			memcpy(ref, saved[depth], sizeof(ref));
		} else if (r == 2 && depth) {
			depth--;
			spacemap_release(&sm, marks[depth]);
		} else if (r == 3 && rnd(4) == 0) {
			/* A stretch cut into single blocks: one chunk grows past its size. */
			blk64_t start = FIRST + rnd(NBLOCKS - 700);

			for (b = start; ok && b < start + 600; b++) {
				uint32_t o = SM_FILE0 + (b % 2) + 2 * rnd(3);

				ok = !spacemap_assign(&sm, b, 1, o);
				ref[b] = o;
			}
		} else if (r < 6) {
			/* A batch of changes, sorted and apart, as a move makes them. */
			struct sm_seg ch[40];
			size_t n = 0;
			blk64_t pos = FIRST + rnd(NBLOCKS / 2);

			while (n < 40 && pos < NBLOCKS - 1) {
				blk64_t len = 1 + rnd(r == 3 ? 600 : 5);

				if (pos + len > NBLOCKS)
					len = NBLOCKS - pos;
				ch[n++] = (struct sm_seg){ pos, len, random_owner() };
				pos += len + rnd(40);
			}
			ok = !spacemap_apply(&sm, ch, n);
			for (size_t i = 0; i < n; i++)
				for (b = ch[i].start; b < ch[i].start + ch[i].len; b++)
					ref[b] = ch[i].owner;
		} else {
			blk64_t start = FIRST + rnd(NBLOCKS - FIRST);
			blk64_t len = 1 + rnd(rnd(8) ? 12 : 3000);
			uint32_t o = random_owner();

			if (start + len > NBLOCKS)
				len = NBLOCKS - start;
			ok = !spacemap_assign(&sm, start, len, o);
			for (b = start; b < start + len; b++)
				ref[b] = o;
		}
		if (sm.nchunks > chunks_max)
			splits++;
		chunks_max = sm.nchunks;
		if (!ok)
			snprintf(why, sizeof(why), "operation %d failed", op);
		ok = ok && same_as_ref(&sm, why, sizeof(why)) && queries(&sm, why, sizeof(why));
		if (!ok)
			printf("# after operation %d: %s\n", op, why);
	}
	tap_ok(ok, "%d random operations: map, finds, best fits and figures match", OPS);
	while (depth) {
		depth--;
		spacemap_rollback(&sm, marks[depth]);
		memcpy(ref, saved[depth], sizeof(ref));
	}
	tap_ok(same_as_ref(&sm, why, sizeof(why)) && queries(&sm, why, sizeof(why)),
	       "marks still open rolled back: the map as when they were taken");
	tap_ok(splits > 0, "chunks were split as the map grew (%d times)", splits);

	/* Everything free, then everything one file's: one segment, one chunk's worth. */
	spacemap_assign(&sm, FIRST, NBLOCKS - FIRST, SM_FREE);
	for (b = FIRST; b < NBLOCKS; b++)
		ref[b] = SM_FREE;
	ok = sm.n == 1 && same_as_ref(&sm, why, sizeof(why)) && queries(&sm, why, sizeof(why));
	{
		size_t m = spacemap_mark(&sm);

		spacemap_assign(&sm, FIRST + 10, 500, SM_FILE0);
		spacemap_rollback(&sm, m);
	}
	ok = ok && sm.n == 1 && same_as_ref(&sm, why, sizeof(why));
	tap_ok(ok, "the whole map in one free segment, and back after a rollback");
	spacemap_free(&sm);

	/*
	 * A cell keeps a 48-bit start: runs tiling the last 64 blocks below
	 * 2^48 (no gap, so the small bitmap is never asked) read back as
	 * they went in, and a block space past 2^48 is refused.
	 */
	{
		const blk64_t hi = SM_BLOCKS_MAX - 64;
		size_t i, n = 0;

		for (b = hi; b < SM_BLOCKS_MAX; b += 1 + n % 3, n++)
			runs[n] = (struct sm_run){ b, (uint32_t)(1 + n % 3), SM_FILE0 + (uint32_t)n };
		runs[n - 1].len = (uint32_t)(SM_BLOCKS_MAX - runs[n - 1].start);
		ok = !spacemap_build(&sm, hi, SM_BLOCKS_MAX, runs, n, fs->block_map) &&
		     sm.n == n;
		for (i = 0, b = hi; ok && i < n; i++) {
			const struct sm_seg g = spacemap_seg(&sm, i);

			ok = g.start == b && g.owner == SM_FILE0 + i &&
			     g.len == (i + 1 < n ? 1 + i % 3 : SM_BLOCKS_MAX - b);
			b += g.len;
		}
		tap_ok(ok, "segments at blocks near 2^48 keep their starts (%zu segments)", n);
		spacemap_free(&sm);
		tap_ok(spacemap_build(&sm, 0, SM_BLOCKS_MAX + 1, runs, 0, fs->block_map) == EFBIG,
		       "a block space past 2^48 is refused");
	}
	free(runs);
	ext2fs_free(fs);
	return tap_done();
}
