/*
 * sanity_int.h --- what the files of the sanity checks (sanity.c, the
 * directories in sanity_dir.c, the words in sanity_words.c) share.
 */
#ifndef SANITY_INT_H
#define SANITY_INT_H

#include "sanity.h"

/*
 * A count per inode (sanity_count.c): an array over the inodes (FLAT) or
 * an icount, whichever the inodes in use make cheaper in memory.  Every
 * inode number given is in [1, s_inodes_count].
 */
struct sanity_count {
	uint16_t	*flat;
	ext2_icount_t	icount;
};

/* ext2fs_icount_fetch's ceiling (icount.c, icount_16_xlate). */
#define SANITY_COUNT_MAX	65500

errcode_t sanity_count_init(ext2_filsys fs, struct sanity_count *c);
void sanity_count_free(struct sanity_count *c);

static inline errcode_t sanity_count_store(struct sanity_count *c, ext2_ino_t ino,
					   uint16_t count)
{
	if (!c->flat)
		return ext2fs_icount_store(c->icount, ino, count);
	c->flat[ino] = count < SANITY_COUNT_MAX ? count : SANITY_COUNT_MAX;
	return 0;
}

static inline errcode_t sanity_count_increment(struct sanity_count *c, ext2_ino_t ino)
{
	if (!c->flat)
		return ext2fs_icount_increment(c->icount, ino, NULL);
	if (c->flat[ino] < SANITY_COUNT_MAX)
		c->flat[ino]++;
	return 0;
}

/* As ext2fs_icount_fetch: 0 for an inode never counted, at most 65,500. */
static inline uint16_t sanity_count_fetch(const struct sanity_count *c, ext2_ino_t ino)
{
	__u16 v = 0;

	if (c->flat)
		return c->flat[ino];
	ext2fs_icount_fetch(c->icount, ino, &v);
	return v;
}

/* Per inode facts the layout does not keep; sized on the first note. */
struct sanity_notes {
	ext2fs_inode_bitmap in_use;	/* links_count != 0, or reserved */
	uint32_t	*dirs;		/* directories per group */
	struct sanity_count links;	/* i_links_count of the inodes whose entries are counted */
	ext2_ino_t	*dir_list;	/* every directory in use, inode order */
	uint64_t	ndir_list, dir_list_cap;
	ext2_ino_t	*htree_list;	/* those with the hash index flag, inode order */
	uint64_t	nhtree_list, htree_list_cap;
	struct sanity_quota *quota;	/* usage per id, for the quota files */
	struct sanity_finding first;	/* the lowest inode's first problem */
	uint64_t	problems;
};

/* Keep the first finding in FOUND; count them all. */
void sanity_found(struct sanity_finding *found, const struct sanity_finding *f);
void sanity_found_simple(struct sanity_finding *found, enum sanity_what what,
			 ext2_ino_t ino, blk64_t blk, dgrp_t group);
void sanity_found_count(struct sanity_finding *found, enum sanity_what what,
			dgrp_t group, uint64_t recorded, uint64_t counted);

/* sanity_dir.c: every directory's entries, then the link counts. */
errcode_t sanity_check_dirs(struct layout *layout, struct sanity_notes *n,
			    struct sanity_finding *found);

/*
 * sanity_quota.c: the quota files' usage against the inodes in use.
 * sanity_quota_note() charges INODE (in use, the root or past the
 * reserved ones, not an attribute inode) to its ids, creating *Q;
 * sanity_check_quota() compares every quota file the superblock names
 * with what was charged (Q may be NULL: nothing was).
 */
#define SANITY_QUOTA_TYPES	3	/* user, group, project */
struct sanity_quota;
errcode_t sanity_quota_note(ext2_filsys fs, struct sanity_quota **q,
			    const struct ext2_inode *inode);
errcode_t sanity_check_quota(ext2_filsys fs, struct sanity_quota *q,
			     struct sanity_finding *found);
void sanity_quota_free(struct sanity_quota *q);

#endif /* SANITY_INT_H */
