/*
 * readthrough.c --- the mover's rule for reading through a gap between
 * two sources (defrag/readthrough.c), against a reference that counts the
 * gap block by block: short gaps always; longer ones when they hold data
 * a later move reads that the page cache does not hold yet, with at most
 * READ_THROUGH_OTHER_BYTES of other blocks (neither later data nor held)
 * for each run of it and one more.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readthrough.h"
#include "memory_fs.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define NBLOCKS	65536
#define BS	4096

/* The rule, from its definition, one block at a time. */
static int reference(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
		     blk64_t start, blk64_t len)
{
	blk64_t b, other = 0, runs = 0;
	int prev = 0;

	if (len * BS <= READ_THROUGH_BYTES)
		return 1;
	if (!later)
		return 0;
	for (b = start; b < start + len; b++) {
		int h = held && ext2fs_test_block_bitmap2(held, b);
		int set = !h && ext2fs_test_block_bitmap2(later, b);

		if (set && !prev)
			runs++;
		if (!set && !h)
			other++;
		prev = set;
	}
	return runs > 0 && other * BS <= (runs + 1) * READ_THROUGH_OTHER_BYTES;
}

int main(void)
{
	ext2fs_block_bitmap later, held;
	ext2_filsys fs;
	long trials = 0, wrong = 0, through = 0, not_through = 0;
	blk64_t mib = (1 << 20) / BS;
	int i;

	fs = memory_fs(NBLOCKS, 2);	/* 4 KiB blocks */
	if (!fs || ext2fs_allocate_block_bitmap(fs, "later", &later) ||
	    ext2fs_allocate_block_bitmap(fs, "held", &held)) {
		tap_skip_all("no filesystem in memory (ext2fs_initialize)");
		return 0;
	}
	tap_plan(8);

	/* Two files interleaved in 1 MiB pieces: the other's piece is read through. */
	ext2fs_mark_block_bitmap_range2(later, 1000, mib);
	tap_ok(read_through(later, NULL, 1000, mib, BS), "a piece a later move reads, between two of this pass");
	tap_ok(!read_through(NULL, NULL, 1000, mib, BS), "not without the plan's sources");
	/* Free blocks or files that stay: only a short gap. */
	tap_ok(!read_through(later, NULL, 5000, 4 * mib, BS) &&
	       read_through(later, NULL, 5000, READ_THROUGH_BYTES / BS, BS),
	       "4 MiB of nothing later read is jumped over, 64 KiB read through");
	/* One run of later data between 3 MiB of other: two seeks' worth at most. */
	ext2fs_clear_block_bitmap(later);
	ext2fs_mark_block_bitmap_range2(later, 20000 + mib, 16);
	tap_ok(!read_through(later, NULL, 20000, 3 * mib + 16, BS) &&
	       read_through(later, NULL, 20000, 2 * mib + 16, BS),
	       "other blocks beside later data: two MiB for one run, not three");
	/* Three runs: four MiB of other blocks at most. */
	ext2fs_mark_block_bitmap_range2(later, 20000 + 2 * mib + 16, 8);
	ext2fs_mark_block_bitmap_range2(later, 20000 + 3 * mib + 32, 8);
	tap_ok(read_through(later, NULL, 20000, 4 * mib + 32, BS),
	       "three runs of later data in 4 MiB: read through");

	/* Held blocks (the page cache's) are neither: a gap of them and one
	 * later run is read through; of them alone, not. */
	ext2fs_clear_block_bitmap(later);
	ext2fs_mark_block_bitmap_range2(held, 30000, 4 * mib);
	ext2fs_mark_block_bitmap_range2(later, 30000, 4 * mib + 8);
	tap_ok(read_through(later, held, 30000, 4 * mib + 8, BS) &&
	       !read_through(later, held, 30000, 4 * mib, BS),
	       "4 MiB held and a run not yet read: read through; held alone: not");
	ext2fs_clear_block_bitmap(held);

	/* Random patterns against the reference. */
	for (i = 0; i < 200; i++) {
		blk64_t b;
		int k;

		ext2fs_clear_block_bitmap(later);
		ext2fs_clear_block_bitmap(held);
		for (b = 0; b < NBLOCKS; ) {
			blk64_t len = 1 + rnd() % (i % 2 ? 64 : 1024);
			blk64_t n = b + len > NBLOCKS ? NBLOCKS - b : len;
			unsigned r = rnd() % 6;

			if (r < 2)
				ext2fs_mark_block_bitmap_range2(later, b, n);
			if (r == 1 || r == 2)
				ext2fs_mark_block_bitmap_range2(held, b, n);
			b += len;
		}
		for (k = 0; k < 200; k++) {
			blk64_t len = 1 + rnd() % (6 * mib);
			blk64_t start = rnd() % (NBLOCKS - len);
			ext2fs_block_bitmap h = k % 2 ? held : NULL;
			int got = read_through(later, h, start, len, BS);

			trials++;
			wrong += got != reference(later, h, start, len);
			through += got;
			not_through += !got;
		}
	}
	tap_ok(!wrong, "%ld random gaps as the reference has them (%ld wrong)", trials, wrong);
	tap_ok(through > trials / 20 && not_through > trials / 20,
	       "both answers among them (%ld read through, %ld not)", through, not_through);
	ext2fs_free_block_bitmap(later);
	ext2fs_free_block_bitmap(held);
	ext2fs_free(fs);
	return tap_done();
}
