/*
 * readthrough.c --- which gaps between the sources of a pass are read
 * through; see readthrough.h.
 */
#include <stdlib.h>

#include "readthrough.h"
#include "array.h"

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

errcode_t read_ahead_runs(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
			  blk64_t *from, blk64_t copied, blk64_t budget,
			  unsigned blocksize, struct layout_piece **runs, size_t *n,
			  size_t *cap)
{
	blk64_t end, b, join = READ_THROUGH_BYTES / blocksize;

	*n = 0;
	if (!later || copied > budget / READ_AHEAD_SMALL_GROUP)
		return 0;
	end = ext2fs_get_block_bitmap_end2(later) + 1;
	b = ext2fs_get_block_bitmap_start2(later);

	/* Scanning from the start at every pass made a 200,000-file tree's
	 * run five times slower, its small groups thousands. */
	if (*from > b)
		b = *from;
	while (budget && b < end) {
		blk64_t stop;

		/* The next block of LATER not held, and the run of them. */
		b = next_bit(later, 1, b, end);
		if (held)
			while (b < end && ext2fs_fast_test_block_bitmap2(held, b)) {
				b = next_bit(held, 0, b, end);
				if (b < end)
					b = next_bit(later, 1, b, end);
			}
		if (b >= end)
			break;
		stop = next_bit(later, 0, b, end);
		if (held)
			stop = next_bit(held, 1, b, stop);
		if (stop - b > budget)
			stop = b + budget;
		budget -= stop - b;
		if (*n && b - ((*runs)[*n - 1].start + (*runs)[*n - 1].len) <= join) {
			(*runs)[*n - 1].len = stop - (*runs)[*n - 1].start;
		} else {
			if (grow_n(runs, cap, *n + 1, sizeof(**runs)))
				return ENOMEM;
			(*runs)[*n].start = b;
			(*runs)[*n].len = stop - b;
			(*n)++;
		}
		b = stop;
	}
	*from = b;
	return 0;
}

errcode_t read_ahead_to(struct layout_piece *runs, size_t n, size_t *at,
			blk64_t blk, blk64_t end,
			errcode_t (*issue)(void *priv, blk64_t start, blk64_t len),
			void *priv)
{
	errcode_t ret;

	while (*at < n && runs[*at].start < end) {
		struct layout_piece *p = &runs[*at];
		blk64_t pend = p->start + p->len;

		if (p->start < blk) {
			ret = issue(priv, p->start, (pend < blk ? pend : blk) - p->start);
			if (ret)
				return ret;
		}
		if (pend > end) {
			p->len = pend - end;
			p->start = end;
			break;
		}
		(*at)++;
	}
	return 0;
}
