/*
 * exttree.h --- writing an extent tree: the one encoder of ext4's extent
 * tree format that e2defrag (a tree rebuilt for a moved file, full leaves)
 * and e2fragimg (a tree grown as the kernel grows it, by appending) share.
 *
 * The caller decides the shape: how many levels, which block each node
 * is in and how many entries it holds.  This file fills the nodes, in
 * logical order, with the extents and the index entries that point down,
 * sets each block's checksum (metadata_csum) and puts the top level in the
 * inode's i_block.
 */
#ifndef EXTTREE_H
#define EXTTREE_H

#include <ext2fs/ext2fs.h>

#define EXTTREE_MAX_DEPTH	5	/* what ext4 allows (EXT4_MAX_EXTENT_DEPTH) */
#define EXTTREE_ROOT_MAX	4	/* entries in the inode's 60-byte i_block */

/* One extent of a file, in logical order. */
struct exttree_extent {
	blk64_t		lblk;
	blk64_t		pblk;
	uint32_t	len;	/* at most 32768 blocks, 32767 uninitialized */
	uint8_t		uninit;	/* unwritten (preallocated) */
};

/* A tree block: where it is and how many entries it holds. */
struct exttree_node {
	blk64_t		pblk;
	uint32_t	entries;
};

/*
 * The tree: level 0 the leaves, level DEPTH - 1 the one the inode points
 * to; ROOT entries in the inode.  DEPTH 0: the extents are in the inode.
 */
struct exttree_shape {
	unsigned		depth;
	uint32_t		root;
	uint32_t		nlevel[EXTTREE_MAX_DEPTH];
	const struct exttree_node *level[EXTTREE_MAX_DEPTH];
};

/*
 * Called with each tree block, leaves first, left to right: BLOCK is
 * fs->blocksize bytes from malloc, and the callee's to keep or to free,
 * even when it returns an error.
 */
typedef errcode_t (*exttree_emit_fn)(void *priv, blk64_t pblk, char *block);

/* Entries a tree block holds on FS. */
unsigned exttree_per_block(ext2_filsys fs);

/*
 * Write the tree of the NX extents X in SHAPE for inode INO: every block
 * through EMIT, the top level into I_BLOCK (EXT2_N_BLOCKS words, cleared
 * first).  EXT2_ET_EXTENT_HEADER_BAD when the shape and the extents
 * disagree (a bug in the caller, never bad input).
 */
errcode_t exttree_write(ext2_filsys fs, ext2_ino_t ino,
			const struct exttree_extent *x, uint64_t nx,
			const struct exttree_shape *shape, __u32 *i_block,
			exttree_emit_fn emit, void *priv);

#endif /* EXTTREE_H */
