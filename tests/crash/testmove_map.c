/*
 * testmove_map.c --- the test mover's new block maps: an extent tree of
 * depth 0 or 1, or IND/DIND/TIND blocks, written by hand into new blocks
 * so that the old map stays intact until switch_file.
 */
#include <errno.h>
#include <string.h>

#include "testmove.h"

#define EXT_INIT_MAX	32768U
#define EXT_UNINIT_MAX	32767U

/* ---------------------------------------------------------------- extents */

/*
 * Merge DATA into extents.  PHYS_CONTIGUOUS: pretend the data lies in one
 * physical run (to count the extents before the run is chosen).
 * Runs too long for one extent are split.
 */
static errcode_t make_extents(const struct maps *data, int phys_contiguous,
			      struct maps *out)
{
	blk64_t pnext = 0;
	size_t i;
	errcode_t ret;

	for (i = 0; i < data->n; i++) {
		struct map m = data->v[i];

		if (phys_contiguous) {
			m.pblk = pnext;
			pnext += m.len;
		}
		while (m.len) {
			unsigned max = m.uninit ? EXT_UNINIT_MAX : EXT_INIT_MAX;
			struct map *e = out->n ? &out->v[out->n - 1] : NULL;
			blk64_t n = m.len;

			if (e && e->lblk + e->len == m.lblk &&
			    e->pblk + e->len == m.pblk && e->uninit == m.uninit &&
			    e->len < max) {
				if (n > max - e->len)
					n = max - e->len;
				e->len += n;
			} else {
				if (n > max)
					n = max;
				ret = maps_push(out, m.lblk, m.pblk, n, m.uninit);
				if (ret)
					return ret;
			}
			m.lblk += n;
			m.pblk += n;
			m.len -= n;
		}
	}
	return 0;
}

static unsigned leaf_capacity(ext2_filsys fs)
{
	return (fs->blocksize - sizeof(struct ext3_extent_header)) /
	       sizeof(struct ext3_extent);
}

static blk64_t extent_blocks(ext2_filsys fs, size_t nextents)
{
	unsigned per = leaf_capacity(fs);

	if (nextents <= 4)
		return 0;
	return (nextents + per - 1) / per;
}

static void put_extent(struct ext3_extent *x, const struct map *e)
{
	x->ee_block = ext2fs_cpu_to_le32(e->lblk);
	x->ee_len = ext2fs_cpu_to_le16(e->len + (e->uninit ? EXT_INIT_MAX : 0));
	x->ee_start_hi = ext2fs_cpu_to_le16(e->pblk >> 32);
	x->ee_start = ext2fs_cpu_to_le32(e->pblk & 0xffffffffU);
}

static void put_header(struct ext3_extent_header *h, unsigned entries,
		       unsigned max, unsigned depth)
{
	h->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	h->eh_entries = ext2fs_cpu_to_le16(entries);
	h->eh_max = ext2fs_cpu_to_le16(max);
	h->eh_depth = ext2fs_cpu_to_le16(depth);
	h->eh_generation = 0;
}

static errcode_t build_extents(ext2_filsys fs, ext2_ino_t ino,
			       struct ext2_inode_large *inode,
			       const struct maps *data, struct cursor *cur,
			       blk64_t mapping)
{
	struct maps ext = { 0 };
	struct ext3_extent_header *root = (void *)inode->i_block;
	unsigned per = leaf_capacity(fs), leaves, l, k;
	char *buf = NULL;
	errcode_t ret;

	ret = make_extents(data, 0, &ext);
	if (ret)
		goto errout;
	if (extent_blocks(fs, ext.n) != mapping || extent_blocks(fs, ext.n) > 4) {
		ret = E2F_ERR_NO_SPACE;
		goto errout;
	}
	memset(inode->i_block, 0, sizeof(inode->i_block));
	if (ext.n <= 4) {
		put_header(root, ext.n, 4, 0);
		for (k = 0; k < ext.n; k++)
			put_extent((struct ext3_extent *)(root + 1) + k, &ext.v[k]);
		goto errout;	/* nothing more to write */
	}
	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (ret)
		goto errout;
	leaves = mapping;
	put_header(root, leaves, 4, 1);
	for (l = 0; l < leaves; l++) {
		struct ext3_extent_header *h = (void *)buf;
		struct ext3_extent_idx *idx = (struct ext3_extent_idx *)(root + 1) + l;
		unsigned first = l * per, n = ext.n - first < per ? ext.n - first : per;
		blk64_t blk = cursor_next(cur);

		memset(buf, 0, fs->blocksize);
		put_header(h, n, per, 0);
		for (k = 0; k < n; k++)
			put_extent((struct ext3_extent *)(h + 1) + k, &ext.v[first + k]);
		ret = ext2fs_extent_block_csum_set(fs, ino, h);
		if (!ret)
			ret = io_channel_write_blk64(fs->io, blk, 1, buf);
		if (ret)
			goto errout;
		idx->ei_block = ext2fs_cpu_to_le32(ext.v[first].lblk);
		idx->ei_leaf = ext2fs_cpu_to_le32(blk & 0xffffffffU);
		idx->ei_leaf_hi = ext2fs_cpu_to_le16(blk >> 32);
		idx->ei_unused = 0;
	}
errout:
	ext2fs_free_mem(&buf);
	free(ext.v);
	return ret;
}

/* ----------------------------------------------------------- block maps */

/* Logical blocks the subtree of an indirect block at LEVEL (1 = IND) maps. */
static blk64_t level_span(ext2_filsys fs, int level)
{
	blk64_t apb = fs->blocksize / 4, span = 1;

	while (level-- > 0)
		span *= apb;
	return span;
}

/* Whether DATA maps any logical block in [lo, lo + n). */
static int maps_any(const struct maps *data, blk64_t lo, blk64_t n)
{
	size_t a = 0, b = data->n;

	/* First entry ending after lo. */
	while (a < b) {
		size_t mid = (a + b) / 2;

		if (data->v[mid].lblk + data->v[mid].len <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < data->n && data->v[a].lblk < lo + n;
}

/* The physical block of logical LBLK, or 0 for a hole. */
static blk64_t maps_lookup(const struct maps *data, blk64_t lblk)
{
	size_t a = 0, b = data->n;

	while (a < b) {
		size_t mid = (a + b) / 2;

		if (data->v[mid].lblk + data->v[mid].len <= lblk)
			a = mid + 1;
		else
			b = mid;
	}
	if (a < data->n && data->v[a].lblk <= lblk)
		return data->v[a].pblk + (lblk - data->v[a].lblk);
	return 0;
}

/* Indirect blocks at LEVEL needed below [BASE, BASE + level_span(LEVEL)). */
static blk64_t count_ind(ext2_filsys fs, const struct maps *data, int level,
			 blk64_t base)
{
	blk64_t span = level_span(fs, level), child = level_span(fs, level - 1);
	blk64_t n = 1, off;

	if (!maps_any(data, base, span))
		return 0;
	if (level > 1)
		for (off = 0; off < span; off += child)
			n += count_ind(fs, data, level - 1, base + off);
	return n;
}

/* The three trees' first logical blocks. */
static blk64_t tree_base(ext2_filsys fs, int level)
{
	blk64_t base = EXT2_NDIR_BLOCKS;
	int l;

	for (l = 1; l < level; l++)
		base += level_span(fs, l);
	return base;
}

/*
 * Write the indirect block of LEVEL mapping from BASE (mapping blocks come
 * from CUR in depth-first order) and return its number in *blk (0: no data
 * below).
 */
static errcode_t build_ind(ext2_filsys fs, const struct maps *data, int level,
			   blk64_t base, struct cursor *cur, blk64_t *used,
			   blk64_t *blk)
{
	blk64_t apb = fs->blocksize / 4, child = level_span(fs, level - 1), i;
	__u32 *entries = NULL;
	errcode_t ret;

	*blk = 0;
	if (!maps_any(data, base, level_span(fs, level)))
		return 0;
	*blk = cursor_next(cur);
	(*used)++;
	if (!*blk)
		return E2F_ERR_NO_SPACE;
	ret = ext2fs_get_memzero(fs->blocksize, &entries);
	if (ret)
		return ret;
	for (i = 0; i < apb && !ret; i++) {
		blk64_t b = 0;

		if (level == 1)
			b = maps_lookup(data, base + i);
		else
			ret = build_ind(fs, data, level - 1, base + i * child,
					cur, used, &b);
		entries[i] = ext2fs_cpu_to_le32(b);
	}
	if (!ret)
		ret = io_channel_write_blk64(fs->io, *blk, 1, entries);
	ext2fs_free_mem(&entries);
	return ret;
}

static errcode_t build_blockmap(ext2_filsys fs, struct ext2_inode_large *inode,
				const struct maps *data, struct cursor *cur,
				blk64_t mapping)
{
	blk64_t used = 0, b;
	errcode_t ret;
	int i, level;

	for (i = 0; i < EXT2_NDIR_BLOCKS; i++)
		inode->i_block[i] = maps_lookup(data, i);
	for (level = 1; level <= 3; level++) {
		ret = build_ind(fs, data, level, tree_base(fs, level), cur, &used, &b);
		if (ret)
			return ret;
		inode->i_block[EXT2_NDIR_BLOCKS + level - 1] = b;
	}
	return used == mapping ? 0 : E2F_ERR_NO_SPACE;
}

/* ---------------------------------------------------------------- entry */

blk64_t testmove_mapping_blocks(ext2_filsys fs,
				const struct ext2_inode_large *inode,
				const struct maps *data)
{
	blk64_t n = 0;
	int level;

	if (inode->i_flags & EXT4_EXTENTS_FL) {
		struct maps ext = { 0 };

		if (make_extents(data, 1, &ext))
			n = ~(blk64_t)0 >> 1;
		else
			n = extent_blocks(fs, ext.n);
		free(ext.v);
		return n;
	}
	for (level = 1; level <= 3; level++)
		n += count_ind(fs, data, level, tree_base(fs, level));
	return n;
}

errcode_t testmove_build_map(ext2_filsys fs, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     const struct maps *data, struct cursor *cur,
			     blk64_t mapping)
{
	if (inode->i_flags & EXT4_EXTENTS_FL)
		return build_extents(fs, ino, inode, data, cur, mapping);
	return build_blockmap(fs, inode, data, cur, mapping);
}
