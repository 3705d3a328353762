/*
 * verify.h --- reading back what a move wrote, past the page cache
 * (e2defrag --verify; verify.c says how and why).
 */
#ifndef DEFRAG_VERIFY_H
#define DEFRAG_VERIFY_H

#include <ext2fs/ext2fs.h>

struct verify;

/*
 * Open FS's device a second time for reading past the cache, with a
 * buffer of about BYTES.  errno values on failure.
 */
errcode_t verify_open(ext2_filsys fs, size_t bytes, struct verify **ret);

/* Whether the reads bypass the cache by O_DIRECT (else by a hint). */
int verify_direct(const struct verify *v);

/*
 * Read N blocks from BLK on the device and compare them with WANT
 * (N blocks).  E2D_ERR_VERIFY when they differ; an errno or
 * EXT2_ET_SHORT_READ when they cannot be read.
 */
errcode_t verify_blocks(struct verify *v, blk64_t blk, blk64_t n,
			const char *want);

void verify_close(struct verify *v);

#endif /* DEFRAG_VERIFY_H */
