/*
 * img.h --- e2fragimg: builds reproducible ext2/3/4 images that show the
 * layouts of the seeds' workloads, writing the image directly with
 * libext2fs (no mount, no root).
 *
 * The builder (struct img) owns an ext2_filsys being made and models the
 * block allocator of a 2.6-era kernel on it: every inode's blocks are
 * taken one run at a time from a per-inode goal (the block after the
 * last one it got), each at the first free block from there, with the
 * mapping blocks (indirect blocks, extent tree blocks) taken in the same
 * cursor order as the kernel took them.  Workloads (streams, tree, ...)
 * decide who writes how much when; the allocator decides where.
 *
 * Engine functions return errcode_t and print nothing; main.c turns
 * errors into messages.  Nothing here is global: all state hangs off
 * struct img.
 */
#ifndef IMG_H
#define IMG_H

#include <stdint.h>
#include <ext2fs/ext2fs.h>
#include <openssl/evp.h>

#include "writer.h"
#include "rng.h"

/* ------------------------------------------------------------- options */

enum img_workload {
	WL_STREAMS, WL_PARALLEL, WL_TREE, WL_AGED, WL_MIXED,
	WL_KTREE,	/* kernel-tree: the tree as a current kernel lays it out */
	WL_NEARFULL, WL_TURNS,		/* nearfull.c: kernel-allocated (mballoc.c) */
	WL_COUNT
};

enum img_fstype { FS_EXT2, FS_EXT3, FS_EXT4 };

/* What the command line asked for; 0 in a field means "the default". */
struct img_opts {
	enum img_workload workload;
	enum img_fstype	type;
	uint64_t	size;		/* bytes */
	unsigned	block_size;
	uint64_t	seed;
	unsigned	streams;	/* concurrent writers */
	uint64_t	chunk;		/* bytes per writer turn */
	uint64_t	total;		/* bytes written by all writers */
	uint64_t	total_set;	/* --total was given (0 is a valid total) */
	blk64_t		reservation;	/* window in blocks; 0: none */
	uint64_t	files;		/* tree: number of files */
	int		files_set;
	uint64_t	dirs;		/* kernel-tree: directories */
	unsigned	fill;		/* aged: percent */
	unsigned	rounds;		/* aged */
	unsigned	rounds_set;
	blk64_t		blocks_per_group;	/* 0: mke2fs' choice */
	int		no_flex_bg;	/* ext4 without flex_bg */
	uint64_t	sync;		/* nearfull, turns: bytes between syncs */
	int		sync_set;
	const char	*script;	/* nearfull, turns: write the operations here */
	int		quiet;
};

/* ------------------------------------------------------------ block maps */

/* Data blocks LEN long from physical PBLK; logical blocks are implicit. */
struct img_run {
	blk64_t	pblk;
	blk64_t	len;
};

/*
 * An extent tree grown the way the kernel grows it by appending (ext4's
 * ext4_ext_insert_extent, split and grow_indepth): level[0] holds the
 * leaves, level[depth-1] the blocks the in-inode root points to.  Only
 * the shape is kept (each block: where it is, how full); the entries are
 * derived from the runs when written (writer/exttree.c).
 */
struct img_etree {
	int		depth;
	uint32_t	root;		/* entries in the in-inode root (max 4) */
	struct exttree_node *level[EXTTREE_MAX_DEPTH];
	uint32_t	nlevel[EXTTREE_MAX_DEPTH], cap[EXTTREE_MAX_DEPTH];
};

/* The block map of one inode while it grows (map.c). */
struct img_map {
	blk64_t		nblocks;	/* logical (data) blocks mapped */
	blk64_t		goal;		/* where the next block is looked for */
	struct img_run	*runs;		/* logical order; extents when extent-mapped */
	uint32_t	nruns, runs_cap;
	blk64_t		meta;		/* mapping blocks owned: IND/DIND/TIND or ETB */
	/* block-mapped: IND i maps logical blocks 12 + i*apb ..; DIND j
	 * maps IND blocks 1 + j*apb ..; the TIND maps DIND blocks 1 .. */
	blk64_t		*ind, *dind, tind;
	uint32_t	nind, ind_cap, ndind, dind_cap;
	struct img_etree etree;
	/* reservation window [win_start, win_end), regular files only */
	blk64_t		win_start, win_end;
	/* Where mapping blocks are looked for from, when not 0: a current
	 * kernel takes them apart from the data (kplace.c). */
	blk64_t		meta_goal;
	uint8_t		extents;	/* extent-mapped */
	uint8_t		reserve;	/* may take reservation windows */
	/* mballoc.c: the inode's preallocation, logical pa_lstart.. at
	 * physical pa_pstart.., pa_len blocks, marked in use */
	blk64_t		pa_lstart, pa_pstart, pa_len;
};

/* ----------------------------------------------------- files and dirs */

struct img_file;

/* A name in a directory, and the directory block it was put in. */
struct img_dirent {
	struct img_file	*file;
	uint32_t	block;
};

struct img_dir {
	struct img_dirent *ents;	/* insertion order */
	uint32_t	nents, ents_cap;
	uint32_t	*used;		/* bytes in use per directory block */
	uint32_t	nused, used_cap;
	uint32_t	subdirs;
};

enum {
	IMGF_DIR	= 1 << 0,
	IMGF_DELETED	= 1 << 1,
	IMGF_CLOSED	= 1 << 2,
	IMGF_FOREIGN	= 1 << 3,	/* made by libext2fs (lost+found): leave alone */
	IMGF_ADOPTED	= 1 << 4,	/* made by libext2fs, rewritten by us (root) */
};

struct img_file {
	char		*name;		/* in its directory */
	struct img_file	*parent;	/* NULL for the root */
	ext2_ino_t	ino;
	uint32_t	flags;		/* IMGF_* */
	uint32_t	serial;		/* creation order; keys the contents */
	int32_t		set;		/* index into img->sets, or -1 */
	uint32_t	ctime, mtime;
	uint64_t	size;
	uint64_t	hashed;		/* bytes fed to the digest so far */
	EVP_MD_CTX	*sha;		/* while open */
	unsigned char	digest[32];
	struct img_map	map;
	struct img_dir	*dir;		/* directories only */
};

/* Files written at the same time (the manifest's "sets"). */
struct img_set {
	struct img_file	**members;
	uint32_t	n, cap;
};

/* The data written to the image, gathered into large sequential writes. */
struct img_writer {
	char		*buf;
	blk64_t		start;		/* first block in buf */
	blk64_t		n, cap;		/* blocks in buf, buffer size in blocks */
	uint64_t	bytes;		/* written so far */
	int		fd;		/* the image, for buffered writes */
	int		dfd;		/* the image with O_DIRECT, or -1 */
};

/* ------------------------------------------------------------- builder */

struct img {
	ext2_filsys		fs;
	const struct img_opts	*opts;
	struct img_rng		rng;		/* the workloads' choices */
	uint64_t		content_seed;
	uint32_t		clock;		/* simulated time for timestamps */
	unsigned		colour;		/* the writing process' colour, 0..15 (files.c) */
	unsigned		bs;		/* block size */
	unsigned		apb;		/* block numbers per indirect block */
	unsigned		ext_per_block;	/* extent entries per tree block */
	int			extents;	/* new inodes are extent-mapped */
	int			csum;		/* metadata_csum */
	struct img_writer	writer;
	char			*scratch;	/* one block */
	EVP_MD			*sha256;
	struct img_file		*root;
	struct img_file		**files;	/* every inode made, creation order */
	uint32_t		nfiles, files_cap;
	struct img_set		*sets;
	uint32_t		nsets, sets_cap;
	struct img_map		**windows;	/* maps holding a reservation window */
	uint32_t		nwindows, windows_cap;
	ext2_ino_t		dir_goal;	/* the next directory's inode goal, once (0: none) */
	/* mballoc.c: a today's kernel's allocator instead of alloc.c's */
	int			mballoc;
	blk64_t			lg_pstart, lg_len;	/* the locality group's preallocation */
	blk64_t			pa_blocks;	/* in inodes' preallocations, unused */
	dgrp_t			last_group;	/* where stream allocation goes on */
};

/* The fixed clock: 2004-10-28, the week seed 000 was written. */
#define IMG_EPOCH 1098921600U

/* -------------------------------------------------------------- mem.c */

/*
 * Make *PTRP (an array of SIZE-byte elements with room for *CAP) hold at
 * least NEED, zeroing the new part.  ENOMEM, leaving it as it was.
 */
errcode_t img_grow(void *ptrp, uint32_t *cap, uint32_t need, size_t size);

/* ------------------------------------------------------------- mkfs.c */

/* Blocks and inodes the image will have, derived from the options. */
struct img_geometry {
	blk64_t		blocks;
	ext2_ino_t	inodes;
	blk64_t		blocks_per_group;	/* 0: mke2fs' choice */
};

/*
 * Make the empty filesystem at PATH (an existing, empty, sparse file of
 * the right length) as mke2fs would: tables, root, lost+found, reserved
 * and bad-block inodes, resize inode, journal.  All times and ids come
 * from the seed.
 */
errcode_t mkfs_create(const char *path, const struct img_opts *o,
		      const struct img_geometry *geo, ext2_filsys *ret);

/* Write everything out and free FS (no fsync; see mkfs.c). */
errcode_t mkfs_close(ext2_filsys fs);

/* Blocks of the default journal for a filesystem of BLOCKS (0: none). */
blk64_t mkfs_journal_blocks(const struct img_opts *o, blk64_t blocks);

/* ------------------------------------------------------------- alloc.c */

/*
 * Take up to WANT free blocks, one physical run, for map M: at the first
 * free block at or after M's goal (wrapping round to the start), inside
 * M's reservation window when it has one.  Marks them in use, moves the
 * goal past them.  E2F_ERR_NO_SPACE when the filesystem is full.
 */
errcode_t alloc_run(struct img *img, struct img_map *m, blk64_t want,
		    blk64_t *start, blk64_t *len);

/* Give up M's reservation window (the file was closed). */
void alloc_drop_window(struct img *img, struct img_map *m);

/* Blocks in use, metadata included. */
blk64_t alloc_used_blocks(const struct img *img);

/* First free block in [FROM, TO], or 0 when none. */
blk64_t alloc_first_free(const struct img *img, blk64_t from, blk64_t to);

/* Length of the free run at START, at most MAX and not past TO. */
blk64_t alloc_free_run(const struct img *img, blk64_t start, blk64_t max,
		       blk64_t to);
/* One mapping block (indirect, extent tree) for M, near its goal. */
errcode_t alloc_meta(struct img *img, struct img_map *m, blk64_t *pblk);

/* ----------------------------------------------------------- mballoc.c */

/*
 * The allocator of a today's kernel (ext4's mballoc, which also serves
 * ext2 and ext3), used by alloc.c when img->mballoc is set: per-inode and
 * locality-group preallocations, requests normalized to them.
 */
errcode_t mb_alloc_data(struct img *img, struct img_map *m, blk64_t want,
			blk64_t *start, blk64_t *len);
errcode_t mb_alloc_meta(struct img *img, struct img_map *m, blk64_t *pblk);

/* Give back the unused part of M's preallocation (the file was closed). */
void mb_discard(struct img *img, struct img_map *m);

/* Give back the locality group's preallocation (unmount). */
void mb_finish(struct img *img);

/* Blocks in use as df sees them: preallocated but unused ones not counted. */
blk64_t mb_used_blocks(const struct img *img);

/* First free block in [from, to], or 0; the free run at START up to MAX, not past TO. */
blk64_t alloc_first_free(const struct img *img, blk64_t from, blk64_t to);
blk64_t alloc_free_run(const struct img *img, blk64_t start, blk64_t max, blk64_t to);

/* ------------------------------------------------------------- map.c */

void map_init(struct img *img, struct img_map *m, blk64_t goal, int reserve);
void map_free(struct img_map *m);

/*
 * Map up to WANT more data blocks at the end of M, taking the mapping
 * blocks they need first (indirect) or after (extent tree), as the
 * kernel did.  Returns the one physical run of data blocks it took.
 */
errcode_t map_extend(struct img *img, struct img_map *m, blk64_t want,
		     blk64_t *start, blk64_t *len);

/* Map a block the filesystem already gave the inode (root's first block). */
errcode_t map_adopt(struct img *img, struct img_map *m, blk64_t pblk);

/* Return every block of M to the free pool (the file was deleted). */
void map_release(struct img *img, struct img_map *m);

/*
 * Fill INODE's i_block, i_blocks and flags from M and write M's mapping
 * blocks.  INODE must already be on disk with its generation (the
 * checksums of extent blocks depend on it); the caller writes INODE
 * again afterwards.
 */
errcode_t map_write(struct img *img, struct img_map *m, ext2_ino_t ino,
		    struct ext2_inode *inode);

/* Physical block of logical block LBLK of M (for directories). */
blk64_t map_pblk(const struct img_map *m, blk64_t lblk);

/* ----------------------------------------------------------- etree.c */

/* A new extent was appended to M: grow the tree shape, taking blocks. */
errcode_t etree_add(struct img *img, struct img_map *m);

/* Write the tree blocks and the in-inode root from M's shape and runs. */
errcode_t etree_write(struct img *img, struct img_map *m, ext2_ino_t ino,
		      struct ext2_inode *inode);
void etree_release(struct img *img, struct img_map *m);
void etree_free(struct img_map *m);

/* ------------------------------------------------------------ data.c */

/* Set up the write buffer and, where possible, direct I/O to PATH. */
errcode_t data_init(struct img *img, const char *path);
void data_cleanup(struct img *img);

/* Fill NBLOCKS blocks at BUF with the contents of F's logical blocks LBLK... */
void data_fill(const struct img *img, const struct img_file *f, blk64_t lblk,
	       blk64_t nblocks, void *buf);

/*
 * Space in the write buffer for data blocks PBLK.. (at most WANT); the
 * caller fills *BUF with *GOT blocks.  Flushes first when PBLK does not
 * continue what is buffered.
 */
errcode_t data_reserve(struct img *img, blk64_t pblk, blk64_t want,
		       char **buf, blk64_t *got);
errcode_t data_flush(struct img *img);

/*
 * PBLK was just taken for a mapping or directory block, which finish.c
 * writes after all the data: if it continues the buffered range, hold its
 * place (zeros) so the range goes on.
 */
void data_skip(struct img *img, blk64_t pblk);

/* ------------------------------------------------------------ files.c */

/* Adopt the root directory and lost+found that mkfs_create made. */
errcode_t files_init(struct img *img);

errcode_t file_create(struct img *img, struct img_file *dir, const char *name,
		      struct img_file **ret);
errcode_t dir_create(struct img *img, struct img_file *parent, const char *name,
		     struct img_file **ret);

/* Append NBYTES of the file's contents (allocating as it goes). */
errcode_t file_append(struct img *img, struct img_file *f, uint64_t nbytes);

/* Finish the digest, drop the reservation window. */
errcode_t file_close(struct img *img, struct img_file *f);

/* Unlink a closed file and free its blocks and inode, as rm would. */
errcode_t file_delete(struct img *img, struct img_file *f);

/* Flush the data, then write every live inode, mapping and directory block. */
errcode_t files_finish(struct img *img);

void files_free(struct img *img);

/* Absolute path of F into BUF (LEN bytes); the length it needs, like snprintf. */
size_t file_path(const struct img_file *f, char *buf, size_t len);

/* Start a new set of concurrently written files; returns its index. */
errcode_t set_new(struct img *img, int32_t *ret);
errcode_t set_add(struct img *img, int32_t set, struct img_file *f);

/* -------------------------------------------------------- workloads.c */

/*
 * What a workload will write, so main can size the filesystem before
 * making it: data bytes and inodes.
 */
struct img_need {
	uint64_t	bytes;
	uint64_t	inodes;
	uint64_t	size;		/* the workload's default --size (0: from bytes) */
	blk64_t		blocks_per_group;	/* the workload's default (0: mke2fs') */
};

void workload_defaults(struct img_opts *o);
void workload_need(const struct img_opts *o, struct img_need *need);
errcode_t workload_run(struct img *img);

const char *workload_name(enum img_workload w);
const char *fstype_name(enum img_fstype t);

/* ------------------------------------------------------------- tree.c */

/* Data bytes the tree of NFILES will hold (its sizes come from SEED). */
uint64_t tree_bytes(uint64_t seed, uint64_t nfiles);

/* The size of the tree's next file, from the sizes generator R. */
uint64_t tree_draw_size(struct img_rng *r);

/* The sizes generator of the tree of SEED (the one tree_bytes adds up). */
void tree_sizes_seed(struct img_rng *r, uint64_t seed);
uint64_t tree_dirs(uint64_t nfiles);

/* Untar a source tree of NFILES under DIR/NAME. */
errcode_t wl_tree(struct img *img, struct img_file *dir, const char *name,
		  uint64_t nfiles);

/* ----------------------------------------------------------- kplace.c */

/*
 * Placement as a current kernel (delayed allocation, mballoc) does it for
 * files written one after another and closed before writeback; see
 * kplace.c.  The workload creates the inodes; kplace places their blocks.
 */
struct kplace {
	struct img	*img;
	struct img_rng	rng;		/* Orlov's random start */
	blk64_t		lg_next, lg_end; /* the small files' preallocation, held in the bitmap */
	blk64_t		stream;		/* mballoc's stream goal (block-mapped tails) */
	dgrp_t		flex;		/* groups per flex group (1 without flex_bg) */
};

void kplace_init(struct kplace *k, struct img *img);

/* Inode goal of a new directory in the root: Orlov's spread. */
ext2_ino_t kplace_topdir_goal(struct kplace *k);

/* Write SIZE bytes into the new, empty file F and close it. */
errcode_t kplace_write(struct kplace *k, struct img_file *f, uint64_t size);

/* Give back what is still preallocated. */
void kplace_finish(struct kplace *k);

/* ------------------------------------------------------------ ktree.c */

/* Directories and default size of kernel-tree (see ktree.c). */
void ktree_need(const struct img_opts *o, struct img_need *need);

/* N directories in DIR, then the files, each into one chosen at random. */
errcode_t wl_ktree(struct img *img, struct img_file *dir);
/* ---------------------------------------------------------- nearfull.c */

/* Recorders on a disk kept nearly full, and the turn-by-turn disk. */
errcode_t wl_nearfull(struct img *img);
errcode_t wl_turns(struct img *img);
void nearfull_need(const struct img_opts *o, struct img_need *need);

/* ---------------------------------------------------------- manifest.c */

/* Write PATH: {"files": [...], "sets": [[...], ...]} (see e2fragimg(1)). */
errcode_t manifest_write(struct img *img, const char *path, const char *image,
			 uint64_t *nfiles, uint64_t *nsets);

/* ------------------------------------------------------------ output.c */

/*
 * OUTPUT and OUTPUT.json, and the temporary files beside them that the
 * build writes (renamed over them once it has succeeded).
 */
struct img_output {
	const char	*image;		/* OUTPUT */
	char		*manifest;	/* OUTPUT.json */
	char		*tmp_image, *tmp_manifest;
};

/*
 * Check that OUTPUT and OUTPUT.json may be replaced (absent, empty, or an
 * unmounted image and a manifest) and create the temporary image, sparse
 * at SIZE bytes, and manifest.  On failure says why (as PROG), leaves
 * nothing behind and returns -1.
 */
int output_open(struct img_output *out, const char *prog, const char *output,
		uint64_t size);
/* Rename the built files over OUTPUT.json and OUTPUT: 0, or -1 said. */
int output_commit(struct img_output *out, const char *prog);
/* Remove the temporary files (async-signal-safe: only unlink). */
void output_discard(const struct img_output *out);
void output_free(struct img_output *out);

#endif /* IMG_H */
