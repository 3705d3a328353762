/*
 * readthrough.c --- which gaps between the sources of a pass are read
 * through; see readthrough.h.
 */
#include "readthrough.h"

/* The first block of [B, END) whose bit in MAP is SET (END: none). */
static blk64_t next_bit(ext2fs_block_bitmap map, int set, blk64_t b, blk64_t end)
{
	blk64_t at;
	errcode_t ret = set ? ext2fs_find_first_set_block_bitmap2(map, b, end - 1, &at) :
			      ext2fs_find_first_zero_block_bitmap2(map, b, end - 1, &at);

	return ret ? end : at;
}

int read_through(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
		 blk64_t start, blk64_t len, unsigned blocksize)
{
	blk64_t b = start, end = start + len, other = 0, runs = 0;

	if (len <= READ_THROUGH_BYTES / blocksize)
		return 1;
	if (!later)
		return 0;
	/*
	 * The gap's runs of later data not held, and the other blocks, a
	 * stretch at a time (the bitmaps' searches): a held block ends a
	 * run of later data, and counts neither way.
	 */
	while (b < end) {
		blk64_t stop = held ? next_bit(held, 1, b, end) : end;
		int in_run = 0;

		while (b < stop) {
			int l = ext2fs_fast_test_block_bitmap2(later, b) != 0;
			blk64_t next = next_bit(later, !l, b, stop);

			if (l && !in_run)
				runs++;
			if (!l)
				other += next - b;
			in_run = l;
			b = next;
		}
		if (held && b < end)
			b = next_bit(held, 0, b, end);
	}
	return runs && other <= (runs + 1) * (READ_THROUGH_OTHER_BYTES / blocksize);
}
