/*
 * exttree.c --- the extent tree format written: headers, extents, index
 * entries, checksums (writer.h says who decides the shape).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"
#include <ext2fs/ext3_extents.h>

static void put_header(struct ext3_extent_header *eh, uint32_t entries,
		       uint32_t max, unsigned depth)
{
	eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	eh->eh_entries = ext2fs_cpu_to_le16(entries);
	eh->eh_max = ext2fs_cpu_to_le16(max);
	eh->eh_depth = ext2fs_cpu_to_le16(depth);
	eh->eh_generation = 0;
}

static void put_extent(struct ext3_extent *e, const struct exttree_extent *x)
{
	/* An uninitialized extent says so by a length above EXT_INIT_MAX_LEN. */
	e->ee_block = ext2fs_cpu_to_le32((__u32)x->lblk);
	e->ee_len = ext2fs_cpu_to_le16(x->uninit ? x->len + EXT_INIT_MAX_LEN : x->len);
	e->ee_start_hi = ext2fs_cpu_to_le16((__u16)(x->pblk >> 32));
	e->ee_start = ext2fs_cpu_to_le32((__u32)x->pblk);
}

static void put_index(struct ext3_extent_idx *ix, blk64_t lblk, blk64_t child)
{
	ix->ei_block = ext2fs_cpu_to_le32((__u32)lblk);
	ix->ei_leaf = ext2fs_cpu_to_le32((__u32)child);
	ix->ei_leaf_hi = ext2fs_cpu_to_le16((__u16)(child >> 32));
	ix->ei_unused = 0;
}

unsigned exttree_per_block(ext2_filsys fs)
{
	return (fs->blocksize - sizeof(struct ext3_extent_header)) /
	       sizeof(struct ext3_extent);
}

/*
 * Level L's nodes filled from what is below: the extents (L 0) or the
 * nodes of level L - 1, whose first logical blocks are in *FIRST; on
 * return *FIRST holds level L's own.
 */
static errcode_t write_level(ext2_filsys fs, ext2_ino_t ino,
			     const struct exttree_extent *x, uint64_t nx,
			     const struct exttree_shape *s, unsigned l,
			     blk64_t **first, exttree_emit_fn emit, void *priv)
{
	uint64_t below = l ? s->nlevel[l - 1] : nx, k = 0;
	blk64_t *mine = calloc(s->nlevel[l] + 1, sizeof(*mine));
	uint32_t i, j;
	errcode_t ret = 0;

	if (!mine)
		return ENOMEM;
	for (i = 0; !ret && i < s->nlevel[l]; i++) {
		const struct exttree_node *n = &s->level[l][i];
		struct ext3_extent_header *eh;
		char *buf;

		if (!n->entries || n->entries > exttree_per_block(fs) ||
		    n->entries > below - k) {
			ret = EXT2_ET_EXTENT_HEADER_BAD;
			break;
		}
		buf = calloc(1, fs->blocksize);
		if (!buf) {
			ret = ENOMEM;
			break;
		}
		eh = (struct ext3_extent_header *)buf;
		put_header(eh, n->entries, exttree_per_block(fs), l);
		mine[i] = l ? (*first)[k] : x[k].lblk;
		for (j = 0; j < n->entries; j++, k++) {
			if (l)
				put_index((struct ext3_extent_idx *)(eh + 1) + j,
					  (*first)[k], s->level[l - 1][k].pblk);
			else
				put_extent((struct ext3_extent *)(eh + 1) + j, &x[k]);
		}
		ret = ext2fs_extent_block_csum_set(fs, ino, eh);
		if (ret)
			free(buf);
		else
			ret = emit(priv, n->pblk, buf);
	}
	if (!ret && k != below)
		ret = EXT2_ET_EXTENT_HEADER_BAD;
	free(*first);
	*first = mine;
	return ret;
}

errcode_t exttree_write(ext2_filsys fs, ext2_ino_t ino,
			const struct exttree_extent *x, uint64_t nx,
			const struct exttree_shape *s, __u32 *i_block,
			exttree_emit_fn emit, void *priv)
{
	struct ext3_extent_header *root = (struct ext3_extent_header *)i_block;
	blk64_t *first = NULL;
	errcode_t ret = 0;
	unsigned l;
	uint32_t i;

	if (s->depth > EXTTREE_MAX_DEPTH || s->root > EXTTREE_ROOT_MAX ||
	    (s->depth ? s->root != s->nlevel[s->depth - 1] : s->root != nx))
		return EXT2_ET_EXTENT_HEADER_BAD;
	memset(i_block, 0, EXT2_N_BLOCKS * sizeof(*i_block));
	for (l = 0; !ret && l < s->depth; l++)
		ret = write_level(fs, ino, x, nx, s, l, &first, emit, priv);
	if (!ret) {
		put_header(root, s->root, EXTTREE_ROOT_MAX, s->depth);
		for (i = 0; i < s->root; i++) {
			if (s->depth)
				put_index((struct ext3_extent_idx *)(root + 1) + i,
					  first[i], s->level[s->depth - 1][i].pblk);
			else
				put_extent((struct ext3_extent *)(root + 1) + i, &x[i]);
		}
	}
	free(first);
	return ret;
}
