/*
 * verify.c --- e2defrag --verify: read back from the device what a move
 * wrote, before the switch, and compare it with what was meant.
 *
 * The read must reach the disk, not the page cache that still holds the
 * pages just written: a write the disk dropped or misplaced is then seen.
 * Two ways are usual:
 *   - O_DIRECT on a second descriptor, with aligned buffers: the kernel
 *     writes back any dirty page of the range and then reads from the
 *     device itself, for block devices and for regular image files on
 *     the filesystems that support it (ext4, xfs, btrfs...).  This is a
 *     guarantee of the interface.
 *   - posix_fadvise(POSIX_FADV_DONTNEED) after fdatasync, then a read: a
 *     hint only.  Pages that are mapped, locked or under writeback stay,
 *     and then the read is served from the cache without a word.
 * So O_DIRECT it is.  Where the open refuses it (EINVAL: tmpfs before
 * Linux 6.6 and a few others) the read goes through the cache after the
 * hint, which is all such a filesystem allows; on tmpfs the cache is the
 * storage.  verify_direct() says which one is in use.
 *
 * O_DIRECT wants the offset, length and buffer aligned to the device's
 * logical block: 4096 covers 512-byte and 4 KiB sectors, and a range of
 * 1 KiB filesystem blocks is widened to it and compared in the middle.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verify.h"
#include "e2d_err.h"

#define VERIFY_ALIGN	4096

struct verify {
	int	fd;
	int	direct;
	char	*buf;		/* VERIFY_ALIGN-aligned, bytes + 2 alignments */
	size_t	bytes;
	unsigned blocksize;
};

errcode_t verify_open(ext2_filsys fs, size_t bytes, struct verify **ret)
{
	struct verify *v;
	void *p = NULL;

	*ret = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return ENOMEM;
	v->blocksize = fs->blocksize;
	v->bytes = bytes < fs->blocksize ? fs->blocksize : bytes;
	v->bytes = (v->bytes + VERIFY_ALIGN - 1) / VERIFY_ALIGN * VERIFY_ALIGN;
	v->fd = open(fs->device_name, O_RDONLY | O_DIRECT | O_CLOEXEC);
	v->direct = v->fd >= 0;
	if (v->fd < 0 && errno == EINVAL)
		v->fd = open(fs->device_name, O_RDONLY | O_CLOEXEC);
	if (v->fd < 0) {
		errcode_t err = errno;

		free(v);
		return err;
	}
	if (posix_memalign(&p, VERIFY_ALIGN, v->bytes + 2 * VERIFY_ALIGN)) {
		close(v->fd);
		free(v);
		return ENOMEM;
	}
	v->buf = p;
	*ret = v;
	return 0;
}

int verify_direct(const struct verify *v)
{
	return v && v->direct;
}

void verify_close(struct verify *v)
{
	if (!v)
		return;
	close(v->fd);
	free(v->buf);
	free(v);
}

/* Read the aligned span around [OFF, OFF+LEN) into v->buf. */
static errcode_t read_span(struct verify *v, uint64_t off, size_t len,
			   char **at)
{
	uint64_t start = off / VERIFY_ALIGN * VERIFY_ALIGN;
	uint64_t end = (off + len + VERIFY_ALIGN - 1) / VERIFY_ALIGN * VERIFY_ALIGN;
	size_t got = 0, want = end - start;

	if (!v->direct) {
		/* The hint: write back, then drop the cached pages. */
		if (fdatasync(v->fd) < 0 && errno != EINVAL)
			return errno;
		(void)posix_fadvise(v->fd, (off_t)start, (off_t)want,
				    POSIX_FADV_DONTNEED);
	}
	while (got < want) {
		ssize_t n = pread(v->fd, v->buf + got, want - got,
				  (off_t)(start + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			break;	/* past the end: an image not a multiple of 4 KiB */
		got += (size_t)n;
	}
	if (got < off + len - start)
		return EXT2_ET_SHORT_READ;
	*at = v->buf + (off - start);
	return 0;
}

errcode_t verify_blocks(struct verify *v, blk64_t blk, blk64_t n,
			const char *want)
{
	blk64_t per = v->bytes / v->blocksize;

	while (n) {
		blk64_t k = n < per ? n : per;
		size_t len = (size_t)k * v->blocksize;
		char *at = NULL;
		errcode_t ret;

		ret = read_span(v, (uint64_t)blk * v->blocksize, len, &at);
		if (ret)
			return ret;
		if (memcmp(at, want, len))
			return E2D_ERR_VERIFY;
		blk += k;
		n -= k;
		want += len;
	}
	return 0;
}
