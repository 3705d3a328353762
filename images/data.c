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
 * interleaved files end up written in long sequential runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

#define WRITER_BYTES	(8U << 20)
#define TAG_BYTES	32

errcode_t data_init(struct img *img)
{
	struct img_writer *w = &img->writer;

	memset(w, 0, sizeof(*w));
	w->cap = WRITER_BYTES / img->bs;
	w->buf = malloc(WRITER_BYTES);
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

errcode_t data_flush(struct img *img)
{
	struct img_writer *w = &img->writer;
	errcode_t ret;

	if (!w->n)
		return 0;
	ret = io_channel_write_blk64(img->fs->io, w->start, (int)w->n, w->buf);
	if (ret)
		return ret;
	w->bytes += w->n * img->bs;
	w->n = 0;
	return 0;
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
