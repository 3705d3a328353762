/*
 * blockmap.c --- walk one inode's blocks in logical order.
 *
 * Block-mapped files are walked by hand rather than with
 * ext2fs_block_iterate3: it would read the inode again for every file,
 * and a corrupt indirect block must stop the walk, not be trusted.  The
 * order is the iterator's default (an indirect block before the blocks it
 * maps), which is the order e2fsck checks contiguity in.
 */
#include <errno.h>
#include <string.h>

#include "e2frag.h"

#include <ext2fs/ext3_extents.h>	/* needs the types e2frag.h brings */

unsigned blockmap_entries_used(const __u32 *entries, unsigned n)
{
	static const __u32 zeros[64];

	/*
	 * Small files use the first few entries: the zeros after, 64 at a
	 * time with memcmp (the C library's vector code), then eight.  A
	 * tree of small files has thousands of indirect blocks mostly zero.
	 */
	while (n >= 64 && !memcmp(entries + n - 64, zeros, sizeof(zeros)))
		n -= 64;
	while (n >= 8 &&
	       !(entries[n - 1] | entries[n - 2] | entries[n - 3] | entries[n - 4] |
		 entries[n - 5] | entries[n - 6] | entries[n - 7] | entries[n - 8]))
		n -= 8;
	while (n && !entries[n - 1])
		n--;
	return n;
}

static blk64_t div_up(blk64_t a, blk64_t b)
{
	return (a + b - 1) / b;
}

blk64_t blockmap_meta_blocks(blk64_t data, blk64_t per_block)
{
	blk64_t meta = 0, sq = per_block * per_block;

	if (data <= EXT2_NDIR_BLOCKS)
		return 0;
	data -= EXT2_NDIR_BLOCKS;
	meta = 1;				/* IND */
	if (data <= per_block)
		return meta;
	data -= per_block;
	if (data <= sq)				/* DIND and its INDs */
		return meta + 1 + div_up(data, per_block);
	meta += 1 + per_block;
	data -= sq;				/* TIND, its DINDs and their INDs */
	return meta + 1 + div_up(data, sq) + div_up(data, per_block);
}

struct walk {
	ext2_filsys	fs;
	const struct blockmap_visitor *v;
	void		*priv;
	char		*buf;		/* one block per indirection level */
	const struct blockmap_cache *cache;	/* blocks already read, or NULL */
	blk64_t		visited;	/* bound: a map cannot hold more blocks than the fs */
	blk64_t		limit;
};

static int valid_block(ext2_filsys fs, blk64_t blk)
{
	return blk >= fs->super->s_first_data_block &&
	       blk < ext2fs_blocks_count(fs->super);
}

static errcode_t count_visit(struct walk *w, blk64_t n)
{
	w->visited += n;
	return w->visited > w->limit ? E2F_ERR_CORRUPT_INODE : 0;
}

static errcode_t walk_children(struct walk *w, const __u32 *entries,
			       unsigned per_block, int level, blk64_t span,
			       blk64_t lblk);

static int cached(const struct blockmap_cache *c, blk64_t blk)
{
	return c && blk >= c->start && blk - c->start < c->count;
}

/*
 * The blocks an indirect block of depth LEVEL (1 = IND) at BLK maps,
 * starting at logical block LBLK.
 */
static errcode_t walk_ind(struct walk *w, blk64_t blk, int level, blk64_t lblk)
{
	ext2_filsys fs = w->fs;
	unsigned per_block = fs->blocksize / 4;
	const __u32 *entries;
	blk64_t span = 1;
	errcode_t ret;
	int l;

	for (l = 1; l < level; l++)
		span *= per_block;
	if (!valid_block(fs, blk))
		return E2F_ERR_CORRUPT_INODE;
	ret = count_visit(w, 1);
	if (ret)
		return ret;
	if (w->v->ind) {
		ret = w->v->ind(w->priv, blk);
		if (ret)
			return ret;
	}
	/* Read in place from a cache: no copy of a block for each file. */
	if (cached(w->cache, blk)) {
		entries = (const __u32 *)(w->cache->data +
					  (size_t)(blk - w->cache->start) * fs->blocksize);
	} else {
		__u32 *own = (__u32 *)(w->buf + (size_t)(level - 1) * fs->blocksize);

		ret = io_channel_read_blk64(fs->io, blk, 1, own);
		if (ret)
			return ret;
		entries = own;
	}
	per_block = blockmap_entries_used(entries, per_block);
	return walk_children(w, entries, per_block, level, span, lblk);
}

/* The children of an indirect block: its ENTRIES, N of them. */
static errcode_t walk_children(struct walk *w, const __u32 *entries,
			       unsigned per_block, int level, blk64_t span,
			       blk64_t lblk)
{
	ext2_filsys fs = w->fs;
	blk64_t run_l = 0, run_p = 0, run_n = 0;
	errcode_t ret = 0;
	unsigned i;

	for (i = 0; i < per_block; i++) {
		blk64_t child = ext2fs_le32_to_cpu(entries[i]);
		blk64_t child_l = lblk + i * span;

		if (!child)
			continue;
		if (level > 1) {
			ret = walk_ind(w, child, level - 1, child_l);
			if (ret)
				return ret;
			continue;
		}
		if (!valid_block(fs, child))
			return E2F_ERR_CORRUPT_INODE;
		/* Batch physically and logically consecutive data blocks. */
		if (run_n && run_p + run_n == child && run_l + run_n == child_l) {
			run_n++;
			continue;
		}
		if (run_n && w->v->data) {
			ret = w->v->data(w->priv, run_l, run_p, run_n, 0);
			if (ret)
				return ret;
		}
		ret = count_visit(w, run_n);
		if (ret)
			return ret;
		run_l = child_l;
		run_p = child;
		run_n = 1;
	}
	if (run_n && w->v->data)
		ret = w->v->data(w->priv, run_l, run_p, run_n, 0);
	return ret ? ret : count_visit(w, run_n);
}

static errcode_t walk_blockmap(struct walk *w, struct ext2_inode *inode)
{
	ext2_filsys fs = w->fs;
	blk64_t per_block = fs->blocksize / 4;
	blk64_t lblk = EXT2_NDIR_BLOCKS;
	errcode_t ret;
	int i;

	blk64_t run_l = 0, run_p = 0, run_n = 0;

	/*
	 * The direct blocks, consecutive ones batched as walk_children
	 * batches (not a call for each block of a small file), what came
	 * before a bad one still visited.  Not counted: they cannot loop.
	 */
	for (i = 0; i < EXT2_NDIR_BLOCKS; i++) {
		blk64_t b = inode->i_block[i];

		if (!b)
			continue;
		if (b < fs->super->s_first_data_block || b >= w->limit) {
			if (run_n && w->v->data &&
			    (ret = w->v->data(w->priv, run_l, run_p, run_n, 0)))
				return ret;
			return E2F_ERR_CORRUPT_INODE;
		}
		if (run_n && run_p + run_n == b && run_l + run_n == (blk64_t)i) {
			run_n++;
			continue;
		}
		if (run_n && w->v->data &&
		    (ret = w->v->data(w->priv, run_l, run_p, run_n, 0)))
			return ret;
		run_l = i;
		run_p = b;
		run_n = 1;
	}
	if (run_n && w->v->data &&
	    (ret = w->v->data(w->priv, run_l, run_p, run_n, 0)))
		return ret;
	for (i = 1; i <= 3; i++) {
		blk64_t span = per_block;
		int l;

		for (l = 1; l < i; l++)
			span *= per_block;
		if (inode->i_block[EXT2_NDIR_BLOCKS + i - 1]) {
			ret = walk_ind(w, inode->i_block[EXT2_NDIR_BLOCKS + i - 1],
				       i, lblk);
			if (ret)
				return ret;
		}
		lblk += span;
	}
	return 0;
}

/* One leaf extent: checked, counted and passed on.  *NEXT_LBLK moves on. */
static errcode_t visit_leaf(struct walk *w, blk64_t lblk, blk64_t pblk,
			    blk64_t len, int uninit, blk64_t *next_lblk)
{
	errcode_t ret;

	if (!len)
		return 0;
	/*
	 * Leaves must move forward: this also stops a tree whose index
	 * blocks point back at each other.
	 */
	if (lblk < *next_lblk || !valid_block(w->fs, pblk) ||
	    !valid_block(w->fs, pblk + len - 1))
		return E2F_ERR_CORRUPT_INODE;
	*next_lblk = lblk + len;
	ret = count_visit(w, len);
	if (ret)
		return ret;
	return w->v->data ? w->v->data(w->priv, lblk, pblk, len, uninit) : 0;
}

/*
 * Most extent files fit their extents in the inode (depth 0): read those
 * straight from i_block.  ext2fs_extent_open2 would allocate and free a
 * handle for every such file, which is most of a scan's CPU time.
 * Returns -1 when the tree is deeper (or odd) and needs the handle.
 */
static errcode_t walk_inline_extents(struct walk *w, struct ext2_inode *inode)
{
	const struct ext3_extent_header *eh = (const void *)inode->i_block;
	const struct ext3_extent *ex = (const void *)(eh + 1);
	unsigned entries = ext2fs_le16_to_cpu(eh->eh_entries), i;
	blk64_t next_lblk = 0;
	errcode_t ret;

	if (ext2fs_le16_to_cpu(eh->eh_magic) != EXT3_EXT_MAGIC ||
	    ext2fs_le16_to_cpu(eh->eh_depth) != 0 ||
	    entries > ext2fs_le16_to_cpu(eh->eh_max) || entries > 4)
		return -1;
	for (i = 0; i < entries; i++) {
		blk64_t len = ext2fs_le16_to_cpu(ex[i].ee_len);
		blk64_t pblk = ext2fs_le32_to_cpu(ex[i].ee_start) +
			((blk64_t)ext2fs_le16_to_cpu(ex[i].ee_start_hi) << 32);
		int uninit = len > EXT_INIT_MAX_LEN;

		if (!len)	/* as ext_in_bounds says of a deeper tree's */
			return E2F_ERR_CORRUPT_INODE;
		ret = visit_leaf(w, ext2fs_le32_to_cpu(ex[i].ee_block), pblk,
				 uninit ? len - EXT_INIT_MAX_LEN : len, uninit,
				 &next_lblk);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The logical blocks an index entry's subtree may map, as e2fsck checks
 * them (pass1.c's scan_extent_node): the first entry below it starts
 * where it starts, and none starts before it or ends past the next
 * entry's start (past the end of the file, for the last one at the top),
 * but an uninitialized extent (or a verity file's) past the end of the
 * file.  A tree that breaks this is one e2fsck repairs (exit 4): the
 * leaves alone can still move forward (an index entry moved back over
 * its left sibling's last extents), and a run that rewrote the tree
 * would make the file map what libext2fs read, not what e2fsck keeps.
 * Nor is a leaf empty (the kernel calls such a tree corrupt).
 */
#define EXTENT_LEVELS 8		/* ext4's are at most 5 deep */

struct ext_bounds {
	blk64_t	lo[EXTENT_LEVELS], last[EXTENT_LEVELS];
	int	below;		/* the level just descended to, or -1 */
	blk64_t	eof;		/* the file's last logical block */
	int	past_eof_ok;	/* verity: metadata past the end */
};

static int ext_in_bounds(struct ext_bounds *b, const struct ext2fs_extent *ext,
			 int level)
{
	/* e2fsck's last_lblk: an index entry of no length (one starting at
	 * the end of the file) ends just before it. */
	blk64_t last = ext->e_lblk + (blk64_t)ext->e_len - 1;
	int first = b->below == level;

	if (level >= EXTENT_LEVELS ||
	    ((ext->e_flags & EXT2_EXTENT_FLAGS_LEAF) && !ext->e_len))
		return 0;
	b->below = -1;
	if (level > 0) {
		if (ext->e_lblk < b->lo[level - 1] ||
		    (first && ext->e_lblk != b->lo[level - 1]))
			return 0;
		/* e2fsck checks no end where the bound is block 0. */
		if (b->last[level - 1] && last > b->last[level - 1] &&
		    !(last > b->eof && (b->past_eof_ok ||
					(ext->e_flags & EXT2_EXTENT_FLAGS_UNINIT))))
			return 0;
	}
	if (!(ext->e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
		b->lo[level] = ext->e_lblk;
		b->last[level] = ext->e_lblk + (blk64_t)ext->e_len - 1;
		b->below = level + 1;
	}
	return 1;
}

static errcode_t walk_extents(struct walk *w, ext2_ino_t ino,
			      struct ext2_inode *inode)
{
	ext2_extent_handle_t handle;
	struct ext2fs_extent ext;
	struct ext2_extent_info info;
	struct ext_bounds b = { .below = -1 };
	blk64_t next_lblk = 0, blocks;
	int op = EXT2_EXTENT_ROOT;
	errcode_t ret;

	blocks = div_up(EXT2_I_SIZE(inode), w->fs->blocksize);
	b.eof = blocks - 1;	/* e2fsck's eof_lblk: wraps for an empty file */
	b.past_eof_ok = !!(inode->i_flags & EXT4_VERITY_FL);

	ret = ext2fs_extent_open2(w->fs, ino, inode, &handle);
	if (ret)
		return E2F_ERR_CORRUPT_INODE;
	for (;; op = EXT2_EXTENT_NEXT) {
		ret = ext2fs_extent_get(handle, op, &ext);
		if (ret == EXT2_ET_EXTENT_NO_NEXT) {
			ret = 0;
			break;
		}
		if (ret == EXT2_ET_EXTENT_CSUM_INVALID)
			ret = 0;	/* analysis reads what is there */
		if (ret) {
			ret = E2F_ERR_CORRUPT_INODE;
			break;
		}
		if (ext.e_flags & EXT2_EXTENT_FLAGS_SECOND_VISIT)
			continue;
		if (ext2fs_extent_get_info(handle, &info) ||
		    !ext_in_bounds(&b, &ext, info.curr_level)) {
			ret = E2F_ERR_CORRUPT_INODE;
			break;
		}
		ret = count_visit(w, 1);
		if (ret)
			break;
		if (!(ext.e_flags & EXT2_EXTENT_FLAGS_LEAF)) {
			if (!valid_block(w->fs, ext.e_pblk)) {
				ret = E2F_ERR_CORRUPT_INODE;
				break;
			}
			if (w->v->etb) {
				ret = w->v->etb(w->priv, ext.e_pblk);
				if (ret)
					break;
			}
			continue;
		}
		ret = visit_leaf(w, ext.e_lblk, ext.e_pblk, ext.e_len,
				 !!(ext.e_flags & EXT2_EXTENT_FLAGS_UNINIT),
				 &next_lblk);
		if (ret)
			break;
	}
	ext2fs_extent_free(handle);
	return ret;
}

errcode_t blockmap_walk(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode,
			const struct blockmap_visitor *v, void *priv, char *buf)
{
	return blockmap_walk_cached(fs, ino, inode, v, priv, buf, NULL);
}

errcode_t blockmap_walk_cached(ext2_filsys fs, ext2_ino_t ino,
			       struct ext2_inode *inode,
			       const struct blockmap_visitor *v, void *priv,
			       char *buf, const struct blockmap_cache *cache)
{
	struct walk w = {
		.fs = fs, .v = v, .priv = priv, .buf = buf, .cache = cache,
		.limit = ext2fs_blocks_count(fs->super),
	};

	errcode_t ret;

	if (!ext2fs_inode_has_valid_blocks2(fs, inode))
		return 0;
	if (!(inode->i_flags & EXT4_EXTENTS_FL))
		return walk_blockmap(&w, inode);
	ret = walk_inline_extents(&w, inode);
	return ret == -1 ? walk_extents(&w, ino, inode) : ret;
}
