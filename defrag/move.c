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
 * Moves go in groups (move.h): the sources of a group's moves are read in
 * physical block order, a buffer at a time, short gaps read through so
 * that a request is large, and each buffer is written to its
 * destinations at once; the files of an interleave set are so read in
 * one pass over their span rather than each across it.  Longer gaps that
 * later moves read are read through as well (readthrough.c): their
 * data waits in the page cache for those moves.
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
	errcode_t ret;
	size_t bytes;

	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->sw = sw;
	if (!buffer_bytes)
		buffer_bytes = MOVE_DEFAULT_BUFFER;
	c->buf_blocks = buffer_bytes / fs->blocksize;
	if (!c->buf_blocks)
		c->buf_blocks = 1;
	ret = ext2fs_allocate_block_bitmap(fs, "blocks a group claims", &c->claimed);
	if (ret)
		return ret;
	/* Half to read a group's sources into, half to gather its writes. */
	c->chunk_blocks = c->buf_blocks / 2 ? c->buf_blocks / 2 : 1;
	bytes = (c->buf_blocks > 2 * c->chunk_blocks ? c->buf_blocks : 2 * c->chunk_blocks) *
		(size_t)fs->blocksize;
	ret = ext2fs_get_mem(bytes, &c->buf);
	if (ret) {
		ext2fs_free_block_bitmap(c->claimed);
		c->claimed = NULL;
		return ret;
	}
	/*
	 * Its pages are first touched as the run goes, each a fault of its
	 * own (the kernel-written trees: two thirds of a run's faults);
	 * in huge pages, a fault each 2 MiB where the kernel allows.
	 */
	util_huge_pages(c->buf, bytes);
	return 0;
}

void move_fini(struct move_ctx *c)
{
	ext2fs_free_mem(&c->buf);
	if (c->claimed)
		ext2fs_free_block_bitmap(c->claimed);
	c->claimed = NULL;
	free(c->ops);
	free(c->placed);
	free(c->op_at);
	free(c->ahead);
	c->ops = NULL;
	c->placed = NULL;
	c->op_at = NULL;
	c->ahead = NULL;
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

/* Blocks K's runs cover, inside the filesystem (the rest is never claimed). */
static void claim_runs(struct move_ctx *c, const struct layout_piece *p,
		       size_t n, int mark)
{
	blk64_t first = c->fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(c->fs->super);
	size_t i;

	for (i = 0; i < n; i++) {
		if (!p[i].len || p[i].start < first || p[i].start + p[i].len > end)
			continue;
		if (mark)
			ext2fs_mark_block_bitmap_range2(c->claimed, p[i].start, p[i].len);
		else
			ext2fs_unmark_block_bitmap_range2(c->claimed, p[i].start, p[i].len);
	}
}

/* Whether R's gained blocks all lie inside the filesystem (check_free says more). */
static int gained_inside(ext2_filsys fs, const struct fmap_rebuild *r)
{
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super);
	size_t i;

	for (i = 0; i < r->ngained; i++)
		if (!r->gained[i].len || r->gained[i].start < first ||
		    r->gained[i].start + r->gained[i].len > end)
			return 0;
	return 1;
}

/* The first of R's gained blocks set in BMAP into *BLK, if any. */
static int gained_set(ext2fs_block_bitmap bmap, const struct fmap_rebuild *r,
		      blk64_t *blk)
{
	size_t i;

	for (i = 0; i < r->ngained; i++) {
		const struct layout_piece *g = &r->gained[i];

		if (!ext2fs_test_block_bitmap_range2(bmap, g->start, g->len))
			return !ext2fs_find_first_set_block_bitmap2(bmap, g->start,
								    g->start + g->len - 1,
								    blk);
	}
	return 0;
}

/* Whether any of R's gained blocks is claimed by an earlier member. */
static int claimed_before(struct move_ctx *c, const struct fmap_rebuild *r)
{
	blk64_t blk;

	return gained_set(c->claimed, r, &blk);
}

static void member_free(struct move_member *mb)
{
	fmap_rebuild_free(&mb->r);
	fmap_free(&mb->m);
}

/* Blocks the open batch released are free once it is durable: commit it. */
static errcode_t commit_for_reuse(struct move_ctx *c)
{
	c->reuse_commits++;
	c->batch_blocks = 0;
	return switch_commit(c->sw);
}

errcode_t move_commit_for_reuse(struct move_ctx *c)
{
	return switch_batch_size(c->sw) ? commit_for_reuse(c) : 0;
}

/*
 * Whether MB may write the blocks it gains that the open batch released
 * through the batch's transaction (writer.h's logged moves), and how
 * many they are, into *N: few enough (MOVE_LOG_MAX_BYTES), room in the
 * transaction beside what the group logs already, and no --verify (it
 * reads the copies back from the disk before the commit).
 */
static int may_log(struct move_ctx *c, const struct move_member *mb, blk64_t *n)
{
	blk64_t max = MOVE_LOG_MAX_BYTES / c->fs->blocksize;

	if (c->verify)
		return 0;
	*n = switch_reused_blocks(c->sw, mb->r.gained, mb->r.ngained, max);
	return *n <= max && c->group_logged + *n <= switch_log_room(c->sw);
}

/* Whether MB gains blocks the open batch released and cannot log them. */
static int needs_commit(struct move_ctx *c, const struct move_member *mb)
{
	blk64_t n;

	return switch_would_reuse(c->sw, mb->r.gained, mb->r.ngained) &&
	       !may_log(c, mb, &n);
}

/*
 * Whether REQ's first move must wait, and for what: it gains blocks an
 * earlier member gains or releases (free once that one has switched),
 * blocks the open batch released and it cannot log (free once it is
 * durable), or blocks not free at all (free once the moves that release
 * them are done).  Waiting for a group, the block it waits for goes to
 * c->wait_blk (0: out of the filesystem's range, none to watch).
 */
static enum move_wait must_wait(struct move_ctx *c, const struct move_group *g,
				const struct move_member *mb)
{
	c->wait_blk = 0;
	if (g->n && gained_inside(c->fs, &mb->r) &&
	    gained_set(c->claimed, &mb->r, &c->wait_blk))
		return MOVE_WAIT_GROUP;
	if (needs_commit(c, mb))
		return MOVE_WAIT_COMMIT;
	if (!check_free(c->fs, &mb->r))
		return MOVE_WAIT_NONE;
	if (gained_inside(c->fs, &mb->r) &&
	    !gained_set(c->fs->block_map, &mb->r, &c->wait_blk))
		c->wait_blk = 0;
	return MOVE_WAIT_GROUP;
}

/* Drop G's members from BEFORE on, their claims with them. */
static void drop_from(struct move_ctx *c, struct move_group *g, size_t before)
{
	while (g->n > before) {
		struct move_member *mb = &g->mem[--g->n];

		if (mb->active) {
			claim_runs(c, mb->r.gained, mb->r.ngained, 0);
			claim_runs(c, mb->r.released, mb->r.nreleased, 0);
		}
		c->group_logged -= mb->logged;
		member_free(mb);
	}
}

size_t move_group_reserve(struct move_ctx *c, struct move_group *g,
			  const struct move_req *req, size_t n, enum move_reserve mode,
			  enum move_wait *waits, int *switch_failed)
{
	size_t before = g->n;
	errcode_t ret;
	size_t k;

	*switch_failed = 0;
	*waits = MOVE_WAIT_NONE;
	for (k = 0; k < n; k++) {
		struct move_member *mb;

		if (g->n == g->cap) {
			size_t cap = g->cap ? 2 * g->cap : 64;
			struct move_member *m = realloc(g->mem, cap * sizeof(*m));

			if (!m) {
				if (mode == MOVE_RESERVE_WHOLE) {
					drop_from(c, g, before);
					return 0;
				}
				if (k || g->n)
					break;	/* the rest waits for the next group */
				return 0;
			}
			g->mem = m;
			g->cap = cap;
		}
		mb = &g->mem[g->n];
		memset(mb, 0, sizeof(*mb));
		mb->ino = req[k].ino;
		mb->err = move_reserve(c->fs, req[k].ino, req[k].changes,
				       req[k].nchanges, req[k].meta, req[k].nmeta,
				       &mb->m, &mb->r);
		if (!mb->err && (mb->r.ngained || mb->r.nreleased)) {
			enum move_wait w = MOVE_WAIT_NONE;

			if ((mode == MOVE_RESERVE_WHOLE ||
			     (!k && mode == MOVE_RESERVE_WAIT_FIRST)) &&
			    (w = must_wait(c, g, mb)) != MOVE_WAIT_NONE) {
				member_free(mb);
				if (mode == MOVE_RESERVE_WHOLE)
					drop_from(c, g, before);
				*waits = w;
				return 0;
			}
			/*
			 * Blocks an earlier member releases are free once it
			 * has switched: this move waits for the next group.
			 */
			if (g->n && gained_inside(c->fs, &mb->r) &&
			    claimed_before(c, &mb->r)) {
				member_free(mb);
				break;
			}
			if (switch_would_reuse(c->sw, mb->r.gained, mb->r.ngained)) {
				blk64_t nlog;

				if (may_log(c, mb, &nlog)) {
					mb->logged = nlog;
					c->group_logged += nlog;
				} else if ((ret = commit_for_reuse(c)) != 0) {
					*switch_failed = 1;
					member_free(mb);
					break;
				}
			}
			mb->err = check_free(c->fs, &mb->r);
		}
		if (!mb->err && (mb->r.ngained || mb->r.nreleased)) {
			mb->active = 1;
			claim_runs(c, mb->r.gained, mb->r.ngained, 1);
			claim_runs(c, mb->r.released, mb->r.nreleased, 1);
		}
		g->n++;
	}
	return k;
}

static int cmp_copy_src(const void *a, const void *b)
{
	const struct copy_op *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* The group's copies, each at most half a buffer long, sorted by source. */
static errcode_t collect_ops(struct move_ctx *c, const struct move_group *g)
{
	size_t k, i;

	c->nops = 0;
	for (k = 0; k < g->n; k++) {
		const struct fmap_rebuild *r = &g->mem[k].r;

		if (!g->mem[k].active)
			continue;
		for (i = 0; i < r->ncopies; i++) {
			struct copy_op op = r->copies[i];

			while (op.len) {
				blk64_t n = op.len < c->chunk_blocks ? op.len : c->chunk_blocks;

				if (c->nops == c->ops_cap) {
					size_t cap = c->ops_cap ? 2 * c->ops_cap : 256;
					struct copy_op *o = realloc(c->ops, cap * sizeof(*o));
					struct copy_op *p = realloc(c->placed, cap * sizeof(*p));
					blk64_t *at = realloc(c->op_at, cap * sizeof(*at));

					if (o)
						c->ops = o;
					if (p)
						c->placed = p;
					if (at)
						c->op_at = at;
					if (!o || !p || !at)
						return ENOMEM;
					c->ops_cap = cap;
				}
				c->ops[c->nops].src = op.src;
				c->ops[c->nops].dst = op.dst;
				c->ops[c->nops].len = n;
				c->nops++;
				op.src += n;
				op.dst += n;
				op.len -= n;
			}
		}
	}
	sort_n(c->ops, c->nops, sizeof(*c->ops), cmp_copy_src);
	return 0;
}

static int cmp_placed_dst(const void *a, const void *b)
{
	const struct copy_op *x = a, *y = b;

	return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/*
 * Write ops [FROM, TO), read into the buffer's first half (each op's
 * place in op_at), in destination order: consecutive destinations
 * written as one request, from where they were read when they lie there
 * one after another too (a file read whole), else gathered in the
 * second half (the pieces of interleaved files).
 */
static errcode_t write_ops(struct move_ctx *c, size_t from, size_t to)
{
	ext2_filsys fs = c->fs;
	char *out = c->buf + c->chunk_blocks * fs->blocksize;
	struct copy_op *w = c->placed;	/* src: the op's place in the buffer */
	blk64_t run_dst = 0, run_n = 0, run_src = 0;
	int gathered = 0;	/* the run is in OUT, not at RUN_SRC */
	size_t i, n = to - from;
	errcode_t ret;

	for (i = 0; i < n; i++) {
		w[i].src = c->op_at[from + i];
		w[i].dst = c->ops[from + i].dst;
		w[i].len = c->ops[from + i].len;
	}
	sort_n(w, n, sizeof(*w), cmp_placed_dst);
	for (i = 0; i <= n; i++) {
		if (run_n && (i == n || w[i].dst != run_dst + run_n ||
			      run_n + w[i].len > c->chunk_blocks)) {
			ret = switch_write(c->sw, run_dst, run_n, gathered ? out :
					   c->buf + run_src * fs->blocksize);
			if (ret)
				return ret;
			if (c->held)
				ext2fs_mark_block_bitmap_range2(c->held, run_dst, run_n);
			c->done += run_n;
			c->written += run_n;
			c->copied += run_n;
			run_n = 0;
			if (report(c))
				return E2F_ERR_CANCELLED;
		}
		if (i == n)
			break;
		if (!run_n) {
			run_dst = w[i].dst;
			run_src = w[i].src;
			gathered = 0;
		} else if (!gathered && w[i].src != run_src + run_n) {
			copy_n(out, c->buf + run_src * fs->blocksize, run_n * fs->blocksize);
			gathered = 1;
		}
		if (gathered)
			copy_n(out + run_n * fs->blocksize, c->buf + w[i].src * fs->blocksize,
			       w[i].len * fs->blocksize);
		run_n += w[i].len;
	}
	return 0;
}

/* A run of the read-ahead, to the page cache alone. */
static errcode_t ahead_issue(void *priv, blk64_t blk, blk64_t n)
{
	struct move_ctx *c = priv;

	if (io_channel_cache_readahead(c->fs->io, blk, n))
		c->nahead = 0;	/* the channel cannot: no read-ahead */
	else if (c->held)
		ext2fs_mark_block_bitmap_range2(c->held, blk, n);
	return 0;
}

/* The read-ahead due before a read of N blocks at BLK (readthrough.h). */
static errcode_t ahead_to(struct move_ctx *c, blk64_t blk, blk64_t n)
{
	return read_ahead_to(c->ahead, c->nahead, &c->ahead_at, blk, blk + n,
			     ahead_issue, c);
}

/* Read N blocks at BLK into the buffer at block AT; the page cache holds them. */
static errcode_t read_held(struct move_ctx *c, blk64_t blk, blk64_t n, blk64_t at)
{
	errcode_t ret = ahead_to(c, blk, n);

	if (!ret)
		ret = io_channel_read_blk64(c->fs->io, blk, (int)n,
					    c->buf + at * c->fs->blocksize);

	if (!ret && c->held)
		ext2fs_mark_block_bitmap_range2(c->held, blk, n);
	return ret;
}

/*
 * Read through the gap of N blocks at BLK, whose place in the buffer is
 * block AT: the disk reads it in its turn, between the sources around it,
 * but what the pass copies is only its sources.  A gap longer than one
 * request (readthrough.h) goes to the page cache alone (the channel's
 * readahead: posix_fadvise WILLNEED), where the later moves that read it
 * find it, and the rest of it is not copied for nothing; where the
 * channel cannot, it is read into its place.
 */
static errcode_t read_gap(struct move_ctx *c, blk64_t blk, blk64_t n, blk64_t at)
{
	errcode_t ret = ahead_to(c, blk, n);

	if (ret)
		return ret;
	if (io_channel_cache_readahead(c->fs->io, blk, n))
		return read_held(c, blk, n, at);
	if (c->held)
		ext2fs_mark_block_bitmap_range2(c->held, blk, n);
	return 0;
}

/*
 * The ops, half a buffer at a time: their sources read in block order
 * (a gap read through where readthrough.c says; a long one with
 * read_gap), then written out, and made durable by the commit's flush:
 * one flush for the group's data, which a rotating disk writes in block
 * order, not one a buffer, each a wait for the platter between reads.
 * What is read is held (c->held): no later pass reads it through again.
 */
static errcode_t copy_ops(struct move_ctx *c)
{
	ext2_filsys fs = c->fs;
	size_t i = 0, j;
	blk64_t copied = 0;
	errcode_t ret;

	/* A small group reads ahead what later moves read (readthrough.h);
	 * out of memory, it does not. */
	for (j = 0; j < c->nops; j++)
		copied += c->ops[j].len;
	c->ahead_at = 0;
	if (read_ahead_runs(c->later, c->held, &c->ahead_from, copied, c->buf_blocks,
			    fs->blocksize, &c->ahead, &c->nahead, &c->ahead_cap))
		c->nahead = 0;
	while (i < c->nops) {
		blk64_t used = 0, rstart = 0, rlen = 0, rat = 0;

		/* Place ops [i, j) in the buffer, reading as we go. */
		for (j = i; j < c->nops; j++) {
			const struct copy_op *op = &c->ops[j];
			blk64_t rend = rstart + rlen;

			if (rlen && op->src >= rend &&
			    used + (op->src - rend) + op->len <= c->chunk_blocks &&
			    read_through(c->later, c->held, rend, op->src - rend, fs->blocksize)) {
				blk64_t gap = op->src - rend;

				if (gap <= READ_THROUGH_BYTES / fs->blocksize) {
					rlen = op->src + op->len - rstart;
				} else {
					ret = read_held(c, rstart, rlen, rat);
					if (!ret)
						ret = read_gap(c, rend, gap, rat + rlen);
					if (ret)
						return ret;
					rstart = op->src;
					rlen = op->len;
					rat = used + gap;
				}
				used += gap;
			} else {
				if (used + op->len > c->chunk_blocks)
					break;
				if (rlen) {
					ret = read_held(c, rstart, rlen, rat);
					if (ret)
						return ret;
				}
				rstart = op->src;
				rlen = op->len;
				rat = used;
			}
			c->op_at[j] = used;
			used += op->len;
		}
		if (rlen) {
			ret = read_held(c, rstart, rlen, rat);
			if (ret)
				return ret;
		}
		ret = write_ops(c, i, j);
		if (ret)
			return ret;
		i = j;
	}
	return ahead_to(c, ext2fs_blocks_count(fs->super), 0);
}

errcode_t move_group_copy(struct move_ctx *c, struct move_group *g)
{
	size_t k, i;
	errcode_t ret;

	ret = collect_ops(c, g);
	if (!ret)
		ret = copy_ops(c);
	for (k = 0; !ret && k < g->n; k++) {
		struct fmap_rebuild *r = &g->mem[k].r;

		if (!g->mem[k].active)
			continue;
		for (i = 0; !ret && i < r->nwrites; i++) {
			ret = switch_write(c->sw, r->writes[i].pblk, 1,
					   r->writes[i].buf);
			if (!ret)
				c->written++;
		}
	}
	for (k = 0; k < g->n; k++) {
		struct move_member *mb = &g->mem[k];

		if (!mb->active)
			continue;
		mb->st.copied = mb->r.copy_blocks;
		mb->st.written = mb->r.copy_blocks + mb->r.nwrites;
		/* --verify: a copy read back different fails its move only. */
		mb->err = ret ? ret : move_flush(c, &mb->r);
		if (mb->err)
			mb->active = 0;
	}
	return ret;
}

errcode_t move_group_switch(struct move_ctx *c, struct move_group *g, size_t k)
{
	struct move_member *mb = &g->mem[k];
	errcode_t ret;

	ret = move_switch(c, mb->ino, &mb->m, &mb->r, &mb->st);
	if (ret)
		return ret;
	if (switch_batch_size(c->sw) == 1)
		c->batch_blocks = 0;	/* this move opened a new batch */
	c->batch_blocks += mb->st.written;
	return 0;
}

void move_group_drop(struct move_ctx *c, struct move_group *g)
{
	size_t k;

	for (k = 0; k < g->n; k++) {
		struct move_member *mb = &g->mem[k];

		if (mb->r.ngained || mb->r.nreleased) {
			claim_runs(c, mb->r.gained, mb->r.ngained, 0);
			claim_runs(c, mb->r.released, mb->r.nreleased, 0);
		}
		/* Its logged copies must never reach blocks it did not take.
		 * A failure stops the writer, which the next call reports. */
		if (mb->logged && !mb->st.switched)
			(void)switch_forget(c->sw, mb->r.gained, mb->r.ngained);
		member_free(mb);
	}
	g->n = 0;
	c->group_logged = 0;
}

errcode_t move_group_end(struct move_ctx *c, struct move_group *g)
{
	errcode_t ret = 0;

	move_group_drop(c, g);
	/* The data a batch leaves to its commit is bounded by --buffer. */
	if (c->batch_blocks >= c->buf_blocks && switch_batch_size(c->sw)) {
		ret = switch_commit(c->sw);
		c->batch_blocks = 0;
	}
	return ret;
}

void move_group_free(struct move_group *g)
{
	free(g->mem);
	memset(g, 0, sizeof(*g));
}
