/*
 * testmove.h --- the test-only mover's pieces (testmove.c, testmove_map.c).
 */
#ifndef TESTMOVE_H
#define TESTMOVE_H

#include "e2frag.h"

/* Block runs, in order. */
struct runs {
	struct layout_piece	*v;
	size_t			n, cap;
};

/* LEN data blocks at logical LBLK, physical PBLK. */
struct map {
	blk64_t	lblk, pblk, len;
	int	uninit;
};

struct maps {
	struct map	*v;
	size_t		n, cap;
};

/* Blocks taken one after another from a list of runs. */
struct cursor {
	const struct runs	*t;
	size_t			i;
	blk64_t			off;
};

errcode_t runs_push(struct runs *r, blk64_t start, blk64_t len);
errcode_t maps_push(struct maps *m, blk64_t lblk, blk64_t pblk, blk64_t len,
		    int uninit);

/* The next block of the cursor, or 0 when the runs are used up. */
blk64_t cursor_next(struct cursor *c);

/*
 * Mapping blocks (extent tree or indirect blocks) INODE needs for DATA
 * (logical order) once the data is laid out in one physical run.
 */
blk64_t testmove_mapping_blocks(ext2_filsys fs,
				const struct ext2_inode_large *inode,
				const struct maps *data);

/*
 * Write INODE's new map for DATA (its blocks at their new places, logical
 * order) into the MAPPING blocks taken from CUR, and set i_block.
 * E2F_ERR_NO_SPACE when the map needs another number of blocks.
 */
errcode_t testmove_build_map(ext2_filsys fs, ext2_ino_t ino,
			     struct ext2_inode_large *inode,
			     const struct maps *data, struct cursor *cur,
			     blk64_t mapping);

#endif
