/*
 * exttree.c --- an extent tree built from scratch: full leaves, then
 * index levels, until the four entries in the inode hold the top level;
 * so the tree is as shallow and narrow as the extents allow (what
 * e2fsck's extent tree optimizer would make of it).  Each block carries
 * its checksum when the filesystem has metadata_csum.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "e2d_err.h"

static void put_header(struct ext3_extent_header *eh, unsigned entries,
		       unsigned max, unsigned depth)
{
	eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	eh->eh_entries = ext2fs_cpu_to_le16(entries);
	eh->eh_max = ext2fs_cpu_to_le16(max);
	eh->eh_depth = ext2fs_cpu_to_le16(depth);
	eh->eh_generation = 0;
}

static void put_extent(struct ext3_extent *e, const struct mapbuild_extent *x)
{
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

/* A node of the tree being built: its block and the first logical block it covers. */
struct node {
	blk64_t	pblk;
	blk64_t	lblk;
};

/*
 * Build the tree for R's extents bottom-up in META's blocks: full leaves,
 * then index levels, until the root in the inode holds the top level.
 */
errcode_t exttree_build(ext2_filsys fs, ext2_ino_t ino, struct rebuild *r,
			    const struct layout_piece *meta, size_t nmeta)
{
	unsigned per = (fs->blocksize - sizeof(struct ext3_extent_header)) /
		       sizeof(struct ext3_extent);
	struct ext3_extent_header *root = (struct ext3_extent_header *)r->i_block;
	struct node *level = NULL, *up = NULL;
	size_t nlevel, i, j, mi = 0;
	blk64_t moff = 0;
	unsigned depth = 0;
	uint32_t need = mapbuild_tree_blocks(fs, r->nextents);
	blk64_t have = 0;
	errcode_t ret = 0;

	for (i = 0; i < nmeta; i++)
		have += meta[i].len;
	if (need > have)
		return E2D_ERR_PLAN_CONFLICT;
	memset(r->i_block, 0, sizeof(r->i_block));
	if (r->nextents <= 4) {
		put_header(root, r->nextents, 4, 0);
		for (i = 0; i < r->nextents; i++)
			put_extent((struct ext3_extent *)(root + 1) + i, &r->extents[i]);
		return 0;
	}

	/* Level 0: the extents themselves, as "nodes" to be grouped into leaves. */
	nlevel = r->nextents;
	while (nlevel > 4) {
		size_t nup = (nlevel + per - 1) / per;

		up = calloc(nup, sizeof(*up));
		if (!up) {
			ret = ENOMEM;
			goto out;
		}
		for (j = 0; j < nup; j++) {
			size_t first = j * per, cnt = nlevel - first < per ? nlevel - first : per;
			struct ext3_extent_header *eh;
			char *buf;

			while (mi < nmeta && moff >= meta[mi].len) {
				mi++;
				moff = 0;
			}
			if (mi >= nmeta) {
				ret = E2D_ERR_PLAN_CONFLICT;
				goto out;
			}
			up[j].pblk = meta[mi].start + moff++;
			buf = calloc(1, fs->blocksize);
			if (!buf) {
				ret = ENOMEM;
				goto out;
			}
			eh = (struct ext3_extent_header *)buf;
			put_header(eh, cnt, per, depth);
			for (i = 0; i < cnt; i++) {
				if (depth == 0)
					put_extent((struct ext3_extent *)(eh + 1) + i,
						   &r->extents[first + i]);
				else
					put_index((struct ext3_extent_idx *)(eh + 1) + i,
						  level[first + i].lblk,
						  level[first + i].pblk);
			}
			up[j].lblk = depth == 0 ? r->extents[first].lblk : level[first].lblk;
			ret = ext2fs_extent_block_csum_set(fs, ino, eh);
			if (!ret)
				ret = rebuild_add_write(r, up[j].pblk, buf);
			if (ret) {
				free(buf);
				goto out;
			}
			ret = rebuild_add_gained(r, up[j].pblk, 1);
			if (ret)
				goto out;
		}
		free(level);
		level = up;
		up = NULL;
		nlevel = nup;
		depth++;
	}
	put_header(root, nlevel, 4, depth);
	for (i = 0; i < nlevel; i++)
		put_index((struct ext3_extent_idx *)(root + 1) + i, level[i].lblk,
			  level[i].pblk);
out:
	free(level);
	free(up);
	return ret;
}

