/*
 * switch.h --- switching a file from its old blocks to its new ones so that
 * a power cut at any instant leaves either the old layout or the new one.
 *
 * CONTRACT between e2defrag's mover (defrag/) and the metadata writer
 * (lib/switch.c, lib/journal*.c).  The mover, before calling switch_file():
 *   - chose new blocks that are free both on disk and in fs->block_map,
 *     and has NOT marked them in fs->block_map (switch_file does that);
 *   - copied the data into them and wrote every new mapping block (IND,
 *     DIND, TIND, or extent tree blocks with their checksums) into new
 *     blocks too, never over a block the file still uses;
 *   - flushed (io_channel_flush) so all of that is durable.
 * switch_file() then makes the switch durable in one step:
 *   - with an internal journal (ext3, ext4): one JBD2 transaction holding
 *     the inode table block with the new inode, the block bitmap blocks,
 *     group descriptor blocks and superblock that change, and, when the
 *     file's block count changes on a quota filesystem, the quota file
 *     blocks holding its user, group and project usage (quotawrite.h);
 *     data stays out of the journal (ordered mode).  Committed when switch_file returns;
 *     checkpointed in place (as the kernel does) when the log fills up and
 *     at switch_close.  Until then the disk lags behind; reads through
 *     fs->io see the current blocks all the same.  After a cut, replaying
 *     the journal alone (e2fsck, or the kernel) leaves a clean filesystem;
 *   - without a journal (ext2): ordered writes: mark GAINED in the bitmaps
 *     and counts, flush; write the inode (and the quota file blocks),
 *     flush; release RELEASED, flush.  A cut leaves at worst leaked
 *     blocks and counts (free counts, quota usage) that e2fsck fixes.
 * Superblocks go out as whole blocks through the io channel: never through
 * libext2fs' write_byte path, whose several small writes a cut can tear.
 * A disk writes only its 512-byte sector whole, so any block may also be
 * torn: see tests/crash/README.md for why each write is safe (in short:
 * written before a flush that precedes its use, replayed by the journal,
 * leaking at worst, or changing one sector: an inode; the superblock,
 * which keeps its checksum, lib/supersector.h; a journal commit block,
 * written over zeroes when the journal has checksums).
 * Only the primary superblock and group descriptors are written (as the
 * kernel does); backups are left as they are.
 *
 * WHAT THE CALLER MUST DO (and not do):
 *   - open the filesystem read-write with its block bitmap loaded (or let
 *     switch_open load it); switch_open slips a stacked io channel under
 *     fs->io (lib/iowrap.h) that has no write_byte and writes the
 *     superblock as a whole block, and sets EXT2_FLAG_MASTER_SB_ONLY;
 *   - make every metadata change through switch_file: no
 *     ext2fs_block_alloc_stats*, ext2fs_write_inode*, ext2fs_flush or
 *     ext2fs_write_bitmaps in between (they write wholesale, and out of
 *     order);
 *   - call switch_close, then ext2fs_close (or fsopen_close).  After a
 *     successful switch_close the in-memory bitmaps, descriptors and
 *     superblock equal what is on disk, EXT2_FLAG_DIRTY and
 *     EXT2_FLAG_BB_DIRTY are cleared and EXT2_FLAG_SUPER_ONLY |
 *     EXT2_FLAG_MASTER_SB_ONLY set, so ext2fs_close writes at most the
 *     primary superblock (libext2fs' s_kbytes_written update), as one
 *     whole block;
 *   - when switch_file or switch_close fails, stop: the context then
 *     refuses further work and clears EXT2_FLAG_RW (and the dirty flags)
 *     so that ext2fs_close writes nothing; the disk is left as a power cut
 *     at that instant would leave it, and e2fsck repairs it.
 * Without a journal, the superblock is marked not clean (s_state without
 * EXT2_VALID_FS) from switch_open to switch_close, as the kernel's ext2
 * does while mounted, so that a cut in between makes e2fsck check it.
 */
#ifndef SWITCH_H
#define SWITCH_H

#include "e2frag.h"

struct switch_ctx;

enum {
	/* Test hook: switch_close leaves the committed transactions in the
	 * log, not checkpointed (needs_recovery set), so that a test can
	 * check that e2fsck or the kernel replays what we wrote.  (A log
	 * that fills up is still checkpointed, to make room.)  No effect
	 * without a journal. */
	SWITCH_NO_CHECKPOINT = 1 << 0,
};

/*
 * Prepare to switch files on FS (opened read-write).  Opens and validates
 * the internal journal when there is one; E2F_ERR_EXTERNAL_JOURNAL for an
 * external journal device, E2F_ERR_NEEDS_RECOVERY if it is not empty.
 */
errcode_t switch_open(ext2_filsys fs, int flags, struct switch_ctx **ret);

/*
 * What switch_open() would refuse, found without writing: FS may be open
 * read-only (e2defrag -n checks as for a real run).  The same errors.
 */
errcode_t switch_check(ext2_filsys fs);

/*
 * Switch INO to INODE (its new i_block, i_blocks, flags; the checksum is
 * set here).  GAINED: block runs the inode owns after the switch and did
 * not before (data and mapping blocks).  RELEASED: runs it owned before and
 * no longer does.  On success fs->block_map, the group descriptors and the
 * superblock counts in memory agree with what is on disk.
 */
errcode_t switch_file(struct switch_ctx *c, ext2_ino_t ino,
		      struct ext2_inode_large *inode,
		      const struct layout_piece *gained, size_t ngained,
		      const struct layout_piece *released, size_t nreleased);

/*
 * Whether a failed write stopped C (see above): it then refuses all
 * further work.  A switch_file() that refused its input before changing
 * anything (E2F_ERR_SWITCH_RUNS, E2F_ERR_JOURNAL_FULL, E2F_ERR_QUOTA_ENTRY:
 * a quota file without the file's entry) leaves C usable.
 */
int switch_is_failed(const struct switch_ctx *c);

/* Checkpoint whatever is left and leave the journal empty; frees C. */
errcode_t switch_close(struct switch_ctx *c);

#endif /* SWITCH_H */
