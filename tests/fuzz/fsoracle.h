/*
 * fsoracle.h --- what the run target (target_run.c) checks after a real
 * e2defrag run, read through libext2fs alone: none of the planner's,
 * the mover's or the writer's code, so that a bug there cannot hide
 * itself.
 *
 *   files     every inode in use, with a digest of its bytes as a reader
 *             sees them: a regular file's and a directory's contents
 *             (holes and unwritten extents as zeros), a symlink's target;
 *             the same before and after, inode by inode;
 *   blocks    every block owned once (the fixed metadata: superblocks,
 *             descriptors, reserved descriptors, bitmaps, inode tables;
 *             every inode's data and mapping blocks; attribute blocks,
 *             shared ones once), and the block bitmap exactly their union;
 *   counts    each group's free blocks and free inodes as its bitmaps
 *             count them, and the superblock's totals their sums.
 */
#ifndef FUZZ_FSORACLE_H
#define FUZZ_FSORACLE_H

#include <stddef.h>
#include <stdint.h>
#include <ext2fs/ext2fs.h>

struct fsoracle_files;

/* The digest of every inode in use on FS (opened read-only). */
errcode_t fsoracle_files(ext2_filsys fs, struct fsoracle_files **ret);
void fsoracle_files_free(struct fsoracle_files *f);

/*
 * 0 when A and B hold the same inodes with the same digests; else 1, with
 * the first difference said in WHY.
 */
int fsoracle_files_differ(const struct fsoracle_files *a,
			  const struct fsoracle_files *b, char *why, size_t len);

/*
 * 0 when FS's blocks and counts agree as above; else 1 (or an error
 * reading), the first disagreement said in WHY.  COUNT_SUPER: also the
 * superblock's totals (which a filesystem may let lag behind the groups'
 * and still be consistent: the kernel does).
 */
int fsoracle_blocks_differ(ext2_filsys fs, int count_super, char *why,
			   size_t len);

/* Whether the superblock's free counts are the groups' sums on FS. */
int fsoracle_super_counts_agree(ext2_filsys fs);

#endif /* FUZZ_FSORACLE_H */
