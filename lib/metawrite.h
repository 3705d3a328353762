/*
 * metawrite.h --- the few metadata blocks a file switch changes, built as
 * whole block images from libext2fs' in-memory state.
 *
 * libext2fs can only write metadata wholesale (ext2fs_flush writes every
 * descriptor block and every backup, ext2fs_write_bitmaps every bitmap).
 * A file switch changes a handful of blocks: the block bitmaps of the
 * groups whose blocks change hands, the descriptor blocks holding those
 * groups, the primary superblock and one inode table block.  These
 * functions update the in-memory state the way ext2fs_block_alloc_stats2
 * would (without marking anything dirty) and produce exactly those block
 * images, so that the caller can write them in place or log them in the
 * journal.  Only primary metadata: backups are left alone, as the kernel
 * leaves them.
 */
#ifndef METAWRITE_H
#define METAWRITE_H

#include "e2frag.h"

/* A set of block groups, ascending, no duplicates. */
struct metawrite_groups {
	dgrp_t	*g;
	uint64_t n, cap;
};

void metawrite_groups_clear(struct metawrite_groups *gs);
void metawrite_groups_free(struct metawrite_groups *gs);

/*
 * Check that every block of RUNS lies inside the filesystem and is free
 * (WANT_USED == 0) or in use (WANT_USED == 1) in fs->block_map.
 * E2F_ERR_SWITCH_RUNS when one is not, or runs overlap.
 */
errcode_t metawrite_check_runs(ext2_filsys fs, const struct layout_piece *runs,
			       size_t n, int want_used);

/* Add the groups RUNS lie in to GS, changing nothing else. */
errcode_t metawrite_groups_of(ext2_filsys fs, const struct layout_piece *runs,
			      size_t n, struct metawrite_groups *gs);

/* How many descriptor blocks hold the groups of GS. */
size_t metawrite_gdt_blocks_of(ext2_filsys fs, const struct metawrite_groups *gs);

/*
 * Mark (ALLOC) or unmark RUNS in fs->block_map and carry the change into
 * the group descriptors (free count, BLOCK_UNINIT cleared, bitmap and
 * descriptor checksums) and the superblock free count.  The groups touched
 * are added to TOUCHED.  Call metawrite_check_runs first.
 */
errcode_t metawrite_account(ext2_filsys fs, const struct layout_piece *runs,
			    size_t n, int alloc, struct metawrite_groups *touched);

/* GROUP's block bitmap: where it lives and its image (fs->blocksize). */
errcode_t metawrite_bitmap_block(ext2_filsys fs, dgrp_t group, blk64_t *blk,
				 char *buf);

/*
 * The descriptor block holding GROUP's descriptor: its index among the
 * descriptor blocks, its location and its image.
 */
errcode_t metawrite_gdt_block(ext2_filsys fs, dgrp_t group, blk64_t *index,
			      blk64_t *blk, char *buf);

/*
 * The filesystem block holding the primary superblock (block 1 with 1 KiB
 * blocks, else block 0): its location and its image, fs->super with its
 * checksum set, around the bytes already on disk (the boot sector).
 */
errcode_t metawrite_super_block(ext2_filsys fs, blk64_t *blk, char *buf);

/* The inode table block holding INO, and INO's byte offset in it. */
errcode_t metawrite_inode_location(ext2_filsys fs, ext2_ino_t ino, blk64_t *blk,
				   unsigned *offset);

/*
 * Put INODE into BUF, the current image of INO's inode table block,
 * keeping the bytes of the on-disk inode beyond what INODE holds (in-inode
 * extended attributes), and set the inode checksum.
 */
errcode_t metawrite_inode_block(ext2_filsys fs, ext2_ino_t ino,
				const struct ext2_inode_large *inode, char *buf);

#endif /* METAWRITE_H */
