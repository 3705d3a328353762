/*
 * readthrough.c --- the mover's rule for reading through a gap between
 * two sources (defrag/readthrough.c), against a reference that counts the
 * gap block by block: short gaps always; longer ones when they hold data
 * a later move reads, with at most READ_THROUGH_OTHER_BYTES of other
 * blocks for each run of it and one more.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readthrough.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define NBLOCKS	65536
#define BS	4096

/* The rule, from its definition, one block at a time. */
static int reference(ext2fs_block_bitmap later, blk64_t start, blk64_t len)
{
	blk64_t b, other = 0, runs = 0;
	int prev = 0;

	if (len * BS <= READ_THROUGH_BYTES)
		return 1;
	if (!later)
		return 0;
	for (b = start; b < start + len; b++) {
		int set = ext2fs_test_block_bitmap2(later, b) != 0;

		if (set && !prev)
			runs++;
		if (!set)
			other++;
		prev = set;
	}
	return runs > 0 && other * BS <= (runs + 1) * READ_THROUGH_OTHER_BYTES;
}

int main(void)
{
	struct ext2_super_block param;
	char path[] = "/tmp/e2f-readthrough-XXXXXX";
	ext2fs_block_bitmap later;
	ext2_filsys fs;
	long trials = 0, wrong = 0, through = 0, not_through = 0;
	blk64_t mib = (1 << 20) / BS;
	int fd, i;

	fd = mkstemp(path);
	if (fd < 0) {
		tap_skip_all("no temporary file");
		return 0;
	}
	close(fd);
	memset(&param, 0, sizeof(param));
	ext2fs_blocks_count_set(&param, NBLOCKS);
	param.s_log_block_size = 2;	/* 4 KiB */
	if (ext2fs_initialize(path, EXT2_FLAG_64BITS, &param, unix_io_manager, &fs) ||
	    ext2fs_allocate_block_bitmap(fs, "later", &later)) {
		unlink(path);
		tap_skip_all("ext2fs_initialize failed");
		return 0;
	}
	unlink(path);
	tap_plan(7);

	/* Two files interleaved in 1 MiB pieces: the other's piece is read through. */
	ext2fs_mark_block_bitmap_range2(later, 1000, mib);
	tap_ok(read_through(later, 1000, mib, BS), "a piece a later move reads, between two of this pass");
	tap_ok(!read_through(NULL, 1000, mib, BS), "not without the plan's sources");
	/* Free blocks or files that stay: only a short gap. */
	tap_ok(!read_through(later, 5000, 4 * mib, BS) &&
	       read_through(later, 5000, READ_THROUGH_BYTES / BS, BS),
	       "4 MiB of nothing later read is jumped over, 64 KiB read through");
	/* One run of later data between 3 MiB of other: two seeks' worth at most. */
	ext2fs_clear_block_bitmap(later);
	ext2fs_mark_block_bitmap_range2(later, 20000 + mib, 16);
	tap_ok(!read_through(later, 20000, 3 * mib + 16, BS) &&
	       read_through(later, 20000, 2 * mib + 16, BS),
	       "other blocks beside later data: two MiB for one run, not three");
	/* Three runs: four MiB of other blocks at most. */
	ext2fs_mark_block_bitmap_range2(later, 20000 + 2 * mib + 16, 8);
	ext2fs_mark_block_bitmap_range2(later, 20000 + 3 * mib + 32, 8);
	tap_ok(read_through(later, 20000, 4 * mib + 32, BS),
	       "three runs of later data in 4 MiB: read through");

	/* Random patterns against the reference. */
	for (i = 0; i < 200; i++) {
		blk64_t b;
		int k;

		ext2fs_clear_block_bitmap(later);
		for (b = 0; b < NBLOCKS; ) {
			blk64_t len = 1 + rnd() % (i % 2 ? 64 : 1024);

			if (rnd() % 3 == 0)
				ext2fs_mark_block_bitmap_range2(later, b,
								b + len > NBLOCKS ? NBLOCKS - b : len);
			b += len;
		}
		for (k = 0; k < 200; k++) {
			blk64_t len = 1 + rnd() % (6 * mib);
			blk64_t start = rnd() % (NBLOCKS - len);
			int got = read_through(later, start, len, BS);

			trials++;
			wrong += got != reference(later, start, len);
			through += got;
			not_through += !got;
		}
	}
	tap_ok(!wrong, "%ld random gaps as the reference has them (%ld wrong)", trials, wrong);
	tap_ok(through > trials / 20 && not_through > trials / 20,
	       "both answers among them (%ld read through, %ld not)", through, not_through);
	ext2fs_free_block_bitmap(later);
	ext2fs_free(fs);
	return tap_done();
}
