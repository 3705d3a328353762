/*
 * journal.h --- a JBD2 writer for the internal journal (inode
 * s_journal_inum), enough for e2defrag's metadata: each file switch is one
 * transaction that the kernel and e2fsck replay after a crash.
 *
 * libext2fs 1.47 reads journals (e2fsck, debugfs) but has no API to write
 * one.  The on-disk format followed here is the kernel's (fs/jbd2,
 * include/linux/jbd2.h; e2fsprogs' lib/ext2fs/kernel-jbd.h and
 * e2fsck/recovery.c are the reader this must satisfy).
 *
 * A transaction's life:
 *   journal_start    the first time: needs_recovery set in the superblock
 *                    on disk (before the log can hold anything);
 *   journal_add      the new image of each metadata block it changes;
 *   journal_revoke   blocks freed by it that live transactions logged;
 *   journal_commit   revoke, descriptor and copy blocks (and the journal
 *                    superblock, when the log was empty; with checksums,
 *                    zeroes where the commit block goes) written, flush;
 *                    commit block, flush: the transaction is durable.
 * A checkpoint writes the blocks of the live transactions in place, flush;
 * then the journal superblock marks the log empty, flush.  It happens, as
 * in the kernel, when the log has no room for the next transaction, and
 * at journal_close, which then clears needs_recovery.  In between, the
 * disk lags behind the journal: journal_overlay() patches reads.
 *
 * Data blocks never enter the journal (ordered mode): the caller makes
 * them durable before journal_commit.
 */
#ifndef JOURNAL_H
#define JOURNAL_H

#include "e2frag.h"

struct journal;

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
 * cannot write stale metadata over what the blocks hold next.
 */
errcode_t journal_revoke(struct journal *j, const struct layout_piece *runs,
			 size_t n);

/*
 * If BLK was logged and is not yet checkpointed, copy its latest image to
 * BUF and return 1: the disk holds an older version.  Else 0.
 */
int journal_peek(struct journal *j, blk64_t blk, char *buf);

/*
 * Patch DATA, just read from LEN bytes at byte OFFSET of the device, with
 * the blocks live transactions logged: without checkpoints the disk lags
 * behind, and whoever reads the filesystem must see its current state.
 */
void journal_overlay(struct journal *j, uint64_t offset, uint64_t len,
		     void *data);

/* Commit the transaction (checkpointing first if the log is full). */
errcode_t journal_commit(struct journal *j);

/* Checkpoint and clear needs_recovery (unless JOURNAL_NO_CHECKPOINT). */
errcode_t journal_close(struct journal *j);

void journal_free(struct journal *j);

#endif /* JOURNAL_H */
