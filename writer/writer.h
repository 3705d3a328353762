/*
 * writer.h --- the crash-safe writer, writer/'s one public header: for
 * e2defrag's mover, e2fragimg and the power-cut harness (tests/crash).
 * The read-only model (lib/e2frag.h) knows nothing of it; e2frag and
 * e2fragmap do not link it.
 *
 * One section per file:
 *   switch.c    a file switched from its old blocks to its new ones, so
 *               that a power cut leaves one or the other (the contract)
 *   iowrap.c    the stacked io channel slipped under an open filesystem
 *   iolog.c     every write and flush logged, for the power-cut harness
 *   exttree.c   the one encoder of ext4's extent tree format
 * What the writer's files share among themselves (the journal, the
 * metadata and quota block images, the superblock's sector) is in
 * writer_int.h; what the journal's files share, in journal_int.h.
 */
#ifndef WRITER_H
#define WRITER_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>
#include "e2frag.h"

/*
 * switch.c --- switching a file from its old blocks to its new ones so that
 * a power cut at any instant leaves either the old layout or the new one.
 *
 * CONTRACT between e2defrag's mover (defrag/) and the metadata writer
 * (writer/switch.c, writer/journal*.c).  The mover, before calling switch_file():
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
 *     blocks holding its user, group and project usage (writer_int.h);
 *     data stays out of the journal (ordered mode), but for blocks a
 *     switch of the same batch released (logged moves, below).
 *     Committed when switch_file returns;
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
 * which keeps its checksum, writer/writer_int.h; a journal commit block,
 * written over zeroes when the journal has checksums).
 * Only the primary superblock and group descriptors are written (as the
 * kernel does); backups are left as they are.
 *
 * WHAT THE CALLER MUST DO (and not do):
 *   - open the filesystem read-write with its block bitmap loaded (or let
 *     switch_open load it); switch_open slips a stacked io channel under
 *     fs->io (writer/writer.h) that has no write_byte and writes the
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
 * set here), durably: switch_add() then switch_commit().  GAINED: block runs the inode owns after the switch and did
 * not before (data and mapping blocks).  RELEASED: runs it owned before and
 * no longer does.  On success fs->block_map, the group descriptors and the
 * superblock counts in memory agree with what is on disk (without a
 * journal, where the descriptors hold only counts, the descriptors and
 * the superblock once switch_close() has written them: switch.c's lazy
 * counts).
 */
errcode_t switch_file(struct switch_ctx *c, ext2_ino_t ino,
		      struct ext2_inode_large *inode,
		      const struct layout_piece *gained, size_t ngained,
		      const struct layout_piece *released, size_t nreleased);

/*
 * Batches (group commit).  switch_add() makes the switch in memory and
 * adds it to the open batch; switch_commit() makes the whole batch
 * durable in one step: one JBD2 transaction (its first flush also makes
 * the data durable, before the commit block), or without a journal the
 * three ordered steps above for the whole batch (switch.c: a flush after
 * the first two, the third's writes go out with the next flush).  A cut
 * before the commit leaves every file of the batch old, after it new;
 * without a journal, a cut inside step 2 leaves each file old or new
 * (an inode is within one sector), and at worst leaked blocks.
 * The mover's duties are those of switch_file, but the flush: its copies
 * must only be written (io_channel_write) before switch_add.  Reads
 * through fs->io see the batch (inode table blocks, quota file blocks).
 *
 * Blocks the open batch releases are not free until it is durable: a
 * cut would leave the old file pointing at what the next move wrote
 * there.  So a switch that gains one of them (switch_would_reuse; the
 * mover asks before writing its copies) commits the batch first.  A
 * batch is also committed when its transaction would pass half the log
 * (switch.c's cap_of), and by switch_close.
 */
errcode_t switch_add(struct switch_ctx *c, ext2_ino_t ino,
		     struct ext2_inode_large *inode,
		     const struct layout_piece *gained, size_t ngained,
		     const struct layout_piece *released, size_t nreleased);

/* Make the open batch durable (nothing to do when it is empty). */
errcode_t switch_commit(struct switch_ctx *c);

/*
 * Whether RUNS overlap blocks the open batch releases and has not logged
 * (below): commit first, or log them.
 */
int switch_would_reuse(const struct switch_ctx *c,
		       const struct layout_piece *runs, size_t n);

/*
 * Logged moves (with a journal).  A move into blocks the open batch
 * released need not wait for its commit: written through the batch's
 * transaction, they reach their blocks only once it is durable (replayed
 * from the log after a cut, or checkpointed), never over what the old
 * file holds before.  A chain of files sliding into the blocks the one
 * before left (a tree, rebuilt) so takes one commit, not one a link; each
 * such block is written twice, to the log and in place.
 *
 * switch_reused_blocks: how many blocks of RUNS the open batch released
 *   and has not logged (counting stops past LIMIT).
 * switch_log_room: blocks of data the open transaction may still log
 *   (0 without a journal, or one whose format cannot revoke).
 * switch_write: the mover's one way to write copies and mapping blocks:
 *   N blocks at BLK, those the open batch released into its transaction,
 *   the rest in place.  Then switch_add() takes the move without a commit.
 * switch_forget: a move that wrote through switch_write and will not be
 *   switched: its logged images are dropped (revoked where a commit came
 *   in between), so they never overwrite the blocks' next use.
 * switch_logged_blocks: data blocks logged so far in the run.
 */
blk64_t switch_reused_blocks(const struct switch_ctx *c,
			     const struct layout_piece *runs, size_t n,
			     blk64_t limit);
blk64_t switch_log_room(const struct switch_ctx *c);
errcode_t switch_write(struct switch_ctx *c, blk64_t blk, blk64_t n,
		       const void *data);
errcode_t switch_forget(struct switch_ctx *c, const struct layout_piece *runs,
			size_t n);
uint64_t switch_logged_blocks(const struct switch_ctx *c);

/*
 * The inode table block holding INO into *BLK: what a switch of it adds
 * to its batch's transaction (e2defrag -n's estimate counts them).
 */
errcode_t switch_inode_block(ext2_filsys fs, ext2_ino_t ino, blk64_t *blk);

/*
 * The journal as a run on FS would use it, for e2defrag -n's estimate
 * (0s without a journal, or with one switch_open() would refuse):
 *   room:  the data a batch of an empty log may log, as switch_log_room()
 *          would say after switch_open() (0: none, the format cannot
 *          revoke);
 *   batch: the journal blocks a batch holds before it commits (half the
 *          log);
 *   live:  the log blocks committed batches hold before the writer
 *          checkpoints them (writes them in place and empties the log):
 *          the log less one block, at most the images it keeps in memory.
 */
struct switch_log_limits {
	blk64_t		room, batch, live;
};
void switch_log_limits(ext2_filsys fs, struct switch_log_limits *l);

/* Switches in the open batch (after a failed commit: those not durable). */
size_t switch_batch_size(const struct switch_ctx *c);

/* Batches committed so far, and how many of them a reuse ended. */
void switch_counts(const struct switch_ctx *c, uint64_t *commits,
		   uint64_t *reuse_commits);

/*
 * Whether a failed write stopped C (see above): it then refuses all
 * further work.  A switch_file() that refused its input before changing
 * anything (E2F_ERR_SWITCH_RUNS, E2F_ERR_JOURNAL_FULL, E2F_ERR_QUOTA_ENTRY:
 * a quota file without the file's entry) leaves C usable.
 */
int switch_is_failed(const struct switch_ctx *c);

/* The error that stopped C (0 while it works): what to tell the user. */
errcode_t switch_failure(const struct switch_ctx *c);

/* Checkpoint whatever is left and leave the journal empty; frees C. */
errcode_t switch_close(struct switch_ctx *c);

/*
 * iowrap.c --- a stacked io channel slipped under an open filesystem.
 *
 * iowrap_push() replaces fs->io by a channel that forwards every request
 * to the channel that was there, with two differences that matter for
 * crash safety:
 *   - it offers no write_byte, so libext2fs' write_primary_superblock()
 *     cannot tear the superblock into several small writes (it falls back
 *     to one write of the whole superblock);
 *   - a write of exactly the superblock (1024 bytes at byte 1024) on a
 *     filesystem whose blocks are larger goes out as one write of the
 *     whole filesystem block 0 (read, patched, written), the unit the
 *     kernel writes it in;
 *   - a write that covers the superblock keeps the checksum the superblock
 *     has on disk (writer_int.h), so that it changes one 512-byte sector
 *     of it and a torn write leaves it old or new.
 * Optional hooks see every write, zeroing and flush after the channel
 * below has done it (the power-cut harness logs them, writer/iolog.c).
 *
 * The new channel owns the old one: ext2fs_close() closes both.  Pushing
 * several wrappers stacks them.
 */

struct iowrap_hooks {
	/* LEN bytes at byte OFFSET were read into DATA: patch them if need
	 * be (the journal's newer, not yet checkpointed blocks). */
	void (*read)(void *priv, uint64_t offset, uint64_t len, void *data);
	/* LEN bytes of DATA were written at byte OFFSET of the device. */
	errcode_t (*wrote)(void *priv, uint64_t offset, uint64_t len,
			   const void *data);
	/* LEN bytes at OFFSET were zeroed or discarded. */
	errcode_t (*zeroed)(void *priv, uint64_t offset, uint64_t len);
	/* Everything written so far is durable (io_channel_flush). */
	errcode_t (*flushed)(void *priv);
	/* The channel is being closed: release PRIV. */
	void (*closed)(void *priv);
};

/*
 * Stack a wrapper on FS's io channel.  HOOKS (may be NULL) and PRIV live
 * until the channel is closed; closed() is then called.  On failure
 * nothing changes and closed() is not called.
 */
errcode_t iowrap_push(ext2_filsys fs, const struct iowrap_hooks *hooks,
		      void *priv);

/*
 * Stop calling hooks on wrapper CH (fs->io just after its iowrap_push):
 * it goes on forwarding.  closed() is not called.
 */
void iowrap_unhook(io_channel ch);

/* Whether FS's channel is already such a wrapper (a second adds nothing). */
int iowrap_is_safe(ext2_filsys fs);

/*
 * Count the bytes written so far, and COMING more, in FS's superblock
 * (s_kbytes_written, "Lifetime writes"), as ext2fs_close would, and
 * hide them from ext2fs_close: called just before the superblock write
 * that ends a run (COMING: that write), it saves ext2fs_close a flush,
 * a trip to the superblock and a second flush.  Nothing without a
 * wrapper on FS, or where the superblock does not count writes.
 */
void iowrap_count_writes(ext2_filsys fs, unsigned long long coming);

/*
 * iolog.c --- record every write and flush a run makes to the device, for
 * the power-cut harness (tests/crash): a replay tool rebuilds the image as
 * a cut at any instant would leave it.
 *
 * In a build configured with --enable-iolog (never a default build: the
 * log holds every byte written, and the programs run as root), setting
 * E2FRAG_IOLOG=PATH makes e2defrag and the harness's own tools log the
 * writes of their read-write open to PATH (appending: iolog_attach_env
 * right after fsopen_open).  The log is a header followed by records, in
 * the order the writes reached the io channel:
 *   header   "E2FIOLG1" (8 bytes)
 *   record   uint32 type, uint32 0, uint64 offset, uint64 length
 *            (host byte order), then LENGTH bytes of data for a write.
 * A flush is a barrier: writes before it are durable after it; between two
 * flushes a disk may make any subset of the writes durable.
 */

#define IOLOG_MAGIC	"E2FIOLG1"
#define IOLOG_ENV	"E2FRAG_IOLOG"

enum iolog_type {
	IOLOG_WRITE = 'W',	/* data follows */
	IOLOG_ZERO  = 'Z',	/* zeroed or discarded: reads back as zeroes */
	IOLOG_FLUSH = 'F',	/* offset and length 0 */
};

struct iolog_record {
	uint32_t	type;
	uint32_t	reserved;
	uint64_t	offset;
	uint64_t	length;
};

/* Log FS's writes to PATH from now on (writer/writer.h). */
errcode_t iolog_attach(ext2_filsys fs, const char *path);

/*
 * iolog_attach to $E2FRAG_IOLOG when it is set and the build has
 * --enable-iolog; else nothing.
 */
errcode_t iolog_attach_env(ext2_filsys fs);

/*
 * exttree.c --- writing an extent tree: the one encoder of ext4's extent
 * tree format that e2defrag (a tree rebuilt for a moved file, full leaves)
 * and e2fragimg (a tree grown as the kernel grows it, by appending) share.
 *
 * The caller decides the shape: how many levels, which block each node
 * is in and how many entries it holds.  This file fills the nodes, in
 * logical order, with the extents and the index entries that point down,
 * sets each block's checksum (metadata_csum) and puts the top level in the
 * inode's i_block.
 */

#define EXTTREE_MAX_DEPTH	5	/* what ext4 allows (EXT4_MAX_EXTENT_DEPTH) */
#define EXTTREE_ROOT_MAX	4	/* entries in the inode's 60-byte i_block */

/* One extent of a file, in logical order. */
struct exttree_extent {
	blk64_t		lblk;
	blk64_t		pblk;
	uint32_t	len;	/* at most 32768 blocks, 32767 uninitialized */
	uint8_t		uninit;	/* unwritten (preallocated) */
};

/* A tree block: where it is and how many entries it holds. */
struct exttree_node {
	blk64_t		pblk;
	uint32_t	entries;
};

/*
 * The tree: level 0 the leaves, level DEPTH - 1 the one the inode points
 * to; ROOT entries in the inode.  DEPTH 0: the extents are in the inode.
 */
struct exttree_shape {
	unsigned		depth;
	uint32_t		root;
	uint32_t		nlevel[EXTTREE_MAX_DEPTH];
	const struct exttree_node *level[EXTTREE_MAX_DEPTH];
};

/*
 * Called with each tree block, leaves first, left to right: BLOCK is
 * fs->blocksize bytes from malloc, and the callee's to keep or to free,
 * even when it returns an error.
 */
typedef errcode_t (*exttree_emit_fn)(void *priv, blk64_t pblk, char *block);

/* Entries a tree block holds on FS. */
unsigned exttree_per_block(ext2_filsys fs);

/*
 * Write the tree of the NX extents X in SHAPE for inode INO: every block
 * through EMIT, the top level into I_BLOCK (EXT2_N_BLOCKS words, cleared
 * first).  EXT2_ET_EXTENT_HEADER_BAD when the shape and the extents
 * disagree (a bug in the caller, never bad input).
 */
errcode_t exttree_write(ext2_filsys fs, ext2_ino_t ino,
			const struct exttree_extent *x, uint64_t nx,
			const struct exttree_shape *shape, __u32 *i_block,
			exttree_emit_fn emit, void *priv);

#endif /* WRITER_H */
