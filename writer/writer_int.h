/*
 * writer_int.h --- what the files of the writer share among themselves
 * (and the power-cut harness's journal tool, which tests the parts);
 * the public side is writer.h.
 *
 * One section per file:
 *   journal.c, journal_open.c, journal_format.c   the JBD2 log
 *   metawrite.c    the metadata blocks a switch changes, as block images
 *   quotawrite.c   the quota blocks a switch changes
 *   supersector.c  superblock writes a torn write cannot corrupt
 */
#ifndef WRITER_INT_H
#define WRITER_INT_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>
#include "e2frag.h"

/*
 * journal.c --- a JBD2 writer for the internal journal (inode
 * s_journal_inum), enough for e2defrag's metadata: each file switch is one
 * transaction that the kernel and e2fsck replay after a crash.
 *
 * libext2fs 1.47 reads journals (e2fsck, debugfs) but has no API to write
 * one.  The on-disk format followed here is the kernel's (fs/jbd2,
 * include/linux/jbd2.h; e2fsprogs' lib/ext2fs/kernel-jbd.h and
 * e2fsck/recovery.c are the reader this must satisfy).
 *
 * A transaction's life:
 *   journal_start    the first time: needs_recovery set in the superblock,
 *                    written (durable with the first commit's copies,
 *                    before any commit block);
 *   journal_add      the new image of each metadata block it changes;
 *   journal_revoke   blocks freed by it that live transactions logged;
 *   journal_commit   revoke, descriptor and copy blocks (and the journal
 *                    superblock, when a live log's features changed; with
 *                    checksums, zeroes where the commit block goes)
 *                    written, flush; commit block (and the journal
 *                    superblock that starts a log that was empty), flush:
 *                    the transaction is durable.
 * A checkpoint writes the blocks of the live transactions in place, flush;
 * then the journal superblock marks the log empty, flush.  It happens, as
 * in the kernel, when the log has no room for the next transaction, and
 * at journal_close, which then clears needs_recovery.  In between, the
 * disk lags behind the journal: journal_overlay() patches reads.
 *
 * Data blocks enter the journal only where they go into blocks that the
 * open transaction frees (switch.c's logged moves, writer.h): written in
 * place before the commit, they would overwrite what the old file still
 * holds should the transaction not commit.  Every other data block stays
 * out of it (ordered mode): the caller makes them durable before
 * journal_commit.
 */

struct journal;

/*
 * The block images the journal keeps in memory (those of the live
 * transactions, until a checkpoint writes them in place, and the open
 * one's) are about this much at most: a commit checkpoints first when
 * they would pass it.  Metadata alone never comes near; logged data
 * would grow with a large journal (up to 1 GiB) without it.
 */
#define JOURNAL_IMAGES_MAX_BYTES	(64u << 20)

enum {
	/* journal_close leaves the log (and needs_recovery) as it is, for
	 * a test to see it replayed. */
	JOURNAL_NO_CHECKPOINT = 1 << 0,
};

/*
 * Open FS's internal journal for writing.  E2F_ERR_EXTERNAL_JOURNAL for a
 * journal device, E2F_ERR_NEEDS_RECOVERY when the log is not empty,
 * E2F_ERR_JOURNAL_CORRUPT for a journal superblock that does not add up,
 * E2F_ERR_JOURNAL_UNSUPPORTED for a format this writer does not know.
 *
 * Like the kernel when it mounts ext4, this turns on checksum v3 in the
 * journal superblock of a metadata_csum filesystem (unless v2 or v3 is
 * on) and the 64bit feature on a 64bit filesystem; they reach the disk
 * with the first transaction.
 */
errcode_t journal_open(ext2_filsys fs, int flags, struct journal **ret);

/* Before the in-memory metadata of a transaction changes. */
errcode_t journal_start(struct journal *j);

/*
 * Whether a transaction of NBLOCKS blocks can be written at all (the log
 * is large enough, checkpointing first if need be): 0 or
 * E2F_ERR_JOURNAL_FULL.  Ask before changing anything.
 */
errcode_t journal_reserve(struct journal *j, size_t nblocks);

/* Log IMAGE (one block) as BLK's new content in the transaction. */
errcode_t journal_add(struct journal *j, blk64_t blk, const char *image);

/*
 * RUNS are freed by the transaction: revoke those of their blocks that
 * live (not yet checkpointed) transactions logged, so that a replay
 * cannot write stale contents over what the blocks hold next, and drop
 * the images the open transaction holds of them (logged data of a file
 * that now leaves them).
 */
errcode_t journal_revoke(struct journal *j, const struct layout_piece *runs,
			 size_t n);

/*
 * If BLK was logged and is not yet checkpointed, or is in the open
 * transaction, copy its latest image to BUF and return 1: the disk holds
 * an older version.  Else 0.
 */
int journal_peek(struct journal *j, blk64_t blk, char *buf);

/*
 * Patch DATA, just read from LEN bytes at byte OFFSET of the device, with
 * the blocks live transactions logged and those of the open transaction:
 * without checkpoints the disk lags behind, and whoever reads the
 * filesystem must see its current state.
 */
void journal_overlay(struct journal *j, uint64_t offset, uint64_t len,
		     void *data);

/* Whether the log (live or open transaction) holds an image in RUNS. */
int journal_holds(const struct journal *j, const struct layout_piece *runs,
		  size_t n);

/*
 * Whether the journal can revoke (a v2 superblock): blocks logged as data
 * are freed again often, and without revoke records a replay would write
 * their stale images over their next contents.
 */
int journal_can_revoke(const struct journal *j);

/* Blocks the open transaction holds so far (several switches: a batch). */
size_t journal_pending(const struct journal *j);

/* The journal's block size, bytes (the filesystem's). */
unsigned journal_block_size(const struct journal *j);

/* The log's length, blocks. */
size_t journal_log_blocks(const struct journal *j);

/* Commit the transaction (checkpointing first if the log is full). */
errcode_t journal_commit(struct journal *j);

/* Checkpoint and clear needs_recovery (unless JOURNAL_NO_CHECKPOINT). */
errcode_t journal_close(struct journal *j);

void journal_free(struct journal *j);

/*
 * metawrite.c --- the few metadata blocks a file switch changes, built as
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

/* Add the groups of FROM to INTO. */
errcode_t metawrite_groups_merge(struct metawrite_groups *into,
				 const struct metawrite_groups *from);

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

/*
 * quotawrite.c --- the quota usage a file switch changes, built as whole
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

/*
 * supersector.c --- superblock writes that a torn write cannot corrupt.
 *
 * A disk writes only its sector (512 bytes) whole.  The superblock is two
 * sectors: every field a run changes (free counts, state, needs_recovery,
 * write time) is in the first, and with metadata_csum its checksum is in
 * the second, at the end.  A write cut between the two leaves a superblock
 * whose checksum does not match: the kernel refuses to mount it and
 * e2fsck, on a filesystem without backup superblocks, cannot open it.
 *
 * So the new superblock is made to keep the checksum it had on disk: four
 * bytes of the first sector that mean nothing while no error is recorded
 * (the tail of s_last_error_func, which e2fsck clears after each check and
 * the kernel overwrites with the error it records) are chosen to give
 * crc32c the old value.  The second sector is then unchanged, the write
 * changes one sector, and a cut leaves the old superblock or the new one.
 */

/*
 * OLD: the superblock on disk (1024 bytes), NEW: the one about to replace
 * it, modified in place.  When both use metadata_csum, OLD's checksum is
 * right, no last error is recorded in NEW and NEW's second sector equals
 * OLD's but for the checksum, set NEW's free bytes and checksum so that
 * its second sector equals OLD's, and return 1.  Else leave NEW alone and
 * return 0 (without metadata_csum a change to the first sector is already
 * a one-sector write).
 */
int supersector_keep_checksum(const unsigned char *old, unsigned char *new);

#endif /* WRITER_INT_H */
