/*
 * memio.c --- the in-memory io_managers of memio.h: read-only over the
 * input, and writable over a copy of it (memimg).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "memio.h"

struct memio {
	const uint8_t	*data;
	uint8_t		*wdata;		/* memimg: the same bytes, writable */
	uint64_t	size;
};

/* The one writable image open (memimg_open), found by its name. */
static struct memimg *open_img;

void memio_name(char *buf, size_t len, const uint8_t *data, size_t size)
{
	snprintf(buf, len, "mem:%" PRIxPTR ":%zx", (uintptr_t)data, size);
}

static errcode_t channel_new(const char *name, io_manager manager,
			     const uint8_t *data, uint8_t *wdata, size_t size,
			     io_channel *channel)
{
	struct memio *m = NULL;
	io_channel ch = NULL;
	errcode_t ret;

	ret = ext2fs_get_memzero(sizeof(*ch), &ch);
	if (!ret)
		ret = ext2fs_get_memzero(sizeof(*m), &m);
	if (!ret)
		ret = ext2fs_get_mem(strlen(name) + 1, &ch->name);
	if (ret) {
		ext2fs_free_mem(&m);
		ext2fs_free_mem(&ch);
		return ret;
	}
	strcpy(ch->name, name);
	m->data = data;
	m->wdata = wdata;
	m->size = size;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = m;
	*channel = ch;
	return 0;
}

static errcode_t memio_open(const char *name, int flags, io_channel *channel)
{
	uintptr_t addr;
	size_t size;

	if (!name || sscanf(name, "mem:%" SCNxPTR ":%zx", &addr, &size) != 2)
		return EXT2_ET_BAD_DEVICE_NAME;
	if (flags & IO_FLAG_RW)
		return EXT2_ET_RO_FILSYS;	/* only the read-only paths run here */
	return channel_new(name, memio_manager, (const uint8_t *)addr, NULL,
			   size, channel);
}

static errcode_t memimg_channel_open(const char *name, int flags,
				     io_channel *channel)
{
	(void)flags;
	if (!name || !open_img || strcmp(name, open_img->name))
		return EXT2_ET_BAD_DEVICE_NAME;
	return channel_new(name, memimg_manager, open_img->data, open_img->data,
			   open_img->size, channel);
}

static errcode_t memio_close(io_channel ch)
{
	if (--ch->refcount > 0)
		return 0;
	ext2fs_free_mem(&ch->private_data);
	ext2fs_free_mem(&ch->name);
	ext2fs_free_mem(&ch);
	return 0;
}

static errcode_t memio_set_blksize(io_channel ch, int blksize)
{
	ch->block_size = blksize;
	return 0;
}

static errcode_t memio_read_blk64(io_channel ch, unsigned long long block,
				  int count, void *data)
{
	const struct memio *m = ch->private_data;
	uint64_t len = count < 0 ? (uint64_t)-(int64_t)count :
		(uint64_t)count * ch->block_size;
	uint64_t off, have;

	/* Past the end (or an offset that does not fit 64 bits): nothing. */
	if (block > UINT64_MAX / ch->block_size ||
	    (off = block * ch->block_size) >= m->size)
		have = 0;
	else
		have = m->size - off < len ? m->size - off : len;
	if (have)
		memcpy(data, m->data + off, have);
	if (have < len) {
		memset((char *)data + have, 0, len - have);
		return EXT2_ET_SHORT_READ;
	}
	return 0;
}

static errcode_t memio_read_blk(io_channel ch, unsigned long block, int count,
				void *data)
{
	return memio_read_blk64(ch, block, count, data);
}

/* The read-only paths must not write: say where, and stop. */
static errcode_t memio_write(const char *what)
{
	fprintf(stderr, "memio: %s on a read-only path\n", what);
	abort();
}

static errcode_t memio_write_blk64(io_channel ch, unsigned long long block,
				   int count, const void *data)
{
	(void)ch; (void)block; (void)count; (void)data;
	return memio_write("a write");
}

static errcode_t memio_write_blk(io_channel ch, unsigned long block, int count,
				 const void *data)
{
	return memio_write_blk64(ch, block, count, data);
}

static errcode_t memio_write_byte(io_channel ch, unsigned long offset,
				  int count, const void *data)
{
	(void)ch; (void)offset; (void)count; (void)data;
	return memio_write("a write");
}

static errcode_t memio_discard(io_channel ch, unsigned long long block,
			       unsigned long long count)
{
	(void)ch; (void)block; (void)count;
	return memio_write("a discard");
}

static errcode_t memio_flush(io_channel ch)
{
	(void)ch;
	return 0;
}

static errcode_t memio_set_option(io_channel ch, const char *option,
				  const char *arg)
{
	(void)ch; (void)option; (void)arg;
	return EXT2_ET_INVALID_ARGUMENT;
}

/* memimg: writes land in the copy; none may reach past its end. */
static errcode_t span(io_channel ch, unsigned long long block, int count,
		      uint64_t *off, uint64_t *len)
{
	const struct memio *m = ch->private_data;

	*len = count < 0 ? (uint64_t)-(int64_t)count :
		(uint64_t)count * ch->block_size;
	if (block > UINT64_MAX / ch->block_size)
		return EXT2_ET_SHORT_WRITE;
	*off = block * ch->block_size;
	if (*off > m->size || m->size - *off < *len)
		return EXT2_ET_SHORT_WRITE;
	return 0;
}

static errcode_t memimg_write_blk64(io_channel ch, unsigned long long block,
				    int count, const void *data)
{
	const struct memio *m = ch->private_data;
	uint64_t off, len;
	errcode_t ret = span(ch, block, count, &off, &len);

	if (!ret)
		memcpy(m->wdata + off, data, len);
	return ret;
}

static errcode_t memimg_write_blk(io_channel ch, unsigned long block,
				  int count, const void *data)
{
	return memimg_write_blk64(ch, block, count, data);
}

static errcode_t memimg_write_byte(io_channel ch, unsigned long offset,
				   int count, const void *data)
{
	const struct memio *m = ch->private_data;

	if (count < 0 || offset > m->size || m->size - offset < (uint64_t)count)
		return EXT2_ET_SHORT_WRITE;
	memcpy(m->wdata + offset, data, count);
	return 0;
}

static errcode_t memimg_zeroout(io_channel ch, unsigned long long block,
				unsigned long long count)
{
	const struct memio *m = ch->private_data;
	uint64_t off, len;
	errcode_t ret;

	if (count > INT32_MAX)
		return EXT2_ET_SHORT_WRITE;
	ret = span(ch, block, (int)count, &off, &len);
	if (!ret)
		memset(m->wdata + off, 0, len);
	return ret;
}

errcode_t memimg_open(struct memimg *img, const uint8_t *data, size_t size)
{
	void *p;

	memset(img, 0, sizeof(*img));
	img->fd = memfd_create("e2defrag-fuzz", MFD_CLOEXEC);
	if (img->fd < 0)
		return errno;
	if (ftruncate(img->fd, (off_t)size) < 0 ||
	    (p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, img->fd,
		      0)) == MAP_FAILED) {
		errcode_t err = errno;

		close(img->fd);
		img->fd = -1;
		return err;
	}
	img->data = p;
	img->size = size;
	memcpy(img->data, data, size);
	snprintf(img->name, sizeof(img->name), "/proc/self/fd/%d", img->fd);
	open_img = img;
	return 0;
}

void memimg_close(struct memimg *img)
{
	if (img->data)
		munmap(img->data, img->size);
	if (img->fd >= 0)
		close(img->fd);
	if (open_img == img)
		open_img = NULL;
	memset(img, 0, sizeof(*img));
	img->fd = -1;
}

static struct struct_io_manager memio_struct = {
	.magic		= EXT2_ET_MAGIC_IO_MANAGER,
	.name		= "memory I/O (fuzzing)",
	.open		= memio_open,
	.close		= memio_close,
	.set_blksize	= memio_set_blksize,
	.read_blk	= memio_read_blk,
	.write_blk	= memio_write_blk,
	.flush		= memio_flush,
	.write_byte	= memio_write_byte,
	.set_option	= memio_set_option,
	.read_blk64	= memio_read_blk64,
	.write_blk64	= memio_write_blk64,
	.discard	= memio_discard,
	.zeroout	= memio_discard,
};

io_manager memio_manager = &memio_struct;

static struct struct_io_manager memimg_struct = {
	.magic		= EXT2_ET_MAGIC_IO_MANAGER,
	.name		= "writable memory I/O (fuzzing)",
	.open		= memimg_channel_open,
	.close		= memio_close,
	.set_blksize	= memio_set_blksize,
	.read_blk	= memio_read_blk,
	.write_blk	= memimg_write_blk,
	.flush		= memio_flush,
	.write_byte	= memimg_write_byte,
	.set_option	= memio_set_option,
	.read_blk64	= memio_read_blk64,
	.write_blk64	= memimg_write_blk64,
	.discard	= memimg_zeroout,
	.zeroout	= memimg_zeroout,
};

io_manager memimg_manager = &memimg_struct;
