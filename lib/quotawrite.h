/*
 * quotawrite.h --- the quota usage a file switch changes, built as whole
 * block images of the quota files (user, group, project: the hidden
 * inodes s_usr_quota_inum, s_grp_quota_inum, s_prj_quota_inum).
 *
 * A switch can change a file's block count (its extent tree grows or
 * shrinks).  The quota files count every inode's space in bytes, per
 * user, group and project id (dqb_curspace), and e2fsck -f checks them:
 * so the entries of the file's ids move by the same number of bytes, in
 * the same step as the switch (switch.c logs these blocks in the switch's
 * transaction, as the kernel journals the quota files).
 *
 * Format (the kernel's fs/quota/quota_tree.c and quotaio_v2.h, e2fsprogs'
 * lib/support/quotaio_tree.c, quotaio_v2.c): a file of 1 KiB blocks;
 * block 0 starts with the header (magic per type, version 0 or 1) and
 * the info; block 1 is the root of a radix tree four levels deep, each
 * level indexed by one byte of the id (most significant first), each
 * tree block 256 little-endian block numbers; the last level points at
 * data blocks: a 16-byte header, then entries (v2r1: 72 bytes, v2r0: 48)
 * whose first word is the id.  Only an existing entry's curspace (and its
 * grace time, as the kernel keeps it) changes: the tree's shape never.
 */
#ifndef QUOTAWRITE_H
#define QUOTAWRITE_H

#include "e2frag.h"

#define QUOTAWRITE_TYPES	3	/* user, group, project */

/* The quota file blocks one switch changes: at most one per quota type. */
struct quotawrite {
	size_t	n;
	blk64_t	blk[QUOTAWRITE_TYPES];	/* filesystem blocks */
	char	*img[QUOTAWRITE_TYPES];	/* their new images, fs->blocksize */
};

/*
 * What switching INO from OLD to NEW changes in the quota files, into Q
 * (Q->n == 0: nothing, as without the quota feature or when the block
 * count stays).  Blocks are read through fs->io, so a journal's newer
 * blocks are seen.  Changes nothing, in memory or on disk.
 * E2F_ERR_QUOTA_ENTRY when a quota file has no entry for the file's
 * user, group or project id, or is not in a format known here (the file
 * is then refused: e2fsck -f would rebuild the quota files first);
 * EXT2_ET_INVALID_ARGUMENT when OLD and NEW differ in owner or project.
 */
errcode_t quotawrite_prepare(ext2_filsys fs, ext2_ino_t ino,
			     const struct ext2_inode_large *old,
			     const struct ext2_inode_large *new,
			     struct quotawrite *q);

/* Free Q's images; Q is empty again. */
void quotawrite_free(struct quotawrite *q);

#endif /* QUOTAWRITE_H */
