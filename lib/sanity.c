/*
 * sanity.c --- do the filesystem's metadata agree with themselves?  See
 * sanity.h.  Read-only; e2defrag refuses to write when they do not
 * (defrag/damage.c), e2fsck -f is what repairs them.
 *
 * The block ownership check rebuilds from the scan's layout the set of
 * blocks something owns (fixed metadata, every file's data and mapping
 * blocks, extent tree and attribute blocks) and compares it with the block
 * bitmap both ways, as e2fsck's pass 5 does; a block met twice on the way
 * is owned twice.  Bitmaps are walked run by run, so the cost grows with
 * the number of runs, not of blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sanity_int.h"

#include <ext2fs/ext3_extents.h>


/* ------------------------------------------------------------ the findings */

/* Keep the first finding; count them all. */
void sanity_found(struct sanity_finding *found, const struct sanity_finding *f)
{
	uint64_t n = found->problems + (f->problems ? f->problems : 1);

	if (found->what == SANITY_NONE)
		*found = *f;
	found->problems = n;
}

void sanity_found_simple(struct sanity_finding *found, enum sanity_what what,
			 ext2_ino_t ino, blk64_t blk, dgrp_t group)
{
	struct sanity_finding f;

	memset(&f, 0, sizeof(f));
	f.what = what;
	f.ino = ino;
	f.blk = blk;
	f.group = group;
	sanity_found(found, &f);
}

void sanity_found_count(struct sanity_finding *found, enum sanity_what what,
			dgrp_t group, uint64_t recorded, uint64_t counted)
{
	struct sanity_finding f;

	memset(&f, 0, sizeof(f));
	f.what = what;
	f.group = group;
	f.recorded = recorded;
	f.counted = counted;
	sanity_found(found, &f);
}

/* ------------------------------------------------------------- inode flags */

const char *sanity_inode_flags(ext2_filsys fs, const struct ext2_inode *inode)
{
	struct ext2_super_block *sb = fs->super;
	__u32 fl = inode->i_flags;
	__u16 mode = inode->i_mode;
	int special = LINUX_S_ISCHR(mode) || LINUX_S_ISBLK(mode) ||
		      LINUX_S_ISFIFO(mode) || LINUX_S_ISSOCK(mode);

	/* Each question below is about one of these flags: most inodes have none. */
	if (!(fl & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL | EXT2_INDEX_FL |
		    EXT4_CASEFOLD_FL | EXT4_VERITY_FL)))
		return NULL;
	/* The same questions as e2fsck's pass 1, in its order. */
	if ((fl & EXT4_EXTENTS_FL) && !ext2fs_has_feature_extents(sb))
		return "has the extents flag but the filesystem lacks the extent feature";
	if ((fl & EXT4_INLINE_DATA_FL) && !ext2fs_has_feature_inline_data(sb))
		return "has the inline data flag but the filesystem lacks the inline_data feature";
	if ((fl & EXT4_EXTENTS_FL) && (fl & EXT4_INLINE_DATA_FL))
		return "has both the extents and the inline data flags";
	if (special && (fl & (EXT4_EXTENTS_FL | EXT4_INLINE_DATA_FL)))
		return "is a device, FIFO or socket with the extents or inline data flag";
	if (LINUX_S_ISLNK(mode) && (fl & EXT4_EXTENTS_FL) &&
	    ext2fs_is_fast_symlink((struct ext2_inode *)inode))
		return "is a fast symlink with the extents flag";
	if (LINUX_S_ISDIR(mode) && (fl & EXT2_INDEX_FL) &&
	    !ext2fs_has_feature_dir_index(sb))
		return "is a hashed directory but the filesystem lacks the dir_index feature";
	if ((fl & EXT4_CASEFOLD_FL) && !ext2fs_has_feature_casefold(sb))
		return "has the casefold flag but the filesystem lacks the casefold feature";
	if ((fl & EXT4_VERITY_FL) && !ext2fs_has_feature_verity(sb))
		return "has the verity flag but the filesystem lacks the verity feature";
	return NULL;
}

/* ------------------------------------------------------------ scan's notes */

/* Inodes past the reserved ones that the superblock names for itself. */
static int special_inode(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_super_block *sb = fs->super;

	return ino == sb->s_journal_inum || ino == sb->s_usr_quota_inum ||
	       ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum ||
	       ino == sb->s_orphan_file_inum;
}

static errcode_t notes_get(struct layout *layout, struct sanity_notes **ret)
{
	ext2_filsys fs = layout->fs;
	struct sanity_notes *n = layout->sanity;
	errcode_t err;
	ext2_ino_t ino;

	if (n) {
		*ret = n;
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return ENOMEM;
	n->dirs = calloc(fs->group_desc_count, sizeof(*n->dirs));
	err = n->dirs ? ext2fs_allocate_inode_bitmap(fs, "in use", &n->in_use) : ENOMEM;
	if (!err)
		err = sanity_count_init(fs, &n->links);
	if (err) {
		sanity_notes_free(n);
		return err;
	}
	/* The reserved inodes are always in use, whatever they hold. */
	for (ino = 1; ino < EXT2_FIRST_INODE(fs->super) &&
		      ino <= fs->super->s_inodes_count; ino++)
		ext2fs_mark_inode_bitmap2(n->in_use, ino);
	layout->sanity = n;
	*ret = n;
	return 0;
}

void sanity_notes_free(struct sanity_notes *n)
{
	if (!n)
		return;
	if (n->in_use)
		ext2fs_free_inode_bitmap(n->in_use);
	sanity_count_free(&n->links);
	sanity_quota_free(n->quota);
	free(n->dirs);
	free(n->dir_list);
	free(n->htree_list);
	free(n);
}

/*
 * Count a problem; 1 when it is the first in inode order so far, whose
 * details the caller may add.  The scan notes most inodes in order but
 * walks some maps later (scan.c's deferred indirect blocks): the lowest
 * inode wins, and of one inode's problems the first noted, which is the
 * order of a scan that walked every map in turn.
 */
static int note_problem(struct sanity_notes *n, enum sanity_what what,
			ext2_ino_t ino, blk64_t blk, const char *detail)
{
	n->problems++;
	if (n->first.what != SANITY_NONE && n->first.ino <= ino)
		return 0;
	memset(&n->first, 0, sizeof(n->first));
	n->first.what = what;
	n->first.ino = ino;
	n->first.blk = blk;
	n->first.detail = detail;
	return 1;
}

errcode_t sanity_note_inode(struct layout *layout, ext2_ino_t ino,
			    const struct ext2_inode *inode)
{
	ext2_filsys fs = layout->fs;
	struct sanity_notes *n;
	const char *why;
	blk64_t ea;
	errcode_t ret;

	/* Every inode of the table comes here: the notes once made, no call. */
	n = layout->sanity;
	if (!n) {
		ret = notes_get(layout, &n);
		if (ret)
			return ret;
	}
	if (ino < EXT2_FIRST_INODE(fs->super) && ino != EXT2_ROOT_INO) {
		/* Reserved: e2fsck has its own rules for each, but checks
		 * every one's checksum (an all-zero inode passes). */
		if (ext2fs_has_feature_metadata_csum(fs->super) &&
		    !ext2fs_inode_csum_verify(fs, ino, (struct ext2_inode_large *)inode))
			note_problem(n, SANITY_INODE_CSUM, ino, 0, NULL);
		return 0;
	}
	if (special_inode(fs, ino)) {
		/* The superblock's own (orphan file, quota): in use, no name. */
		ext2fs_mark_inode_bitmap2(n->in_use, ino);
		return 0;
	}
	/* The scan's notion of in use, which is e2fsck's: a link count. */
	if (!inode->i_links_count)
		return 0;
	ext2fs_mark_inode_bitmap2(n->in_use, ino);
	if (!(inode->i_flags & EXT4_EA_INODE_FL)) {
		ret = sanity_quota_note(fs, &n->quota, inode);
		if (ret)
			return ret;
	}
	if (LINUX_S_ISDIR(inode->i_mode)) {
		n->dirs[ext2fs_group_of_ino(fs, ino)]++;
		if (util_grow(&n->dir_list, &n->dir_list_cap, n->ndir_list + 1,
			      sizeof(*n->dir_list)))
			return ENOMEM;
		n->dir_list[n->ndir_list++] = ino;
		if (inode->i_flags & EXT2_INDEX_FL) {
			if (util_grow(&n->htree_list, &n->htree_list_cap,
				      n->nhtree_list + 1, sizeof(*n->htree_list)))
				return ENOMEM;
			n->htree_list[n->nhtree_list++] = ino;
		}
	}
	/*
	 * Entries name it as often as it has links; not so an attribute
	 * inode or a directory past the link limit (dir_nlink: 1).
	 */
	if (!(inode->i_flags & EXT4_EA_INODE_FL) &&
	    !(LINUX_S_ISDIR(inode->i_mode) && inode->i_links_count == 1)) {
		ret = sanity_count_store(&n->links, ino, inode->i_links_count);
		if (ret)
			return ret;
	}
	if (ext2fs_has_feature_metadata_csum(fs->super) &&
	    !ext2fs_inode_csum_verify(fs, ino, (struct ext2_inode_large *)inode))
		note_problem(n, SANITY_INODE_CSUM, ino, 0, NULL);
	why = sanity_inode_flags(fs, inode);
	if (why)
		note_problem(n, SANITY_BAD_FLAGS, ino, 0, why);
	ea = ext2fs_file_acl_block(fs, inode);
	if (ea && (ea < fs->super->s_first_data_block ||
		   ea >= ext2fs_blocks_count(fs->super)))
		note_problem(n, SANITY_BAD_EA_BLOCK, ino, ea, NULL);
	return 0;
}

void sanity_note_map(struct layout *layout, ext2_ino_t ino,
		     const struct ext2_inode *inode, blk64_t data,
		     blk64_t lend, blk64_t init_end, int hole)
{
	struct sanity_notes *n = layout->sanity;
	uint64_t bs = layout->fs->blocksize, size = EXT2_I_SIZE(inode);
	uint16_t mode = inode->i_mode;

	/* Inline data, fast symlinks: no map to hold against the size. */
	if (!n || !inode->i_links_count ||
	    !ext2fs_inode_has_valid_blocks2(layout->fs, (struct ext2_inode *)inode))
		return;
	/* e2fsck's pass 1 size rules: */
	if (LINUX_S_ISREG(mode) && !(inode->i_flags & EXT4_VERITY_FL)) {
		/* no initialized block wholly past the end (verity keeps its tree there) */
		if (init_end > 1 && size < (init_end - 1) * bs &&
		    note_problem(n, SANITY_BAD_SIZE, ino, 0, NULL)) {
			n->first.recorded = size;
			n->first.counted = init_end * bs;
		}
	} else if (LINUX_S_ISDIR(mode)) {
		/* a whole number of blocks, every one mapped */
		if (size % bs || size / bs > lend ||
		    lend - size / bs > layout->fs->super->s_prealloc_dir_blocks) {
			if (note_problem(n, SANITY_BAD_SIZE, ino, 0, NULL)) {
				n->first.recorded = size;
				n->first.counted = lend * bs;
			}
		} else if (hole) {
			note_problem(n, SANITY_DIR_HOLE, ino, 0, NULL);
		}
	} else if (LINUX_S_ISLNK(mode) && !(inode->i_flags & EXT4_ENCRYPT_FL)) {
		/* a slow symlink: its target in the one block it has */
		if (!size || size >= bs || data != 1 || lend != 1)
			note_problem(n, SANITY_BAD_SYMLINK, ino, 0, NULL);
	}
}

int sanity_inode_ea_values(ext2_filsys fs, const struct ext2_inode *inode)
{
	const struct ext2_inode_large *big = (const void *)inode;
	const char *p = (const char *)inode;
	size_t isize = EXT2_INODE_SIZE(fs->super), off;
	uint32_t magic;

	if (isize <= EXT2_GOOD_OLD_INODE_SIZE)
		return 0;
	off = EXT2_GOOD_OLD_INODE_SIZE + big->i_extra_isize;
	if ((big->i_extra_isize & 3) || off + sizeof(magic) > isize)
		return 0;
	memcpy(&magic, p + off, sizeof(magic));
	if (magic != EXT2_EXT_ATTR_MAGIC)
		return 0;
	for (off += sizeof(magic);
	     off + sizeof(struct ext2_ext_attr_entry) <= isize;) {
		struct ext2_ext_attr_entry e;

		memcpy(&e, p + off, sizeof(e));
		if (EXT2_EXT_IS_LAST_ENTRY(&e))
			return 0;
		if (e.e_value_inum)
			return 1;
		off += EXT2_EXT_ATTR_LEN(e.e_name_len);
	}
	return 0;
}

void sanity_note_blocks(struct layout *layout, ext2_ino_t ino,
			const struct ext2_inode *inode, int ea_values,
			blk64_t blocks)
{
	struct sanity_notes *n = layout->sanity;
	ext2_filsys fs = layout->fs;
	blk64_t have, want = blocks * (fs->blocksize / 512);

	/*
	 * i_blocks also counts the blocks of the attribute inodes its
	 * attributes' values live in (e2fsck charges them so, with the
	 * ea_inode feature or without): not checked then.
	 */
	if (!n || ext2fs_has_feature_ea_inode(fs->super) || ea_values)
		return;
	have = ext2fs_get_stat_i_blocks(fs, (struct ext2_inode *)inode);
	if (have != want && note_problem(n, SANITY_BAD_IBLOCKS, ino, 0, NULL)) {
		n->first.recorded = have;
		n->first.counted = want;
	}
}

void sanity_note_corrupt_reserved(struct layout *layout, ext2_ino_t ino)
{
	if (layout->sanity)
		note_problem(layout->sanity, SANITY_CORRUPT_MAP, ino, 0, NULL);
}

/* --------------------------------------------------------- before the scan */

/* Whether block BLK can be read as metadata at all. */
static int in_fs(ext2_filsys fs, blk64_t blk)
{
	return blk >= fs->super->s_first_data_block &&
	       blk < ext2fs_blocks_count(fs->super);
}

/*
 * The superblock's quota inodes, as e2fsck checks them (its "Invalid
 * quota inode"): none, or an inode that may be one.
 */
static void check_quota_inodes(ext2_filsys fs, struct sanity_finding *found)
{
	static const char *const which[] = { "user", "group", "project" };
	const __u32 inum[] = { fs->super->s_usr_quota_inum,
			       fs->super->s_grp_quota_inum,
			       fs->super->s_prj_quota_inum };
	unsigned q;

	for (q = 0; q < 3; q++) {
		__u32 ino = inum[q];
		struct sanity_finding f;

		if (!ino || (ino <= fs->super->s_inodes_count &&
			     (ino == EXT4_USR_QUOTA_INO || ino == EXT4_GRP_QUOTA_INO ||
			      ino >= EXT2_FIRST_INODE(fs->super))))
			continue;
		memset(&f, 0, sizeof(f));
		f.what = SANITY_QUOTA_INODE;
		f.ino = ino;
		f.detail = which[q];
		sanity_found(found, &f);
	}
}

errcode_t sanity_check_fs(ext2_filsys fs, struct sanity_finding *found)
{
	char *buf = NULL;
	dgrp_t g;
	errcode_t ret;

	memset(found, 0, sizeof(*found));
	check_quota_inodes(fs, found);
	if (ext2fs_has_feature_metadata_csum(fs->super) &&
	    !ext2fs_superblock_csum_verify(fs, fs->super))
		sanity_found_simple(found, SANITY_SB_CSUM, 0, 0, 0);
	if (ext2fs_has_group_desc_csum(fs))
		for (g = 0; g < fs->group_desc_count; g++)
			if (!ext2fs_group_desc_csum_verify(fs, g))
				sanity_found_simple(found, SANITY_GD_CSUM, 0, 0, g);
	if (!ext2fs_has_feature_metadata_csum(fs->super))
		return 0;
	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (ret)
		return ret;
	for (g = 0; g < fs->group_desc_count; g++) {
		blk64_t b = ext2fs_block_bitmap_loc(fs, g);
		blk64_t i = ext2fs_inode_bitmap_loc(fs, g);

		/* Uninitialized bitmaps are computed, not read: no checksum. */
		if (!ext2fs_bg_flags_test(fs, g, EXT2_BG_BLOCK_UNINIT) &&
		    in_fs(fs, b) && !io_channel_read_blk64(fs->io, b, 1, buf) &&
		    !ext2fs_block_bitmap_csum_verify(fs, g, buf,
				EXT2_CLUSTERS_PER_GROUP(fs->super) / 8))
			sanity_found_simple(found, SANITY_BBITMAP_CSUM, 0, b, g);
		if (!ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT) &&
		    in_fs(fs, i) && !io_channel_read_blk64(fs->io, i, 1, buf) &&
		    !ext2fs_inode_bitmap_csum_verify(fs, g, buf,
				EXT2_INODES_PER_GROUP(fs->super) / 8))
			sanity_found_simple(found, SANITY_IBITMAP_CSUM, 0, i, g);
	}
	ext2fs_free_mem(&buf);
	return 0;
}

/* ---------------------------------------------------------- after the scan */

/* Extent tree blocks whose checksum does not match their inode. */
static errcode_t check_extent_csums(struct layout *layout,
				    struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	char *buf;
	uint64_t i;
	errcode_t ret;

	if (!ext2fs_has_feature_metadata_csum(fs->super))
		return 0;
	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *a = &layout->aux[i];

		if (a->kind != LAYOUT_AUX_ETB ||
		    io_channel_read_blk64(fs->io, a->start, 1, buf))
			continue;
		/*
		 * libext2fs finds the checksum after eh_max entries without
		 * bounding it by the block: a header the scan did not read
		 * (the block is also another file's, or changed under it)
		 * cannot hold a matching checksum.
		 */
		if (ext2fs_extent_header_verify(buf, fs->blocksize) ||
		    !ext2fs_extent_block_csum_verify(fs, a->ino, (void *)buf))
			sanity_found_simple(found, SANITY_EXTENT_CSUM, a->ino, a->start, 0);
	}
	ext2fs_free_mem(&buf);
	return 0;
}

/*
 * Mark [START, START+LEN) in SEEN; when part of it was marked already,
 * *DUP_AT gets the first such block (if it has none yet) and 1 is returned.
 */
static int mark_owned(ext2fs_block_bitmap seen, blk64_t start, blk64_t len,
		      blk64_t *dup_at)
{
	blk64_t b;
	int dup = 0;

	if (!ext2fs_test_block_bitmap_range2(seen, start, len)) {
		if (!*dup_at &&
		    !ext2fs_find_first_set_block_bitmap2(seen, start,
							  start + len - 1, &b))
			*dup_at = b;
		dup = 1;
	}
	ext2fs_mark_block_bitmap_range2(seen, start, len);
	return dup;
}

/*
 * Who owns BLK: up to two inodes into OWNER (the same one twice when its
 * map holds BLK twice); returns whether the fixed metadata owns it too.
 * Only for the message: a linear search.
 */
static int owners_of(const struct layout *layout, blk64_t blk, ext2_ino_t owner[2])
{
	unsigned n = 0;
	uint64_t i;
	uint32_t p;

	owner[0] = owner[1] = 0;
	for (i = 0; i < layout->nfiles && n < 2; i++) {
		const struct layout_file *f = &layout->files[i];

		for (p = 0; p < layout_file_pieces(layout, f) && n < 2; p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			if (blk >= pc.start && blk < pc.start + pc.len)
				owner[n++] = f->ino;
		}
	}
	for (i = 0; i < layout->naux && n < 2; i++)
		if (blk >= layout->aux[i].start &&
		    blk < layout->aux[i].start + layout->aux[i].len)
			owner[n++] = layout->aux[i].ino;
	return ext2fs_test_block_bitmap2(layout->fixed, blk);
}

/* The bad blocks inode's blocks, which the scan does not walk (mode 0). */
struct bad_walk {
	ext2fs_block_bitmap owned;
	blk64_t		*dup_at;
	uint64_t	dups;
};

static int bad_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
		     blk64_t ref_blk, int ref_offset, void *priv)
{
	struct bad_walk *w = priv;

	(void)blockcnt; (void)ref_blk; (void)ref_offset;
	if (*blocknr >= fs->super->s_first_data_block &&
	    *blocknr < ext2fs_blocks_count(fs->super))
		w->dups += mark_owned(w->owned, *blocknr, 1, w->dup_at);
	return 0;
}

static uint64_t mark_bad_blocks(ext2_filsys fs, ext2fs_block_bitmap owned,
				blk64_t *dup_at)
{
	struct bad_walk w = { owned, dup_at, 0 };

	/* A list out of range is skipped: its blocks then show as unowned. */
	ext2fs_block_iterate3(fs, EXT2_BAD_INO, BLOCK_FLAG_READ_ONLY, NULL,
			      bad_block, &w);
	return w.dups;
}

/* Every block something owns into OWNED; the first block owned twice found. */
static void build_owned(struct layout *layout, ext2fs_block_bitmap owned,
			ext2fs_block_bitmap xattr, struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	blk64_t dup_at = 0, first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super);
	uint64_t i, dups = 0;
	uint32_t p;
	blk64_t b, e;

	/* The fixed metadata first: a file on it is the second owner. */
	for (b = first; b < end; b = e) {
		if (ext2fs_find_first_set_block_bitmap2(layout->fixed, b, end - 1, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, b, end - 1, &e))
			e = end;
		ext2fs_mark_block_bitmap_range2(owned, b, e - b);
	}
	dups += mark_bad_blocks(fs, owned, &dup_at);
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		for (p = 0; p < layout_file_pieces(layout, f); p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			dups += mark_owned(owned, pc.start, pc.len, &dup_at);
		}
	}
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *a = &layout->aux[i];

		if (a->kind != LAYOUT_AUX_XATTR)
			dups += mark_owned(owned, a->start, a->len, &dup_at);
	}
	/*
	 * Attribute blocks are shared by design (refcounted), but only with
	 * other inodes' attributes: OWNED holds no attribute block yet.
	 */
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *a = &layout->aux[i];

		if (a->kind != LAYOUT_AUX_XATTR)
			continue;
		if (!ext2fs_test_block_bitmap_range2(owned, a->start, a->len)) {
			if (!dup_at)
				dup_at = a->start;
			dups++;
		}
		ext2fs_mark_block_bitmap_range2(xattr, a->start, a->len);
	}
	for (b = first; b < end; b = e) {
		if (ext2fs_find_first_set_block_bitmap2(xattr, b, end - 1, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(xattr, b, end - 1, &e))
			e = end;
		ext2fs_mark_block_bitmap_range2(owned, b, e - b);
	}
	if (dups) {
		struct sanity_finding f;
		ext2_ino_t owner[2];

		memset(&f, 0, sizeof(f));
		f.what = SANITY_DUP_BLOCK;
		f.blk = dup_at;
		if (owners_of(layout, dup_at, owner)) {
			f.ino = owner[0];
			f.detail = "the filesystem's metadata";
		} else {
			f.ino = owner[0];
			f.ino2 = owner[1] ? owner[1] : owner[0];
		}
		f.problems = dups;
		sanity_found(found, &f);
	}
}

/*
 * Each attribute block once (XATTR: those not checked yet, cleared as they
 * are): the header e2fsck's pass 1 checks first (magic, a single block,
 * the checksum).  A block that fails is one e2fsck clears, and with it
 * the attributes of every inode that shares it.
 */
static errcode_t check_xattr_blocks(struct layout *layout,
				    ext2fs_block_bitmap xattr,
				    struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	char *buf;
	uint64_t i;
	errcode_t ret;

	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *a = &layout->aux[i];
		const struct ext2_ext_attr_header *h = (void *)buf;

		if (a->kind != LAYOUT_AUX_XATTR ||
		    !ext2fs_test_block_bitmap2(xattr, a->start))
			continue;
		ext2fs_unmark_block_bitmap2(xattr, a->start);
		if (io_channel_read_blk64(fs->io, a->start, 1, buf))
			continue;	/* the scan's reads say so */
		if ((ext2fs_le32_to_cpu(h->h_magic) != EXT2_EXT_ATTR_MAGIC &&
		     ext2fs_le32_to_cpu(h->h_magic) != EXT2_EXT_ATTR_MAGIC_v1) ||
		    ext2fs_le32_to_cpu(h->h_blocks) != 1 ||
		    (ext2fs_has_feature_metadata_csum(fs->super) &&
		     !ext2fs_ext_attr_block_csum_verify(fs, a->ino, a->start,
				(struct ext2_ext_attr_header *)buf)))
			sanity_found_simple(found, SANITY_BAD_EA_HEADER, a->ino,
					    a->start, 0);
	}
	ext2fs_free_mem(&buf);
	return 0;
}

/*
 * A block owned but free in BITMAP (what the allocator would hand out
 * again), then one in use in BITMAP that nothing owns.
 */
static void compare_blocks(struct layout *layout, ext2fs_block_bitmap owned,
			   struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	ext2fs_block_bitmap map = fs->block_map;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t last = ext2fs_blocks_count(fs->super) - 1;
	blk64_t b, e, z;

	for (b = first; b <= last; b = e) {
		if (ext2fs_find_first_set_block_bitmap2(owned, b, last, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(owned, b, last, &e))
			e = last + 1;
		if (!ext2fs_find_first_zero_block_bitmap2(map, b, e - 1, &z)) {
			ext2_ino_t owner[2];

			owners_of(layout, z, owner);	/* 0: the fixed metadata */
			sanity_found_simple(found, SANITY_USED_FREE, owner[0], z, 0);
			break;
		}
	}
	for (b = first; b <= last; b = e) {
		if (ext2fs_find_first_set_block_bitmap2(map, b, last, &b))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(map, b, last, &e))
			e = last + 1;
		if (!ext2fs_find_first_zero_block_bitmap2(owned, b, e - 1, &z)) {
			sanity_found_simple(found, SANITY_FREE_USED, 0, z, 0);
			break;
		}
	}
}

/* The inode bitmap against the inodes in use, both ways. */
static errcode_t compare_inodes(struct layout *layout, struct sanity_notes *n,
				struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	ext2_ino_t last = fs->super->s_inodes_count, i, e, z;
	errcode_t ret;

	if (!fs->inode_map) {
		ret = ext2fs_read_inode_bitmap(fs);
		if (ret)
			return ret;
	}
	for (i = 1; i <= last; i = e) {
		if (ext2fs_find_first_set_inode_bitmap2(n->in_use, i, last, &i))
			break;
		if (ext2fs_find_first_zero_inode_bitmap2(n->in_use, i, last, &e))
			e = last + 1;
		if (!ext2fs_find_first_zero_inode_bitmap2(fs->inode_map, i, e - 1, &z)) {
			sanity_found_simple(found, SANITY_INODE_NOT_MARKED, z, 0, 0);
			break;
		}
	}
	for (i = 1; i <= last; i = e) {
		if (ext2fs_find_first_set_inode_bitmap2(fs->inode_map, i, last, &i))
			break;
		if (ext2fs_find_first_zero_inode_bitmap2(fs->inode_map, i, last, &e))
			e = last + 1;
		if (!ext2fs_find_first_zero_inode_bitmap2(n->in_use, i, e - 1, &z)) {
			sanity_found_simple(found, SANITY_INODE_MARKED, z, 0, 0);
			break;
		}
	}
	return 0;
}

/* Free inodes of group G by the inode bitmap. */
static uint64_t group_free_inodes(ext2_filsys fs, dgrp_t g)
{
	ext2_ino_t ipg = EXT2_INODES_PER_GROUP(fs->super);
	ext2_ino_t i = g * ipg + 1, last = (g + 1) * ipg, e;
	uint64_t free_inodes = 0;

	while (i <= last) {
		if (ext2fs_find_first_zero_inode_bitmap2(fs->inode_map, i, last, &i))
			break;
		if (ext2fs_find_first_set_inode_bitmap2(fs->inode_map, i, last, &e))
			e = last + 1;
		free_inodes += e - i;
		i = e;
	}
	return free_inodes;
}

/* The free counts of the groups against the bitmaps. */
static void compare_counts(struct layout *layout, struct sanity_notes *n,
			   struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	uint64_t fi;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		blk64_t fb = layout->free.groups[g].free_blocks;

		if (fb != ext2fs_bg_free_blocks_count(fs, g))
			sanity_found_count(found, SANITY_GROUP_FREE_BLOCKS, g,
				    ext2fs_bg_free_blocks_count(fs, g), fb);
		fi = group_free_inodes(fs, g);
		if (fi != ext2fs_bg_free_inodes_count(fs, g))
			sanity_found_count(found, SANITY_GROUP_FREE_INODES, g,
				    ext2fs_bg_free_inodes_count(fs, g), fi);
		if (n->dirs[g] != ext2fs_bg_used_dirs_count(fs, g))
			sanity_found_count(found, SANITY_GROUP_DIRS, g,
				    ext2fs_bg_used_dirs_count(fs, g), n->dirs[g]);
	}
	/*
	 * Not the superblock's totals: the kernel keeps them lazily, and
	 * e2fsck sets them from the groups' without calling it damage.
	 */
}

errcode_t sanity_check_layout(struct layout *layout, struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	ext2fs_block_bitmap owned = NULL, xattr = NULL;
	struct sanity_notes *n;
	uint64_t i;
	errcode_t ret;

	memset(found, 0, sizeof(*found));
	ret = notes_get(layout, &n);
	if (ret)
		return ret;
	if (n->problems) {
		struct sanity_finding f = n->first;

		f.problems = n->problems;
		sanity_found(found, &f);
	}
	ret = check_extent_csums(layout, found);
	if (ret)
		return ret;
	if (layout->summary.corrupt_files) {
		for (i = 0; i < layout->nfiles; i++)
			if (layout->files[i].flags & LAYOUT_F_CORRUPT)
				break;
		/* A corrupt inode that owned no block is not in the list. */
		sanity_found_simple(found, SANITY_CORRUPT_MAP,
			     i < layout->nfiles ? layout->files[i].ino : 0, 0, 0);
	}
	ret = ext2fs_allocate_block_bitmap(fs, "owned", &owned);
	if (!ret) {
		/*
		 * Attribute blocks are few: a tree of runs, not a bit for every
		 * block (on a large filesystem a good part of e2defrag -n's
		 * peak memory).
		 */
		int type = fs->default_bitmap_type;

		fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;
		ret = ext2fs_allocate_block_bitmap(fs, "xattr", &xattr);
		fs->default_bitmap_type = type;
	}
	if (ret)
		goto out;
	build_owned(layout, owned, xattr, found);
	ret = check_xattr_blocks(layout, xattr, found);
	if (ret)
		goto out;
	compare_blocks(layout, owned, found);
	ret = compare_inodes(layout, n, found);
	if (ret)
		goto out;
	compare_counts(layout, n, found);
	/* The directories are read again: only when all else agrees. */
	if (!found->problems)
		ret = sanity_check_dirs(layout, n, found);
	/* The usage is e2fsck's sum only over sound inodes. */
	if (!ret && !found->problems)
		ret = sanity_check_quota(fs, n->quota, found);
out:
	if (owned)
		ext2fs_free_block_bitmap(owned);
	if (xattr)
		ext2fs_free_block_bitmap(xattr);
	return ret;
}
