/*
 * qcow2_io.c --- a read-only io_manager over a qcow2 file, so that a dump
 * made with `e2image -Q` is read as the filesystem it came from.
 *
 * libext2fs can only convert qcow2 to a raw image (e2image -r), which
 * needs as much free space as the filesystem is large; bug reports come
 * as qcow2 because it is small.  The format (QEMU's, as e2image writes
 * it): a big-endian header, a one-level L1 table of L2 table offsets,
 * L2 tables of data cluster offsets; a zero entry reads as zeros.  Every
 * offset is checked against the file's size before it is used, so a
 * damaged or cut dump gives E2F_ERR_QCOW2_DAMAGED, never a read past the
 * end or a wild allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layout_int.h"

#define QCOW2_MAGIC		0x514649fbU	/* "QFI\xfb" */
#define QCOW2_OFFSET_MASK	0x00fffffffffffe00ULL
#define QCOW2_COMPRESSED	(1ULL << 62)
#define QCOW2_ZERO		1ULL		/* v3: the cluster reads as zeros */
#define QCOW2_MIN_HEADER	72
#define QCOW2_V3_HEADER		104

struct qcow2 {
	int		fd;
	uint64_t	file_bytes;
	uint64_t	size;		/* the filesystem's bytes */
	unsigned	cluster_bits;
	unsigned	l2_bits;	/* log2 of entries in an L2 table */
	uint32_t	l1_size;
	uint64_t	*l1;		/* host order */
	uint64_t	*l2;		/* the last L2 table read, host order */
	uint64_t	l2_offset;	/* where it came from; 0: none */
	int		version;
};

struct qcow2_channel {
	struct qcow2	q;
	int		block_size;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Read LEN bytes at OFF that must lie wholly inside the file. */
static errcode_t read_exact(const struct qcow2 *q, uint64_t off, void *buf,
			    size_t len)
{
	ssize_t n;

	if (off > q->file_bytes || len > q->file_bytes - off)
		return E2F_ERR_QCOW2_DAMAGED;
	while (len) {
		n = pread(q->fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		if (n == 0)
			return E2F_ERR_QCOW2_DAMAGED;	/* shrank under us */
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

int qcow2_io_is_dump(const unsigned char *head, size_t len)
{
	return len >= 4 && be32(head) == QCOW2_MAGIC;
}

static errcode_t qcow2_load(int fd, struct qcow2 *q)
{
	unsigned char h[QCOW2_V3_HEADER];
	uint64_t l1_offset, cluster, need, i;
	struct stat st;
	errcode_t ret;

	memset(q, 0, sizeof(*q));
	q->fd = fd;
	if (fstat(fd, &st) < 0)
		return errno;
	q->file_bytes = st.st_size;
	ret = read_exact(q, 0, h, QCOW2_MIN_HEADER);
	if (ret)
		return ret;
	if (be32(h) != QCOW2_MAGIC)
		return E2F_ERR_NOT_EXT;
	q->version = be32(h + 4);
	if (q->version != 2 && q->version != 3)
		return E2F_ERR_QCOW2_UNSUPPORTED;
	if (q->version == 3) {
		ret = read_exact(q, 0, h, QCOW2_V3_HEADER);
		if (ret)
			return ret;
		if (be64(h + 72))	/* incompatible features: dirty, external data, ... */
			return E2F_ERR_QCOW2_UNSUPPORTED;
	}
	if (be64(h + 8) || be32(h + 32))	/* a backing file; encryption */
		return E2F_ERR_QCOW2_UNSUPPORTED;
	q->cluster_bits = be32(h + 20);
	if (q->cluster_bits < 9 || q->cluster_bits > 21)
		return E2F_ERR_QCOW2_DAMAGED;
	q->l2_bits = q->cluster_bits - 3;
	q->size = be64(h + 24);
	q->l1_size = be32(h + 36);
	l1_offset = be64(h + 40);
	cluster = 1ULL << q->cluster_bits;
	/* e2image and QEMU write whole clusters: a tail is a cut copy. */
	if (q->file_bytes % cluster || q->size > (1ULL << 60))
		return E2F_ERR_QCOW2_DAMAGED;
	/* Clusters of the image, then L2 tables to map them. */
	need = (q->size + cluster - 1) >> q->cluster_bits;
	need = (need + (1ULL << q->l2_bits) - 1) >> q->l2_bits;
	if (q->l1_size < need || (uint64_t)q->l1_size * 8 > q->file_bytes)
		return E2F_ERR_QCOW2_DAMAGED;
	q->l1 = malloc((size_t)q->l1_size * 8 + 1);
	q->l2 = malloc(cluster);
	if (!q->l1 || !q->l2)
		return ENOMEM;
	ret = read_exact(q, l1_offset, q->l1, (size_t)q->l1_size * 8);
	if (ret)
		return ret;
	for (i = 0; i < q->l1_size; i++)
		q->l1[i] = be64((unsigned char *)&q->l1[i]);
	return 0;
}

static void qcow2_unload(struct qcow2 *q)
{
	free(q->l1);
	free(q->l2);
	q->l1 = q->l2 = NULL;
}

/* Where the cluster holding OFF is in the file: 0 when it reads as zeros. */
static errcode_t cluster_at(struct qcow2 *q, uint64_t off, uint64_t *where)
{
	uint64_t cluster = off >> q->cluster_bits;
	uint64_t l1i = cluster >> q->l2_bits;
	uint64_t l2i = cluster & ((1ULL << q->l2_bits) - 1);
	uint64_t l2_offset, entry, i;
	errcode_t ret;

	*where = 0;
	if (l1i >= q->l1_size)
		return E2F_ERR_QCOW2_DAMAGED;
	l2_offset = q->l1[l1i] & QCOW2_OFFSET_MASK;
	if (!l2_offset)
		return 0;
	if (l2_offset != q->l2_offset) {
		q->l2_offset = 0;
		ret = read_exact(q, l2_offset, q->l2, 1ULL << q->cluster_bits);
		if (ret)
			return ret;
		for (i = 0; i < (1ULL << q->l2_bits); i++)
			q->l2[i] = be64((unsigned char *)&q->l2[i]);
		q->l2_offset = l2_offset;
	}
	entry = q->l2[l2i];
	if (entry & QCOW2_COMPRESSED)
		return E2F_ERR_QCOW2_UNSUPPORTED;
	if (q->version == 3 && (entry & QCOW2_ZERO))
		return 0;
	*where = entry & QCOW2_OFFSET_MASK;
	return 0;
}

static errcode_t qcow2_read(struct qcow2 *q, uint64_t off, void *buf, size_t len)
{
	uint64_t cluster = 1ULL << q->cluster_bits, where, in, n;
	errcode_t ret;

	if (off > q->size || len > q->size - off)
		return EXT2_ET_SHORT_READ;
	while (len) {
		in = off & (cluster - 1);
		n = cluster - in < len ? cluster - in : len;
		ret = cluster_at(q, off, &where);
		if (ret)
			return ret;
		if (!where)
			memset(buf, 0, n);
		else if ((ret = read_exact(q, where + in, buf, n)))
			return ret;
		buf = (char *)buf + n;
		off += n;
		len -= n;
	}
	return 0;
}

errcode_t qcow2_io_dump_size(const char *path, uint64_t *bytes)
{
	struct qcow2 q;
	errcode_t ret;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	ret = qcow2_load(fd, &q);
	if (!ret)
		*bytes = q.size;
	qcow2_unload(&q);
	close(fd);
	return ret;
}

/* ------------------------------------------------------------ io_manager */

static struct struct_io_manager qcow2_manager;

static errcode_t q_open(const char *name, int flags, io_channel *ret_channel)
{
	struct qcow2_channel *qc = NULL;
	io_channel ch = NULL;
	errcode_t ret;
	int fd;

	if (flags & IO_FLAG_RW)
		return E2F_ERR_DUMP_READONLY;
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ch = calloc(1, sizeof(*ch));
	qc = calloc(1, sizeof(*qc));
	if (!ch || !qc || !(ch->name = strdup(name))) {
		ret = ENOMEM;
		goto fail;
	}
	ret = qcow2_load(fd, &qc->q);
	if (ret)
		goto fail;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = &qcow2_manager;
	ch->block_size = qc->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = qc;
	*ret_channel = ch;
	return 0;
fail:
	if (qc)
		qcow2_unload(&qc->q);
	free(qc);
	if (ch)
		free(ch->name);
	free(ch);
	close(fd);
	return ret;
}

static errcode_t q_close(io_channel ch)
{
	struct qcow2_channel *qc = ch->private_data;

	if (--ch->refcount > 0)
		return 0;
	close(qc->q.fd);
	qcow2_unload(&qc->q);
	free(qc);
	free(ch->name);
	free(ch);
	return 0;
}

static errcode_t q_set_blksize(io_channel ch, int blksize)
{
	struct qcow2_channel *qc = ch->private_data;

	if (blksize <= 0)	/* the reads divide by it */
		return EXT2_ET_INVALID_ARGUMENT;
	ch->block_size = qc->block_size = blksize;
	return 0;
}

static errcode_t q_read_blk64(io_channel ch, unsigned long long block,
			      int count, void *data)
{
	struct qcow2_channel *qc = ch->private_data;
	/* A negative count is bytes; negated in 64 bits, INT_MIN included. */
	uint64_t len = count < 0 ? (uint64_t)-(int64_t)count
				 : (uint64_t)count * qc->block_size;
	errcode_t ret;

	/*
	 * A block past the image's end is refused before block * block_size,
	 * which would wrap for a huge block number and read the start.
	 */
	if (block > qc->q.size / qc->block_size)
		ret = EXT2_ET_SHORT_READ;
	else
		ret = qcow2_read(&qc->q, block * qc->block_size, data, len);
	if (ret && ch->read_error)
		return ch->read_error(ch, block, count, data, len, 0, ret);
	return ret;
}

static errcode_t q_read_blk(io_channel ch, unsigned long block, int count,
			    void *data)
{
	return q_read_blk64(ch, block, count, data);
}

static errcode_t q_write_blk64(io_channel ch, unsigned long long block,
			       int count, const void *data)
{
	(void)ch; (void)block; (void)count; (void)data;
	return E2F_ERR_DUMP_READONLY;
}

static errcode_t q_write_blk(io_channel ch, unsigned long block, int count,
			     const void *data)
{
	return q_write_blk64(ch, block, count, data);
}

static errcode_t q_write_byte(io_channel ch, unsigned long offset, int count,
			      const void *data)
{
	(void)ch; (void)offset; (void)count; (void)data;
	return E2F_ERR_DUMP_READONLY;
}

static errcode_t q_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

static errcode_t q_set_option(io_channel ch, const char *option, const char *arg)
{
	(void)ch; (void)option; (void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}

static struct struct_io_manager qcow2_manager = {
	.magic		= EXT2_ET_MAGIC_IO_MANAGER,
	.name		= "qcow2 dump (read-only)",
	.open		= q_open,
	.close		= q_close,
	.set_blksize	= q_set_blksize,
	.read_blk	= q_read_blk,
	.write_blk	= q_write_blk,
	.flush		= q_flush,
	.write_byte	= q_write_byte,
	.set_option	= q_set_option,
	.read_blk64	= q_read_blk64,
	.write_blk64	= q_write_blk64,
};

io_manager qcow2_io_manager = &qcow2_manager;
