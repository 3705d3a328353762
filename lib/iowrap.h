/*
 * iowrap.h --- a stacked io channel slipped under an open filesystem.
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
 *     has on disk (supersector.h), so that it changes one 512-byte sector
 *     of it and a torn write leaves it old or new.
 * Optional hooks see every write, zeroing and flush after the channel
 * below has done it (the power-cut harness logs them, lib/iolog.c).
 *
 * The new channel owns the old one: ext2fs_close() closes both.  Pushing
 * several wrappers stacks them.
 */
#ifndef IOWRAP_H
#define IOWRAP_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>

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

#endif /* IOWRAP_H */
