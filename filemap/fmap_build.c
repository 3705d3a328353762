/*
 * fmap_build.c --- a file's map rebuilt at new locations.
 *
 * Given a file's current map (fmap.c) and where its stream should go (a
 * target: runs of blocks in stream order), work out the data copies, the
 * new mapping blocks and the new i_block, and which runs the file gains
 * and releases.  Nothing is written here; move.c does that.
 *
 * Block-mapped files keep the shape of their map: the same IND, DIND and
 * TIND blocks for the same logical ranges, each in its stream slot, i.e.
 * just before the data it maps, as the kernel allocates them; so the file
 * becomes one piece and owns as many blocks as before.  A mapping block
 * may stay where it is only if nothing below it moves: its contents must
 * not change while the old map is live.
 *
 * Extent files get the fewest extents their data allows (contiguous both
 * logically and physically, alike in being uninitialized, at most 32768
 * blocks, 32767 uninitialized) and the smallest tree that holds them, in
 * new blocks, with checksums when the filesystem has metadata_csum.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "array.h"
#include "compare.h"

/* Walks a target in stream order. */
struct target_cursor {
	const struct fmap_target *t;
	size_t		run;
	blk64_t		off;	/* into runs[run] */
};

/* The next stretch of at most WANT stream blocks: new start and length. */
static int target_cursor_next(struct target_cursor *c, blk64_t want, blk64_t *pblk,
			blk64_t *len)
{
	const struct layout_piece *r;

	while (c->run < c->t->nruns && c->off >= c->t->runs[c->run].len) {
		c->run++;
		c->off = 0;
	}
	if (c->run >= c->t->nruns)
		return -1;
	r = &c->t->runs[c->run];
	*pblk = r->start + c->off;
	*len = r->len - c->off < want ? r->len - c->off : want;
	c->off += *len;
	return 0;
}

static blk64_t target_blocks(const struct fmap_target *t)
{
	return layout_pieces_blocks(t->runs, t->nruns);
}

uint32_t fmap_build_tree_blocks(ext2_filsys fs, uint64_t nextents)
{
	uint64_t per = (fs->blocksize - sizeof(struct ext3_extent_header)) /
		       sizeof(struct ext3_extent);
	uint64_t level = nextents, total = 0;

	/* Each level of blocks is needed until the root in the inode (4 entries) holds it. */
	while (level > 4) {
		level = (level + per - 1) / per;
		total += level;
	}
	return total > UINT32_MAX ? UINT32_MAX : total;
}

/*
 * Append LEN blocks at LBLK/PBLK to the extent list, merging as far as
 * allowed.  With ONLY (a count is all that is wanted: the planner asks
 * how many tree blocks a file will need at every move it plans), only
 * the last extent is kept, there, and *EXT is not touched: growing a
 * list to throw it away faulted in fresh pages at every move.
 */
static errcode_t add_extent(struct exttree_extent **ext, size_t *n, size_t *cap,
			    struct exttree_extent *only,
			    blk64_t lblk, blk64_t pblk, blk64_t len, int uninit)
{
	blk64_t max = uninit ? EXT_UNINIT_MAX_LEN : EXT_INIT_MAX_LEN;
	errcode_t ret;

	while (len) {
		struct exttree_extent *last = !*n ? NULL : only ? only : &(*ext)[*n - 1];
		struct exttree_extent *next;
		blk64_t take;

		if (last && last->uninit == uninit && last->len < max &&
		    last->lblk + last->len == lblk && last->pblk + last->len == pblk) {
			take = max - last->len < len ? max - last->len : len;
			last->len += take;
		} else {
			if (!only) {
				ret = grow_n(ext, cap, *n + 1, sizeof(**ext));
				if (ret)
					return ret;
			}
			next = only ? only : &(*ext)[*n];
			take = len < max ? len : max;
			next->lblk = lblk;
			next->pblk = pblk;
			next->len = take;
			next->uninit = uninit;
			(*n)++;
		}
		lblk += take;
		pblk += take;
		len -= take;
	}
	return 0;
}

errcode_t fmap_build_extents(const struct fmap *m, const struct fmap_target *t,
			   struct exttree_extent **out, size_t *count, int *fits)
{
	struct target_cursor c = { t, 0, 0 };
	struct exttree_extent *ext = NULL, last;
	size_t n = 0, cap = 0;
	uint32_t i;
	errcode_t ret = 0;

	*fits = target_blocks(t) == m->stream_blocks;
	for (i = 0; i < m->nitems && !ret && *fits; i++) {
		const struct fmap_item *it = &m->items[i];
		blk64_t done = 0, p, l;

		while (done < it->len && !ret) {
			if (target_cursor_next(&c, it->len - done, &p, &l)) {
				*fits = 0;
				break;
			}
			if (it->kind == FMAP_DATA)
				ret = add_extent(&ext, &n, &cap, out ? NULL : &last,
						 it->lblk + done, p, l, it->uninit);
			done += l;
		}
	}
	if (ret || !*fits || !out)
		free(ext);
	if (ret || !*fits)
		return ret;
	if (out)
		*out = ext;
	*count = n;
	return 0;
}

/* ---------------------------------------------------------------- rebuild */

/* An open mapping block: its new place and contents while its children come. */
struct frame {
	uint32_t	item;
	blk64_t		dst;
	int		changed;	/* a pointer in it differs from before */
	__u32		*buf;		/* NULL when only checking */
};

struct walker {
	ext2_filsys	fs;
	const struct fmap *m;
	struct target_cursor	cur;
	struct fmap_rebuild	*r;		/* NULL: only check that stays are valid */
	struct frame	stack[4];
	int		depth;
	__u32		*i_block;
	int		fits;		/* 0 once the target is found not to fit */
};

/* The target does not fit the map: the walk stops, with no error. */
static errcode_t no_fit(struct walker *w)
{
	w->fits = 0;
	return 0;
}

static errcode_t add_run(struct layout_piece **runs, size_t *n, size_t *cap,
			 blk64_t start, blk64_t len)
{
	errcode_t ret;

	if (*n && (*runs)[*n - 1].start + (*runs)[*n - 1].len == start) {
		(*runs)[*n - 1].len += len;
		return 0;
	}
	ret = grow_n(runs, cap, *n + 1, sizeof(**runs));
	if (ret)
		return ret;
	(*runs)[*n].start = start;
	(*runs)[(*n)++].len = len;
	return 0;
}

errcode_t fmap_rebuild_add_write(struct fmap_rebuild *r, blk64_t pblk, char *buf)
{
	errcode_t ret;

	ret = grow_n(&r->writes, &r->writes_cap, r->nwrites + 1, sizeof(*r->writes));
	if (ret)
		return ret;
	r->writes[r->nwrites].pblk = pblk;
	r->writes[r->nwrites++].buf = buf;
	return 0;
}

errcode_t fmap_rebuild_add_gained(struct fmap_rebuild *r, blk64_t start, blk64_t len)
{
	return add_run(&r->gained, &r->ngained, &r->gained_cap, start, len);
}

/* Mapping block at the top of the stack is complete. */
static errcode_t finish_frame(struct walker *w)
{
	struct frame *f = &w->stack[--w->depth];
	const struct fmap_item *it = &w->m->items[f->item];
	struct fmap_rebuild *r = w->r;
	errcode_t ret = 0;

	if (f->dst == it->pblk) {
		/* Stays: allowed only when its contents stay too. */
		if (f->changed)
			w->fits = 0;
		goto out;
	}
	if (!r)
		goto out;
	ret = grow_n(&r->writes, &r->writes_cap, r->nwrites + 1, sizeof(*r->writes));
	if (ret)
		goto out;
	r->writes[r->nwrites].pblk = f->dst;
	r->writes[r->nwrites++].buf = (char *)f->buf;
	f->buf = NULL;
	ret = add_run(&r->gained, &r->ngained, &r->gained_cap, f->dst, 1);
	if (!ret)
		ret = add_run(&r->released, &r->nreleased, &r->released_cap,
			      it->pblk, 1);
out:
	free(f->buf);
	f->buf = NULL;
	return ret;
}

/* Set pointer SLOT of PARENT (or of the inode) to BLK, which was OLD. */
static errcode_t set_pointer(struct walker *w, uint32_t parent, uint32_t slot,
			     blk64_t blk, blk64_t old)
{
	struct frame *f;

	if (blk > UINT32_MAX)
		return no_fit(w);	/* block-mapped files live below 2^32 */
	if (parent == FMAP_ROOT) {
		if (slot >= EXT2_N_BLOCKS)
			return no_fit(w);
		if (w->i_block)
			w->i_block[slot] = blk;
		return 0;
	}
	f = &w->stack[w->depth - 1];
	if (blk != old)
		f->changed = 1;
	if (slot >= w->fs->blocksize / 4)
		return no_fit(w);
	if (f->buf)
		f->buf[slot] = ext2fs_cpu_to_le32(blk);
	return 0;
}

/* Close the open mapping blocks that are not ancestors of item PARENT. */
static errcode_t unwind_to(struct walker *w, uint32_t parent)
{
	errcode_t ret;

	while (w->depth && w->stack[w->depth - 1].item != parent) {
		ret = finish_frame(w);
		if (ret || !w->fits)
			return ret;
	}
	if (parent != FMAP_ROOT && !w->depth)
		return no_fit(w);	/* parent is not open: not preorder */
	return 0;
}

static errcode_t walk_data(struct walker *w, const struct fmap_item *it)
{
	struct fmap_rebuild *r = w->r;
	blk64_t done = 0, p, l, k;
	errcode_t ret;

	while (done < it->len) {
		blk64_t src = it->pblk + done;

		if (target_cursor_next(&w->cur, it->len - done, &p, &l))
			return no_fit(w);
		if (!w->m->extents) {
			for (k = 0; k < l; k++) {
				ret = set_pointer(w, it->parent, it->slot + done + k,
						  p + k, src + k);
				if (ret || !w->fits)
					return ret;
			}
		}
		/* Uninitialized extents read as zeros: nothing to copy. */
		if (r && p != src && !it->uninit) {
			ret = grow_n(&r->copies, &r->copies_cap, r->ncopies + 1,
				   sizeof(*r->copies));
			if (ret)
				return ret;
			r->copies[r->ncopies].src = src;
			r->copies[r->ncopies].dst = p;
			r->copies[r->ncopies++].len = l;
			r->copy_blocks += l;
		}
		if (r && p != src) {
			ret = add_run(&r->gained, &r->ngained, &r->gained_cap, p, l);
			if (!ret)
				ret = add_run(&r->released, &r->nreleased,
					      &r->released_cap, src, l);
			if (ret)
				return ret;
		}
		if (r && w->m->extents) {
			ret = add_extent(&r->extents, &r->nextents, &r->extents_cap, NULL,
					 it->lblk + done, p, l, it->uninit);
			if (ret)
				return ret;
		}
		done += l;
	}
	return 0;
}

static errcode_t walk_mapping(struct walker *w, uint32_t i)
{
	const struct fmap_item *it = &w->m->items[i];
	struct frame *f;
	blk64_t p, l;
	errcode_t ret;

	if (w->m->extents || w->depth >= 3)
		return no_fit(w);
	if (target_cursor_next(&w->cur, 1, &p, &l))
		return no_fit(w);
	ret = set_pointer(w, it->parent, it->slot, p, it->pblk);
	if (ret || !w->fits)
		return ret;
	f = &w->stack[w->depth];
	memset(f, 0, sizeof(*f));
	f->item = i;
	f->dst = p;
	if (w->r && p != it->pblk) {
		f->buf = calloc(1, w->fs->blocksize);
		if (!f->buf)
			return ENOMEM;
	}
	w->depth++;
	return 0;
}

/* The walk of M's items along the target: 0 with W->fits 0 when it does not fit. */
static errcode_t walk_items(struct walker *w)
{
	uint32_t i;
	errcode_t ret;

	w->fits = 1;
	if (target_blocks(w->cur.t) != w->m->stream_blocks)
		return no_fit(w);
	for (i = 0; i < w->m->nitems; i++) {
		const struct fmap_item *it = &w->m->items[i];

		if (!w->m->extents) {
			ret = unwind_to(w, it->parent);
			if (ret || !w->fits)
				return ret;
		}
		ret = it->kind == FMAP_DATA ? walk_data(w, it) : walk_mapping(w, i);
		if (ret || !w->fits)
			return ret;
	}
	while (w->depth) {
		ret = finish_frame(w);
		if (ret || !w->fits)
			return ret;
	}
	return 0;
}

static void free_stack(struct walker *w)
{
	while (w->depth) {
		free(w->stack[--w->depth].buf);
		w->stack[w->depth].buf = NULL;
	}
}

int fmap_build_stays_valid(ext2_filsys fs, const struct fmap *m,
			 const struct fmap_target *t)
{
	struct walker w;
	errcode_t ret;

	if (m->extents)
		return target_blocks(t) == m->stream_blocks;
	memset(&w, 0, sizeof(w));
	w.m = m;
	w.cur.t = t;
	w.fs = fs;
	ret = walk_items(&w);
	free_stack(&w);
	return !ret && w.fits;
}

/*
 * Sort and merge runs; 0 when two overlap (the target does not fit: a
 * block both gained and released, or gained twice).
 */
static int normalize(struct layout_piece *runs, size_t *n, blk64_t *total)
{
	size_t i, o = 0;

	sort_n(runs, *n, sizeof(*runs), compare_piece_start);
	*total = 0;
	for (i = 0; i < *n; i++) {
		*total += runs[i].len;
		if (o && runs[o - 1].start + runs[o - 1].len > runs[i].start)
			return 0;
		if (o && runs[o - 1].start + runs[o - 1].len == runs[i].start)
			runs[o - 1].len += runs[i].len;
		else
			runs[o++] = runs[i];
	}
	*n = o;
	return 1;
}

errcode_t fmap_build_rebuild(ext2_filsys fs, const struct fmap *m,
			   const struct fmap_target *t,
			   const struct layout_piece *meta, size_t nmeta,
			   struct fmap_rebuild *r, int *fits)
{
	struct walker w;
	uint32_t i;
	errcode_t ret;

	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.m = m;
	w.cur.t = t;
	w.r = r;
	/* Slots not in the stream (holes) are 0 in the new i_block as in the old. */
	memset(r->i_block, 0, sizeof(r->i_block));
	w.i_block = r->i_block;
	ret = walk_items(&w);
	free_stack(&w);
	*fits = w.fits;
	if (ret || !*fits)
		return ret;
	if (m->extents) {
		for (i = 0; i < m->ntree_blocks; i++) {
			ret = add_run(&r->released, &r->nreleased, &r->released_cap,
				      m->tree_blocks[i], 1);
			if (ret)
				return ret;
		}
		ret = fmap_tree_build(fs, m->ino, r, meta, nmeta, fits);
		if (ret || !*fits)
			return ret;
	}
	*fits = normalize(r->gained, &r->ngained, &r->gained_blocks) &&
		normalize(r->released, &r->nreleased, &r->released_blocks);
	return 0;
}

void fmap_rebuild_free(struct fmap_rebuild *r)
{
	size_t i;

	for (i = 0; i < r->nwrites; i++)
		free(r->writes[i].buf);
	free(r->writes);
	free(r->copies);
	free(r->extents);
	free(r->gained);
	free(r->released);
	memset(r, 0, sizeof(*r));
}

