/*
 * freespace.c --- how free space is cut up: free extents, their sizes in
 * powers of two (as e2freefrag reports them), and per-group figures.
 * A free extent runs across group boundaries for the totals; per group,
 * it is counted in each group it touches, clipped to that group.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout_int.h"

static unsigned bucket_of(blk64_t len)
{
	unsigned b = 0;

	while (len > 1 && b < FREE_BUCKETS - 1) {
		len >>= 1;
		b++;
	}
	return b;
}

static void add_to_groups(ext2_filsys fs, struct free_group *groups,
			  blk64_t start, blk64_t end)
{
	while (start < end) {
		dgrp_t g = ext2fs_group_of_blk2(fs, start);
		blk64_t gend = ext2fs_group_last_block2(fs, g) + 1;
		blk64_t stop = end < gend ? end : gend;
		blk64_t len = stop - start;

		groups[g].free_blocks += len;
		groups[g].free_extents++;
		if (len > groups[g].largest_free)
			groups[g].largest_free = len;
		start = stop;
	}
}

int freespace_next_run(ext2_filsys fs, blk64_t from, blk64_t *start, blk64_t *end)
{
	blk64_t last = ext2fs_blocks_count(fs->super) - 1;

	if (from > last ||
	    ext2fs_find_first_zero_block_bitmap2(fs->block_map, from, last, start))
		return 0;
	if (ext2fs_find_first_set_block_bitmap2(fs->block_map, *start, last, end))
		*end = last + 1;
	return 1;
}

errcode_t freespace_scan(struct layout *layout)
{
	ext2_filsys fs = layout->fs;
	struct free_space *fsp = &layout->free;
	blk64_t start, end;
	unsigned i;
	errcode_t ret;

	ret = ext2fs_read_block_bitmap(fs);
	if (ret)
		return ret;
	fsp->groups = calloc(fs->group_desc_count, sizeof(*fsp->groups));
	if (!fsp->groups)
		return ENOMEM;
	for (i = 0; i < FREE_BUCKETS; i++)
		fsp->histogram[i].min_blocks = (blk64_t)1 << i;

	for (start = fs->super->s_first_data_block;
	     freespace_next_run(fs, start, &start, &end); start = end) {
		struct free_bucket *b;

		fsp->free_blocks += end - start;
		fsp->free_extents++;
		if (end - start > fsp->largest_free_extent)
			fsp->largest_free_extent = end - start;
		b = &fsp->histogram[bucket_of(end - start)];
		b->count++;
		b->blocks += end - start;
		add_to_groups(fs, fsp->groups, start, end);
	}
	return 0;
}

void freespace_free(struct free_space *fsp)
{
	free(fsp->groups);
	fsp->groups = NULL;
}
