/*
 * journal.c --- the JBD2 log: writing transactions around the circular
 * log, checkpointing, and the needs_recovery flag; see writer_int.h.  The
 * journal is opened and checked in journal_open.c, the block formats are
 * in journal_format.c.
 *
 * Ordering is everything here.  Each step below ends with a flush (a
 * barrier) so that a power cut anywhere leaves a state that the kernel's
 * or e2fsck's recovery turns into the old or the new metadata:
 *   needs_recovery on disk     before the journal superblock can point at
 *                              a transaction (else the kernel would wipe
 *                              the log at mount instead of replaying it,
 *                              and e2fsck call the log's data a problem):
 *                              written with the first transaction's copies,
 *                              while the journal superblock that starts a
 *                              log goes with its commit block;
 *   descriptors and copies     before the commit block that validates them
 *                              (the mover's data was flushed before that:
 *                              ordered mode; data into blocks the
 *                              transaction frees is among the copies);
 *   the commit block           before any block is written in place;
 *   in-place blocks            before the journal superblock says "empty".
 *
 * Where the log is: [s_first, last), last = s_maxlen, less the fast-commit
 * area when the journal or the filesystem has fast commits.  e2fsck 1.47's
 * recovery wraps around at s_maxlen even then, so with a fast-commit area
 * this writer never lets a transaction, or the live part of the log, wrap
 * around (no_wrap): it checkpoints and starts again at s_first instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal_int.h"
#include "writer.h"

/* ------------------------------------------------------------ live blocks */

/* Index of the first live block >= BLK. */
static size_t live_lower(const struct jlive *l, blk64_t blk)
{
	size_t a = 0, b = l->n;

	while (a < b) {
		size_t mid = (a + b) / 2;

		if (l->slot[mid].blk < blk)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

static struct jblock *live_find(const struct jlive *l, blk64_t blk)
{
	size_t i = live_lower(l, blk);

	return i < l->n && l->slot[i].blk == blk ? &l->slot[i] : NULL;
}

static int cmp_jblock(const void *a, const void *b)
{
	const struct jblock *x = a, *y = b;

	return x->blk < y->blk ? -1 : x->blk > y->blk;
}

/*
 * The N images of ADD (distinct blocks, sorted here) join the live ones,
 * replacing older images of the same blocks: one merge, where inserting
 * them one by one moved the array each time (a transaction of logged
 * data holds thousands).  ADD's images then belong to L.
 */
static errcode_t live_merge(struct jlive *l, struct jblock *add, size_t n)
{
	struct jblock *out;
	size_t a = 0, b = 0, k = 0;

	if (!n)
		return 0;
	qsort(add, n, sizeof(*add), cmp_jblock);
	out = malloc((l->n + n) * sizeof(*out));
	if (!out)
		return EXT2_ET_NO_MEMORY;
	while (a < l->n || b < n) {
		if (b == n || (a < l->n && l->slot[a].blk < add[b].blk)) {
			out[k++] = l->slot[a++];
			continue;
		}
		if (a < l->n && l->slot[a].blk == add[b].blk)
			blockpool_put(l->images, l->slot[a++].image);
		out[k++] = add[b++];
	}
	free(l->slot);
	l->slot = out;
	l->cap = l->n + n;
	l->n = k;
	return 0;
}

static void live_drop(struct jlive *l, blk64_t blk)
{
	size_t i = live_lower(l, blk);

	if (i >= l->n || l->slot[i].blk != blk)
		return;
	blockpool_put(l->images, l->slot[i].image);
	memmove(l->slot + i, l->slot + i + 1, (l->n - i - 1) * sizeof(*l->slot));
	l->n--;
}

static void live_clear(struct jlive *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		blockpool_put(l->images, l->slot[i].image);
	l->n = 0;
}

void jlive_free(struct jlive *l)
{
	live_clear(l);
	free(l->slot);
	l->slot = NULL;
	l->cap = 0;
}

/* ------------------------------------------------------------ writing */

static uint32_t log_len(const struct journal *j)
{
	return j->last - j->first;
}

static uint32_t log_next(const struct journal *j, uint32_t pos)
{
	return pos + 1 == j->last ? j->first : pos + 1;
}

static errcode_t log_write(struct journal *j, uint32_t pos, const char *buf)
{
	return io_channel_write_blk64(j->fs->io, j->map[pos], 1, buf);
}

/*
 * N consecutive log blocks from *POS (moved past them), in as few writes
 * as the log's place on disk allows (it wraps, and the journal inode may
 * be in pieces).
 */
static errcode_t log_write_run(struct journal *j, uint32_t *pos, size_t n,
			       const char *buf)
{
	errcode_t ret;

	while (n) {
		size_t m = 1;

		while (m < n && *pos + m < j->last &&
		       j->map[*pos + m] == j->map[*pos] + m)
			m++;
		ret = io_channel_write_blk64(j->fs->io, j->map[*pos], (int)m, buf);
		if (ret)
			return ret;
		buf += m * j->bs;
		n -= m;
		*pos = *pos + m == j->last ? j->first : *pos + (uint32_t)m;
	}
	return 0;
}

static errcode_t flush(struct journal *j)
{
	return io_channel_flush(j->fs->io);
}

/* The journal superblock, whole block, with START and SEQ. */
static errcode_t write_jsb(struct journal *j, uint32_t start, uint32_t seq)
{
	jfmt_put32(&j->jsb->s_start, start);
	jfmt_put32(&j->jsb->s_sequence, seq);
	if (j->csum)
		jfmt_super_csum_set(j->jsb);
	j->jsb_dirty = 0;
	return log_write(j, 0, j->sb_block);
}

/* The filesystem superblock, whole block, in place. */
static errcode_t write_fs_super(struct journal *j)
{
	blk64_t blk;
	errcode_t ret;

	ret = metawrite_super_block(j->fs, &blk, j->buf);
	return ret ? ret : io_channel_write_blk64(j->fs->io, blk, 1, j->buf);
}

/*
 * needs_recovery goes out with the first transaction's copies, durable
 * by the flush before its commit block: no commit is ever durable
 * without it.  The journal superblock that starts a log, the only write
 * that would make the log look full of data to a superblock without the
 * flag, goes with the commit block (journal_commit).
 */
errcode_t journal_start(struct journal *j)
{
	errcode_t ret;

	if (j->recover_on_disk)
		return 0;
	ext2fs_set_feature_journal_needs_recovery(j->fs->super);
	ret = write_fs_super(j);
	if (!ret)
		j->recover_on_disk = 1;
	return ret;
}

/* The open transaction's image of BLK, or NULL. */
static struct jblock *pending_find(const struct journal *j, blk64_t blk)
{
	uint32_t i;

	return blkindex_get(&j->pending_at, blk, &i) ? &j->pending[i] : NULL;
}

/*
 * Call FN for each block of the open transaction in blocks [START,
 * START + LEN), in no order: by lookups where the range is shorter than
 * the transaction, else by a walk of it.  FN may drop the block it is
 * given (pending_drop) and nothing else.  Stops at FN's first nonzero.
 */
static int pending_each(struct journal *j, blk64_t start, blk64_t len,
			int (*fn)(struct journal *j, size_t i, void *priv),
			void *priv)
{
	size_t i;
	int ret;

	if (len <= j->npending) {
		blk64_t b;
		uint32_t at;

		for (b = start; b - start < len; b++)
			if (blkindex_get(&j->pending_at, b, &at) &&
			    (ret = fn(j, at, priv)))
				return ret;
		return 0;
	}
	for (i = 0; i < j->npending; ) {
		blk64_t blk = j->pending[i].blk;
		size_t n = j->npending;

		if (blk >= start && blk - start < len && (ret = fn(j, i, priv)))
			return ret;
		if (j->npending == n)
			i++;	/* else the last moved into I */
	}
	return 0;
}

/* Drop block I of the open transaction, its image freed. */
static void pending_drop(struct journal *j, size_t i)
{
	struct jblock *b = &j->pending[i];

	blkindex_del(&j->pending_at, b->blk);
	blockpool_put(&j->images, b->image);
	*b = j->pending[--j->npending];
	if (i < j->npending)
		(void)blkindex_put(&j->pending_at, b->blk, (uint32_t)i);
}

int journal_peek(struct journal *j, blk64_t blk, char *buf)
{
	struct jblock *b = pending_find(j, blk);

	if (!b)
		b = live_find(&j->live, blk);
	if (!b)
		return 0;
	memcpy(buf, b->image, j->bs);
	return 1;
}

struct overlay {
	uint64_t	offset, len;
	void		*data;
};

/* Pending block I over the bytes of O it covers. */
static int overlay_one(struct journal *j, size_t i, void *priv)
{
	const struct overlay *o = priv;
	uint64_t start = j->pending[i].blk * j->bs, lo, hi;

	lo = start > o->offset ? start : o->offset;
	hi = start + j->bs < o->offset + o->len ? start + j->bs : o->offset + o->len;
	memcpy((char *)o->data + (lo - o->offset), j->pending[i].image + (lo - start),
	       hi - lo);
	return 0;
}

void journal_overlay(struct journal *j, uint64_t offset, uint64_t len,
		     void *data)
{
	size_t i = live_lower(&j->live, offset / j->bs);

	for (; i < j->live.n; i++) {
		uint64_t start = j->live.slot[i].blk * j->bs, lo, hi;

		if (start >= offset + len)
			break;
		lo = start > offset ? start : offset;
		hi = start + j->bs < offset + len ? start + j->bs : offset + len;
		memcpy((char *)data + (lo - offset),
		       j->live.slot[i].image + (lo - start), hi - lo);
	}
	/* The open transaction's blocks are newer still (a batch). */
	if (j->npending && len) {
		struct overlay o = { offset, len, data };

		(void)pending_each(j, offset / j->bs,
				   (offset + len - 1) / j->bs - offset / j->bs + 1,
				   overlay_one, &o);
	}
}

size_t journal_pending(const struct journal *j)
{
	return j->npending;
}

unsigned journal_block_size(const struct journal *j)
{
	return j->bs;
}

size_t journal_log_blocks(const struct journal *j)
{
	return log_len(j);
}

errcode_t journal_add(struct journal *j, blk64_t blk, const char *image)
{
	struct jblock *b = pending_find(j, blk);
	char *copy;

	if (b) {
		memcpy(b->image, image, j->bs);
		return 0;
	}
	if (util_grow(&j->pending, &j->pending_cap, j->npending + 1,
		      sizeof(*j->pending)))
		return EXT2_ET_NO_MEMORY;
	copy = blockpool_get(&j->images);
	if (!copy)
		return EXT2_ET_NO_MEMORY;
	if (blkindex_put(&j->pending_at, blk, (uint32_t)j->npending)) {
		blockpool_put(&j->images, copy);
		return EXT2_ET_NO_MEMORY;
	}
	memcpy(copy, image, j->bs);
	j->pending[j->npending].blk = blk;
	j->pending[j->npending].image = copy;
	j->pending[j->npending].revoked = 0;
	j->npending++;
	return 0;
}

int journal_can_revoke(const struct journal *j)
{
	return jfmt_get32(&j->jsb->h_blocktype) == JBD2_SUPERBLOCK_V2;
}

/*
 * Revoke live block I, which a committed transaction logged.  Its image
 * stays live until the revoke is durable (journal_commit drops it then):
 * until that commit the committed metadata may still point at the block
 * (a mapping block of the file's layout before the open transaction's
 * switch), and a checkpoint in between must write it in place, not leave
 * the block as it was before the log.  After it, the stale image is never
 * checkpointed over the block's new use.
 */
static errcode_t revoke_live(struct journal *j, size_t i)
{
	blk64_t blk = j->live.slot[i].blk;

	if (j->live.slot[i].revoked)
		return 0;
	if (!journal_can_revoke(j))
		return E2F_ERR_JOURNAL_UNSUPPORTED;
	if (!(jfmt_get32(&j->jsb->s_feature_incompat) & JBD2_INCOMPAT_REVOKE)) {
		jfmt_put32(&j->jsb->s_feature_incompat,
			   jfmt_get32(&j->jsb->s_feature_incompat) |
			   JBD2_INCOMPAT_REVOKE);
		j->jsb_dirty = 1;
	}
	if (util_grow(&j->revokes, &j->revokes_cap, j->nrevokes + 1,
		      sizeof(*j->revokes)))
		return EXT2_ET_NO_MEMORY;
	j->revokes[j->nrevokes++] = blk;
	j->live.slot[i].revoked = 1;
	return 0;
}

static int found_one(struct journal *j, size_t i, void *priv)
{
	(void)j;
	(void)i;
	(void)priv;
	return 1;
}

int journal_holds(const struct journal *j, const struct layout_piece *runs,
		  size_t n)
{
	size_t r, i;

	for (r = 0; r < n; r++) {
		i = live_lower(&j->live, runs[r].start);
		if (i < j->live.n && j->live.slot[i].blk - runs[r].start < runs[r].len)
			return 1;
		if (pending_each((struct journal *)j, runs[r].start, runs[r].len,
				 found_one, NULL))
			return 1;
	}
	return 0;
}

static int drop_one(struct journal *j, size_t i, void *priv)
{
	(void)priv;
	pending_drop(j, i);
	return 0;
}

errcode_t journal_revoke(struct journal *j, const struct layout_piece *runs,
			 size_t n)
{
	size_t r, i;
	errcode_t ret;

	for (r = 0; r < n; r++) {
		blk64_t end = runs[r].start + runs[r].len;

		/* The live blocks are sorted: those of the run follow i. */
		for (i = live_lower(&j->live, runs[r].start);
		     i < j->live.n && j->live.slot[i].blk < end; i++) {
			ret = revoke_live(j, i);
			if (ret)
				return ret;
		}
		/* Logged data of the open transaction the file now leaves:
		 * a replay must not write it over the blocks' next use. */
		(void)pending_each(j, runs[r].start, runs[r].len, drop_one, NULL);
	}
	return 0;
}

/* Log blocks a transaction of NBLOCKS blocks and the revokes takes. */
static uint32_t transaction_blocks(const struct journal *j, size_t nblocks)
{
	size_t per = jfmt_desc_capacity(j), rper = jfmt_revoke_capacity(j);

	return (j->nrevokes + rper - 1) / rper + (nblocks + per - 1) / per +
	       nblocks + 1;
}

errcode_t journal_reserve(struct journal *j, size_t nblocks)
{
	size_t rper = jfmt_revoke_capacity(j), per = jfmt_desc_capacity(j);
	/* At worst every live block is revoked. */
	size_t revokes = j->nrevokes + j->live.n;
	uint64_t total = (revokes + rper - 1) / rper +
			 (nblocks + per - 1) / per + nblocks + 1;

	/* One block of the log stays unused: a full log would look empty. */
	return total > log_len(j) - 1 ? E2F_ERR_JOURNAL_FULL : 0;
}

/*
 * A checkpoint writes consecutive live blocks (logged data is runs of
 * them) in one request of up to this many blocks.
 */
#define CKPT_BLOCKS	256

/* Write the live blocks in place, consecutive ones together. */
static errcode_t write_live(struct journal *j)
{
	size_t i = 0, n;
	errcode_t ret;

	if (!j->ckpt && !(j->ckpt = malloc((size_t)CKPT_BLOCKS * j->bs)))
		return EXT2_ET_NO_MEMORY;
	while (i < j->live.n) {
		const struct jblock *b = &j->live.slot[i];

		for (n = 1; i + n < j->live.n && n < CKPT_BLOCKS &&
			    b[n].blk == b->blk + n; n++)
			;
		if (n == 1) {
			ret = io_channel_write_blk64(j->fs->io, b->blk, 1, b->image);
		} else {
			size_t k;

			for (k = 0; k < n; k++)
				memcpy(j->ckpt + k * j->bs, b[k].image, j->bs);
			ret = io_channel_write_blk64(j->fs->io, b->blk, (int)n, j->ckpt);
		}
		if (ret)
			return ret;
		i += n;
	}
	return 0;
}

/* Write every live block in place, then mark the log empty. */
static errcode_t checkpoint(struct journal *j)
{
	errcode_t ret;

	if (!j->nlive_trans && !j->live.n)
		return 0;
	ret = write_live(j);
	if (!ret)
		ret = flush(j);
	if (!ret)
		ret = write_jsb(j, 0, j->seq);
	if (!ret)
		ret = flush(j);
	if (ret)
		return ret;
	live_clear(&j->live);
	j->nlive_trans = 0;
	return 0;
}

/* Make room for TOTAL log blocks at j->head; see the top of the file. */
static errcode_t make_room(struct journal *j, uint32_t total)
{
	uint32_t used, len = log_len(j);
	errcode_t ret;

	if (total > len - 1)
		return E2F_ERR_JOURNAL_FULL;
	if (j->no_wrap) {
		if (j->head + total <= j->last)
			return 0;
		ret = checkpoint(j);
		if (!ret)
			j->head = j->first;
		return ret;
	}
	if (!j->nlive_trans)
		return 0;
	used = (j->head + len - j->tail) % len;
	if (total <= len - 1 - used)
		return 0;
	return checkpoint(j);
}

/* The revoke blocks, then each descriptor followed by its copies. */
static errcode_t write_log_blocks(struct journal *j, uint32_t *pos)
{
	size_t rper = jfmt_revoke_capacity(j), per = jfmt_desc_capacity(j);
	size_t i, k, n;
	errcode_t ret;

	for (i = 0; i < j->nrevokes; i += n) {
		n = j->nrevokes - i < rper ? j->nrevokes - i : rper;
		jfmt_revoke_block(j, j->buf, j->seq, j->revokes + i, n);
		ret = log_write(j, *pos, j->buf);
		if (ret)
			return ret;
		*pos = log_next(j, *pos);
	}
	/* A descriptor and its copies, built together, go out together. */
	if (j->npending && !j->lbuf &&
	    !(j->lbuf = malloc((per + 1) * (size_t)j->bs)))
		return EXT2_ET_NO_MEMORY;
	for (i = 0; i < j->npending; i += n) {
		n = j->npending - i < per ? j->npending - i : per;
		jfmt_header(j->lbuf, j->bs, JBD2_DESCRIPTOR_BLOCK, j->seq);
		for (k = 0; k < n; k++) {
			const struct jblock *b = &j->pending[i + k];
			char *copy = j->lbuf + (k + 1) * (size_t)j->bs;
			int escaped = jfmt_escape(j, b->image, copy);

			jfmt_tag(j, j->lbuf, k, b->blk, copy, j->seq, escaped,
				 k == n - 1);
		}
		jfmt_tail(j, j->lbuf);
		ret = log_write_run(j, pos, n + 1, j->lbuf);
		if (ret)
			return ret;
	}
	return 0;
}

errcode_t journal_commit(struct journal *j)
{
	uint32_t pos, total;
	uint64_t now = (uint64_t)time(NULL);
	size_t i;
	errcode_t ret;

	if (!j->npending && !j->nrevokes)
		return 0;
	/* A block logged again is not revoked: its new image must replay. */
	for (i = 0; i < j->nrevokes; ) {
		if (pending_find(j, j->revokes[i]))
			j->revokes[i] = j->revokes[--j->nrevokes];
		else
			i++;
	}
	total = transaction_blocks(j, j->npending);
	/* The images held in memory stay bounded (logged data adds up). */
	if ((uint64_t)(j->live.n + j->npending) * j->bs > JOURNAL_IMAGES_MAX_BYTES)
		ret = checkpoint(j);
	else
		ret = 0;
	if (!ret)
		ret = make_room(j, total);
	if (ret)
		return ret;
	if (!j->nlive_trans) {
		j->tail = j->head;
		j->tail_seq = j->seq;
	}
	pos = j->head;
	ret = write_log_blocks(j, &pos);
	/*
	 * A disk writes only its sector whole, and the commit block is
	 * recognized by its first sector (magic, type, sequence).  With
	 * checksums the rest of it counts too: written over an old log
	 * block, a torn commit (first sector new, the rest old) fails its
	 * checksum and recovery reports the transaction corrupt.  Zeroes
	 * there first, with the copies: the commit block's rest is zeroes,
	 * so its write then changes one sector, and a cut leaves no commit
	 * (the transaction is not replayed) or the whole of it.
	 */
	if (!ret && j->csum) {
		memset(j->buf, 0, j->bs);
		ret = log_write(j, pos, j->buf);
	}
	/*
	 * Features a live log's next commit needs (revoke) go out before
	 * it.  A log that was empty starts with the commit block instead
	 * (below): its journal superblock (the start, and any feature)
	 * and the commit block are durable together or the log stays
	 * empty, which a cut leaves as the old layout; and the start never
	 * reaches the disk before needs_recovery (journal_start), which the
	 * flush here makes durable.
	 */
	if (!ret && j->nlive_trans && j->jsb_dirty)
		ret = write_jsb(j, j->tail, j->tail_seq);
	if (!ret)
		ret = flush(j);
	if (ret)
		return ret;

	/* Commit times never go back: recovery compares them. */
	if (now < j->last_commit_sec)
		now = j->last_commit_sec;
	j->last_commit_sec = now;
	jfmt_commit_block(j, j->buf, j->seq, now);
	ret = log_write(j, pos, j->buf);
	if (!ret && !j->nlive_trans)
		ret = write_jsb(j, j->tail, j->tail_seq);
	if (!ret)
		ret = flush(j);
	if (ret)
		return ret;

	/* Durable.  The revoked images are stale now (revoke_live), and
	 * the transaction's images belong to the live log. */
	for (i = 0; i < j->nrevokes; i++)
		live_drop(&j->live, j->revokes[i]);
	ret = live_merge(&j->live, j->pending, j->npending);
	if (ret)
		return ret;
	j->npending = 0;
	blkindex_clear(&j->pending_at);
	j->nrevokes = 0;
	j->nlive_trans++;
	/*
	 * Without wrapping, a log that ends exactly at j->last is full: the
	 * next transaction must checkpoint (make_room) before it starts
	 * again at s_first, over the live transactions.
	 */
	j->head = j->no_wrap ? pos + 1 : log_next(j, pos);
	j->seq++;
	return 0;
}

errcode_t journal_close(struct journal *j)
{
	errcode_t ret;

	if (j->nlive_trans && (j->flags & JOURNAL_NO_CHECKPOINT))
		return 0;	/* left for the replay the test wants to see */
	ret = checkpoint(j);
	if (ret || !j->recover_on_disk)
		return ret;
	ext2fs_clear_feature_journal_needs_recovery(j->fs->super);
	iowrap_count_writes(j->fs, j->fs->blocksize);	/* ext2fs_close's */
	ret = write_fs_super(j);
	if (!ret)
		ret = flush(j);
	if (!ret)
		j->recover_on_disk = 0;
	return ret;
}
