/*
 * readthrough.c --- which gaps between the sources of a pass are read
 * through; see readthrough.h.
 */
#include "readthrough.h"

int read_through(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
		 blk64_t start, blk64_t len, unsigned blocksize)
{
	blk64_t b, other = 0, runs = 0;
	int in_run = 0;

	if (len <= READ_THROUGH_BYTES / blocksize)
		return 1;
	if (!later)
		return 0;
	/* The gap's runs of later data not held, and the other blocks. */
	for (b = start; b < start + len; b++) {
		int l;

		if (held && ext2fs_fast_test_block_bitmap2(held, b)) {
			in_run = 0;
			continue;
		}
		l = ext2fs_fast_test_block_bitmap2(later, b) != 0;
		if (l && !in_run)
			runs++;
		other += !l;
		in_run = l;
	}
	return runs && other <= (runs + 1) * (READ_THROUGH_OTHER_BYTES / blocksize);
}
