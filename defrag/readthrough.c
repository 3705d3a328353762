/*
 * readthrough.c --- which gaps between the sources of a pass are read
 * through; see readthrough.h.
 */
#include "readthrough.h"

int read_through(ext2fs_block_bitmap later, blk64_t start, blk64_t len,
		 unsigned blocksize)
{
	blk64_t end = start + len, at = start, run_end, other = 0, runs = 0;

	if (len <= READ_THROUGH_BYTES / blocksize)
		return 1;
	if (!later)
		return 0;
	/* The gap's runs of later data, and the blocks between them. */
	while (at < end) {
		if (ext2fs_fast_test_block_bitmap2(later, at)) {
			if (ext2fs_find_first_zero_block_bitmap2(later, at, end - 1, &run_end))
				run_end = end;
			runs++;
		} else {
			if (ext2fs_find_first_set_block_bitmap2(later, at, end - 1, &run_end))
				run_end = end;
			other += run_end - at;
		}
		at = run_end;
	}
	return runs && other <= (runs + 1) * (READ_THROUGH_OTHER_BYTES / blocksize);
}
