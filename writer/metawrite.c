/*
 * metawrite.c --- build the metadata blocks of a file switch; see
 * writer_int.h.  The images match what libext2fs itself would write
 * (rw_bitmaps.c, closefs.c, inode.c), so e2fsck cannot tell the
 * difference; only the choice of blocks differs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer_int.h"
#include "compare.h"
#include "lower_bound.h"

void metawrite_groups_clear(struct metawrite_groups *gs)
{
	gs->n = 0;
}

void metawrite_groups_free(struct metawrite_groups *gs)
{
	free(gs->g);
	memset(gs, 0, sizeof(*gs));
}

static int group_before(const void *groups, uint64_t i, const void *g)
{
	return ((const dgrp_t *)groups)[i] < *(const dgrp_t *)g;
}

static errcode_t groups_add(struct metawrite_groups *gs, dgrp_t g)
{
	uint64_t lo = lower_bound(0, gs->n, group_before, gs->g, &g);

	if (lo < gs->n && gs->g[lo] == g)
		return 0;
	if (util_grow(&gs->g, &gs->cap, gs->n + 1, sizeof(*gs->g)))
		return EXT2_ET_NO_MEMORY;
	memmove(gs->g + lo + 1, gs->g + lo, (gs->n - lo) * sizeof(*gs->g));
	gs->g[lo] = g;
	gs->n++;
	return 0;
}

static dgrp_t group_of(ext2_filsys fs, blk64_t blk)
{
	return ext2fs_group_of_blk2(fs, blk);
}

errcode_t metawrite_check_runs(ext2_filsys fs, const struct layout_piece *runs,
			       size_t n, int want_used)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super);
	struct layout_piece *sorted = NULL;
	errcode_t ret = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct layout_piece *r = &runs[i];
		blk64_t zero;

		if (!r->len || r->start < first || r->start >= end ||
		    r->len > end - r->start)
			return E2F_ERR_SWITCH_RUNS;
		if (want_used) {
			/* ENOENT: no free block in the run. */
			if (ext2fs_find_first_zero_block_bitmap2(fs->block_map,
					r->start, r->start + r->len - 1,
					&zero) != ENOENT)
				return E2F_ERR_SWITCH_RUNS;
		} else if (!ext2fs_test_block_bitmap_range2(fs->block_map,
							    r->start, r->len)) {
			return E2F_ERR_SWITCH_RUNS;
		}
	}
	/* A block listed twice would be counted twice. */
	if (n < 2)
		return 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return EXT2_ET_NO_MEMORY;
	memcpy(sorted, runs, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), compare_piece_start);
	for (i = 1; i < n; i++)
		if (sorted[i - 1].start + sorted[i - 1].len > sorted[i].start)
			ret = E2F_ERR_SWITCH_RUNS;
	free(sorted);
	return ret;
}

/* The part of RUN inside group G, as [*start, *start + *len). */
static void clip_to_group(ext2_filsys fs, dgrp_t g, blk64_t start, blk64_t end,
			  blk64_t *cstart, blk64_t *clen)
{
	blk64_t gfirst = ext2fs_group_first_block2(fs, g);
	blk64_t glast = ext2fs_group_last_block2(fs, g);

	if (start < gfirst)
		start = gfirst;
	if (end > glast + 1)
		end = glast + 1;
	*cstart = start;
	*clen = end - start;
}

errcode_t metawrite_groups_of(ext2_filsys fs, const struct layout_piece *runs,
			      size_t n, struct metawrite_groups *gs)
{
	size_t i;
	errcode_t ret;

	for (i = 0; i < n; i++) {
		dgrp_t g, glast = group_of(fs, runs[i].start + runs[i].len - 1);

		for (g = group_of(fs, runs[i].start); g <= glast; g++) {
			ret = groups_add(gs, g);
			if (ret)
				return ret;
		}
	}
	return 0;
}

errcode_t metawrite_groups_merge(struct metawrite_groups *into,
				 const struct metawrite_groups *from)
{
	uint64_t i;
	errcode_t ret;

	for (i = 0; i < from->n; i++) {
		ret = groups_add(into, from->g[i]);
		if (ret)
			return ret;
	}
	return 0;
}

size_t metawrite_gdt_blocks_of(ext2_filsys fs, const struct metawrite_groups *gs)
{
	blk64_t last = ~(blk64_t)0, idx;
	size_t i, n = 0;

	for (i = 0; i < gs->n; i++) {
		idx = gs->g[i] / EXT2_DESC_PER_BLOCK(fs->super);
		if (idx != last)
			n++;
		last = idx;
	}
	return n;
}

errcode_t metawrite_account(ext2_filsys fs, const struct layout_piece *runs,
			    size_t n, int alloc, struct metawrite_groups *touched)
{
	size_t i;
	errcode_t ret;

	for (i = 0; i < n; i++) {
		blk64_t end = runs[i].start + runs[i].len;
		dgrp_t g, glast = group_of(fs, end - 1);

		for (g = group_of(fs, runs[i].start); g <= glast; g++) {
			blk64_t s, len, freeb = ext2fs_bg_free_blocks_count(fs, g);

			clip_to_group(fs, g, runs[i].start, end, &s, &len);
			if (alloc) {
				ext2fs_mark_block_bitmap_range2(fs->block_map, s, len);
				ext2fs_bg_free_blocks_count_set(fs, g, freeb - len);
				ext2fs_bg_flags_clear(fs, g, EXT2_BG_BLOCK_UNINIT);
				ext2fs_free_blocks_count_add(fs->super, -(blk64_t)len);
			} else {
				ext2fs_unmark_block_bitmap_range2(fs->block_map, s, len);
				ext2fs_bg_free_blocks_count_set(fs, g, freeb + len);
				ext2fs_free_blocks_count_add(fs->super, len);
			}
			ret = groups_add(touched, g);
			if (ret)
				return ret;
		}
	}
	return 0;
}

errcode_t metawrite_bitmap_block(ext2_filsys fs, dgrp_t group, blk64_t *blk,
				 char *buf)
{
	int nbytes = EXT2_CLUSTERS_PER_GROUP(fs->super) / 8;
	blk64_t start = ext2fs_group_first_block2(fs, group);
	unsigned j, nbits;
	errcode_t ret;

	/* Bits past the group (and past the end of the filesystem) are set. */
	memset(buf, 0xff, fs->blocksize);
	ret = ext2fs_get_block_bitmap_range2(fs->block_map, start,
					     (unsigned)nbytes << 3, buf);
	if (ret)
		return ret;
	if (group == fs->group_desc_count - 1) {
		nbits = (ext2fs_blocks_count(fs->super) -
			 fs->super->s_first_data_block) %
			EXT2_BLOCKS_PER_GROUP(fs->super);
		if (nbits)
			for (j = nbits; j < fs->blocksize * 8; j++)
				ext2fs_set_bit(j, buf);
	}
	ret = ext2fs_block_bitmap_csum_set(fs, group, buf, nbytes);
	if (ret)
		return ret;
	ext2fs_group_desc_csum_set(fs, group);
	*blk = ext2fs_block_bitmap_loc(fs, group);
	if (!*blk || *blk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_BLOCK_BITMAP_WRITE;
	return 0;
}

errcode_t metawrite_gdt_block(ext2_filsys fs, dgrp_t group, blk64_t *index,
			      blk64_t *blk, char *buf)
{
	blk64_t i = group / EXT2_DESC_PER_BLOCK(fs->super);

	ext2fs_group_desc_csum_set(fs, group);
	*index = i;
	*blk = ext2fs_descriptor_block_loc2(fs, fs->super->s_first_data_block, i);
	if (!*blk || *blk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_GDESC_WRITE;
	memcpy(buf, (char *)fs->group_desc + i * fs->blocksize, fs->blocksize);
	return 0;
}

errcode_t metawrite_super_block(ext2_filsys fs, blk64_t *blk, char *buf)
{
	unsigned offset = 0;
	errcode_t ret;

	fs->super->s_block_group_nr = 0;
	ret = ext2fs_superblock_csum_set(fs, fs->super);
	if (ret)
		return ret;
	if (fs->blocksize == SUPERBLOCK_OFFSET) {
		*blk = 1;
	} else {
		/* Block 0 also holds the boot sector: keep what is there. */
		*blk = 0;
		offset = SUPERBLOCK_OFFSET;
		ret = io_channel_read_blk64(fs->io, 0, 1, buf);
		if (ret)
			return ret;
	}
	memcpy(buf + offset, fs->super, SUPERBLOCK_SIZE);
	return 0;
}

errcode_t metawrite_inode_location(ext2_filsys fs, ext2_ino_t ino, blk64_t *blk,
				   unsigned *offset)
{
	unsigned isize = EXT2_INODE_SIZE(fs->super);
	dgrp_t group;
	uint64_t byte;
	blk64_t table;

	if (ino == 0 || ino > fs->super->s_inodes_count)
		return EXT2_ET_BAD_INODE_NUM;
	group = (ino - 1) / fs->super->s_inodes_per_group;
	byte = (uint64_t)((ino - 1) % fs->super->s_inodes_per_group) * isize;
	table = ext2fs_inode_table_loc(fs, group);
	if (!table || table >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_MISSING_INODE_TABLE;
	*blk = table + byte / fs->blocksize;
	*offset = byte % fs->blocksize;
	return 0;
}

errcode_t metawrite_inode_block(ext2_filsys fs, ext2_ino_t ino,
				const struct ext2_inode_large *inode, char *buf)
{
	unsigned isize = EXT2_INODE_SIZE(fs->super), offset;
	size_t n = sizeof(*inode) < isize ? sizeof(*inode) : isize;
	char *full = NULL;
	blk64_t blk;
	errcode_t ret;

	ret = metawrite_inode_location(fs, ino, &blk, &offset);
	if (ret)
		return ret;
	/* Like ext2fs_write_inode_full: the new fields over the old inode. */
	ret = ext2fs_get_memzero(isize > sizeof(*inode) ? isize : sizeof(*inode),
				 &full);
	if (ret)
		return ret;
	memcpy(full, buf + offset, isize);
	memcpy(full, inode, n);
	ret = ext2fs_inode_csum_set(fs, ino, (struct ext2_inode_large *)full);
	if (!ret)
		memcpy(buf + offset, full, isize);
	ext2fs_free_mem(&full);
	return ret;
}
