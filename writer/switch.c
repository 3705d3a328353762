/*
 * switch.c --- switch a file to its new blocks so that a power cut at any
 * instant leaves the old layout or the new one; see writer.h.
 *
 * Without a journal the switch is three ordered steps, the first two
 * ended by a flush (a barrier: the disk may reorder writes between two
 * flushes, not across one):
 *   1. the new blocks are marked in use (bitmaps, descriptors, superblock);
 *   2. the inode table block with the new inode;
 *   3. the old blocks are marked free.
 * A cut before 2 leaks the new blocks, a cut before 3 the old ones: e2fsck
 * frees them, and the file is whole either way.  Step 3 needs no flush of
 * its own: what must not reach the disk before it is nothing (a block is
 * never marked free before the inode that let it go is durable, which step
 * 2's flush sees to), so its writes go out with the next flush, the next
 * batch's step 1 or switch_close's: one flush a commit saved, and the
 * bitmap blocks both steps write go out once.  A cut before that flush
 * leaks the old blocks, as a cut before step 3 always did.  So that a cut
 * is noticed, the superblock says "not clean" from switch_open to
 * switch_close, as the kernel's ext2 does while mounted.
 *
 * Where the group descriptors hold nothing but counts and places (no
 * checksums, no uninitialized groups: ext2, ext3 and ext4 without
 * metadata_csum or uninit_bg, here always without a journal), more waits
 * for switch_close (lazy counts): step 1 writes the bitmaps only, not
 * the descriptors and superblock, whose free counts are all that changes
 * in them, and step 3 writes nothing.  The counts are what e2fsck
 * recomputes and the kernel's ext2 keeps in memory and writes back when
 * it likes; a block left marked in use is a leak, as a cut before step 3
 * always left; and a filesystem "not clean" is checked before it is
 * trusted.  Each commit so saves its trips to the start of the disk and
 * to the bitmaps of the groups it only releases blocks in.  (A later
 * step 1 that writes such a group's bitmap writes its releases too: they
 * are in memory, their inodes durable.)  switch_close writes what waits
 * and makes it durable before it writes "clean".  With checksums a
 * bitmap and its descriptor go together, and each step writes both.
 *
 * With a journal the same blocks form one JBD2 transaction (journal.c).
 *
 * When the file's block count changes (its extent tree grows or shrinks)
 * on a filesystem with quota files, the blocks holding its user, group
 * and project entries (quotawrite.c) go with the inode: in the same
 * transaction, or written in place in step 2 beside the inode table
 * block.  Without a journal a cut in step 2 can leave one of them old
 * and the other new: the usage is then a count e2fsck -f recomputes, as
 * the kernel's ext4 without a journal leaves it, and the superblock says
 * "not clean", so e2fsck does check it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "writer.h"
#include "writer_int.h"

/* A block the open batch writes in place at its commit (ordered). */
struct pending {
	blk64_t	blk;
	char	*image;
};

struct switch_ctx {
	ext2_filsys	fs;
	int		flags;
	struct journal	*journal;	/* NULL: ordered writes */
	char		*buf;		/* one block */
	struct metawrite_groups groups;	/* touched by the switch at hand */
	struct quotawrite quota;	/* its quota file blocks */
	char		*old_inode;	/* the inode before it, inode size */
	io_channel	wrapper;	/* ours, reading through the journal */
	int		marked_unclean;	/* ordered: VALID_FS cleared on disk */
	int		unflushed_meta;	/* ordered: a step 3 or what lazy
					 * counts left written, not flushed */
	int		lazy_counts;	/* ordered: descriptors and superblock
					 * at switch_close (see the top) */
	struct metawrite_groups counted;	/* lazy: the groups whose
						 * descriptors wait */
	struct metawrite_groups released_groups;	/* lazy: those whose
							 * bitmaps may wait */
	errcode_t	failed;		/* a write failed: write nothing more */
	/* The open batch: switches made in memory, durable at switch_commit. */
	size_t		nbatch;		/* switches in it */
	struct layout_piece *released;	/* the runs they release */
	uint64_t	nreleased, released_cap;
	/* Ordered only: groups its gains touched, and the inode table and
	 * quota file blocks it writes (their newest images). */
	struct metawrite_groups gained_groups;
	struct pending	*pend;
	uint64_t	npend, pend_cap;
	uint64_t	commits, reuse_commits;	/* batches made durable, and those
						 * ended for a reuse */
	ext2fs_block_bitmap released_map;	/* the open batch's releases */
	/* Journalled: blocks whose data the open transaction logs, gained
	 * by a switch of it while a switch of it released them. */
	ext2fs_block_bitmap logged_map;
	int		logged_any;	/* logged_map may have marks (until the commit) */
	uint64_t	logged_total;	/* data blocks logged in the run */
};

static int host_is_little_endian(void)
{
	const uint16_t one = 1;

	return *(const unsigned char *)&one == 1;
}

/* Whether BLK is in a run the open batch released. */
static int is_released(const struct switch_ctx *c, blk64_t blk)
{
	return ext2fs_fast_test_block_bitmap2(c->released_map, blk);
}

/* Whether RUN lies inside the filesystem (the bitmaps' range). */
static int run_inside(const struct switch_ctx *c, const struct layout_piece *run)
{
	blk64_t first = c->fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(c->fs->super);

	return run->len && run->start >= first && run->start < end &&
	       run->len <= end - run->start;
}

/* Write the primary superblock, as one whole block, in place. */
static errcode_t write_super(struct switch_ctx *c)
{
	blk64_t blk;
	errcode_t ret;

	ret = metawrite_super_block(c->fs, &blk, c->buf);
	if (ret)
		return ret;
	return io_channel_write_blk64(c->fs->io, blk, 1, c->buf);
}

/* The descriptor blocks holding the groups of GS, to EMIT. */
static errcode_t emit_descriptors(struct switch_ctx *c,
				  const struct metawrite_groups *gs,
				  errcode_t (*emit)(struct switch_ctx *, blk64_t, char *))
{
	blk64_t blk, index, last_index = ~(blk64_t)0;
	errcode_t ret;
	size_t i;

	for (i = 0; i < gs->n; i++) {
		ret = metawrite_gdt_block(c->fs, gs->g[i], &index, &blk, c->buf);
		if (ret)
			return ret;
		if (index == last_index)	/* groups are ascending */
			continue;
		last_index = index;
		ret = emit(c, blk, c->buf);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Hand every block the touched groups need (their bitmap blocks, the
 * descriptor blocks holding them, the superblock) to EMIT: written in
 * place or added to the transaction.  With lazy counts, the bitmaps
 * only: the groups join those switch_close writes the descriptors of.
 */
static errcode_t emit_groups(struct switch_ctx *c,
			     errcode_t (*emit)(struct switch_ctx *, blk64_t, char *))
{
	ext2_filsys fs = c->fs;
	blk64_t blk;
	errcode_t ret;
	size_t i;

	/* Bitmaps first: their checksums live in the descriptors. */
	for (i = 0; i < c->groups.n; i++) {
		ret = metawrite_bitmap_block(fs, c->groups.g[i], &blk, c->buf);
		if (!ret)
			ret = emit(c, blk, c->buf);
		if (ret)
			return ret;
	}
	if (c->lazy_counts)
		return metawrite_groups_merge(&c->counted, &c->groups);
	ret = emit_descriptors(c, &c->groups, emit);
	if (!ret)
		ret = metawrite_super_block(fs, &blk, c->buf);
	return ret ? ret : emit(c, blk, c->buf);
}

static errcode_t emit_in_place(struct switch_ctx *c, blk64_t blk, char *buf)
{
	return io_channel_write_blk64(c->fs->io, blk, 1, buf);
}

static errcode_t emit_to_journal(struct switch_ctx *c, blk64_t blk, char *buf)
{
	return journal_add(c->journal, blk, buf);
}

/* The ordered batch's image of BLK, or NULL. */
static struct pending *pend_find(const struct switch_ctx *c, blk64_t blk)
{
	size_t i;

	for (i = 0; i < c->npend; i++)
		if (c->pend[i].blk == blk)
			return &c->pend[i];
	return NULL;
}

/* Keep IMAGE as BLK's newest content, written at the batch's commit. */
static errcode_t pend_put(struct switch_ctx *c, blk64_t blk, const char *image)
{
	struct pending *p = pend_find(c, blk);

	if (!p) {
		if (util_grow(&c->pend, &c->pend_cap, c->npend + 1,
			      sizeof(*c->pend)))
			return EXT2_ET_NO_MEMORY;
		p = &c->pend[c->npend];
		p->image = malloc(c->fs->blocksize);
		if (!p->image)
			return EXT2_ET_NO_MEMORY;
		p->blk = blk;
		c->npend++;
	}
	memcpy(p->image, image, c->fs->blocksize);
	return 0;
}

static void pend_clear(struct switch_ctx *c)
{
	size_t i;

	for (i = 0; i < c->npend; i++)
		free(c->pend[i].image);
	c->npend = 0;
}

/* The image of INO's inode table block with INODE in it, into c->buf. */
static errcode_t inode_block(struct switch_ctx *c, ext2_ino_t ino,
			     const struct ext2_inode_large *inode, blk64_t *blk)
{
	struct pending *p;
	unsigned offset;
	errcode_t ret;

	ret = metawrite_inode_location(c->fs, ino, blk, &offset);
	if (ret)
		return ret;
	/* The batch's image, or one logged but not yet checkpointed, is
	 * newer than the disk. */
	if ((p = pend_find(c, *blk)) != NULL) {
		memcpy(c->buf, p->image, c->fs->blocksize);
	} else if (!c->journal || !journal_peek(c->journal, *blk, c->buf)) {
		ret = io_channel_read_blk64(c->fs->io, *blk, 1, c->buf);
		if (ret)
			return ret;
	}
	return metawrite_inode_block(c->fs, ino, inode, c->buf);
}

/*
 * Ordered: the switch joins the batch in memory.  Its gains are marked
 * now (no later switch may take them), its releases wait for step 3 of
 * the commit; the inode and quota blocks are kept for step 2.
 */
static errcode_t add_ordered(struct switch_ctx *c, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     const struct layout_piece *gained, size_t ngained)
{
	blk64_t blk;
	errcode_t ret;
	size_t i;

	ret = metawrite_account(c->fs, gained, ngained, 1, &c->gained_groups);
	if (!ret)
		ret = inode_block(c, ino, inode, &blk);
	if (!ret)
		ret = pend_put(c, blk, c->buf);
	for (i = 0; !ret && i < c->quota.n; i++)
		ret = pend_put(c, c->quota.blk[i], c->quota.img[i]);
	return ret;
}

/*
 * Ordered commit, three steps (see the top of the file):
 *   1. the gains marked in use, a flush (it also makes the data durable,
 *      and the previous commit's step 3);
 *   2. the inode table blocks (and quota file blocks), a flush;
 *   3. the releases marked free, flushed by the next flush (with lazy
 *      counts marked in memory only, written by switch_close).
 */
static errcode_t commit_ordered(struct switch_ctx *c)
{
	errcode_t ret;
	size_t i;

	metawrite_groups_free(&c->groups);
	c->groups = c->gained_groups;
	memset(&c->gained_groups, 0, sizeof(c->gained_groups));
	ret = c->groups.n ? emit_groups(c, emit_in_place) : 0;
	if (!ret)
		ret = io_channel_flush(c->fs->io);
	if (!ret)
		c->unflushed_meta = 0;
	for (i = 0; !ret && i < c->npend; i++)
		ret = io_channel_write_blk64(c->fs->io, c->pend[i].blk, 1,
					     c->pend[i].image);
	if (!ret)
		ret = io_channel_flush(c->fs->io);
	if (ret || !c->nreleased)
		return ret;
	metawrite_groups_clear(&c->groups);
	ret = metawrite_account(c->fs, c->released, c->nreleased, 0, &c->groups);
	if (!ret && c->lazy_counts)
		return metawrite_groups_merge(&c->released_groups, &c->groups);
	if (!ret)
		ret = emit_groups(c, emit_in_place);
	if (!ret)
		c->unflushed_meta = 1;
	return ret;
}

/* Lazy counts: what waits for switch_close (see the top of the file). */
static errcode_t write_lazy(struct switch_ctx *c)
{
	blk64_t blk;
	errcode_t ret = 0;
	size_t i;

	for (i = 0; !ret && i < c->released_groups.n; i++) {
		ret = metawrite_bitmap_block(c->fs, c->released_groups.g[i], &blk, c->buf);
		if (!ret)
			ret = io_channel_write_blk64(c->fs->io, blk, 1, c->buf);
	}
	if (!ret)
		ret = metawrite_groups_merge(&c->counted, &c->released_groups);
	if (!ret)
		ret = emit_descriptors(c, &c->counted, emit_in_place);
	/* The superblock's count, when no "clean" follows to carry it. */
	if (!ret && !c->marked_unclean)
		ret = write_super(c);
	if (!ret) {
		c->unflushed_meta = 1;
		metawrite_groups_clear(&c->released_groups);
		metawrite_groups_clear(&c->counted);
	}
	return ret;
}

/*
 * The journal blocks this switch adds to the transaction at most: its
 * groups' bitmaps and descriptor blocks, the inode table block, the
 * superblock, the quota file blocks.  Nothing changes.
 */
static errcode_t journal_need(struct switch_ctx *c,
			      const struct layout_piece *gained, size_t ngained,
			      const struct layout_piece *released,
			      size_t nreleased, size_t *nblocks)
{
	errcode_t ret;

	metawrite_groups_clear(&c->groups);
	ret = metawrite_groups_of(c->fs, gained, ngained, &c->groups);
	if (!ret)
		ret = metawrite_groups_of(c->fs, released, nreleased, &c->groups);
	if (ret)
		return ret;
	*nblocks = c->groups.n + metawrite_gdt_blocks_of(c->fs, &c->groups) + 2 +
		   c->quota.n;
	return 0;
}

/* Journalled: the switch joins the open transaction, in memory. */
static errcode_t add_journalled(struct switch_ctx *c, ext2_ino_t ino,
				struct ext2_inode_large *inode,
				const struct layout_piece *gained, size_t ngained,
				const struct layout_piece *released,
				size_t nreleased)
{
	blk64_t blk;
	errcode_t ret;
	size_t i;

	/* Before anything changes in memory: the superblock may go out. */
	ret = journal_start(c->journal);
	if (ret)
		return ret;
	metawrite_groups_clear(&c->groups);
	ret = metawrite_account(c->fs, gained, ngained, 1, &c->groups);
	if (!ret)
		ret = metawrite_account(c->fs, released, nreleased, 0, &c->groups);
	if (!ret)
		ret = inode_block(c, ino, inode, &blk);
	if (!ret)
		ret = journal_add(c->journal, blk, c->buf);
	for (i = 0; !ret && i < c->quota.n; i++)
		ret = journal_add(c->journal, c->quota.blk[i], c->quota.img[i]);
	if (!ret)
		ret = emit_groups(c, emit_to_journal);
	if (!ret)
		ret = journal_revoke(c->journal, released, nreleased);
	return ret;
}

/*
 * After a failed write memory and disk disagree, and the disk is in a
 * state a power cut could have left.  Make sure nothing more is written,
 * not even by ext2fs_close: the next e2fsck (or mount) repairs it.
 */
static void fail_stop(struct switch_ctx *c, errcode_t ret)
{
	c->failed = ret;
	c->fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY |
			  EXT2_FLAG_IB_DIRTY | EXT2_FLAG_RW);
}

/*
 * The quota file blocks that switching INO to INODE changes, into
 * c->quota: read (through the journal), nothing written.
 */
static errcode_t quota_blocks(struct switch_ctx *c, ext2_ino_t ino,
			      const struct ext2_inode_large *inode)
{
	ext2_filsys fs = c->fs;
	errcode_t ret;

	quotawrite_free(&c->quota);
	if (!ext2fs_has_feature_quota(fs->super))
		return 0;
	ret = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)c->old_inode,
				     EXT2_INODE_SIZE(fs->super));
	if (ret)
		return ret;
	return quotawrite_prepare(fs, ino,
				  (const struct ext2_inode_large *)c->old_inode,
				  inode, &c->quota);
}

/*
 * A batch holds at most half the log.  The kernel's transactions stop at a
 * quarter so that the next can start while one commits; replay (the
 * kernel's and e2fsck's) takes a transaction of any length the log holds,
 * and nothing here runs while one commits.  On trees of small files the
 * batches commit for the log's room, each commit two flushes: at a quarter
 * the kernel-written tree of 200,000 files of bench/iocost.sh made 56
 * flushes, at half 38 (25,000 files: 18, 14), in the same modeled time;
 * the log is checkpointed every second commit rather than every fourth.
 */
static size_t cap_of(size_t log_blocks)
{
	return log_blocks / 2;
}

static size_t journal_cap(const struct journal *j)
{
	return cap_of(journal_log_blocks(j));
}

static size_t batch_journal_cap(const struct switch_ctx *c)
{
	return journal_cap(c->journal);
}

/*
 * Logged data stays below three quarters of a batch's journal room (and
 * half the journal's images in memory, JOURNAL_IMAGES_MAX_BYTES), so
 * that the switches' metadata, added after the copies, fits beside it
 * without committing a batch whose moves are not switched yet (safe: the
 * blocks are free once it commits; but a commit lost).  A switch adds an
 * inode table block and the bitmaps of the groups it touches, shared
 * with the batch's others: on the kernel-written trees of
 * bench/iocost.sh some 350 of 2,047 blocks (a quarter of ktree's log).
 * Half, as it was, committed a tree's batches a third more often
 * (ktree200k then: 76 flushes, 56 at three quarters).  0: none may be
 * logged.
 */
static blk64_t log_room(size_t log_blocks, unsigned bs, size_t used)
{
	size_t cap = cap_of(log_blocks) * 3 / 4;
	size_t mem = JOURNAL_IMAGES_MAX_BYTES / 2 / bs;

	if (cap > mem)
		cap = mem;	/* and within the images kept in memory */
	return used < cap ? cap - used : 0;
}

static blk64_t log_room_of(const struct journal *j, size_t used)
{
	if (!journal_can_revoke(j))
		return 0;
	return log_room(journal_log_blocks(j), journal_block_size(j), used);
}

/* The batch is durable: what it released is free, nothing is logged. */
static void forget_released(struct switch_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nreleased; i++)
		if (run_inside(c, &c->released[i]))
			ext2fs_unmark_block_bitmap_range2(c->released_map,
							  c->released[i].start,
							  c->released[i].len);
	c->nreleased = 0;
	if (c->logged_any)
		ext2fs_clear_block_bitmap(c->logged_map);
	c->logged_any = 0;
}

static errcode_t do_commit(struct switch_ctx *c)
{
	errcode_t ret;

	/* A batch of forgotten logged moves only (switch_forget) commits
	 * their revokes. */
	if (!c->nbatch && !c->nreleased)
		return 0;
	/* The journal's first flush also makes the data durable, before
	 * the commit block (ordered mode); ordered writes' step 1 too. */
	ret = c->journal ? journal_commit(c->journal) : commit_ordered(c);
	if (ret)
		return ret;	/* the batch stays counted: not durable */
	pend_clear(c);
	metawrite_groups_clear(&c->gained_groups);
	forget_released(c);
	c->nbatch = 0;
	c->commits++;
	return 0;
}

errcode_t switch_commit(struct switch_ctx *c)
{
	errcode_t ret;

	if (c->failed)
		return c->failed;
	ret = do_commit(c);
	if (ret)
		fail_stop(c, ret);
	return ret;
}

/*
 * Blocks of RUNS the open batch released and has not logged; stop
 * counting past LIMIT.
 */
blk64_t switch_reused_blocks(const struct switch_ctx *c,
			     const struct layout_piece *runs, size_t n,
			     blk64_t limit)
{
	blk64_t count = 0, b;
	size_t i;

	if (!c->nreleased)
		return 0;
	for (i = 0; i < n && count <= limit; i++) {
		if (!run_inside(c, &runs[i])) {
			/* check_runs refuses it; overlap says what it reuses */
			if (layout_pieces_overlap(&runs[i], 1, c->released, c->nreleased))
				count++;
			continue;
		}
		if (ext2fs_test_block_bitmap_range2(c->released_map, runs[i].start,
						    runs[i].len))
			continue;	/* none of it released */
		for (b = runs[i].start; b < runs[i].start + runs[i].len &&
		     count <= limit; b++)
			if (is_released(c, b) &&
			    !(c->logged_any && ext2fs_fast_test_block_bitmap2(c->logged_map, b)))
				count++;
	}
	return count;
}

int switch_would_reuse(const struct switch_ctx *c,
		       const struct layout_piece *runs, size_t n)
{
	return switch_reused_blocks(c, runs, n, 0) != 0;
}

blk64_t switch_log_room(const struct switch_ctx *c)
{
	if (!c || c->failed || !c->journal)
		return 0;
	return log_room_of(c->journal, journal_pending(c->journal));
}

/* Write N blocks at BLK in place. */
static errcode_t write_in_place(struct switch_ctx *c, blk64_t blk, blk64_t n,
				const char *buf)
{
	return n ? io_channel_write_blk64(c->fs->io, blk, (int)n, buf) : 0;
}

errcode_t switch_write(struct switch_ctx *c, blk64_t blk, blk64_t n,
		       const void *data)
{
	const char *buf = data;
	unsigned bs = c->fs->blocksize;
	struct layout_piece run = { blk, n };
	blk64_t i, from = 0;
	errcode_t ret;

	if (c->failed)
		return c->failed;
	if (!c->journal || !c->nreleased || !run_inside(c, &run) ||
	    ext2fs_test_block_bitmap_range2(c->released_map, blk, n))
		return write_in_place(c, blk, n, buf);
	/* Blocks the open batch released go through its transaction. */
	for (i = 0; i < n; i++) {
		if (!is_released(c, blk + i))
			continue;
		ret = write_in_place(c, blk + from, i - from, buf + from * bs);
		if (!ret)
			ret = journal_add(c->journal, blk + i, buf + i * bs);
		if (ret)
			return ret;
		if (!ext2fs_fast_test_block_bitmap2(c->logged_map, blk + i)) {
			ext2fs_fast_mark_block_bitmap2(c->logged_map, blk + i);
			c->logged_any = 1;
			c->logged_total++;
		}
		from = i + 1;
	}
	return write_in_place(c, blk + from, n - from, buf + from * bs);
}

/*
 * RELEASED joins the batch's releases (room made by the caller).  A
 * logged block among them is logged no more: journal_revoke dropped its
 * image (add_journalled, switch_forget).
 */
static void record_released(struct switch_ctx *c,
			    const struct layout_piece *released, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!run_inside(c, &released[i]))
			continue;
		ext2fs_mark_block_bitmap_range2(c->released_map, released[i].start,
						released[i].len);
		if (c->logged_any &&
		    !ext2fs_test_block_bitmap_range2(c->logged_map, released[i].start,
						     released[i].len))
			ext2fs_unmark_block_bitmap_range2(c->logged_map,
							  released[i].start,
							  released[i].len);
	}
	if (n)
		copy_n(c->released + c->nreleased, released, n * sizeof(*released));
	c->nreleased += n;
}

errcode_t switch_forget(struct switch_ctx *c, const struct layout_piece *runs,
			size_t n)
{
	errcode_t ret;

	if (c->failed)
		return c->failed;
	/* A batch that filled up may have committed its images already. */
	if (!c->journal || !journal_holds(c->journal, runs, n))
		return 0;	/* it logged nothing */
	/*
	 * Its images must never reach the blocks: drop them (revoked where
	 * a transaction committed meanwhile) and count the blocks released
	 * by the batch, so that whoever gains them before the revoke is
	 * durable logs them or commits first.
	 */
	ret = journal_revoke(c->journal, runs, n);
	if (!ret && util_grow(&c->released, &c->released_cap, c->nreleased + n,
			      sizeof(*c->released)))
		ret = EXT2_ET_NO_MEMORY;
	if (ret) {
		fail_stop(c, ret);
		return ret;
	}
	record_released(c, runs, n);
	return 0;
}

uint64_t switch_logged_blocks(const struct switch_ctx *c)
{
	return c ? c->logged_total : 0;
}

size_t switch_batch_size(const struct switch_ctx *c)
{
	return c ? c->nbatch : 0;
}

void switch_counts(const struct switch_ctx *c, uint64_t *commits,
		   uint64_t *reuse_commits)
{
	*commits = c ? c->commits : 0;
	*reuse_commits = c ? c->reuse_commits : 0;
}

errcode_t switch_add(struct switch_ctx *c, ext2_ino_t ino,
		     struct ext2_inode_large *inode,
		     const struct layout_piece *gained, size_t ngained,
		     const struct layout_piece *released, size_t nreleased)
{
	size_t nblocks = 0;
	errcode_t ret;

	if (c->failed)
		return c->failed;
	/* Blocks the batch releases are not free until it is durable. */
	if (switch_would_reuse(c, gained, ngained)) {
		c->reuse_commits++;
		ret = switch_commit(c);
		if (ret)
			return ret;
	}
	/* Refuse bad input before anything changes, in memory or on disk. */
	ret = metawrite_check_runs(c->fs, gained, ngained, 0);
	if (!ret)
		ret = metawrite_check_runs(c->fs, released, nreleased, 1);
	if (!ret)
		ret = quota_blocks(c, ino, inode);
	if (!ret && c->journal)
		ret = journal_need(c, gained, ngained, released, nreleased,
				   &nblocks);
	/* A full batch is committed first; a switch that does not fit an
	 * empty log is refused. */
	if (!ret && c->journal && c->nbatch &&
	    (journal_pending(c->journal) + nblocks > batch_journal_cap(c) ||
	     journal_reserve(c->journal, journal_pending(c->journal) + nblocks))) {
		ret = switch_commit(c);
		if (ret)
			return ret;
	}
	if (!ret && c->journal)
		ret = journal_reserve(c->journal, nblocks);
	if (!ret && util_grow(&c->released, &c->released_cap,
			      c->nreleased + nreleased, sizeof(*c->released)))
		ret = EXT2_ET_NO_MEMORY;
	if (ret) {
		quotawrite_free(&c->quota);
		return ret;
	}
	if (c->journal)
		ret = add_journalled(c, ino, inode, gained, ngained,
				     released, nreleased);
	else
		ret = add_ordered(c, ino, inode, gained, ngained);
	quotawrite_free(&c->quota);
	/* libext2fs' inode cache may hold the old inode. */
	ext2fs_flush_icache(c->fs);
	if (ret) {
		fail_stop(c, ret);
		return ret;
	}
	record_released(c, released, nreleased);
	c->nbatch++;
	return 0;
}

errcode_t switch_file(struct switch_ctx *c, ext2_ino_t ino,
		      struct ext2_inode_large *inode,
		      const struct layout_piece *gained, size_t ngained,
		      const struct layout_piece *released, size_t nreleased)
{
	errcode_t ret;

	ret = switch_add(c, ino, inode, gained, ngained, released, nreleased);
	return ret ? ret : switch_commit(c);
}

errcode_t switch_failure(const struct switch_ctx *c)
{
	return c ? c->failed : 0;
}

int switch_is_failed(const struct switch_ctx *c)
{
	return switch_failure(c) != 0;
}

/* Reads see the blocks the journal holds and the disk does not yet. */
static void read_through_journal(void *priv, uint64_t offset, uint64_t len,
				 void *data)
{
	struct switch_ctx *c = priv;

	journal_overlay(c->journal, offset, len, data);
}

/* Ordered: reads see the blocks the open batch has not written yet. */
static void read_through_batch(void *priv, uint64_t offset, uint64_t len,
			       void *data)
{
	struct switch_ctx *c = priv;
	uint64_t bs = c->fs->blocksize;
	size_t i;

	for (i = 0; i < c->npend; i++) {
		uint64_t start = c->pend[i].blk * bs, lo, hi;

		if (start >= offset + len || start + bs <= offset)
			continue;
		lo = start > offset ? start : offset;
		hi = start + bs < offset + len ? start + bs : offset + len;
		memcpy((char *)data + (lo - offset),
		       c->pend[i].image + (lo - start), hi - lo);
	}
}

static const struct iowrap_hooks batch_hooks = {
	.read = read_through_batch,
};

static const struct iowrap_hooks journal_hooks = {
	.read = read_through_journal,
};

static void ctx_free(struct switch_ctx *c)
{
	if (!c)
		return;
	iowrap_unhook(c->wrapper);
	journal_free(c->journal);
	metawrite_groups_free(&c->groups);
	metawrite_groups_free(&c->gained_groups);
	metawrite_groups_free(&c->counted);
	metawrite_groups_free(&c->released_groups);
	pend_clear(c);
	free(c->pend);
	free(c->released);
	if (c->released_map)
		ext2fs_free_block_bitmap(c->released_map);
	if (c->logged_map)
		ext2fs_free_block_bitmap(c->logged_map);
	quotawrite_free(&c->quota);
	ext2fs_free_mem(&c->old_inode);
	ext2fs_free_mem(&c->buf);
	free(c);
}

/*
 * Superblocks go out whole, never through write_byte (writer.h), and
 * reads see the blocks the journal holds that the disk does not yet.
 */
static errcode_t open_journalled(struct switch_ctx *c)
{
	ext2_filsys fs = c->fs;
	errcode_t ret;

	ret = journal_open(fs, c->flags & SWITCH_NO_CHECKPOINT ?
			   JOURNAL_NO_CHECKPOINT : 0, &c->journal);
	if (!ret)
		ret = iowrap_push(fs, &journal_hooks, c);
	if (!ret)
		c->wrapper = fs->io;
	return ret;
}

/* Whole superblocks; "not clean" on disk until switch_close. */
static errcode_t open_ordered(struct switch_ctx *c)
{
	ext2_filsys fs = c->fs;
	errcode_t ret;

	ret = iowrap_push(fs, &batch_hooks, c);
	if (ret)
		return ret;
	c->wrapper = fs->io;
	c->lazy_counts = !ext2fs_has_feature_metadata_csum(fs->super) &&
			 !ext2fs_has_feature_gdt_csum(fs->super);
	if (!(fs->super->s_state & EXT2_VALID_FS))
		return 0;
	fs->super->s_state &= ~EXT2_VALID_FS;
	ret = write_super(c);
	if (!ret)
		ret = io_channel_flush(fs->io);
	if (ret) {
		fs->super->s_state |= EXT2_VALID_FS;
		fail_stop(c, ret);
		return ret;
	}
	c->marked_unclean = 1;
	return 0;
}

/* The refusals that need no journal open. */
static errcode_t check_fs(ext2_filsys fs)
{
	struct ext2_super_block *sb = fs->super;

	if (ext2fs_has_feature_journal_dev(sb) ||
	    (ext2fs_has_feature_journal(sb) && !sb->s_journal_inum))
		return E2F_ERR_EXTERNAL_JOURNAL;
	if (ext2fs_has_feature_journal_needs_recovery(sb))
		return E2F_ERR_NEEDS_RECOVERY;
	/* One bit per block is assumed throughout (fsopen refuses it too). */
	if (ext2fs_has_feature_bigalloc(sb))
		return E2F_ERR_UNSUPPORTED_FEATURE;
	/* Inodes and descriptors are written as libext2fs holds them in
	 * memory, which is disk order only on a little-endian machine. */
	if (!host_is_little_endian())
		return EXT2_ET_UNIMPLEMENTED;
	return 0;
}

errcode_t switch_inode_block(ext2_filsys fs, ext2_ino_t ino, blk64_t *blk)
{
	unsigned offset;

	return metawrite_inode_location(fs, ino, blk, &offset);
}

/*
 * The log's blocks on FS (0: none), and into *REVOKES whether its format
 * can revoke (logged moves need it).  Mounted (e2defrag -n plans from a
 * mounted filesystem), the run comes once the log is empty: the log is
 * the journal inode less its superblock, of a v2 journal, as mke2fs
 * makes them.
 */
static blk64_t log_blocks_of(ext2_filsys fs, int *revokes)
{
	struct journal *j = NULL;
	struct ext2_inode inode;
	blk64_t len = 0;
	errcode_t ret;

	*revokes = 0;
	if (!ext2fs_has_feature_journal(fs->super))
		return 0;
	ret = check_fs(fs);
	if (!ret) {
		ret = journal_open(fs, 0, &j);
		if (!ret) {
			len = journal_log_blocks(j);
			*revokes = journal_can_revoke(j);
		}
		journal_free(j);
	}
	if (ret == E2F_ERR_NEEDS_RECOVERY &&
	    !ext2fs_read_inode(fs, fs->super->s_journal_inum, &inode)) {
		len = EXT2_I_SIZE(&inode) / fs->blocksize;
		len = len > 1 ? len - 1 : 0;
		*revokes = 1;
	}
	return len;
}

void switch_log_limits(ext2_filsys fs, struct switch_log_limits *l)
{
	int revokes;
	blk64_t len = log_blocks_of(fs, &revokes), mem = JOURNAL_IMAGES_MAX_BYTES / fs->blocksize;

	l->room = len && revokes ? log_room(len, fs->blocksize, 0) : 0;
	l->batch = cap_of(len);
	l->live = len < 2 ? 0 : len - 1 < mem ? len - 1 : mem;
}

errcode_t switch_check(ext2_filsys fs)
{
	struct journal *j = NULL;
	errcode_t ret;

	ret = check_fs(fs);
	if (ret || !ext2fs_has_feature_journal(fs->super))
		return ret;
	/* The journal's own checks (journal_open.c) only read. */
	ret = journal_open(fs, 0, &j);
	journal_free(j);
	return ret;
}

errcode_t switch_open(ext2_filsys fs, int flags, struct switch_ctx **ret_ctx)
{
	struct switch_ctx *c = NULL;
	errcode_t ret;

	*ret_ctx = NULL;
	if (!(fs->flags & EXT2_FLAG_RW))
		return EXT2_ET_RO_FILSYS;
	ret = check_fs(fs);
	if (ret)
		return ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return EXT2_ET_NO_MEMORY;
	c->fs = fs;
	c->flags = flags;
	ret = ext2fs_get_mem(fs->blocksize, &c->buf);
	if (!ret)
		ret = ext2fs_get_memzero(EXT2_INODE_SIZE(fs->super) <
					 sizeof(struct ext2_inode_large) ?
					 sizeof(struct ext2_inode_large) :
					 EXT2_INODE_SIZE(fs->super), &c->old_inode);
	if (ret)
		goto errout;
	if (!fs->block_map) {
		ret = ext2fs_read_block_bitmap(fs);
		if (ret)
			goto errout;
	}
	ret = ext2fs_allocate_block_bitmap(fs, "blocks the batch releases",
					   &c->released_map);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "blocks the batch logs",
						   &c->logged_map);
	if (ret)
		goto errout;
	/*
	 * libext2fs 1.47.0's unix I/O manager keeps a small block cache whose
	 * clean copies a write of more than four blocks goes past without
	 * dropping (fixed upstream in 2025, "libext2fs: fix unix io manager
	 * invalidation"): a later read of such a block returns what it held
	 * before.  Copies, checkpoints and the journal write many blocks at
	 * a time over blocks read before, so the cache is off while we
	 * write; the kernel's page cache still serves the reads.  A manager
	 * without options (none of ours) has no such cache.
	 */
	ret = io_channel_set_options(fs->io, "cache=off");
	if (ret == EXT2_ET_INVALID_ARGUMENT)
		ret = 0;
	if (ret)
		goto errout;
	/* Should anything flush, the backups stay as they are. */
	fs->flags |= EXT2_FLAG_MASTER_SB_ONLY;
	if (ext2fs_has_feature_journal(fs->super))
		ret = open_journalled(c);
	else
		ret = open_ordered(c);
	if (ret)
		goto errout;
	*ret_ctx = c;
	return 0;
errout:
	ctx_free(c);
	return ret;
}

errcode_t switch_close(struct switch_ctx *c)
{
	ext2_filsys fs;
	errcode_t ret;

	if (!c)
		return 0;
	fs = c->fs;
	ret = c->failed;
	if (!ret)
		ret = do_commit(c);
	if (!ret && c->journal)
		ret = journal_close(c->journal);
	if (!ret && (c->counted.n || c->released_groups.n))
		ret = write_lazy(c);
	/* The last step 3, or what lazy counts left, is durable before the
	 * superblock says "clean": a clean filesystem leaks no blocks, and
	 * its counts are right. */
	if (!ret && c->unflushed_meta)
		ret = io_channel_flush(fs->io);
	if (!ret && !c->journal && c->marked_unclean) {
		fs->super->s_state |= EXT2_VALID_FS;
		iowrap_count_writes(fs, fs->blocksize);	/* ext2fs_close's */
		ret = write_super(c);
		if (!ret)
			ret = io_channel_flush(fs->io);
	}
	if (ret) {
		fail_stop(c, ret);
	} else {
		/*
		 * Disk and memory agree on everything switch_file touched,
		 * and the last superblock write counted the run's writes
		 * (iowrap_count_writes): nothing is left for ext2fs_close to
		 * write, not even s_kbytes_written, but where no superblock
		 * went out (whole, through the wrapper, if it does).
		 */
		fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY);
		fs->flags |= EXT2_FLAG_SUPER_ONLY | EXT2_FLAG_MASTER_SB_ONLY;
	}
	ctx_free(c);
	return ret;
}
