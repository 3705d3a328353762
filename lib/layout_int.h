/*
 * layout_int.h --- what the files of the core share among themselves and
 * nobody else: the scan's intermediate results and a growable array.
 */
#ifndef LAYOUT_INT_H
#define LAYOUT_INT_H

#include <stdlib.h>
#include <string.h>

#include "e2frag.h"

/*
 * Make room for NEED elements of SIZE bytes in *ARRAY, which has room for
 * *CAP.  Grows geometrically so that appending is amortized O(1).
 */
static inline errcode_t vec_reserve(void *array, uint64_t *cap, uint64_t need,
				    size_t size)
{
	void **p = array;
	uint64_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* A run of one directory's data blocks, to be read for names. */
struct dir_run {
	blk64_t		start;
	blk64_t		len;
	ext2_ino_t	ino;
};

/* What the scan collects beside the layout itself. */
struct scan_extra {
	struct dir_run	*dir_runs;	/* directories' data blocks */
	uint64_t	ndir_runs, dir_runs_cap;
	ext2_ino_t	*inline_dirs;	/* directories without blocks */
	uint64_t	ninline_dirs, inline_dirs_cap;
	struct layout_piece *reserved_runs;	/* reserved inodes' blocks: fixed metadata */
	uint64_t	nreserved_runs, reserved_runs_cap;
};

/* names.c: read the directories and attach a name to every inode. */
errcode_t names_build(struct layout *layout, struct scan_extra *extra,
		      const struct layout_opts *opts);
void names_free(struct layout *layout);

#endif /* LAYOUT_INT_H */
