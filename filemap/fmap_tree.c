/*
 * fmap_tree.c --- a moved file's extent tree, built from scratch: full
 * leaves, then index levels, until the four entries in the inode hold the
 * top level; so the tree is as shallow and narrow as the extents allow
 * (what e2fsck's extent tree optimizer would make of it).  This file
 * chooses that shape and the blocks; writer/exttree.c writes the format,
 * checksums included, as it does for e2fragimg.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"

/* Each tree block becomes one of the move's writes and one block it gains. */
static errcode_t emit_block(void *priv, blk64_t pblk, char *block)
{
	struct fmap_rebuild *r = priv;
	errcode_t ret;

	ret = fmap_rebuild_add_write(r, pblk, block);
	if (ret) {
		free(block);
		return ret;
	}
	return fmap_rebuild_add_gained(r, pblk, 1);
}

errcode_t fmap_tree_build(ext2_filsys fs, ext2_ino_t ino, struct fmap_rebuild *r,
			const struct layout_piece *meta, size_t nmeta, int *fits)
{
	unsigned per = exttree_per_block(fs);
	uint32_t need = fmap_build_tree_blocks(fs, r->nextents);
	struct exttree_shape shape = { 0 };
	struct exttree_node *nodes;
	uint64_t n = r->nextents, j, k = 0;
	size_t mi = 0;
	blk64_t moff = 0, have = 0;
	errcode_t ret;

	have = layout_pieces_blocks(meta, nmeta);
	*fits = need <= have;
	if (!*fits)
		return 0;
	nodes = calloc(need + 1, sizeof(*nodes));
	if (!nodes)
		return ENOMEM;
	/* Level by level, full nodes from the left, in META's blocks in order. */
	mi = 0;
	while (n > EXTTREE_ROOT_MAX && shape.depth < EXTTREE_MAX_DEPTH) {
		uint64_t nup = (n + per - 1) / per;

		shape.level[shape.depth] = nodes + k;
		shape.nlevel[shape.depth] = nup;
		for (j = 0; j < nup; j++, k++) {
			while (moff >= meta[mi].len) {
				mi++;
				moff = 0;
			}
			nodes[k].pblk = meta[mi].start + moff++;
			nodes[k].entries = n - j * per < per ? n - j * per : per;
		}
		n = nup;
		shape.depth++;
	}
	shape.root = n;
	*fits = n <= EXTTREE_ROOT_MAX;
	ret = !*fits ? 0 :
		exttree_write(fs, ino, r->extents, r->nextents, &shape, r->i_block,
			      emit_block, r);
	free(nodes);
	return ret;
}
