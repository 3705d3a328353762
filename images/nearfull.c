/*
 * nearfull.c --- the near-full disks users make with a today's kernel, on
 * which e2defrag has to do its hardest planning:
 *
 *   nearfull  a recordings disk kept --fill full: --streams recorders
 *             record in parallel, each programme from half a block group
 *             to three and a half (so it spans 2-4 zones), one after the
 *             other; each time the disk is full the oldest recordings are
 *             deleted and the recorders go on, --rounds times.
 *   turns     one big file written --chunk at a time, in turns with small
 *             files of --chunk each, until the disk is --fill full; then
 *             every other small file is deleted.
 *
 * Blocks come from mballoc.c (the kernel's allocator, which serves ext2
 * and ext3 too).  On ext4, delayed allocation: writes only dirty the page
 * cache, and the blocks are allocated when it is written back, file by
 * file in the order they were dirtied, every --sync bytes (and at the
 * end, the unmount).  ext2 and ext3 allocate at each write.
 *
 * With --script every operation is also written out, one a line, so that
 * bench/kernel-nearfull.sh can replay the same workload on a loop mount:
 *   create PATH | write PATH BYTES | close PATH | delete PATH | sync
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

#define MIB (1ULL << 20)

struct dirty {
	struct img_file	*file;
	uint64_t	bytes;		/* written, not yet allocated */
	int		closed;		/* closed while dirty */
};

/* The page cache between the workload and the allocator. */
struct cache {
	struct img	*img;
	FILE		*script;
	int		delalloc;
	uint64_t	sync_every, since_sync;
	struct dirty	*dirty;		/* in the order first dirtied */
	uint32_t	ndirty, dirty_cap;
	uint64_t	dirty_bytes;
};

static errcode_t say(struct cache *c, const char *op, struct img_file *f,
		     uint64_t bytes)
{
	char path[512];

	if (!c->script)
		return 0;
	if (f)
		file_path(f, path, sizeof(path));
	if (!f)
		fprintf(c->script, "%s\n", op);
	else if (bytes)
		fprintf(c->script, "%s %s %llu\n", op, path,
			(unsigned long long)bytes);
	else
		fprintf(c->script, "%s %s\n", op, path);
	return ferror(c->script) ? errno ? errno : EIO : 0;
}

/* Blocks in use as df sees them: allocated plus reserved for dirty data. */
static blk64_t used_blocks(const struct cache *c)
{
	return mb_used_blocks(c->img) + c->dirty_bytes / c->img->bs;
}

/*
 * Where a new file's blocks are first looked for.  Block-mapped files
 * (ext4_find_near): the start of the inode's group (plus the process'
 * colour, 0 here: one process replays the workload).  Extent files with
 * delayed allocation (ext4_inode_to_goal_block): the start of the group
 * after the first of the inode's flex group.
 */
static void first_goal(struct img *img, struct img_file *f)
{
	ext2_filsys fs = img->fs;
	dgrp_t g = ext2fs_group_of_ino(fs, f->ino), flex;

	if (img->extents && ext2fs_has_feature_flex_bg(fs->super)) {
		flex = 1U << fs->super->s_log_groups_per_flex;
		if (flex >= 4) {
			g &= ~(flex - 1);
			if (g + 1 < fs->group_desc_count)
				g++;
		}
	}
	f->map.goal = ext2fs_group_first_block2(fs, g);
}

static errcode_t c_create(struct cache *c, struct img_file *dir,
			  const char *name, struct img_file **f)
{
	errcode_t ret = file_create(c->img, dir, name, f);

	if (ret)
		return ret;
	first_goal(c->img, *f);
	return say(c, "create", *f, 0);
}

/* Write the dirty data back: allocate, file by file. */
static errcode_t c_sync(struct cache *c)
{
	errcode_t ret = 0;
	uint32_t i;

	for (i = 0; i < c->ndirty && !ret; i++) {
		ret = file_append(c->img, c->dirty[i].file, c->dirty[i].bytes);
		if (!ret && c->dirty[i].closed)
			ret = file_close(c->img, c->dirty[i].file);
	}
	c->ndirty = 0;
	c->dirty_bytes = 0;
	c->since_sync = 0;
	return ret ? ret : say(c, "sync", NULL, 0);
}

static errcode_t c_write(struct cache *c, struct img_file *f, uint64_t bytes)
{
	errcode_t ret;
	uint32_t i;

	ret = say(c, "write", f, bytes);
	if (ret)
		return ret;
	if (!c->delalloc) {
		/* write_begin maps the buffers one block at a time */
		uint64_t left = bytes, n;

		for (; left && !ret; left -= n) {
			n = c->img->bs - f->size % c->img->bs;
			n = n < left ? n : left;
			ret = file_append(c->img, f, n);
		}
	} else {
		for (i = 0; i < c->ndirty && c->dirty[i].file != f; i++)
			;
		if (i == c->ndirty) {
			ret = img_grow(&c->dirty, &c->dirty_cap, c->ndirty + 1,
				       sizeof(*c->dirty));
			if (ret)
				return ret;
			c->dirty[c->ndirty].file = f;
			c->dirty[c->ndirty].bytes = 0;
			c->dirty[c->ndirty].closed = 0;
			c->ndirty++;
		}
		c->dirty[i].bytes += bytes;
		c->dirty_bytes += bytes;
	}
	c->since_sync += bytes;
	if (!ret && c->sync_every && c->since_sync >= c->sync_every)
		ret = c_sync(c);
	return ret;
}

static errcode_t c_close(struct cache *c, struct img_file *f)
{
	errcode_t ret = say(c, "close", f, 0);
	uint32_t i;

	if (ret)
		return ret;
	for (i = 0; i < c->ndirty; i++) {
		if (c->dirty[i].file == f) {
			c->dirty[i].closed = 1;
			return 0;
		}
	}
	return file_close(c->img, f);
}

/* Delete a closed file; its data is written back first. */
static errcode_t c_delete(struct cache *c, struct img_file *f)
{
	errcode_t ret = 0;
	uint32_t i;

	for (i = 0; i < c->ndirty && !ret; i++)
		if (c->dirty[i].file == f)
			ret = c_sync(c);
	if (!ret)
		ret = say(c, "delete", f, 0);
	return ret ? ret : file_delete(c->img, f);
}

static errcode_t c_open(struct cache *c, struct img *img, uint64_t sync_every)
{
	c->img = img;
	c->delalloc = img->extents;
	c->sync_every = sync_every;
	img->mballoc = 1;
	img->last_group = 0;
	if (img->opts->script) {
		c->script = fopen(img->opts->script, "w");
		if (!c->script)
			return errno;
		fprintf(c->script, "# e2fragimg --workload %s --type %s --seed %llu: "
			"create PATH | write PATH BYTES | close PATH | delete PATH | sync\n",
			workload_name(img->opts->workload),
			fstype_name(img->opts->type),
			(unsigned long long)img->opts->seed);
	}
	return 0;
}

/* The end of the workload: write back, and the unmount drops the preallocations. */
static errcode_t c_close_all(struct cache *c, errcode_t ret)
{
	if (!ret)
		ret = c_sync(c);
	mb_finish(c->img);
	if (c->script && fclose(c->script) && !ret)
		ret = errno ? errno : EIO;
	c->script = NULL;
	free(c->dirty);
	return ret;
}

/* ---------------------------------------------------------- recorders */

struct recorder {
	struct img_file	*file;		/* the recording in progress, or NULL */
	uint64_t	left;
	unsigned	rate;		/* chunks per turn */
};

struct studio {
	struct cache	c;
	struct recorder	*rec;
	unsigned	n;
	blk64_t		target;
	uint64_t	min_size, max_size, chunk;
	unsigned	next_name;
	int32_t		set;		/* the recordings of this round */
	struct img_file	**live;		/* oldest first */
	uint32_t	nlive, live_cap;
};

static errcode_t start_recording(struct studio *s, struct recorder *r)
{
	struct img *img = s->c.img;
	char name[32];
	errcode_t ret;

	snprintf(name, sizeof(name), "rec%04u.ts", s->next_name++);
	ret = img_grow(&s->live, &s->live_cap, s->nlive + 1, sizeof(*s->live));
	if (!ret)
		ret = c_create(&s->c, img->root, name, &r->file);
	if (!ret)
		ret = set_add(img, s->set, r->file);
	if (ret)
		return ret;
	s->live[s->nlive++] = r->file;
	r->left = rng_range(&img->rng, s->min_size, s->max_size);
	r->rate = (unsigned)rng_range(&img->rng, 1, 4);
	return 0;
}

/*
 * The oldest finished recordings go until a fifth of the disk is free
 * below the fill level again.  Returns 0 with *GONE the number deleted.
 */
static errcode_t delete_oldest(struct studio *s, uint32_t *gone)
{
	blk64_t blocks = ext2fs_blocks_count(s->c.img->fs->super);
	blk64_t low = s->target > blocks / 5 ? s->target - blocks / 5 : 0;
	uint32_t i, kept = 0;
	unsigned k;
	errcode_t ret = 0;

	*gone = 0;
	for (i = 0; i < s->nlive; i++) {
		struct img_file *f = s->live[i];
		int recording = 0;

		for (k = 0; k < s->n; k++)
			recording |= s->rec[k].file == f;
		if (!ret && !recording && used_blocks(&s->c) > low) {
			ret = c_delete(&s->c, f);
			(*gone)++;
		} else {
			s->live[kept++] = f;
		}
	}
	s->nlive = kept;
	return ret;
}

/*
 * The recorders record in turns, programme after programme.  Each time
 * the disk is full the oldest recordings are deleted (a round; one set
 * per round); after the last round, or when nothing can be deleted, every
 * recording stops where it is.
 */
static errcode_t record(struct studio *s, unsigned rounds)
{
	errcode_t ret;
	uint32_t gone;
	unsigned i, k, round = 0;
	uint64_t w;

	ret = set_new(s->c.img, &s->set);
	while (!ret) {
		if (used_blocks(&s->c) >= s->target) {
			if (round++ == rounds)
				break;
			ret = c_sync(&s->c);
			if (!ret)
				ret = delete_oldest(s, &gone);
			if (ret || !gone)
				break;
			ret = set_new(s->c.img, &s->set);
			continue;
		}
		for (i = 0; i < s->n && !ret; i++) {
			struct recorder *r = &s->rec[i];

			if (!r->file)
				ret = start_recording(s, r);
			for (k = 0; k < r->rate && !ret && r->file; k++) {
				if (used_blocks(&s->c) >= s->target)
					break;
				w = r->left < s->chunk ? r->left : s->chunk;
				ret = c_write(&s->c, r->file, w);
				r->left -= w;
				if (!ret && !r->left) {
					ret = c_close(&s->c, r->file);
					r->file = NULL;
				}
			}
		}
	}
	/* Full: every recording stops where it is. */
	for (i = 0; i < s->n && !ret; i++) {
		if (s->rec[i].file)
			ret = c_close(&s->c, s->rec[i].file);
		s->rec[i].file = NULL;
	}
	return ret ? ret : c_sync(&s->c);
}

errcode_t wl_nearfull(struct img *img)
{
	const struct img_opts *o = img->opts;
	blk64_t blocks = ext2fs_blocks_count(img->fs->super);
	uint64_t zone = (uint64_t)EXT2_BLOCKS_PER_GROUP(img->fs->super) * img->bs;
	uint64_t cap = blocks * img->bs / 3;
	struct studio s = { .n = o->streams, .chunk = o->chunk };
	errcode_t ret;

	ret = c_open(&s.c, img, o->sync);
	s.rec = calloc(s.n, sizeof(*s.rec));
	if (!ret && !s.rec)
		ret = ENOMEM;
	s.target = blocks * o->fill / 100;
	s.min_size = zone / 2 < cap ? zone / 2 : cap / 4;
	s.max_size = zone * 7 / 2 < cap ? zone * 7 / 2 : cap;
	if (!ret)
		ret = record(&s, o->rounds);
	ret = c_close_all(&s.c, ret);
	free(s.rec);
	free(s.live);
	return ret;
}

/* -------------------------------------------------------------- turns */

errcode_t wl_turns(struct img *img)
{
	const struct img_opts *o = img->opts;
	blk64_t blocks = ext2fs_blocks_count(img->fs->super);
	blk64_t target = blocks * o->fill / 100, base = mb_used_blocks(img);
	blk64_t per = (o->chunk + img->bs - 1) / img->bs, t, nturns;
	struct img_file *big, **small = NULL;
	struct cache c = { 0 };
	char name[32];
	errcode_t ret;

	/* Each turn adds 2 chunks, until the disk is --fill full. */
	nturns = target > base ? (target - base) / (2 * per) : 0;
	ret = c_open(&c, img, o->sync);
	if (!ret && nturns) {
		small = calloc(nturns, sizeof(*small));
		if (!small)
			ret = ENOMEM;
	}
	if (!ret)
		ret = c_create(&c, img->root, "big.dat", &big);
	for (t = 0; t < nturns && !ret; t++) {
		ret = c_write(&c, big, o->chunk);
		if (!ret) {
			snprintf(name, sizeof(name), "s%06llu", (unsigned long long)t);
			ret = c_create(&c, img->root, name, &small[t]);
		}
		if (!ret)
			ret = c_write(&c, small[t], o->chunk);
		if (!ret)
			ret = c_close(&c, small[t]);
	}
	if (!ret)
		ret = c_close(&c, big);
	if (!ret)
		ret = c_sync(&c);
	for (t = 1; t < nturns && !ret; t += 2)
		ret = c_delete(&c, small[t]);
	ret = c_close_all(&c, ret);
	free(small);
	return ret;
}

/* ---------------------------------------------------------------- sizes */

void nearfull_need(const struct img_opts *o, struct img_need *need)
{
	uint64_t size = o->size, blocks;

	if (o->workload == WL_NEARFULL) {
		need->size = 64 * MIB;
		size = size ? size : need->size;
		blocks = size / o->block_size;
		/* at least 8 groups, so that recordings span several */
		if (blocks / 8 < 8ULL * o->block_size)
			need->blocks_per_group = blocks / 8 / 8 * 8;
		return;
	}
	need->size = 16 * MIB;
	size = size ? size : need->size;
	blocks = size / o->block_size;
	need->inodes += blocks * o->fill / 100 / 2 /
		((o->chunk + o->block_size - 1) / o->block_size);
}
