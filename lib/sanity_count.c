/*
 * sanity_count.c --- a count per inode for the link-count check (the
 * links each inode records, the entries naming it): an array over the
 * inodes when the inode table is not much larger than the inodes in
 * use, libext2fs's icount otherwise.
 *
 * The icount's store, increment and fetch take many times the
 * instructions of two bytes an inode in an array, and are called for
 * every inode and every directory entry.  Its bitmaps and list cost two
 * bits an inode and eight bytes an inode counted twice or more, so a
 * sparse table (a large filesystem with few of its inodes in use) keeps
 * it.  Both give what ext2fs_icount_fetch gives: the count, at most
 * 65,500.
 */
#include <errno.h>
#include <stdlib.h>

#include "sanity_int.h"

/* The array when it takes at most this many bytes an inode in use. */
#define FLAT_BYTES_PER_USED	16

errcode_t sanity_count_init(ext2_filsys fs, struct sanity_count *c)
{
	uint64_t inodes = fs->super->s_inodes_count;
	uint64_t used = inodes - fs->super->s_free_inodes_count;

	c->flat = NULL;
	c->icount = NULL;
	/* The superblock's free count may lag: only the memory depends on it. */
	if (fs->super->s_free_inodes_count <= inodes &&
	    (inodes + 1) * sizeof(*c->flat) <= FLAT_BYTES_PER_USED * used) {
		c->flat = calloc(inodes + 1, sizeof(*c->flat));
		if (c->flat)
			return 0;
	}
	return ext2fs_create_icount2(fs, EXT2_ICOUNT_OPT_INCREMENT, 0, NULL,
				     &c->icount);
}

void sanity_count_free(struct sanity_count *c)
{
	free(c->flat);
	if (c->icount)
		ext2fs_free_icount(c->icount);
	c->flat = NULL;
	c->icount = NULL;
}
