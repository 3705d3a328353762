/*
 * itable_used.c --- how far into each group's inode table the inodes in
 * use reach, from the inode bitmap.  The kernel takes a group's inodes
 * from its start, so on ext2/3 (no count of a table's unused tail, as
 * uninit_bg and metadata_csum keep) most of every table is free inodes a
 * report has no use for.
 * e2fsck reads them because it checks them; the read-only reports trust
 * the bitmap (when bitmap_trusted says so), as libext2fs trusts
 * bg_itable_unused where there is one.  So an inode the bitmap calls free
 * but whose links count is not zero (e2fsck's "disconnected inode"), past
 * the last one in use, is free to the reports, as it is to the kernel.
 * e2defrag does not trust it: its sanity checks look at every inode.
 */
#include <stdlib.h>

#include "layout_int.h"

/*
 * Whether the bitmap may be trusted to say where the inodes in use are: a
 * filesystem left clean (not one with errors, or a journal to replay: a
 * replay can bring inodes the bitmap on disk does not have yet), each
 * group's bitmap counting the inodes its descriptor says are in use, all
 * of them the superblock's.  Anything else: every inode is read.
 */
static int bitmap_trusted(ext2_filsys fs)
{
	struct ext2_super_block *sb = fs->super;
	struct ext2_inode bad;

	if (!(sb->s_state & EXT2_VALID_FS) || (sb->s_state & EXT2_ERROR_FS) ||
	    ext2fs_has_feature_journal_needs_recovery(sb))
		return 0;
	/*
	 * Bad blocks may lie in a table's free tail: the scan counts the
	 * inodes they make unreadable, so it reads the whole table then.
	 */
	return !ext2fs_read_inode(fs, EXT2_BAD_INO, &bad) && !bad.i_blocks &&
	       !bad.i_block[0];
}

static unsigned count_set(const unsigned char *map, ext2_ino_t bits)
{
	unsigned n = 0;
	ext2_ino_t i;

	for (i = 0; i < bits / 8; i++)
		n += __builtin_popcount(map[i]);
	for (i = bits / 8 * 8; i < bits; i++)
		n += map[i / 8] >> (i % 8) & 1;
	return n;
}

/* The highest bit set among the first BITS of MAP (1-based), 0 if none. */
static ext2_ino_t last_set(const unsigned char *map, ext2_ino_t bits)
{
	ext2_ino_t byte = (bits + 7) / 8;

	while (byte--) {
		unsigned char c = map[byte];
		int bit;

		if (!c)
			continue;
		for (bit = 7; bit >= 0; bit--)
			if ((c >> bit & 1) && byte * 8 + bit < bits)
				return byte * 8 + bit + 1;
	}
	return 0;
}

/* Raise the limit of INO's group to INO: an inode the superblock names. */
static void keep_inode(ext2_filsys fs, ext2_ino_t *last, ext2_ino_t ino)
{
	dgrp_t g;

	if (!ino || ino > fs->super->s_inodes_count)
		return;
	g = (ino - 1) / fs->super->s_inodes_per_group;
	if (last[g] < ino)
		last[g] = ino;
}

errcode_t itable_used_limits(ext2_filsys fs, ext2_ino_t **ret_last)
{
	struct ext2_super_block *sb = fs->super;
	ext2_ino_t ipg = sb->s_inodes_per_group, *last = NULL;
	unsigned char *map = NULL;
	uint64_t in_use = 0;
	int loaded = 0;
	errcode_t ret;
	dgrp_t g;

	*ret_last = NULL;
	if (!bitmap_trusted(fs))
		return EXT2_ET_INODE_BITMAP_READ;
	if (!fs->inode_map) {
		ret = ext2fs_read_inode_bitmap(fs);
		if (ret)
			return ret;
		loaded = 1;
	}
	last = calloc(fs->group_desc_count ? fs->group_desc_count : 1, sizeof(*last));
	map = malloc(ipg / 8 + 1);
	if (!last || !map) {
		ret = ENOMEM;
		goto out;
	}
	for (g = 0; g < fs->group_desc_count; g++) {
		ext2_ino_t first = g * ipg + 1, n;
		unsigned used;

		ret = ext2fs_get_inode_bitmap_range2(fs->inode_map, first, ipg, map);
		if (ret)
			goto out;
		used = count_set(map, ipg);
		if (used + ext2fs_bg_free_inodes_count(fs, g) != ipg) {
			ret = EXT2_ET_INODE_BITMAP_READ;	/* not to be trusted */
			goto out;
		}
		in_use += used;
		n = last_set(map, ipg);
		last[g] = n ? first + n - 1 : 0;
	}
	if (in_use + sb->s_free_inodes_count != sb->s_inodes_count) {
		ret = EXT2_ET_INODE_BITMAP_READ;
		goto out;
	}
	/* The reserved inodes and those the superblock names, set or not. */
	keep_inode(fs, last, EXT2_FIRST_INODE(sb) - 1);
	keep_inode(fs, last, sb->s_journal_inum);
	keep_inode(fs, last, sb->s_usr_quota_inum);
	keep_inode(fs, last, sb->s_grp_quota_inum);
	keep_inode(fs, last, sb->s_prj_quota_inum);
	keep_inode(fs, last, sb->s_orphan_file_inum);
	*ret_last = last;
	last = NULL;
	ret = 0;
out:
	free(map);
	free(last);
	if (loaded) {
		ext2fs_free_inode_bitmap(fs->inode_map);
		fs->inode_map = NULL;
	}
	return ret;
}
