/*
 * fake_fs.h --- a layout over a filesystem that exists only in memory, for
 * the unit tests of the layout: the superblock and filesystem fields the
 * read model and the accessors look at, and the model's defaults.
 */
#ifndef FAKE_FS_H
#define FAKE_FS_H

#include <string.h>

#include "e2frag.h"

struct fake_fs {
	struct struct_ext2_filsys	fs;
	struct ext2_super_block		sb;
};

/* L, empty, over FF: groups of 8,192 blocks of BLOCKSIZE bytes. */
static inline void fake_layout(struct layout *L, struct fake_fs *ff,
			       unsigned int blocksize)
{
	memset(L, 0, sizeof(*L));
	memset(ff, 0, sizeof(*ff));
	ff->sb.s_blocks_per_group = 8192;
	ff->fs.super = &ff->sb;
	ff->fs.blocksize = blocksize;
	L->fs = &ff->fs;
	readmodel_defaults(&L->model);
}

#endif /* FAKE_FS_H */
