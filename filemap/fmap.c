/*
 * fmap.c --- read one file's block map with its shape: data runs with
 * logical addresses, mapping blocks with the slot that points at them,
 * extent tree blocks.
 *
 * blockmap_walk() (lib/) gives the pieces; a mover must also know which
 * pointer in which indirect block refers to each block, so that it can
 * write the same tree at new locations.  Everything read here is checked:
 * a map that points outside the filesystem or loops is refused, never
 * followed, since e2defrag would otherwise copy garbage and free blocks
 * that are not the file's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "fmap_err.h"

struct fmap_walk {
	ext2_filsys	fs;
	struct fmap	*m;
	char		*buf;		/* one block per indirection level */
	blk64_t		visited, limit;
};

static int valid_block(ext2_filsys fs, blk64_t blk)
{
	return blk >= fs->super->s_first_data_block &&
	       blk < ext2fs_blocks_count(fs->super);
}

/* Room for CAP items at once: the walks below know their count ahead. */
static errcode_t reserve_items(struct fmap *m, size_t cap)
{
	struct fmap_item *p;

	if (cap <= m->items_cap || cap > UINT32_MAX)
		return 0;	/* (too many: add_item says so as they come) */
	p = realloc(m->items, cap * sizeof(*p));
	if (!p)
		return ENOMEM;
	m->items = p;
	m->items_cap = (uint32_t)cap;
	return 0;
}

static errcode_t add_item(struct fmap *m, const struct fmap_item *it)
{
	if (m->nitems == m->items_cap) {
		uint32_t cap = m->items_cap ? m->items_cap * 2 : 4;
		struct fmap_item *p;

		if (cap < m->items_cap)
			return FMAP_ERR_TOO_BIG;
		p = realloc(m->items, (size_t)cap * sizeof(*p));
		if (!p)
			return ENOMEM;
		m->items = p;
		m->items_cap = cap;
	}
	m->items[m->nitems++] = *it;
	m->stream_blocks += it->len;
	if (it->kind == FMAP_DATA)
		m->data_blocks += it->len;
	return 0;
}

/* One data block at SLOT of PARENT: extends the last run when it can. */
static errcode_t add_data(struct fmap_walk *w, uint32_t parent, uint32_t slot,
			  blk64_t lblk, blk64_t pblk)
{
	struct fmap *m = w->m;
	struct fmap_item it = { 0 };

	if (!valid_block(w->fs, pblk) || ++w->visited > w->limit)
		return E2F_ERR_CORRUPT_INODE;
	if (m->nitems) {
		struct fmap_item *last = &m->items[m->nitems - 1];

		if (last->kind == FMAP_DATA && last->parent == parent &&
		    last->slot + last->len == slot &&
		    last->pblk + last->len == pblk &&
		    last->lblk + last->len == lblk) {
			last->len++;
			m->stream_blocks++;
			m->data_blocks++;
			return 0;
		}
	}
	it.kind = FMAP_DATA;
	it.pblk = pblk;
	it.lblk = lblk;
	it.len = 1;
	it.parent = parent;
	it.slot = slot;
	return add_item(m, &it);
}

/* An indirect block of LEVEL (1 = IND) at BLK mapping from logical LBLK. */
static errcode_t walk_ind(struct fmap_walk *w, int level, blk64_t blk, blk64_t lblk,
			  uint32_t parent, uint32_t slot)
{
	ext2_filsys fs = w->fs;
	unsigned per_block = fs->blocksize / 4, i;
	__u32 *entries = (__u32 *)(w->buf + (size_t)(level - 1) * fs->blocksize);
	struct fmap_item it = { 0 };
	blk64_t span = 1;
	uint32_t self;
	errcode_t ret;
	int l;

	for (l = 1; l < level; l++)
		span *= per_block;
	if (!valid_block(fs, blk) || ++w->visited > w->limit)
		return E2F_ERR_CORRUPT_INODE;
	it.kind = level == 1 ? FMAP_IND : level == 2 ? FMAP_DIND : FMAP_TIND;
	it.pblk = blk;
	it.len = 1;
	it.parent = parent;
	it.slot = slot;
	self = w->m->nitems;
	ret = add_item(w->m, &it);
	if (ret)
		return ret;
	ret = io_channel_read_blk64(fs->io, blk, 1, entries);
	if (ret)
		return ret;
	per_block = blockmap_entries_used(entries, per_block);
	for (i = 0; i < per_block; i++) {
		blk64_t child = ext2fs_le32_to_cpu(entries[i]);

		if (!child)
			continue;
		if (level > 1)
			ret = walk_ind(w, level - 1, child, lblk + i * span, self, i);
		else
			ret = add_data(w, self, i, lblk + i, child);
		if (ret)
			return ret;
	}
	return 0;
}

static errcode_t read_blockmap(struct fmap_walk *w, struct ext2_inode *inode)
{
	blk64_t per_block = w->fs->blocksize / 4, lblk = EXT2_NDIR_BLOCKS, span;
	errcode_t ret;
	int i, level;

	for (i = 0; i < EXT2_NDIR_BLOCKS; i++) {
		if (!inode->i_block[i])
			continue;
		ret = add_data(w, FMAP_ROOT, i, i, inode->i_block[i]);
		if (ret)
			return ret;
	}
	for (level = 1, span = per_block; level <= 3; level++, span *= per_block) {
		blk64_t blk = inode->i_block[EXT2_NDIR_BLOCKS + level - 1];

		if (blk) {
			ret = walk_ind(w, level, blk, lblk, FMAP_ROOT,
				       EXT2_NDIR_BLOCKS + level - 1);
			if (ret)
				return ret;
		}
		lblk += span;
	}
	return 0;
}

static errcode_t add_etb(struct fmap *m, blk64_t blk)
{
	if (m->ntree_blocks == m->tree_blocks_cap) {
		uint32_t cap = m->tree_blocks_cap ? m->tree_blocks_cap * 2 : 16;
		blk64_t *p = realloc(m->tree_blocks, (size_t)cap * sizeof(*p));

		if (!p)
			return ENOMEM;
		m->tree_blocks = p;
		m->tree_blocks_cap = cap;
	}
	m->tree_blocks[m->ntree_blocks++] = blk;
	return 0;
}

static errcode_t read_extents(struct fmap_walk *w, struct ext2_inode *inode)
{
	ext2_extent_handle_t h;
	struct ext2_extent_info info;
	struct ext2fs_extent ext;
	blk64_t next_lblk = 0;
	int op = EXT2_EXTENT_ROOT;
	errcode_t ret;

	ret = ext2fs_extent_open2(w->fs, w->m->ino, inode, &h);
	if (ret)
		return E2F_ERR_CORRUPT_INODE;
	ret = ext2fs_extent_get_info(h, &info);
	if (ret)
		goto out;
	w->m->depth = info.max_depth;
	for (;; op = EXT2_EXTENT_NEXT) {
		struct fmap_item it = { 0 };

		ret = ext2fs_extent_get(h, op, &ext);
		if (ret == EXT2_ET_EXTENT_NO_NEXT) {
			ret = 0;
			break;
		}
		if (ret) {
			/* Bad checksums too: we will not rewrite what we cannot trust. */
			ret = E2F_ERR_CORRUPT_INODE;
			break;
		}
		if (ext.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT)
			continue;
		if (++w->visited > w->limit) {
			ret = E2F_ERR_CORRUPT_INODE;
			break;
		}
		if (!(ext.e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
			if (!valid_block(w->fs, ext.e_pblk)) {
				ret = E2F_ERR_CORRUPT_INODE;
				break;
			}
			ret = add_etb(w->m, ext.e_pblk);
			if (ret)
				break;
			continue;
		}
		if (!ext.e_len)
			continue;
		if (ext.e_lblk < next_lblk || !valid_block(w->fs, ext.e_pblk) ||
		    !valid_block(w->fs, ext.e_pblk + ext.e_len - 1)) {
			ret = E2F_ERR_CORRUPT_INODE;
			break;
		}
		next_lblk = ext.e_lblk + ext.e_len;
		w->visited += ext.e_len;
		it.kind = FMAP_DATA;
		it.pblk = ext.e_pblk;
		it.lblk = ext.e_lblk;
		it.len = ext.e_len;
		it.parent = FMAP_ROOT;
		it.uninit = !!(ext.e_flags & EXT2_EXTENT_FLAGS_UNINIT);
		ret = add_item(w->m, &it);
		if (ret)
			break;
	}
out:
	ext2fs_extent_free(h);
	return ret;
}

/*
 * fmap_from_stream: the walk read_blockmap() makes, over a map known to
 * have no holes and no spare mapping blocks, taking each block from the
 * stream instead of from the inode and the indirect blocks (an extent map
 * all in the inode: one extent a run).
 */
struct fmap_stream_walk {
	struct fmap_walk	w;
	const struct layout_piece *runs;
	size_t		nruns, run;
	blk64_t		off;		/* into runs[run] */
	blk64_t		data_left;	/* data blocks still to map */
};

/* The next block of the stream; 0 when it is used up (never a valid block). */
static blk64_t stream_next(struct fmap_stream_walk *s)
{
	while (s->run < s->nruns && s->off == s->runs[s->run].len) {
		s->run++;
		s->off = 0;
	}
	return s->run < s->nruns ? s->runs[s->run].start + s->off++ : 0;
}

static errcode_t stream_data(struct fmap_stream_walk *s, uint32_t parent, uint32_t slot,
			     blk64_t lblk)
{
	s->data_left--;
	return add_data(&s->w, parent, slot, lblk, stream_next(s));
}

/* walk_ind()'s twin: an indirect block of LEVEL and what it maps. */
static errcode_t stream_ind(struct fmap_stream_walk *s, int level, blk64_t lblk,
			    uint32_t parent, uint32_t slot)
{
	unsigned per_block = s->w.fs->blocksize / 4, i;
	struct fmap_item it = { 0 };
	blk64_t span = 1;
	uint32_t self = s->w.m->nitems;
	errcode_t ret;
	int l;

	for (l = 1; l < level; l++)
		span *= per_block;
	it.kind = level == 1 ? FMAP_IND : level == 2 ? FMAP_DIND : FMAP_TIND;
	it.pblk = stream_next(s);
	if (!valid_block(s->w.fs, it.pblk) || ++s->w.visited > s->w.limit)
		return E2F_ERR_CORRUPT_INODE;
	it.len = 1;
	it.parent = parent;
	it.slot = slot;
	ret = add_item(s->w.m, &it);
	for (i = 0; !ret && i < per_block && s->data_left; i++) {
		if (level > 1)
			ret = stream_ind(s, level - 1, lblk + i * span, self, i);
		else
			ret = stream_data(s, self, i, lblk + i);
	}
	return ret;
}

/*
 * The data blocks of a block map whose data and mapping blocks make a
 * stream of TOTAL blocks (*DATA), or 0 when no number of data blocks
 * makes exactly that many.
 */
static int plain_data(blk64_t total, blk64_t per_block, blk64_t *data)
{
	blk64_t lo, hi;

	for (lo = 0, hi = total; lo < hi;) {
		blk64_t mid = lo + (hi - lo + 1) / 2;

		if (mid + blockmap_meta_blocks(mid, per_block) <= total)
			lo = mid;
		else
			hi = mid - 1;
	}
	*data = lo;
	return lo + blockmap_meta_blocks(lo, per_block) == total;
}

int fmap_stream_plain(ext2_filsys fs, const struct layout_piece *runs,
		      size_t nruns, blk64_t *total)
{
	blk64_t data;
	size_t i;

	*total = 0;
	for (i = 0; i < nruns; i++) {
		if (runs[i].len && (!valid_block(fs, runs[i].start) ||
				    !valid_block(fs, runs[i].start + runs[i].len - 1)))
			return 0;
		*total += runs[i].len;
	}
	return *total <= ext2fs_blocks_count(fs->super) &&
	       plain_data(*total, fs->blocksize / 4, &data);
}

errcode_t fmap_from_stream(ext2_filsys fs, ext2_ino_t ino, int extents,
			   const struct layout_piece *runs, size_t nruns,
			   struct fmap *m)
{
	blk64_t per_block = fs->blocksize / 4, lblk = EXT2_NDIR_BLOCKS, span;
	blk64_t total = 0, lo;
	unsigned isize = EXT2_INODE_SIZE(fs->super);
	struct fmap_stream_walk s;
	errcode_t ret = 0;
	size_t i;
	int level;

	memset(m, 0, sizeof(*m));
	m->ino = ino;
	m->inode_size = isize > sizeof(struct ext2_inode_large) ?
		isize : sizeof(struct ext2_inode_large);
	total = layout_pieces_blocks(runs, nruns);
	if (extents) {
		/* read_extents() over a depth-0 tree of one extent a run. */
		m->extents = 1;
		m->i_flags = EXT4_EXTENTS_FL;
		ret = reserve_items(m, nruns);
		for (i = 0, lo = 0; !ret && i < nruns; lo += runs[i++].len) {
			struct fmap_item it = { 0 };

			if (!runs[i].len || !valid_block(fs, runs[i].start) ||
			    !valid_block(fs, runs[i].start + runs[i].len - 1))
				ret = EINVAL;
			it.kind = FMAP_DATA;
			it.pblk = runs[i].start;
			it.lblk = lo;
			it.len = runs[i].len;
			it.parent = FMAP_ROOT;
			if (!ret)
				ret = add_item(m, &it);
		}
		goto out;
	}
	if (!plain_data(total, per_block, &lo))
		return EINVAL;
	/*
	 * Items: every mapping block, and a data run per stream run, cut
	 * once more where each mapping block's entries begin (grown as
	 * items come, the array was reallocated three or four times a file).
	 */
	ret = reserve_items(m, nruns + 2 * (total - lo) + 1);
	if (ret)
		return ret;
	memset(&s, 0, sizeof(s));
	s.w.fs = fs;
	s.w.m = m;
	s.w.limit = ext2fs_blocks_count(fs->super);
	s.runs = runs;
	s.nruns = nruns;
	s.data_left = lo;
	for (i = 0; !ret && i < EXT2_NDIR_BLOCKS && s.data_left; i++)
		ret = stream_data(&s, FMAP_ROOT, i, i);
	for (level = 1, span = per_block; !ret && level <= 3 && s.data_left;
	     level++, span *= per_block) {
		ret = stream_ind(&s, level, lblk, FMAP_ROOT,
				 EXT2_NDIR_BLOCKS + level - 1);
		lblk += span;
	}
	if (!ret && stream_next(&s))
		ret = EINVAL;	/* cannot be: the sums above said so */
out:
	if (!ret && m->nitems && m->nitems < m->items_cap) {
		struct fmap_item *fit = realloc(m->items, m->nitems * sizeof(*fit));

		if (fit) {
			m->items = fit;
			m->items_cap = m->nitems;
		}
	}
	if (ret) {
		fmap_free(m);
		m->ino = ino;
	}
	return ret;
}

errcode_t fmap_read(ext2_filsys fs, ext2_ino_t ino, struct fmap *m)
{
	unsigned isize = EXT2_INODE_SIZE(fs->super);
	struct ext2_inode *inode;
	struct fmap_walk w;
	errcode_t ret;

	memset(m, 0, sizeof(*m));
	m->ino = ino;
	m->inode_size = isize > sizeof(struct ext2_inode_large) ?
		isize : sizeof(struct ext2_inode_large);
	m->inode = calloc(1, m->inode_size);
	if (!m->inode)
		return ENOMEM;
	inode = (struct ext2_inode *)m->inode;
	/*
	 * A switch may have rewritten the inode table behind libext2fs'
	 * inode cache: always read the inode from the disk.
	 */
	ext2fs_flush_icache(fs);
	ret = ext2fs_read_inode_full(fs, ino, inode, isize);
	/* An inode we cannot trust is not rewritten, as a bad extent block is not. */
	if (ret == EXT2_ET_INODE_CSUM_INVALID || ret == EXT2_ET_INODE_IS_GARBAGE)
		ret = E2F_ERR_CORRUPT_INODE;
	if (ret)
		goto errout;
	m->i_flags = inode->i_flags;
	if (inode->i_flags & EXT4_INLINE_DATA_FL) {
		ret = EXT2_ET_INLINE_DATA_NO_BLOCK;
		goto errout;
	}
	if (!ext2fs_inode_has_valid_blocks2(fs, inode)) {
		ret = EXT2_ET_INLINE_DATA_NO_BLOCK;
		goto errout;
	}
	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.m = m;
	w.limit = ext2fs_blocks_count(fs->super);
	ret = ext2fs_get_mem(3 * fs->blocksize, &w.buf);
	if (ret)
		goto errout;
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		m->extents = 1;
		ret = read_extents(&w, inode);
	} else {
		ret = read_blockmap(&w, inode);
	}
	ext2fs_free_mem(&w.buf);
	if (ret)
		goto errout;
	if (m->nitems && m->nitems < m->items_cap) {
		/* The planner keeps the maps of the files it moves: no room to spare. */
		struct fmap_item *fit = realloc(m->items, m->nitems * sizeof(*fit));

		if (fit) {
			m->items = fit;
			m->items_cap = m->nitems;
		}
	}
	return 0;
errout:
	fmap_free(m);
	m->ino = ino;
	return ret;
}

void fmap_free(struct fmap *m)
{
	free(m->items);
	free(m->tree_blocks);
	free(m->inode);
	free(m->ipos);
	free(m->iend);
	memset(m, 0, sizeof(*m));
}
