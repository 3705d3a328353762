/*
 * move.c --- move one file to its planned blocks, crash-safe.
 *
 * The order is doc/design.md's: the new blocks are chosen free (on disk and in
 * fs->block_map; switch_add() marks them), the data is copied and the
 * new mapping blocks written into them, and switch_add() makes the file
 * use them and release the old ones in memory; the batch's commit flushes
 * all of it and makes the switches durable in one step (group commit,
 * writer.h).  Until that step the file is untouched on disk, so
 * a cancel (or a crash) before it leaves the old layout whole.
 *
 * The map is read again here, not taken from the plan: what is on disk
 * decides which blocks are copied and which stay, and every block the
 * file gains is checked free in the bitmap before anything is written.
 * Data moves in large I/O: consecutive destination runs are gathered in
 * one buffer (several reads of the source pieces) and written at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "verify.h"
#include "writer.h"
#include "array.h"

errcode_t move_init(struct move_ctx *c, ext2_filsys fs, struct switch_ctx *sw,
		    size_t buffer_bytes)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->sw = sw;
	if (!buffer_bytes)
		buffer_bytes = MOVE_DEFAULT_BUFFER;
	c->buf_blocks = buffer_bytes / fs->blocksize;
	if (!c->buf_blocks)
		c->buf_blocks = 1;
	return ext2fs_get_mem(c->buf_blocks * fs->blocksize, &c->buf);
}

void move_fini(struct move_ctx *c)
{
	ext2fs_free_mem(&c->buf);
	verify_close(c->verify);
	c->verify = NULL;
}

static int report(struct move_ctx *c)
{
	return c->progress && c->progress(c->progress_priv, E2F_PHASE_MOVE,
					  c->done, c->total);
}

/* Every gained block free in the bitmap and inside the filesystem. */
static errcode_t check_free(ext2_filsys fs, const struct fmap_rebuild *r)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super);
	size_t i;

	for (i = 0; i < r->ngained; i++) {
		const struct layout_piece *g = &r->gained[i];

		if (g->start < first || g->start + g->len > end || !g->len)
			return E2D_ERR_NOT_FREE;
		if (!ext2fs_test_block_bitmap_range2(fs->block_map, g->start, g->len))
			return E2D_ERR_NOT_FREE;
	}
	return 0;
}

static int cmp_copy_dst(const void *a, const void *b)
{
	const struct copy_op *x = a, *y = b;

	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Write what the buffer holds for destination DST, N blocks. */
static errcode_t write_batch(struct move_ctx *c, blk64_t dst, blk64_t n)
{
	errcode_t ret;

	ret = io_channel_write_blk64(c->fs->io, dst, (int)n, c->buf);
	if (ret)
		return ret;
	c->done += n;
	c->written += n;
	c->copied += n;
	return report(c) ? E2F_ERR_CANCELLED : 0;
}

/*
 * --verify: what the device holds at DST, read past the cache, against
 * the source the buffer was filled from (still the file's: the switch
 * is not made yet).
 */
static errcode_t verify_batch(struct move_ctx *c, blk64_t dst, blk64_t n)
{
	return verify_blocks(c->verify, dst, n, c->buf);
}

typedef errcode_t (*batch_fn)(struct move_ctx *c, blk64_t dst, blk64_t n);

/*
 * Gather the source blocks of R's copies, in destination order, into the
 * buffer, and hand each run of consecutive destinations to BATCH (one
 * large I/O however small the source pieces).
 */
static errcode_t gather_copies(struct move_ctx *c, struct fmap_rebuild *r,
			       batch_fn batch)
{
	ext2_filsys fs = c->fs;
	blk64_t batch_dst = 0, batch_n = 0;
	size_t i;
	errcode_t ret;

	sort_n(r->copies, r->ncopies, sizeof(*r->copies), cmp_copy_dst);
	for (i = 0; i < r->ncopies; i++) {
		blk64_t src = r->copies[i].src, dst = r->copies[i].dst;
		blk64_t left = r->copies[i].len;

		while (left) {
			blk64_t n;

			if (batch_n && (batch_dst + batch_n != dst ||
					batch_n == c->buf_blocks)) {
				ret = batch(c, batch_dst, batch_n);
				if (ret)
					return ret;
				batch_n = 0;
			}
			if (!batch_n)
				batch_dst = dst;
			n = c->buf_blocks - batch_n < left ? c->buf_blocks - batch_n : left;
			ret = io_channel_read_blk64(fs->io, src, (int)n,
						    c->buf + batch_n * fs->blocksize);
			if (ret)
				return ret;
			batch_n += n;
			src += n;
			dst += n;
			left -= n;
		}
	}
	return batch_n ? batch(c, batch_dst, batch_n) : 0;
}

/*
 * --verify: the copies and the new mapping blocks read back.  A
 * difference fails the move before the switch: the file keeps its old
 * blocks, and the new ones were never marked in use.
 */
static errcode_t verify_copy(struct move_ctx *c, struct fmap_rebuild *r)
{
	size_t i;
	errcode_t ret;

	ret = gather_copies(c, r, verify_batch);
	for (i = 0; i < r->nwrites && !ret; i++)
		ret = verify_blocks(c->verify, r->writes[i].pblk, 1,
				    r->writes[i].buf);
	return ret;
}

/*
 * Step 1, reserve: read INO's map as it is on disk, rebuild it at its
 * target (its pieces after CHANGES, META for its new mapping blocks).
 * Nothing is marked: the bitmap changes only in the switch.  E2D_ERR_PLAN_CONFLICT when the
 * target does not fit the map on disk: the plan and the disk disagree.
 */
static errcode_t move_reserve(ext2_filsys fs, ext2_ino_t ino,
			      const struct runs_change *changes, size_t nchanges,
			      const struct layout_piece *meta, size_t nmeta,
			      struct fmap *m, struct fmap_rebuild *r)
{
	struct layout_piece *now = NULL, *to = NULL;
	size_t nnow = 0, nto = 0;
	struct fmap_target t;
	int fits = 0;
	errcode_t ret;

	ret = fmap_read(fs, ino, m);
	if (ret)
		return ret;
	ret = runs_of_fmap(m, &now, &nnow);
	if (!ret)
		ret = runs_apply(now, nnow, changes, nchanges, &to, &nto, &fits);
	if (!ret && fits) {
		t.runs = to;
		t.nruns = nto;
		ret = fmap_build_rebuild(fs, m, &t, meta, nmeta, r, &fits);
	}
	if (!ret && !fits)
		ret = E2D_ERR_PLAN_CONFLICT;
	free(now);
	free(to);
	return ret;
}

/* Step 2, copy: the data, then the new mapping blocks, into new blocks. */
static errcode_t move_copy(struct move_ctx *c, struct fmap_rebuild *r)
{
	errcode_t ret;
	size_t i;

	ret = gather_copies(c, r, write_batch);
	for (i = 0; !ret && i < r->nwrites; i++) {
		ret = io_channel_write_blk64(c->fs->io, r->writes[i].pblk, 1,
					     r->writes[i].buf);
		if (!ret)
			c->written++;
	}
	return ret;
}

/*
 * Step 3, flush: everything the new map points at is on disk before the
 * switch is.  The batch's commit flushes (switch_add); --verify flushes
 * here, to read the move back and compare before its switch.
 */
static errcode_t move_flush(struct move_ctx *c, struct fmap_rebuild *r)
{
	errcode_t ret;

	if (!c->verify)
		return 0;
	ret = io_channel_flush(c->fs->io);
	return ret ? ret : verify_copy(c, r);
}

/*
 * Before anything is written: blocks a move of the open batch released
 * are not free until that batch is durable (writer.h), so a move that
 * gains one commits the batch first; then every gained block is checked
 * free.
 */
static errcode_t move_claim(struct move_ctx *c, const struct fmap_rebuild *r,
			    struct move_stats *st)
{
	errcode_t ret;

	if (switch_would_reuse(c->sw, r->gained, r->ngained)) {
		c->reuse_commits++;
		ret = switch_commit(c->sw);
		if (ret) {
			st->switch_failed = 1;
			return ret;
		}
		c->batch_blocks = 0;
	}
	return check_free(c->fs, r);
}

/*
 * Step 4, switch; step 5, free: the inode takes its new map and the old
 * blocks are released, in the batch's one durable step (switch_add, made
 * durable by switch_commit: when the batch is full, at a stop, at the end).
 */
static errcode_t move_switch(struct move_ctx *c, ext2_ino_t ino,
			     struct fmap *m, struct fmap_rebuild *r,
			     struct move_stats *st)
{
	ext2_filsys fs = c->fs;
	struct ext2_inode_large *inode = (struct ext2_inode_large *)m->inode;
	errcode_t ret;

	copy_n(inode->i_block, r->i_block, sizeof(inode->i_block));
	ret = ext2fs_iblk_sub_blocks(fs, (struct ext2_inode *)inode,
				     r->released_blocks);
	if (!ret)
		ret = ext2fs_iblk_add_blocks(fs, (struct ext2_inode *)inode,
					     r->gained_blocks);
	if (ret)
		return ret;
	ret = switch_add(c->sw, ino, inode, r->gained, r->ngained,
			 r->released, r->nreleased);
	if (ret)
		/* A refusal before anything changed fails this file only. */
		st->switch_failed = switch_is_failed(c->sw);
	else
		st->switched = 1;
	return ret;
}

errcode_t move_file(struct move_ctx *c, ext2_ino_t ino,
		    const struct runs_change *changes, size_t nchanges,
		    const struct layout_piece *meta, size_t nmeta,
		    struct move_stats *st)
{
	blk64_t copied0 = c->copied, written0 = c->written;
	struct fmap m;
	struct fmap_rebuild r;
	errcode_t ret;

	memset(st, 0, sizeof(*st));
	memset(&r, 0, sizeof(r));
	memset(&m, 0, sizeof(m));
	ret = move_reserve(c->fs, ino, changes, nchanges, meta, nmeta, &m, &r);
	if (ret || (!r.ngained && !r.nreleased))
		goto out;	/* failed, or already there */
	ret = move_claim(c, &r, st);
	if (!ret)
		ret = move_copy(c, &r);
	if (!ret)
		ret = move_flush(c, &r);
	if (!ret)
		ret = move_switch(c, ino, &m, &r, st);
	if (!ret && switch_batch_size(c->sw) == 1)
		c->batch_blocks = 0;	/* this move opened a new batch */
	if (!ret)
		c->batch_blocks += c->written - written0;
	/* The data a batch leaves to its commit is bounded by --buffer. */
	if (!ret && c->batch_blocks >= c->buf_blocks) {
		ret = switch_commit(c->sw);
		c->batch_blocks = 0;
		if (ret)
			st->switch_failed = 1;
	}
out:
	st->copied = c->copied - copied0;
	st->written = c->written - written0;
	fmap_rebuild_free(&r);
	fmap_free(&m);
	return ret;
}
