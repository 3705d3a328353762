/*
 * data.c --- file contents: what they are and how they reach the image.
 *
 * Every data block is a pure function of (seed, file, logical block), so
 * any block in the wrong place changes its file's checksum, and a block
 * can be made again cheaply instead of being kept.  Each block starts
 * with a 32-byte text tag, "ino NNNNNNNNNN lblk NNNNNNNNNNN\n", so a hex
 * dump of the image shows whose block lies where; the rest is 64-bit
 * words from a per-block key, one add each (memory speed).
 *
 * Blocks go through one buffer that covers a physical range; it is
 * written out with one large write when the next block does not continue
 * the range.  The allocator hands out blocks in cursor order, so even
 * interleaved files end up written in long sequential runs.  A mapping or
 * directory block taken right at the end of the range keeps its place
 * in it as zeros (data_skip): it is written for real after all the data,
 * so the run need not be broken for it.
 *
 * Large writes bypass the page cache (O_DIRECT) where the filesystem
 * holding the image allows it: building a 4 GiB image then costs the
 * disk's time, not the kernel's for copying 4 GiB into the cache and
 * writing it back.  Small ones, which would each wait for the disk, and
 * all of them where O_DIRECT is refused (tmpfs, unaligned blocks), go
 * through the page cache with plain pwrite().  The kernel keeps the two
 * coherent.  Data never goes through libext2fs' I/O channel, whose
 * write-back cache could otherwise put an old copy of a reused block back
 * over a newer one; metadata goes through it after the last data write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2frag.h"
#include "img.h"

#define WRITER_BYTES	(8U << 20)
#define DIRECT_MIN	(1U << 20)	/* smaller writes go through the page cache */
#define TAG_BYTES	32

errcode_t data_init(struct img *img, const char *path)
{
	struct img_writer *w = &img->writer;
	void *buf = NULL;

	memset(w, 0, sizeof(*w));
	w->cap = WRITER_BYTES / img->bs;
	/* Aligned for O_DIRECT; zeroed, so no stale byte can reach the image. */
	if (posix_memalign(&buf, 4096, WRITER_BYTES) == 0)
		memset(buf, 0, WRITER_BYTES);
	w->buf = buf;
	w->dfd = open(path, O_WRONLY | O_DIRECT);
	w->fd = open(path, O_WRONLY);
	if (w->fd < 0)
		return errno;
	img->scratch = malloc(img->bs);
	img->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!w->buf || !img->scratch)
		return ENOMEM;
	if (!img->sha256)
		return E2F_ERR_BASE;	/* libcrypto without SHA-256: cannot happen */
	img->content_seed = rng_mix64(img->opts->seed ^ 0xc0a7e47ULL);
	return 0;
}

void data_cleanup(struct img *img)
{
	if (img->writer.fd >= 0)
		close(img->writer.fd);
	if (img->writer.dfd >= 0)
		close(img->writer.dfd);
	img->writer.fd = img->writer.dfd = -1;
	free(img->writer.buf);
	free(img->scratch);
	EVP_MD_free(img->sha256);
	img->writer.buf = img->scratch = NULL;
	img->sha256 = NULL;
}

/* Write V as exactly N decimal digits at P (the tag is fixed-width). */
static void put_digits(char *p, uint64_t v, int n)
{
	while (n--) {
		p[n] = (char)('0' + v % 10);
		v /= 10;
	}
}

void data_fill(const struct img *img, const struct img_file *f, blk64_t lblk,
	       blk64_t nblocks, void *buf)
{
	const uint64_t step = 0x9e3779b97f4a7c15ULL;
	uint64_t key = rng_mix64(img->content_seed ^ rng_mix64(f->serial));
	size_t words = img->bs / 8, i;
	uint64_t *w = buf, k;
	char *tag;
	blk64_t b;

	for (b = 0; b < nblocks; b++, w += words) {
		k = rng_mix64(key + lblk + b);
		for (i = TAG_BYTES / 8; i < words; i++)
			w[i] = k + i * step;
		tag = (char *)w;
		memcpy(tag, "ino ", 4);
		put_digits(tag + 4, f->ino, 10);
		memcpy(tag + 14, " lblk ", 6);
		put_digits(tag + 20, lblk + b, 11);
		tag[31] = '\n';
	}
}

/* Write the buffer with FD; EINVAL from O_DIRECT: not possible here. */
static errcode_t write_all(struct img *img, int fd)
{
	struct img_writer *w = &img->writer;
	size_t len = w->n * img->bs, done = 0;
	off_t off = (off_t)w->start * img->bs;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, w->buf + done, len - done, off + (off_t)done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return EIO;
		done += (size_t)n;
	}
	return 0;
}

errcode_t data_flush(struct img *img)
{
	struct img_writer *w = &img->writer;
	errcode_t ret = EINVAL;

	if (!w->n)
		return 0;
	if (w->dfd >= 0 && w->n * img->bs >= DIRECT_MIN) {
		ret = write_all(img, w->dfd);
		if (ret == EINVAL) {
			/* Not for this filesystem or alignment: buffered from now on. */
			close(w->dfd);
			w->dfd = -1;
		}
	}
	if (ret == EINVAL)
		ret = write_all(img, w->fd);
	if (ret)
		return ret;
	w->bytes += w->n * img->bs;
	w->n = 0;
	return 0;
}

void data_skip(struct img *img, blk64_t pblk)
{
	struct img_writer *w = &img->writer;

	if (w->n && pblk == w->start + w->n && w->n < w->cap) {
		memset(w->buf + w->n * img->bs, 0, img->bs);
		w->n++;
	}
}

errcode_t data_reserve(struct img *img, blk64_t pblk, blk64_t want,
		       char **buf, blk64_t *got)
{
	struct img_writer *w = &img->writer;
	errcode_t ret;

	if (w->n && (pblk != w->start + w->n || w->n == w->cap)) {
		ret = data_flush(img);
		if (ret)
			return ret;
	}
	if (!w->n)
		w->start = pblk;
	*got = want < w->cap - w->n ? want : w->cap - w->n;
	*buf = w->buf + w->n * img->bs;
	w->n += *got;
	return 0;
}
