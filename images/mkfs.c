/*
 * mkfs.c --- make the empty filesystem the way mke2fs does, but with every
 * id and time fixed by the seed, so that the same options give the same
 * bytes.
 *
 * The sequence follows mke2fs' main(): ext2fs_initialize, the UUID and
 * hash seed, the group tables, reserved inodes, root, lost+found, the
 * bad-block inode, the resize inode and the journal.  The output file was
 * created empty and extended sparsely by main.c, so everything not
 * written here reads as zeros: the inode tables are zeroed without being
 * written (and are flagged so, as mke2fs does when storage is prezeroed).
 */
#include <string.h>

#include "e2frag.h"
#include "img.h"

/* The features of each type: mke2fs.conf's base_features plus its fs_types. */
static void set_features(struct ext2_super_block *p, enum img_fstype type)
{
	ext2fs_set_feature_sparse_super(p);
	ext2fs_set_feature_large_file(p);
	ext2fs_set_feature_filetype(p);
	ext2fs_set_feature_resize_inode(p);
	ext2fs_set_feature_dir_index(p);
	ext2fs_set_feature_xattr(p);
	if (type == FS_EXT2)
		return;
	ext2fs_set_feature_journal(p);
	if (type == FS_EXT3)
		return;
	ext2fs_set_feature_extents(p);
	ext2fs_set_feature_huge_file(p);
	ext2fs_set_feature_flex_bg(p);
	ext2fs_set_feature_metadata_csum(p);
	ext2fs_set_feature_64bit(p);
	ext2fs_set_feature_dir_nlink(p);
	ext2fs_set_feature_extra_isize(p);
	p->s_log_groups_per_flex = 4;		/* flex_bg_size 16 */
	p->s_desc_size = EXT2_MIN_DESC_SIZE_64BIT;
}

blk64_t mkfs_journal_blocks(const struct img_opts *o, blk64_t blocks)
{
	int n;

	if (o->type == FS_EXT2)
		return 0;
	n = ext2fs_default_journal_size(blocks);
	return n < 0 ? 0 : (blk64_t)n;
}

/* The ids a real mke2fs draws from /dev/urandom, drawn from the seed. */
static void set_ids(ext2_filsys fs, const struct img_opts *o)
{
	struct ext2_super_block *sb = fs->super;
	struct img_rng rng;
	uint64_t r;
	int i;

	rng_seed(&rng, o->seed, 0x5b1d);
	for (i = 0; i < 16; i += 8) {
		r = rng_next(&rng);
		memcpy(sb->s_uuid + i, &r, 8);
	}
	sb->s_uuid[6] = (sb->s_uuid[6] & 0x0f) | 0x40;	/* a version 4 UUID */
	sb->s_uuid[8] = (sb->s_uuid[8] & 0x3f) | 0x80;
	for (i = 0; i < 4; i++)
		sb->s_hash_seed[i] = (__u32)rng_next(&rng);
	sb->s_def_hash_version = EXT2_HASH_HALF_MD4;
	sb->s_max_mnt_count = -1;
	if (ext2fs_has_feature_metadata_csum(sb))
		sb->s_checksum_type = EXT2_CRC32C_CHKSUM;
	ext2fs_init_csum_seed(fs);
	if (o->type == FS_EXT4)
		sb->s_kbytes_written = 1;
	memset(sb->s_volume_name, 0, sizeof(sb->s_volume_name));
	strncpy((char *)sb->s_volume_name, workload_name(o->workload),
		sizeof(sb->s_volume_name));
}

/*
 * The inode tables read as zeros already; say so in the descriptors, and
 * give the reserved inodes valid checksums as mke2fs does.
 */
static errcode_t init_inode_tables(ext2_filsys fs)
{
	struct ext2_inode *inode = NULL;
	errcode_t ret = 0;
	ext2_ino_t ino;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		ext2fs_bg_flags_set(fs, g, EXT2_BG_INODE_ZEROED);
		ext2fs_group_desc_csum_set(fs, g);
	}
	if (!ext2fs_has_feature_metadata_csum(fs->super))
		return 0;
	ret = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super), &inode);
	if (ret)
		return ret;
	for (ino = 1; ino < EXT2_FIRST_INO(fs->super) && !ret; ino++)
		ret = ext2fs_write_inode_full(fs, ino, inode,
					      EXT2_INODE_SIZE(fs->super));
	ext2fs_free_mem(&inode);
	return ret;
}

/* Root and a lost+found of at least 16 KiB and two blocks, as mke2fs. */
static errcode_t make_root_and_lpf(ext2_filsys fs)
{
	const char *name = "lost+found";
	unsigned int lpf_size = 0;
	ext2_ino_t ino;
	errcode_t ret;
	int i;

	ret = ext2fs_mkdir(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, 0);
	if (ret)
		return ret;
	fs->umask = 077;
	ret = ext2fs_mkdir(fs, EXT2_ROOT_INO, 0, name);
	fs->umask = 022;
	if (ret)
		return ret;
	ret = ext2fs_lookup(fs, EXT2_ROOT_INO, name, strlen(name), 0, &ino);
	if (ret)
		return ret;
	for (i = 1; i < EXT2_NDIR_BLOCKS; i++) {
		if ((lpf_size += fs->blocksize) >= 16 * 1024 &&
		    lpf_size >= 2 * fs->blocksize)
			break;
		ret = ext2fs_expand_dir(fs, ino);
		if (ret)
			return ret;
	}
	return 0;
}

static errcode_t make_special_inodes(ext2_filsys fs)
{
	ext2_ino_t ino;
	errcode_t ret;

	for (ino = EXT2_ROOT_INO + 1; ino < EXT2_FIRST_INODE(fs->super); ino++)
		ext2fs_inode_alloc_stats2(fs, ino, +1, 0);
	ext2fs_mark_ib_dirty(fs);

	ext2fs_mark_inode_bitmap2(fs->inode_map, EXT2_BAD_INO);
	ext2fs_inode_alloc_stats2(fs, EXT2_BAD_INO, +1, 0);
	ret = ext2fs_update_bb_inode(fs, NULL);
	if (ret)
		return ret;
	if (ext2fs_has_feature_resize_inode(fs->super))
		return ext2fs_create_resize_inode(fs);
	return 0;
}

errcode_t mkfs_create(const char *path, const struct img_opts *o,
		      const struct img_geometry *geo, ext2_filsys *ret_fs)
{
	struct ext2_super_block param;
	struct ext2fs_journal_params jparams;
	ext2_filsys fs = NULL;
	blk64_t overhead;
	errcode_t ret;
	int log = 0;

	memset(&param, 0, sizeof(param));
	while ((1024U << log) < o->block_size)
		log++;
	param.s_rev_level = EXT2_DYNAMIC_REV;
	param.s_log_block_size = log;
	param.s_inode_size = 256;
	param.s_inodes_count = geo->inodes;
	param.s_default_mount_opts = EXT2_DEFM_XATTR_USER | EXT2_DEFM_ACL;
	/* Features first: the counts' high halves are set only with 64bit. */
	set_features(&param, o->type);
	if (o->no_flex_bg) {
		ext2fs_clear_feature_flex_bg(&param);
		param.s_log_groups_per_flex = 0;
	}
	ext2fs_blocks_count_set(&param, geo->blocks);
	param.s_blocks_per_group = (__u32)geo->blocks_per_group;
	ext2fs_r_blocks_count_set(&param, geo->blocks / 20);

	ret = ext2fs_initialize(path, EXT2_FLAG_64BITS, &param, unix_io_manager,
				&fs);
	if (ret)
		return ret;
	/* From here on libext2fs stamps fs->now wherever it would call time(). */
	fs->now = IMG_EPOCH;
	fs->super->s_mkfs_time = fs->super->s_lastcheck = IMG_EPOCH;
	set_ids(fs, o);

	ret = ext2fs_allocate_tables(fs);
	if (ret)
		goto errout;
	ret = ext2fs_count_used_clusters(fs, fs->super->s_first_data_block,
					 ext2fs_blocks_count(fs->super) - 1,
					 &overhead);
	if (ret)
		goto errout;
	ret = init_inode_tables(fs);
	if (ret)
		goto errout;
	ret = make_root_and_lpf(fs);
	if (ret)
		goto errout;
	ret = make_special_inodes(fs);
	if (ret)
		goto errout;

	if (ext2fs_has_feature_journal(fs->super)) {
		ret = ext2fs_get_journal_params(&jparams, fs);
		if (ret)
			goto errout;
		/* The file reads as zeros, so the journal need not be wiped. */
		ret = ext2fs_add_journal_inode3(fs, &jparams, ~0ULL,
						EXT2_MKJOURNAL_LAZYINIT |
						EXT2_MKJOURNAL_NO_MNT_CHECK);
		if (ret)
			goto errout;
		overhead += jparams.num_journal_blocks + jparams.num_fc_blocks;
	}
	fs->super->s_overhead_clusters = overhead + fs->super->s_first_data_block;
	*ret_fs = fs;
	return 0;

errout:
	ext2fs_free(fs);
	return ret;
}

/*
 * Write the bitmaps, descriptors and superblocks and close, without the
 * fsync()s of ext2fs_close(): an image is a file in the page cache like
 * any other, and waiting for gigabytes of it to reach the disk would
 * cost more than building it.  The cache is flushed by hand so that a
 * failed write is still reported.
 */
errcode_t mkfs_close(ext2_filsys fs)
{
	errcode_t ret;

	ret = ext2fs_write_bitmaps(fs);
	if (!ret)
		ret = ext2fs_flush2(fs, EXT2_FLAG_FLUSH_NO_SYNC);
	if (!ret)
		ret = io_channel_set_options(fs->io, "cache=off");
	ext2fs_free(fs);
	return ret;
}
