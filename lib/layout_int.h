/*
 * layout_int.h --- what the files of the core share among themselves and
 * nobody else (and the unit tests, which test the parts): the scan's
 * intermediate results and steps.
 */
#ifndef LAYOUT_INT_H
#define LAYOUT_INT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"

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
/*
 * Entries for the files WANT says (all when WANT is NULL) that have none
 * yet, named from the directories of EXTRA (its inline ones aside).
 */
errcode_t names_add(struct layout *layout, struct scan_extra *extra,
		    int (*want)(void *priv, uint64_t file), void *priv);

/* fsopen.c */
/*
 * The first feature set in the superblock that e2defrag does not know how
 * to move files on, or NULL.  Exposed for tests and the dry run.
 */
const char *fsopen_unsupported_feature(ext2_filsys fs);

/* qcow2_io.c: e2image -Q dumps, read-only. */
extern io_manager qcow2_io_manager;
/* Whether the file starting with HEAD (LEN bytes) is a qcow2 image. */
int qcow2_io_is_dump(const unsigned char *head, size_t len);
/* The size of the filesystem the dump at PATH holds, from its header. */
errcode_t qcow2_io_dump_size(const char *path, uint64_t *bytes);

/* ------------------------------------------------------------------ zones.c */

/*
 * Mark the fixed metadata of the filesystem (superblocks, descriptors,
 * reserved GDT, bitmaps, inode tables, MMP block) and the RESERVED runs
 * (blocks of the journal and the other reserved inodes) in layout->fixed,
 * and derive the zones between them.
 */
errcode_t zones_build(struct layout *layout, const struct layout_piece *reserved,
		      uint64_t nreserved);

/* Fewest pieces NBLOCKS could be laid out in, given the zones. */
uint32_t zones_best(const struct layout *layout, blk64_t nblocks);

/* interleave.c */
/*
 * Find which files interleave (doc/design.md), fill layout->interleaved with
 * each one's partners and alternations, and group them into layout->sets.
 */
errcode_t interleave_find(struct layout *layout);

/*
 * Once names are known: put each set's members in path order and the sets
 * in order of read time lost, worst first.
 */
void interleave_order_sets(struct layout *layout);

/* ------------------------------------------------------------- itable_used.c */

/*
 * For each group, the highest inode number in use by the inode bitmap
 * (the reserved ones and those the superblock names always counted), 0
 * for a group with none: *RET_LAST, group_desc_count entries, the
 * caller's to free.  An error (the bitmap unreadable) leaves it NULL.
 */
errcode_t itable_used_limits(ext2_filsys fs, ext2_ino_t **ret_last);

/* --------------------------------------------------------------- freespace.c */

/* Free extents, histogram and per-group figures from the block bitmap. */
errcode_t freespace_scan(struct layout *layout);
void freespace_free(struct free_space *fsp);
/*
 * The first run of free blocks at or after FROM in FS's block bitmap:
 * [*START, *END).  0 when there is none.
 */
int freespace_next_run(ext2_filsys fs, blk64_t from, blk64_t *start, blk64_t *end);

#endif /* LAYOUT_INT_H */
