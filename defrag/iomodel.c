/*
 * iomodel.c --- a run's own I/O on the modeled disk.
 *
 * The estimate follows what the mover does (move.h, execute.c) on the
 * disk e2frag models for read time (lib/readmodel.c), as bench/iocost.py
 * costs a traced run:
 *
 * - moves go in groups: the rest of a unit and the units after it, up
 *   to MOVE_GROUP_MOVES moves and MOVE_GROUP_BUFFERS buffers of data; a
 *   file's second move, and a move into blocks an earlier move of the
 *   group gains or releases, wait for the next group;
 * - a group's sources are read once, in physical block order: a jump
 *   from where the head is (the seek model's, by distance) and the
 *   transfer of each;
 * - writes go to the page cache and out at each flush in block order;
 *   the data is flushed each buffer of it, and the flush waits for the
 *   platter (half a rotation);
 * - a commit (when the batch holds a buffer of data, before a move into
 *   blocks the batch released, and at the end) flushes the data, then
 *   costs three flushes each with an average seek and a rotation (the
 *   journal and the metadata, or ext2's ordered writes), after which the
 *   head is anywhere.
 *
 * What a group costs is shared among its moves by the blocks they copy.
 * The metadata a switch writes and the new mapping blocks are not
 * costed one by one: the commits stand for them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "iomodel.h"
#include "move.h"

struct clock {
	const struct readmodel *m;
	double		bs;
	double		t;		/* seconds so far */
	blk64_t		head;
	int		head_known;	/* not after a commit */
	blk64_t		unflushed;	/* blocks written since the last flush */
	blk64_t		batch;		/* blocks in the open batch */
	struct io_copy	*pending;	/* written since the last flush */
	size_t		npending, pending_cap;
	ext2fs_block_bitmap released;	/* what the open batch released */
};

static double rotation_seconds(const struct readmodel *m)
{
	return m->rpm > 0 ? 60.0 / m->rpm : 0;
}

/* Moving the head to block TO. */
static double head_to(struct clock *c, blk64_t to)
{
	double s = c->head_known ?
		readmodel_jump_seconds(c->m, ((double)to - (double)c->head) * c->bs) :
		readmodel_jump_seconds(c->m, c->m->disk_bytes / 3);

	c->head = to;
	c->head_known = 1;
	return s;
}

static int cmp_src(const void *a, const void *b)
{
	const struct io_copy *x = a, *y = b;

	return x->src < y->src ? -1 : x->src > y->src;
}

static int cmp_dst(const void *a, const void *b)
{
	const struct io_copy *x = a, *y = b;

	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* The data written since the last flush goes out in block order. */
static void flush(struct clock *c)
{
	size_t i;

	if (!c->npending)
		return;
	qsort(c->pending, c->npending, sizeof(*c->pending), cmp_dst);
	for (i = 0; i < c->npending; i++) {
		const struct io_copy *p = &c->pending[i];

		c->t += head_to(c, p->dst) +
			readmodel_transfer_seconds(c->m, (double)p->len * c->bs);
		c->head = p->dst + p->len;
	}
	c->t += rotation_seconds(c->m) / 2;
	c->npending = 0;
	c->unflushed = 0;
}

static void commit(struct clock *c)
{
	flush(c);
	c->t += 3 * (readmodel_jump_seconds(c->m, c->m->disk_bytes / 3) +
		     rotation_seconds(c->m));
	c->head_known = 0;
	c->batch = 0;
	ext2fs_clear_block_bitmap(c->released);
}

/* Whether a block some copy of MV writes is marked in BMAP. */
static int writes_into(ext2fs_block_bitmap bmap, const struct io_move *mv,
		       const struct io_copy *copies)
{
	uint64_t k;

	for (k = 0; k < mv->ncopies; k++) {
		const struct io_copy *p = &copies[mv->copy_at + k];

		if (!ext2fs_test_block_bitmap_range2(bmap, p->dst, p->len))
			return 1;
	}
	return 0;
}

static void mark(ext2fs_block_bitmap bmap, const struct io_move *mv,
		 const struct io_copy *copies, int dst_too)
{
	uint64_t k;

	for (k = 0; k < mv->ncopies; k++) {
		const struct io_copy *p = &copies[mv->copy_at + k];

		ext2fs_mark_block_bitmap_range2(bmap, p->src, p->len);
		if (dst_too)
			ext2fs_mark_block_bitmap_range2(bmap, p->dst, p->len);
	}
}

static blk64_t move_blocks(const struct io_move *mv, const struct io_copy *copies)
{
	blk64_t b = 0;
	uint64_t k;

	for (k = 0; k < mv->ncopies; k++)
		b += copies[mv->copy_at + k].len;
	return b;
}

/*
 * Where the group starting at move I ends before its reservations: the
 * rest of I's unit and the units after it within the bounds.
 */
static uint64_t group_bound(const struct io_move *mv, uint64_t n,
			    const struct io_copy *copies, const uint64_t *unit_end,
			    uint64_t nunits, uint64_t *unit, uint64_t i,
			    blk64_t buf_blocks)
{
	uint64_t end, u, k;
	blk64_t blocks = 0;

	while (*unit < nunits && unit_end[*unit] <= i)
		(*unit)++;
	end = *unit < nunits ? unit_end[*unit] : n;
	for (k = i; k < end; k++)
		blocks += move_blocks(&mv[k], copies);
	for (u = *unit + 1; u < nunits && end < n; u++) {
		blk64_t ub = 0;

		for (k = end; k < unit_end[u]; k++)
			ub += move_blocks(&mv[k], copies);
		if (unit_end[u] - i > MOVE_GROUP_MOVES ||
		    blocks + ub > (blk64_t)MOVE_GROUP_BUFFERS * buf_blocks)
			break;
		end = unit_end[u];
		blocks += ub;
	}
	return end - i > MOVE_GROUP_MOVES ? i + MOVE_GROUP_MOVES : end;
}

errcode_t iomodel_moves(ext2_filsys fs, const struct readmodel *model,
			size_t buffer_bytes, const struct io_move *mv,
			uint64_t n, const struct io_copy *copies,
			const uint64_t *unit_end, uint64_t nunits,
			double *seconds)
{
	struct clock c;
	ext2fs_block_bitmap claimed = NULL;
	struct io_copy *ops = NULL;
	size_t nops = 0, ops_cap = 0;
	uint8_t *seen = NULL;
	uint32_t nfiles = 0;
	blk64_t buf_blocks;
	uint64_t i, j, k, unit = 0;
	errcode_t ret;

	memset(&c, 0, sizeof(c));
	c.m = model;
	c.bs = fs->blocksize;
	if (!buffer_bytes)
		buffer_bytes = MOVE_DEFAULT_BUFFER;
	buf_blocks = buffer_bytes / fs->blocksize ? buffer_bytes / fs->blocksize : 1;
	for (i = 0; i < n; i++) {
		seconds[i] = 0;
		if (mv[i].file >= nfiles)
			nfiles = mv[i].file + 1;
	}
	seen = calloc(nfiles + 1, 1);
	if (!seen)
		return ENOMEM;
	ret = ext2fs_allocate_block_bitmap(fs, "claimed", &claimed);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "released", &c.released);
	for (i = 0; !ret && i < n; i = j) {
		uint64_t end = group_bound(mv, n, copies, unit_end, nunits,
					   &unit, i, buf_blocks);
		double t0 = c.t;
		blk64_t blocks = 0;

		/* The reservations: which moves the group takes. */
		nops = 0;
		for (j = i; j < end; j++) {
			if (seen[mv[j].file] ||
			    (j > i && writes_into(claimed, &mv[j], copies)))
				break;
			if (writes_into(c.released, &mv[j], copies))
				commit(&c);
			seen[mv[j].file] = 1;
			mark(claimed, &mv[j], copies, 1);
			if (util_grow(&ops, &ops_cap, nops + mv[j].ncopies,
				      sizeof(*ops))) {
				ret = ENOMEM;
				break;
			}
			memcpy(ops + nops, copies + mv[j].copy_at,
			       mv[j].ncopies * sizeof(*ops));
			nops += mv[j].ncopies;
		}
		if (ret)
			break;
		/* The copies: sources in the disk's order, data flushed each buffer. */
		qsort(ops, nops, sizeof(*ops), cmp_src);
		for (k = 0; k < nops; k++) {
			c.t += head_to(&c, ops[k].src) +
			       readmodel_transfer_seconds(model, (double)ops[k].len * c.bs);
			c.head = ops[k].src + ops[k].len;
			if (util_grow(&c.pending, &c.pending_cap, c.npending + 1,
				      sizeof(*c.pending))) {
				ret = ENOMEM;
				break;
			}
			c.pending[c.npending++] = ops[k];
			c.unflushed += ops[k].len;
			if (c.unflushed >= buf_blocks)
				flush(&c);
		}
		if (ret)
			break;
		/* The switches: the batch holds what they release. */
		for (k = i; k < j; k++) {
			blk64_t b = move_blocks(&mv[k], copies);

			seen[mv[k].file] = 0;
			mark(c.released, &mv[k], copies, 0);
			c.batch += b;
			blocks += b;
		}
		ext2fs_clear_block_bitmap(claimed);
		if (c.batch >= buf_blocks || j == n)
			commit(&c);
		for (k = i; k < j; k++)
			seconds[k] = blocks ?
				(c.t - t0) * move_blocks(&mv[k], copies) / blocks :
				(c.t - t0) / (j - i);
	}
	if (claimed)
		ext2fs_free_block_bitmap(claimed);
	if (c.released)
		ext2fs_free_block_bitmap(c.released);
	free(c.pending);
	free(ops);
	free(seen);
	return ret;
}
