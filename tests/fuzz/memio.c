/*
 * memio.c --- the in-memory, read-only io_manager of memio.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memio.h"

struct memio {
	const uint8_t	*data;
	uint64_t	size;
};

void memio_name(char *buf, size_t len, const uint8_t *data, size_t size)
{
	snprintf(buf, len, "mem:%" PRIxPTR ":%zx", (uintptr_t)data, size);
}

static errcode_t memio_open(const char *name, int flags, io_channel *channel)
{
	struct memio *m = NULL;
	io_channel ch = NULL;
	uintptr_t addr;
	size_t size;
	errcode_t ret;

	if (!name || sscanf(name, "mem:%" SCNxPTR ":%zx", &addr, &size) != 2)
		return EXT2_ET_BAD_DEVICE_NAME;
	if (flags & IO_FLAG_RW)
		return EXT2_ET_RO_FILSYS;	/* only the read-only paths run here */
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
	m->data = (const uint8_t *)addr;
	m->size = size;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	ch->manager = memio_manager;
	ch->block_size = 1024;
	ch->refcount = 1;
	ch->private_data = m;
	*channel = ch;
	return 0;
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
