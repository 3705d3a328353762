/*
 * iowrap.c --- a stacked io channel without write_byte; see writer.h.
 *
 * libext2fs reaches the device only through fs->io, so swapping that
 * channel for one of ours after the open is enough to see and shape every
 * write, whatever manager opened the filesystem (unix, undo, ...).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"
#include "writer_int.h"

struct iowrap {
	io_channel	inner;
	const struct iowrap_hooks *hooks;
	void		*priv;
	int		fs_blocksize;	/* the unit the superblock goes out in */
	/* get_stats shows the bytes written below less those already
	 * counted in the superblock's s_kbytes_written (iowrap_count_writes),
	 * so that ext2fs_close counts each byte once. */
	struct struct_io_stats shown;
	unsigned long long counted;
};

static errcode_t wrap_open(const char *name, int flags, io_channel *channel);
static errcode_t wrap_close(io_channel channel);
static errcode_t wrap_set_blksize(io_channel channel, int blksize);
static errcode_t wrap_read_blk(io_channel channel, unsigned long block,
			       int count, void *data);
static errcode_t wrap_write_blk(io_channel channel, unsigned long block,
				int count, const void *data);
static errcode_t wrap_flush(io_channel channel);
static errcode_t wrap_set_option(io_channel channel, const char *option,
				 const char *arg);
static errcode_t wrap_get_stats(io_channel channel, io_stats *stats);
static uint64_t request_bytes(io_channel channel, int count)
{
	return count < 0 ? (uint64_t)-(int64_t)count
			 : (uint64_t)count * channel->block_size;
}

static errcode_t wrap_read_blk64(io_channel channel, unsigned long long block,
				 int count, void *data);
static errcode_t wrap_write_blk64(io_channel channel, unsigned long long block,
				  int count, const void *data);
static errcode_t wrap_discard(io_channel channel, unsigned long long block,
			      unsigned long long count);
static errcode_t wrap_cache_readahead(io_channel channel,
				      unsigned long long block,
				      unsigned long long count);
static errcode_t wrap_zeroout(io_channel channel, unsigned long long block,
			      unsigned long long count);

/* No write_byte: see writer.h.  Never written to. */
static const struct struct_io_manager iowrap_manager = {
	.magic		= EXT2_ET_MAGIC_IO_MANAGER,
	.name		= "e2frag stacked I/O manager",
	.open		= wrap_open,
	.close		= wrap_close,
	.set_blksize	= wrap_set_blksize,
	.read_blk	= wrap_read_blk,
	.write_blk	= wrap_write_blk,
	.flush		= wrap_flush,
	.write_byte	= NULL,
	.set_option	= wrap_set_option,
	.get_stats	= wrap_get_stats,
	.read_blk64	= wrap_read_blk64,
	.write_blk64	= wrap_write_blk64,
	.discard	= wrap_discard,
	.cache_readahead = wrap_cache_readahead,
	.zeroout	= wrap_zeroout,
};

static struct iowrap *wrap_of(io_channel channel)
{
	return channel->private_data;
}

/* A wrapper is only ever made by iowrap_push, never opened by name. */
static errcode_t wrap_open(const char *name, int flags, io_channel *channel)
{
	(void)name;
	(void)flags;
	(void)channel;
	return EXT2_ET_UNIMPLEMENTED;
}

static errcode_t wrap_close(io_channel channel)
{
	struct iowrap *w = wrap_of(channel);
	errcode_t ret;

	if (--channel->refcount > 0)
		return 0;
	if (w->hooks && w->hooks->closed)
		w->hooks->closed(w->priv);
	ret = io_channel_close(w->inner);
	free(channel->name);
	free(w);
	free(channel);
	return ret;
}

static errcode_t wrap_set_blksize(io_channel channel, int blksize)
{
	errcode_t ret = io_channel_set_blksize(wrap_of(channel)->inner, blksize);

	if (!ret)
		channel->block_size = blksize;
	return ret;
}

static errcode_t wrap_read_blk64(io_channel channel, unsigned long long block,
				 int count, void *data)
{
	struct iowrap *w = wrap_of(channel);
	errcode_t ret = io_channel_read_blk64(w->inner, block, count, data);

	if (!ret && w->hooks && w->hooks->read)
		w->hooks->read(w->priv, (uint64_t)block * channel->block_size,
			       request_bytes(channel, count), data);
	return ret;
}

static errcode_t wrap_read_blk(io_channel channel, unsigned long block,
			       int count, void *data)
{
	return wrap_read_blk64(channel, block, count, data);
}

/*
 * When the LEN bytes of DATA for byte OFFSET cover the primary superblock,
 * *COPY is DATA with a superblock that keeps the checksum on disk
 * (writer_int.h): the write then changes one sector of it, and a torn
 * write leaves it old or new.  Else *COPY is NULL.
 */
static errcode_t keep_super_checksum(struct iowrap *w, uint64_t offset,
				     uint64_t len, const void *data,
				     char **copy)
{
	char *old = NULL;
	errcode_t ret;

	*copy = NULL;
	if (offset > SUPERBLOCK_OFFSET ||
	    offset + len < SUPERBLOCK_OFFSET + SUPERBLOCK_SIZE)
		return 0;
	ret = ext2fs_get_mem(SUPERBLOCK_OFFSET + SUPERBLOCK_SIZE, &old);
	if (!ret)
		ret = io_channel_read_blk64(w->inner, 0,
					    -(SUPERBLOCK_OFFSET + SUPERBLOCK_SIZE),
					    old);
	if (!ret)
		ret = ext2fs_get_mem(len, copy);
	if (!ret) {
		memcpy(*copy, data, len);
		supersector_keep_checksum((unsigned char *)old + SUPERBLOCK_OFFSET,
					  (unsigned char *)*copy +
					  (SUPERBLOCK_OFFSET - offset));
	}
	ext2fs_free_mem(&old);
	return ret;
}

/*
 * Write COUNT (io channel units: LEN bytes) at BLOCK (byte OFFSET) below,
 * and tell the hooks.
 */
static errcode_t write_through(struct iowrap *w, unsigned long long block,
			       int count, uint64_t offset, uint64_t len,
			       const void *data)
{
	char *copy;
	errcode_t ret;

	ret = keep_super_checksum(w, offset, len, data, &copy);
	if (ret)
		return ret;
	if (copy)
		data = copy;
	ret = io_channel_write_blk64(w->inner, block, count, data);
	if (!ret && w->hooks && w->hooks->wrote)
		ret = w->hooks->wrote(w->priv, offset, len, data);
	ext2fs_free_mem(&copy);
	return ret;
}

/*
 * The superblock alone (what write_primary_superblock's fallback writes)
 * on a filesystem with blocks over 1 KiB: write filesystem block 0 whole
 * instead, the way the kernel does, so that no write covers a part of the
 * block the superblock shares with the boot sector.
 */
static errcode_t write_super_block(struct iowrap *w, const void *super)
{
	char *buf = NULL;
	errcode_t ret;

	ret = ext2fs_get_mem(w->fs_blocksize, &buf);
	if (ret)
		return ret;
	ret = io_channel_read_blk64(w->inner, 0, -w->fs_blocksize, buf);
	if (ret)
		goto errout;
	memcpy(buf + SUPERBLOCK_OFFSET, super, SUPERBLOCK_SIZE);
	ret = write_through(w, 0, -w->fs_blocksize, 0, w->fs_blocksize, buf);
errout:
	ext2fs_free_mem(&buf);
	return ret;
}

static errcode_t wrap_write_blk64(io_channel channel, unsigned long long block,
				  int count, const void *data)
{
	struct iowrap *w = wrap_of(channel);
	uint64_t offset = (uint64_t)block * channel->block_size;
	uint64_t len = request_bytes(channel, count);

	if (offset == SUPERBLOCK_OFFSET && len == SUPERBLOCK_SIZE &&
	    w->fs_blocksize > SUPERBLOCK_OFFSET)
		return write_super_block(w, data);
	return write_through(w, block, count, offset, len, data);
}

static errcode_t wrap_write_blk(io_channel channel, unsigned long block,
				int count, const void *data)
{
	return wrap_write_blk64(channel, block, count, data);
}

static errcode_t wrap_flush(io_channel channel)
{
	struct iowrap *w = wrap_of(channel);
	errcode_t ret = io_channel_flush(w->inner);

	if (!ret && w->hooks && w->hooks->flushed)
		ret = w->hooks->flushed(w->priv);
	return ret;
}

static errcode_t wrap_set_option(io_channel channel, const char *option,
				 const char *arg)
{
	io_channel inner = wrap_of(channel)->inner;

	if (!inner->manager->set_option)
		return EXT2_ET_INVALID_ARGUMENT;
	return inner->manager->set_option(inner, option, arg);
}

static errcode_t wrap_get_stats(io_channel channel, io_stats *stats)
{
	struct iowrap *w = wrap_of(channel);
	io_stats below = NULL;
	errcode_t ret;

	*stats = NULL;
	if (!w->inner->manager->get_stats)
		return 0;
	ret = w->inner->manager->get_stats(w->inner, &below);
	if (ret || !below)
		return ret;
	w->shown = *below;
	w->shown.bytes_written = below->bytes_written > w->counted ?
				 below->bytes_written - w->counted : 0;
	*stats = &w->shown;
	return 0;
}

void iowrap_count_writes(ext2_filsys fs, unsigned long long coming)
{
	io_stats s = NULL;
	struct iowrap *w;
	unsigned long long before;

	/* ext2fs_close's rule: only a superblock that counts them. */
	if (!iowrap_is_safe(fs) || !fs->super->s_kbytes_written ||
	    wrap_get_stats(fs->io, &s) || !s)
		return;
	w = wrap_of(fs->io);
	before = w->counted;
	w->counted += s->bytes_written + coming;
	fs->super->s_kbytes_written += (w->counted >> 10) - (before >> 10);
}

static errcode_t zeroed(io_channel channel, unsigned long long block,
			unsigned long long count)
{
	struct iowrap *w = wrap_of(channel);

	if (!w->hooks || !w->hooks->zeroed)
		return 0;
	return w->hooks->zeroed(w->priv, (uint64_t)block * channel->block_size,
				(uint64_t)count * channel->block_size);
}

static errcode_t wrap_discard(io_channel channel, unsigned long long block,
			      unsigned long long count)
{
	errcode_t ret = io_channel_discard(wrap_of(channel)->inner, block, count);

	return ret ? ret : zeroed(channel, block, count);
}

static errcode_t wrap_zeroout(io_channel channel, unsigned long long block,
			      unsigned long long count)
{
	errcode_t ret = io_channel_zeroout(wrap_of(channel)->inner, block, count);

	return ret ? ret : zeroed(channel, block, count);
}

static errcode_t wrap_cache_readahead(io_channel channel,
				      unsigned long long block,
				      unsigned long long count)
{
	return io_channel_cache_readahead(wrap_of(channel)->inner, block, count);
}

void iowrap_unhook(io_channel ch)
{
	if (ch && ch->manager == &iowrap_manager) {
		wrap_of(ch)->hooks = NULL;
		wrap_of(ch)->priv = NULL;
	}
}

int iowrap_is_safe(ext2_filsys fs)
{
	return fs->io && fs->io->manager == &iowrap_manager;
}

errcode_t iowrap_push(ext2_filsys fs, const struct iowrap_hooks *hooks,
		      void *priv)
{
	io_channel inner = fs->io, ch = NULL;
	struct iowrap *w = NULL;
	errcode_t ret = EXT2_ET_NO_MEMORY;

	ch = calloc(1, sizeof(*ch));
	w = calloc(1, sizeof(*w));
	if (!ch || !w)
		goto errout;
	ch->name = strdup(inner->name ? inner->name : "");
	if (!ch->name)
		goto errout;
	w->inner = inner;
	w->hooks = hooks;
	w->priv = priv;
	w->fs_blocksize = fs->blocksize;
	ch->magic = EXT2_ET_MAGIC_IO_CHANNEL;
	/* libext2fs never writes through fs->io->manager; the cast is safe. */
	ch->manager = (io_manager)&iowrap_manager;
	ch->block_size = inner->block_size;
	ch->refcount = 1;
	ch->flags = inner->flags;
	ch->private_data = w;
	ch->app_data = inner->app_data;
	ch->align = inner->align;
	/* fs->image_io is the same channel unless an image file is open. */
	if (fs->image_io == inner)
		fs->image_io = ch;
	fs->io = ch;
	return 0;
errout:
	if (ch)
		free(ch->name);
	free(ch);
	free(w);
	return ret;
}
