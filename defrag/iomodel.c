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
 *   group gains or releases, wait for the next group; a unit whose first
 *   move writes into blocks the open batch released waits for its
 *   commit, later units going ahead (execute.c's order, followed here
 *   on the plan's copies);
 * - a group's sources are read once, in physical block order, half a
 *   buffer at a time: a jump from where the head is (the seek model's,
 *   by distance) and the transfer of each, but for what the page cache
 *   holds: every block read or written before in the run (a gap between
 *   two sources that read_through says is read through, and so
 *   held too: a short one, or one later moves read), as bench/iocost.py's
 *   cache, which never evicts.  Data staged and moved
 *   again is read from the cache: on a disk whose recordings are rebuilt
 *   through staging most of the second reads are;
 * - writes go to the page cache and out at each flush in block order
 *   (the data of a batch at its commit's first), and the flush waits
 *   for the platter (half a rotation);
 * - a move into blocks the open batch released logs them where the
 *   mover would (MOVE_LOG_MAX_BYTES, the transaction's room, which the
 *   batch's metadata takes its share of: an inode table block and the
 *   block bitmaps of the groups each switch touches): no commit; those
 *   blocks are written to the log at the commit (a transfer) and in
 *   place at the next checkpoint, not with the group's data; a batch
 *   whose transaction passes the journal's batch cap (switch_log_limits)
 *   commits, as the writer's does;
 * - a commit (when the batch holds a buffer of data, when every unit
 *   left waits for one, and at the end) flushes the data, then costs
 *   its trips, each an average seek and a rotation, after which the head
 *   is anywhere: three with a journal (the log's blocks, the commit
 *   block, the journal superblock), two without (ext2's ordered steps 1
 *   and 2, between which the batch's inode table and bitmap blocks are
 *   written in place, in block order; step 3 goes out with a later
 *   flush, switch.c);
 * - a checkpoint (journal.c: before a commit the log's live part cannot
 *   take, and at the end) writes what the committed batches logged, data
 *   and metadata, in place in one pass in block order, then flushes: on
 *   a tree whose files fill each other's places, most of the data goes
 *   out there, and the estimate was a fifth short without it;
 * - the run's end writes the journal's superblock and the filesystem's
 *   (without a journal, step 3's bitmaps and the superblock), a trip
 *   each.
 *
 * What a group costs is shared among its moves by the blocks they copy,
 * but for what it reads for later moves (the read-ahead, a long gap read
 * through), which those moves pay (charge_read).  The new mapping
 * blocks are not costed one by one, nor, with a journal, the metadata
 * outside the log: the commits stand for them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "iomodel.h"
#include "lower_bound.h"
#include "move.h"
#include "radix_sort.h"
#include "unit_walk.h"

/* The blocks [SRC, SRC + LEN) move MOVE copies from. */
struct owner {
	blk64_t		src, len;
	uint64_t	move;
};

struct clock {
	const struct readmodel *m;
	double		bs;
	double		t;		/* seconds so far */
	blk64_t		head;
	int		head_known;	/* not after a commit */
	blk64_t		batch;		/* blocks in the open batch */
	struct io_copy	*pending;	/* written since the last flush */
	size_t		npending, pending_cap;
	ext2fs_block_bitmap released;	/* what the open batch released */
	blk64_t		logged;		/* blocks the open batch logs */
	blk64_t		log_room, log_max;	/* the mover's bounds on them */
	blk64_t		log_batch;	/* the journal blocks of a batch at most */
	int		commit_trips;	/* a commit's seeks and rotations */
	ext2_filsys	fs;
	int		meta_in_place;	/* no journal: the batch's metadata is
					 * written in place at its commit */
	ext2fs_block_bitmap meta_seen;	/* metadata blocks the batch logs ... */
	blk64_t		meta;		/* ... and how many (with a log room) */
	ext2fs_block_bitmap cached;	/* read or written before: the page cache's */
	blk64_t		read_end;	/* where the group's last read ended (0: none) */
	ext2fs_block_bitmap later;	/* the plan's sources (not owned: those
					 * cached are read already) */
	blk64_t		chunk, used;	/* the mover's half buffer, and what
					 * the group's reads fill of it */
	/*
	 * The journal's log (writer/journal.c): what the open batch logs
	 * (its logged data and metadata, as runs of their blocks), what
	 * committed batches left live in the log (written in place at the
	 * next checkpoint), and the log blocks they take.
	 */
	struct io_copy	*open, *live;
	size_t		nopen, open_cap, nlive, live_cap;
	blk64_t		log_used, live_max;	/* a checkpoint before more */
	int		nomem;		/* an allocation for them failed */
	struct layout_piece *ahead;	/* a small group's read-ahead (readthrough.h) */
	size_t		nahead, ahead_cap, ahead_at;
	blk64_t		ahead_from;	/* where the next one starts */
	/*
	 * Who pays for a read of data later moves copy (the read-ahead, a
	 * long gap read through): they do, by the blocks of theirs it reads,
	 * not the group reading it.  A unit then costs what it would as the
	 * first a run starts, which is what --max-time and a window ask of
	 * it: a run cut before a unit whose sources an earlier one read ahead
	 * has not saved it that read, the next night reads them again.
	 */
	struct owner	*owners;	/* every copy's source, by block */
	blk64_t		*owners_end;	/* the furthest source end up to each */
	size_t		nowners;
	const uint8_t	*done;		/* per move: copied already */
	double		*seconds;	/* per move: its charge so far */
	double		charged;	/* of the group's time, charged so */
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
	/* Linear time: a flush of interleaved streams holds tens of
	 * thousands of pieces, and a plan is modeled more than once
	 * (plan_opts.seconds). */
	if (radix_sort_by_start(c->pending, c->npending, sizeof(*c->pending),
				offsetof(struct io_copy, dst),
				ext2fs_blocks_count(c->fs->super)))
		qsort(c->pending, c->npending, sizeof(*c->pending), cmp_dst);
	for (i = 0; i < c->npending; i++) {
		const struct io_copy *p = &c->pending[i];

		c->t += head_to(c, p->dst) +
			readmodel_transfer_seconds(c->m, (double)p->len * c->bs);
		c->head = p->dst + p->len;
	}
	c->t += rotation_seconds(c->m) / 2;
	c->npending = 0;
}

/* Read the blocks [BLK, BLK + N) the cache does not hold, held after. */
static void read_blocks(struct clock *c, blk64_t blk, blk64_t n)
{
	blk64_t at = blk, end = blk + n, miss, hit;

	while (at < end) {
		if (ext2fs_find_first_zero_block_bitmap2(c->cached, at, end - 1, &miss))
			break;	/* the rest is cached */
		if (ext2fs_find_first_set_block_bitmap2(c->cached, miss, end - 1, &hit))
			hit = end;
		c->t += head_to(c, miss) +
			readmodel_transfer_seconds(c->m, (double)(hit - miss) * c->bs);
		c->head = hit;
		at = hit;
	}
	ext2fs_mark_block_bitmap_range2(c->cached, blk, n);
}

/*
 * The time DT of reading [BLK, BLK + N), charged to the moves not yet
 * done that copy from it, by their blocks in it; the rest stays the
 * group's.
 */
static void charge_read(struct clock *c, blk64_t blk, blk64_t n, double dt)
{
	size_t lo, i;
	blk64_t end = blk + n, owned = 0;
	int pass;

	if (!n || dt <= 0)
		return;
	/* The first source that may reach past BLK. */
	lo = lower_bound(0, c->nowners, blk_at_or_before, c->owners_end, &blk);
	/*
	 * Blocks several moves copy from (staged out, then copied again from
	 * there) are shared among them: what is charged is at most DT.
	 */
	for (pass = 0; pass < 2; pass++)
		for (i = lo; i < c->nowners && c->owners[i].src < end; i++) {
			const struct owner *o = &c->owners[i];
			blk64_t from = o->src > blk ? o->src : blk;
			blk64_t to = o->src + o->len < end ? o->src + o->len : end;
			double share;

			if (to <= from || c->done[o->move])
				continue;
			if (!pass) {
				owned += to - from;
				continue;
			}
			share = dt * (double)(to - from) / (double)(owned > n ? owned : n);
			c->seconds[o->move] += share;
			c->charged += share;
		}
}

/* Read [BLK, BLK + N) for later moves, which pay for it (charge_read). */
static void read_for_later(struct clock *c, blk64_t blk, blk64_t n)
{
	double t0 = c->t;

	read_blocks(c, blk, n);
	charge_read(c, blk, n, c->t - t0);
}

/* A run of the read-ahead, as the mover's readahead reads it. */
static errcode_t ahead_issue(void *priv, blk64_t blk, blk64_t n)
{
	read_for_later(priv, blk, n);
	return 0;
}

/*
 * Read blocks [SRC, SRC + LEN) of a group's sources, in order: the parts
 * the cache does not hold from the disk, all of it held after.  The gap
 * since the last read is read too where the mover reads it through
 * (move.c's copy_ops: read_through, within its half buffer): what the
 * cache does not hold of it passes under the head as a transfer, as the
 * mover's request (or its readahead) reads it, not a jump over it (which
 * costs at most a repositioning: a long gap read through cost the run
 * more than the model said).
 */
static void read_src(struct clock *c, blk64_t src, blk64_t len)
{
	blk64_t at = src, end = src + len;

	if (c->read_end && src > c->read_end &&
	    c->used + (src - c->read_end) + len <= c->chunk &&
	    read_through(c->later, c->cached, c->read_end, src - c->read_end,
			 c->fs->blocksize)) {
		c->used += src - c->read_end;
		at = c->read_end;
	} else if (c->used + len > c->chunk) {
		c->used = 0;	/* the next half buffer */
	}
	c->used += len;
	/* The read-ahead due before it first (move.c's read_held). */
	(void)read_ahead_to(c->ahead, c->nahead, &c->ahead_at, at, end, ahead_issue, c);
	if (at < src)
		read_for_later(c, at, src - at);
	read_blocks(c, src, len);
	c->read_end = end;
}

/* Blocks [DST, DST + LEN) join the open batch's log. */
static void log_run(struct clock *c, blk64_t dst, blk64_t len)
{
	if (util_grow(&c->open, &c->open_cap, c->nopen + 1, sizeof(*c->open))) {
		c->nomem = 1;
		return;
	}
	c->open[c->nopen].src = 0;
	c->open[c->nopen].dst = dst;
	c->open[c->nopen].len = len;
	c->nopen++;
}

/*
 * The copy OP written: into the page cache, out at the next flush; but
 * for its blocks the open batch released, which go through its
 * transaction (switch_write: the log now, in place at a checkpoint).
 */
static int write_dst(struct clock *c, const struct io_copy *op)
{
	blk64_t at = op->dst, end = op->dst + op->len, in, out;

	while (at < end) {
		if (!c->log_room ||
		    ext2fs_find_first_set_block_bitmap2(c->released, at, end - 1, &in))
			in = end;
		if (in > at) {
			if (util_grow(&c->pending, &c->pending_cap, c->npending + 1,
				      sizeof(*c->pending)))
				return ENOMEM;
			c->pending[c->npending].src = op->src + (at - op->dst);
			c->pending[c->npending].dst = at;
			c->pending[c->npending].len = in - at;
			c->npending++;
		}
		if (in == end)
			break;
		if (ext2fs_find_first_zero_block_bitmap2(c->released, in, end - 1, &out))
			out = end;
		log_run(c, in, out - in);
		at = out;
	}
	return 0;
}

/*
 * The checkpoint: the log's live blocks written in place, in block order
 * (a block logged by several batches once), then a flush before the log
 * is emptied.
 */
static void checkpoint(struct clock *c)
{
	blk64_t reach = 0;
	size_t i;

	if (!c->nlive)
		return;
	qsort(c->live, c->nlive, sizeof(*c->live), cmp_dst);
	for (i = 0; i < c->nlive; i++) {
		blk64_t dst = c->live[i].dst, end = dst + c->live[i].len;

		if (end <= reach)
			continue;
		if (dst < reach)
			dst = reach;
		c->t += head_to(c, dst) +
			readmodel_transfer_seconds(c->m, (double)(end - dst) * c->bs);
		c->head = end;
		reach = end;
	}
	c->t += rotation_seconds(c->m) / 2;
	c->nlive = 0;
	c->log_used = 0;
}

static void commit(struct clock *c)
{
	blk64_t total = c->logged + c->meta + 1, i;

	flush(c);
	/* journal_commit: a checkpoint first where the log (or the images
	 * kept in memory) cannot take the transaction beside the live ones. */
	if (c->live_max && c->log_used + total > c->live_max)
		checkpoint(c);
	c->log_used += total;
	/* Without a journal, the inode table and bitmap blocks go out in
	 * place (switch.c's ordered steps), in block order. */
	if (c->meta_in_place && c->nopen) {
		qsort(c->open, c->nopen, sizeof(*c->open), cmp_dst);
		for (i = 0; i < c->nopen; i++) {
			c->t += head_to(c, c->open[i].dst) +
				readmodel_transfer_seconds(c->m, (double)c->open[i].len * c->bs);
			c->head = c->open[i].dst + c->open[i].len;
		}
		c->nopen = 0;
	}
	for (i = 0; i < c->nopen; i++) {
		if (util_grow(&c->live, &c->live_cap, c->nlive + 1, sizeof(*c->live))) {
			c->nomem = 1;
			break;
		}
		c->live[c->nlive++] = c->open[i];
	}
	c->nopen = 0;
	c->t += c->commit_trips * (readmodel_jump_seconds(c->m, c->m->disk_bytes / 3) +
				   rotation_seconds(c->m)) +
		readmodel_transfer_seconds(c->m, (double)c->logged * c->bs);
	c->head_known = 0;
	c->batch = 0;
	c->logged = 0;
	ext2fs_clear_block_bitmap(c->released);
	if (c->meta)
		ext2fs_clear_block_bitmap(c->meta_seen);
	c->meta = 0;
}

/* BLK joins the metadata the open batch's transaction holds. */
static void note_meta(struct clock *c, blk64_t blk)
{
	if (!blk || blk >= ext2fs_blocks_count(c->fs->super) ||
	    ext2fs_fast_test_block_bitmap2(c->meta_seen, blk))
		return;
	ext2fs_fast_mark_block_bitmap2(c->meta_seen, blk);
	c->meta++;
	log_run(c, blk, 1);
}

/* The block bitmap of the group holding BLK joins it too. */
static void note_group(struct clock *c, blk64_t blk)
{
	if (blk < c->fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(c->fs->super))
		return;
	note_meta(c, ext2fs_block_bitmap_loc(c->fs, ext2fs_group_of_blk2(c->fs, blk)));
}

/*
 * MV's switch: what its transaction logs beside the data (with a log
 * room only: the writer's batch cap matters to logged moves), and the
 * commit when that passes the journal's batch cap.
 */
static int switch_meta(struct clock *c, const struct io_move *mv,
		       const struct io_copy *copies)
{
	uint64_t k;

	if (!c->log_room && !c->meta_in_place)
		return 0;
	note_meta(c, mv->itable);
	for (k = 0; k < mv->ncopies; k++) {
		const struct io_copy *p = &copies[mv->copy_at + k];

		note_group(c, p->src);
		note_group(c, p->src + p->len - 1);
		note_group(c, p->dst);
		note_group(c, p->dst + p->len - 1);
	}
	return !c->meta_in_place && c->logged + c->meta > c->log_batch;
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

/* Blocks MV writes that are marked in BMAP, counting stops past LIMIT. */
static blk64_t writes_count(ext2fs_block_bitmap bmap, const struct io_move *mv,
			    const struct io_copy *copies, blk64_t limit)
{
	blk64_t n = 0, b;
	uint64_t k;

	for (k = 0; k < mv->ncopies && n <= limit; k++) {
		const struct io_copy *p = &copies[mv->copy_at + k];

		if (ext2fs_test_block_bitmap_range2(bmap, p->dst, p->len))
			continue;
		for (b = p->dst; b < p->dst + p->len && n <= limit; b++)
			n += ext2fs_fast_test_block_bitmap2(bmap, b) != 0;
	}
	return n;
}

/*
 * Whether MV, writing into blocks the open batch released, logs them as
 * the mover would (move.c's may_log), and how many, into *N.
 */
static int may_log(const struct clock *c, const struct io_move *mv,
		   const struct io_copy *copies, blk64_t *n)
{
	*n = writes_count(c->released, mv, copies, c->log_max);
	return c->log_room && *n <= c->log_max &&
	       c->logged + c->meta + *n <= c->log_room;
}

/* Mark (ON) or unmark MV's sources in BMAP, and its destinations too. */
static void mark(ext2fs_block_bitmap bmap, const struct io_move *mv,
		 const struct io_copy *copies, int dst_too, int on)
{
	void (*set)(ext2fs_block_bitmap, blk64_t, unsigned int) =
		on ? ext2fs_mark_block_bitmap_range2 : ext2fs_unmark_block_bitmap_range2;
	uint64_t k;

	for (k = 0; k < mv->ncopies; k++) {
		const struct io_copy *p = &copies[mv->copy_at + k];

		set(bmap, p->src, p->len);
		if (dst_too)
			set(bmap, p->dst, p->len);
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
 * The mover's order (unit_walk.c, as execute.c takes it), followed on
 * the plan's copies: the unit in progress, then waiting units, then later ones;
 * the first unit left goes as the plan has it (its first move waits
 * rather than commits), a unit ahead of waiting ones goes whole or
 * waits.  Where execute.c asks the bitmaps whether a block is free, the
 * model asks whether a waiting unit copies from it or into it.
 */
struct sched {
	const struct io_move *mv;
	const struct io_copy *copies;
	const uint64_t	*unit_end;
	uint64_t	n, nunits;
	blk64_t		bound;		/* a group's data, blocks */
	struct clock	*c;
	ext2fs_block_bitmap claimed;	/* what the group's moves copy from or into */
	/* Per layer of the waiting units' marks (unit_walk.h): */
	ext2fs_block_bitmap waits[2];	/* what they copy from or into */
	uint32_t	*file_walk[2], walk_no[2];	/* per file: moved by one of
						 * them marked in walk walk_no */
	uint8_t		*seen;		/* per file: moved by the group */
	uint64_t	commits;
	struct unit_walk walk;		/* the mover's order (unit_walk.c) */
	uint64_t	*group;		/* the group's moves */
	blk64_t		*group_logged;	/* ... and the blocks each logs */
	size_t		ngroup;
	blk64_t		blocks;
};

static void unit_moves(const struct sched *s, uint64_t u, uint64_t *first, uint64_t *end)
{
	if (!s->unit_end) {
		*first = u;
		*end = u + 1;
		return;
	}
	*first = u ? s->unit_end[u - 1] : 0;
	*end = u < s->nunits ? s->unit_end[u] : s->n;
}

/*
 * Whether move M must wait, and for what (move.c's): it writes where it
 * may not yet.  A unit going ahead of waiting ones (MODE
 * MOVE_RESERVE_WHOLE) must not write where they copy from or into; the
 * earliest unit left has none before it, and the marks unit_walk.c keeps
 * from walk to walk are not its (they are made exact only before a unit
 * going ahead is checked).
 */
static enum move_wait must_wait(const struct sched *s, uint64_t m, enum move_reserve mode)
{
	blk64_t n;

	if (writes_into(s->c->released, &s->mv[m], s->copies) &&
	    !may_log(s->c, &s->mv[m], s->copies, &n))
		return MOVE_WAIT_COMMIT;
	if ((s->ngroup && writes_into(s->claimed, &s->mv[m], s->copies)) ||
	    (mode == MOVE_RESERVE_WHOLE && (writes_into(s->waits[0], &s->mv[m], s->copies) ||
					    writes_into(s->waits[1], &s->mv[m], s->copies))))
		return MOVE_WAIT_GROUP;
	return MOVE_WAIT_NONE;
}

/*
 * Take back the group's moves from K on.  Their blocks are theirs alone
 * in the claims (no two moves of a group copy from or into the same
 * block), so unmarking them leaves the others' marked: clearing the
 * bitmap and marking the rest again made a large group quadratic.
 */
static void untake(struct sched *s, size_t k)
{
	size_t i;

	for (i = k; i < s->ngroup; i++) {
		s->seen[s->mv[s->group[i]].file] = 0;
		s->blocks -= move_blocks(&s->mv[s->group[i]], s->copies);
		s->c->logged -= s->group_logged[i];
		mark(s->claimed, &s->mv[s->group[i]], s->copies, 1, 0);
	}
	s->ngroup = k;
}

/* execute.c's take_unit, on the copies (unit_walk.h). */
static enum unit_take take(void *priv, uint64_t u, uint64_t from, enum move_reserve mode)
{
	struct sched *s = priv;
	uint64_t first, end, m;
	size_t before = s->ngroup;

	unit_moves(s, u, &first, &end);
	if (from < first)
		from = first;
	for (m = from; m < end; m++) {
		const struct io_move *mv = &s->mv[m];

		if (s->seen[mv->file] || s->ngroup >= MOVE_GROUP_MOVES) {
			int full = s->ngroup >= MOVE_GROUP_MOVES;

			if (mode == MOVE_RESERVE_WHOLE) {
				untake(s, before);
				return full ? UNIT_FULL : UNIT_WAITS;
			}
			if (m == from)
				return UNIT_FULL;
			break;
		}
		if (mode == MOVE_RESERVE_WHOLE ||
		    (mode == MOVE_RESERVE_WAIT_FIRST && m == from)) {
			enum move_wait w = must_wait(s, m, mode);

			if (w != MOVE_WAIT_NONE) {
				untake(s, before);
				return w == MOVE_WAIT_COMMIT ? UNIT_WAITS_COMMIT : UNIT_WAITS;
			}
		}
		if (s->ngroup && writes_into(s->claimed, mv, s->copies)) {
			if (m == from)
				return UNIT_FULL;
			break;
		}
		s->group_logged[s->ngroup] = 0;
		if (writes_into(s->c->released, mv, s->copies)) {
			blk64_t n;

			if (may_log(s->c, mv, s->copies, &n)) {
				s->c->logged += n;
				s->group_logged[s->ngroup] = n;
			} else {
				commit(s->c);
				s->commits++;
			}
		}
		s->seen[mv->file] = 1;
		mark(s->claimed, mv, s->copies, 1, 1);
		s->group[s->ngroup++] = m;
		s->blocks += move_blocks(mv, s->copies);
	}
	return m < end ? UNIT_PART : UNIT_TAKEN;
}

/* Unit U's files and blocks, what it copies from and into, kept waiting: marked in LAYER. */
static void keep(void *priv, uint64_t u, int layer)
{
	struct sched *s = priv;
	uint64_t first, end, m;

	unit_moves(s, u, &first, &end);
	for (m = first; m < end; m++) {
		s->file_walk[layer][s->mv[m].file] = s->walk_no[layer];
		mark(s->waits[layer], &s->mv[m], s->copies, 1, 1);
	}
}

/*
 * Whether unit U moves a file, or writes a block, a kept unit does:
 * where execute.c asks the bitmaps whether a block is free, the model
 * asks whether a waiting unit copies from it or into it.
 */
static int conflicts(void *priv, uint64_t u)
{
	const struct sched *s = priv;
	uint64_t first, end, m;

	unit_moves(s, u, &first, &end);
	for (m = first; m < end; m++)
		if (s->file_walk[0][s->mv[m].file] == s->walk_no[0] ||
		    s->file_walk[1][s->mv[m].file] == s->walk_no[1] ||
		    writes_into(s->waits[0], &s->mv[m], s->copies) ||
		    writes_into(s->waits[1], &s->mv[m], s->copies))
			return 1;
	return 0;
}

/* execute.c's may_join: the group's bounds. */
static int may_join(void *priv, uint64_t u, int force)
{
	const struct sched *s = priv;
	uint64_t first, end, m;
	blk64_t ub = 0;

	(void)force;
	if (!s->ngroup)
		return 1;
	unit_moves(s, u, &first, &end);
	for (m = first; m < end; m++)
		ub += move_blocks(&s->mv[m], s->copies);
	return s->ngroup < MOVE_GROUP_MOVES && s->blocks + ub <= s->bound;
}

static void unmark(void *priv, int layer)
{
	struct sched *s = priv;

	ext2fs_clear_block_bitmap(s->waits[layer]);
	s->walk_no[layer]++;	/* at most six a group of moves: wraps past 700 million groups */
}

static uint64_t commits_made(void *priv)
{
	return ((const struct sched *)priv)->commits;
}

static const struct unit_walk_ops walk_ops = {
	.may_join = may_join,
	.take = take,
	.unmark = unmark,
	.conflicts = conflicts,
	.keep = keep,
	.commits = commits_made,
};

static int cmp_owner(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;

	return x->src < y->src ? -1 : x->src > y->src;
}

/* C's owners: the N moves MV's copies' sources, by block (charge_read). */
static errcode_t owners_make(struct clock *c, const struct io_move *mv, uint64_t n,
			     const struct io_copy *copies)
{
	uint64_t i, k;
	size_t at = 0, total = 0;
	blk64_t end = 0;

	for (i = 0; i < n; i++)
		total += mv[i].ncopies;
	c->owners = malloc((total + 1) * sizeof(*c->owners));
	c->owners_end = malloc((total + 1) * sizeof(*c->owners_end));
	if (!c->owners || !c->owners_end)
		return ENOMEM;
	/* New memory, all of it written: a fault a huge page, not a page. */
	util_huge_pages(c->owners, (total + 1) * sizeof(*c->owners));
	util_huge_pages(c->owners_end, (total + 1) * sizeof(*c->owners_end));
	for (i = 0; i < n; i++)
		for (k = 0; k < mv[i].ncopies; k++) {
			c->owners[at].src = copies[mv[i].copy_at + k].src;
			c->owners[at].len = copies[mv[i].copy_at + k].len;
			c->owners[at++].move = i;
		}
	/* Linear time, as flush's: a plan is modeled more than once. */
	if (radix_sort_by_start(c->owners, total, sizeof(*c->owners),
				offsetof(struct owner, src), ext2fs_blocks_count(c->fs->super)))
		qsort(c->owners, total, sizeof(*c->owners), cmp_owner);
	for (at = 0; at < total; at++) {
		if (c->owners[at].src + c->owners[at].len > end)
			end = c->owners[at].src + c->owners[at].len;
		c->owners_end[at] = end;
	}
	c->nowners = total;
	return 0;
}

errcode_t iomodel_moves(ext2_filsys fs, const struct readmodel *model,
			size_t buffer_bytes, const struct switch_log_limits *log,
			const struct io_move *mv,
			uint64_t n, const struct io_copy *copies,
			ext2fs_block_bitmap sources,
			const uint64_t *unit_end, uint64_t nunits, int waiting,
			double *seconds)
{
	struct clock c;
	struct sched s;
	struct io_copy *ops = NULL;
	size_t nops = 0, ops_cap = 0;
	uint32_t nfiles = 0;
	uint8_t *done = NULL;
	blk64_t buf_blocks;
	uint64_t i, k;
	errcode_t ret;

	memset(&c, 0, sizeof(c));
	memset(&s, 0, sizeof(s));
	c.m = model;
	c.bs = fs->blocksize;
	c.log_room = log->room;
	c.log_batch = log->batch;
	/* The metadata is counted only where batches log data (switch_meta). */
	c.live_max = log->room ? log->live : 0;
	c.commit_trips = ext2fs_has_feature_journal(fs->super) ? 3 : 2;
	c.meta_in_place = !ext2fs_has_feature_journal(fs->super);
	c.fs = fs;
	c.log_max = MOVE_LOG_MAX_BYTES / fs->blocksize;
	if (!buffer_bytes)
		buffer_bytes = MOVE_DEFAULT_BUFFER;
	buf_blocks = buffer_bytes / fs->blocksize ? buffer_bytes / fs->blocksize : 1;
	c.chunk = buf_blocks / 2 ? buf_blocks / 2 : 1;
	for (i = 0; i < n; i++) {
		seconds[i] = 0;
		if (mv[i].file >= nfiles)
			nfiles = mv[i].file + 1;
	}
	s.mv = mv;
	s.copies = copies;
	s.n = n;
	/* Without units, each move is one. */
	s.unit_end = unit_end;
	s.nunits = unit_end ? nunits : n;
	s.bound = (blk64_t)MOVE_GROUP_BUFFERS * buf_blocks;
	s.c = &c;
	s.seen = calloc(nfiles + 1, 1);
	s.file_walk[0] = calloc(nfiles + 1, sizeof(*s.file_walk[0]));
	s.file_walk[1] = calloc(nfiles + 1, sizeof(*s.file_walk[1]));
	s.group = calloc(MOVE_GROUP_MOVES, sizeof(*s.group));
	s.group_logged = calloc(MOVE_GROUP_MOVES, sizeof(*s.group_logged));
	ret = ENOMEM;
	if (!s.seen || !s.file_walk[0] || !s.file_walk[1] || !s.group || !s.group_logged ||
	    unit_walk_init(&s.walk, s.nunits, waiting, &walk_ops, &s))
		goto out;
	ret = ext2fs_allocate_block_bitmap(fs, "claimed", &s.claimed);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "waiting", &s.waits[0]);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "waiting", &s.waits[1]);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "released", &c.released);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "cached", &c.cached);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "batch metadata", &c.meta_seen);
	c.later = sources;
	if (!ret)
		ret = owners_make(&c, mv, n, copies);
	done = calloc(n + 1, 1);
	if (!ret && !done)
		ret = ENOMEM;
	c.done = done;
	c.seconds = seconds;
	while (!ret && unit_walk_left(&s.walk)) {
		double t0 = c.t;
		blk64_t blocks = 0, copied;

		c.charged = 0;
		s.ngroup = 0;
		s.blocks = 0;
		ext2fs_clear_block_bitmap(s.claimed);
		unit_walk_gather(&s.walk, 0);
		if (!s.ngroup && c.batch) {
			commit(&c);
			s.commits++;
			unit_walk_gather(&s.walk, 0);
		}
		if (!s.ngroup)
			unit_walk_gather(&s.walk, 1);
		if (!s.ngroup)
			break;	/* cannot be: the first unit left goes when forced */
		/* The copies: sources in the disk's order, data flushed by the commit. */
		nops = 0;
		for (k = 0; k < s.ngroup; k++) {
			const struct io_move *m = &mv[s.group[k]];

			if (util_grow(&ops, &ops_cap, nops + m->ncopies, sizeof(*ops))) {
				ret = ENOMEM;
				break;
			}
			if (m->ncopies)	/* none: OPS may still be NULL */
				memcpy(ops + nops, copies + m->copy_at, m->ncopies * sizeof(*ops));
			nops += m->ncopies;
		}
		if (ret)
			break;
		/* Linear time: interleaved streams copy tens of thousands of
		 * pieces a group. */
		if (nops && radix_sort_by_start(ops, nops, sizeof(*ops),
						offsetof(struct io_copy, src),
						ext2fs_blocks_count(fs->super)))
			qsort(ops, nops, sizeof(*ops), cmp_src);
		c.read_end = 0;
		c.used = 0;
		/* A small group reads ahead (move.c's copy_ops). */
		for (k = 0, copied = 0; k < nops; k++)
			copied += ops[k].len;
		c.ahead_at = 0;
		if (read_ahead_runs(c.later, c.cached, &c.ahead_from, copied, buf_blocks,
				    fs->blocksize, &c.ahead, &c.nahead, &c.ahead_cap))
			c.nahead = 0;
		for (k = 0; k < nops; k++) {
			read_src(&c, ops[k].src, ops[k].len);
			/* What is written is in the cache too. */
			ext2fs_mark_block_bitmap_range2(c.cached, ops[k].dst, ops[k].len);
			ret = write_dst(&c, &ops[k]);
			if (ret)
				break;
		}
		if (ret)
			break;
		(void)read_ahead_to(c.ahead, c.nahead, &c.ahead_at, ext2fs_blocks_count(fs->super),
				    ext2fs_blocks_count(fs->super), ahead_issue, &c);
		/* The switches: the batch holds what they release. */
		for (k = 0; k < s.ngroup; k++) {
			const struct io_move *m = &mv[s.group[k]];
			blk64_t b = move_blocks(m, copies);

			s.seen[m->file] = 0;
			if (switch_meta(&c, m, copies)) {
				commit(&c);
				s.commits++;
			}
			mark(c.released, m, copies, 0, 1);
			c.batch += b;
			blocks += b;
			if (s.walk.has_cur && k + 1 == s.ngroup)
				s.walk.cur_next = s.group[k] + 1;
		}
		if (c.batch >= buf_blocks || !unit_walk_left(&s.walk)) {
			commit(&c);
			s.commits++;
		}
		/*
		 * The writer's close empties the log, then writes what says
		 * so: the journal superblock and the filesystem's, a flush
		 * each; without a journal, the bitmaps' freed bits (ordered
		 * step 3) and the superblock, a flush each.
		 */
		if (!unit_walk_left(&s.walk)) {
			checkpoint(&c);
			c.t += 2 * (readmodel_jump_seconds(c.m, c.m->disk_bytes / 3) +
				    rotation_seconds(c.m));
		}
		for (k = 0; k < s.ngroup; k++) {
			seconds[s.group[k]] += blocks ?
				(c.t - t0 - c.charged) * move_blocks(&mv[s.group[k]], copies) / blocks :
				(c.t - t0 - c.charged) / s.ngroup;
			done[s.group[k]] = 1;
		}
	}
	if (!ret && c.nomem)
		ret = ENOMEM;
out:
	if (s.claimed)
		ext2fs_free_block_bitmap(s.claimed);
	if (s.waits[0])
		ext2fs_free_block_bitmap(s.waits[0]);
	if (s.waits[1])
		ext2fs_free_block_bitmap(s.waits[1]);
	if (c.released)
		ext2fs_free_block_bitmap(c.released);
	if (c.cached)
		ext2fs_free_block_bitmap(c.cached);
	if (c.meta_seen)
		ext2fs_free_block_bitmap(c.meta_seen);
	free(c.pending);
	free(c.open);
	free(c.live);
	free(c.ahead);
	free(c.owners);
	free(c.owners_end);
	free(done);
	free(ops);
	free(s.seen);
	free(s.file_walk[0]);
	free(s.file_walk[1]);
	unit_walk_fini(&s.walk);
	free(s.group);
	free(s.group_logged);
	return ret;
}
