/*
 * zones.c --- fixed metadata, the zones it leaves, and "best".
 *
 * A file can be contiguous only within a zone: a maximal run of blocks
 * that holds no superblock copy, descriptor, reserved GDT block, bitmap,
 * inode table or reserved inode (the journal above all).  Nothing
 * e2defrag does can move those, so the fewest pieces a file can have
 * (doc/design.md: best) is the fewest zones whose sizes add up to its stream.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout_int.h"
#include "lower_bound.h"

static void mark_group_metadata(ext2_filsys fs, dgrp_t g, ext2fs_block_bitmap bm)
{
	blk64_t blk;

	ext2fs_reserve_super_and_bgd(fs, g, bm);
	blk = ext2fs_block_bitmap_loc(fs, g);
	if (blk && blk < ext2fs_blocks_count(fs->super))
		ext2fs_mark_block_bitmap2(bm, blk);
	blk = ext2fs_inode_bitmap_loc(fs, g);
	if (blk && blk < ext2fs_blocks_count(fs->super))
		ext2fs_mark_block_bitmap2(bm, blk);
	blk = ext2fs_inode_table_loc(fs, g);
	if (blk && blk + fs->inode_blocks_per_group <= ext2fs_blocks_count(fs->super))
		ext2fs_mark_block_bitmap_range2(bm, blk, fs->inode_blocks_per_group);
}

static int cmp_blk_desc(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

errcode_t zones_build(struct layout *layout, const struct layout_piece *reserved,
		      uint64_t nreserved)
{
	ext2_filsys fs = layout->fs;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t last = ext2fs_blocks_count(fs->super) - 1;
	blk64_t start, end, *lens = NULL;
	uint64_t cap = 0, i;
	errcode_t ret;
	dgrp_t g;
	int type = fs->default_bitmap_type;

	/*
	 * A tree of runs whatever the filesystem's size: fixed metadata is a
	 * few runs per group, where an array of bits would take a bit for
	 * every block of the filesystem in every program's memory.
	 */
	fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
	ret = ext2fs_allocate_block_bitmap(fs, "fixed metadata", &layout->fixed);
	fs->default_bitmap_type = type;
	if (ret)
		return ret;
	for (g = 0; g < fs->group_desc_count; g++)
		mark_group_metadata(fs, g, layout->fixed);
	if (ext2fs_has_feature_mmp(fs->super) && fs->super->s_mmp_block &&
	    fs->super->s_mmp_block <= last)
		ext2fs_mark_block_bitmap2(layout->fixed, fs->super->s_mmp_block);
	for (i = 0; i < nreserved; i++)
		ext2fs_mark_block_bitmap_range2(layout->fixed, reserved[i].start,
						reserved[i].len);

	for (start = first; start <= last; start = end) {
		if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, start,
							 last, &start))
			break;
		if (ext2fs_find_first_set_block_bitmap2(layout->fixed, start,
							last, &end))
			end = last + 1;
		ret = util_grow(&layout->zones, &cap, layout->nzones + 1,
				  sizeof(*layout->zones));
		if (ret)
			return ret;
		layout->zones[layout->nzones].start = start;
		layout->zones[layout->nzones++].len = end - start;
	}

	/* Prefix sums of the zone sizes, largest first, for zones_best(). */
	lens = malloc((layout->nzones + 1) * sizeof(*lens));
	layout->zone_prefix = malloc((layout->nzones + 1) * sizeof(blk64_t));
	if (!lens || !layout->zone_prefix) {
		free(lens);
		return ENOMEM;
	}
	for (i = 0; i < layout->nzones; i++)
		lens[i] = layout->zones[i].len;
	qsort(lens, layout->nzones, sizeof(*lens), cmp_blk_desc);
	layout->zone_prefix[0] = 0;
	for (i = 0; i < layout->nzones; i++)
		layout->zone_prefix[i + 1] = layout->zone_prefix[i] + lens[i];
	free(lens);
	return 0;
}

static int prefix_below(const void *prefix, uint64_t k, const void *nblocks)
{
	return ((const blk64_t *)prefix)[k] < *(const blk64_t *)nblocks;
}

uint32_t zones_best(const struct layout *layout, blk64_t nblocks)
{
	if (!nblocks)
		return 0;
	if (!layout->nzones || layout->zone_prefix[layout->nzones] < nblocks)
		return layout->nzones ? layout->nzones : 1;
	/* Most files fit the largest zone: no search (asked per file, twice). */
	if (layout->zone_prefix[1] >= nblocks)
		return 1;
	/* The smallest k with prefix[k] >= nblocks. */
	return lower_bound(1, layout->nzones, prefix_below, layout->zone_prefix, &nblocks);
}
