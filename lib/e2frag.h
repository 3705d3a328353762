/*
 * e2frag.h --- the core library shared by e2frag, e2defrag, e2fragmap and
 * e2fragimg.
 *
 * The core never prints, never exits and never calls curses.  Functions
 * return errcode_t (0, an EXT2_ET_* code, an errno value or an E2F_ERR_*
 * code from e2f_err.et) and report long work through a progress callback.
 * The front ends turn errors into messages with com_err().
 *
 * The central object is the layout: what a scan found out about where every
 * inode's blocks lie.  The scan fills it; the scores, the reports, the
 * planner and the map only read it.  See doc/design.md for the definitions
 * of piece, extent, best, interleaving and modeled read time.
 */
#ifndef E2FRAG_H
#define E2FRAG_H

#include <stdint.h>
#include <stdio.h>
#include <ext2fs/ext2fs.h>

#include "e2f_err.h"

/* ---------------------------------------------------------------- progress */

enum e2f_phase {
	E2F_PHASE_INODES,	/* scanning inode tables; units: inodes */
	E2F_PHASE_DIRS,		/* reading directories for names; units: blocks */
	E2F_PHASE_BITMAPS,	/* reading bitmaps and fixed metadata; units: groups */
	E2F_PHASE_MOVE,		/* e2defrag moving data; units: blocks */
	E2F_PHASE_PLAN,		/* e2defrag planning the moves; units: files placed */
	E2F_PHASE_COUNT
};

/*
 * Called now and then during long work.  Return 0 to go on, nonzero to
 * cancel: the operation then stops at the next safe point and returns
 * E2F_ERR_CANCELLED.
 */
typedef int (*e2f_progress_fn)(void *priv, enum e2f_phase phase,
			       uint64_t done, uint64_t total);

/* ------------------------------------------------------------------ fsopen.c */

/* What fsopen_open() is asked for. */
enum {
	FSOPEN_WRITE	 = 1 << 0,	/* open read-write (e2defrag); default read-only */
	FSOPEN_FORCE	 = 1 << 1,	/* -f: override "not checked since mount" only */
	FSOPEN_CHECK	 = 1 << 2,	/* with FSOPEN_WRITE: refuse as for writing, but
					 * open read-only (e2defrag -n) */
	FSOPEN_DRY_RUN	 = 1 << 3,	/* with FSOPEN_CHECK: nothing will be written,
					 * so a qcow2 dump may be read */
};

/* What kind of file holds the filesystem. */
enum fsopen_dump {
	FSOPEN_DUMP_NONE = 0,	/* a device or a raw image (e2image -r) */
	FSOPEN_DUMP_QCOW2,	/* e2image -Q, read through the qcow2 tables */
};

/* What fsopen_open() found out while opening; front ends warn with it. */
struct fsopen_info {
	char	*device;	/* resolved path (malloc'd; fsopen_close frees it) */
	int	mount_flags;	/* EXT2_MF_* from ext2fs_check_mount_point */
	char	mount_point[256];
	int	needs_recovery;	/* journal has transactions to replay */
	int	has_errors;	/* s_state has EXT2_ERROR_FS */
	int	not_clean;	/* s_state lacks EXT2_VALID_FS */
	char	unsupported[64]; /* first feature e2defrag cannot handle, or "" */
	enum fsopen_dump dump;	/* a qcow2 dump is read-only */
};

/*
 * Resolve SPEC (a path, LABEL=..., UUID=...) to a device or image path.
 * On success *device is malloc'd.  E2F_ERR_NOT_FOUND when no such tag.
 * A directory that is a mount point resolves to the device of the
 * ext2/3/4 filesystem mounted there (the last mount over it, as
 * /proc/self/mountinfo lists them); another directory is
 * E2F_ERR_NOT_MOUNT_POINT, a mount of something else (tmpfs, overlay)
 * E2F_ERR_MOUNT_NOT_EXT.
 */
errcode_t fsopen_resolve(const char *spec, char **device);

/*
 * The device mounted on directory DIR (a canonical path) according to
 * MOUNTINFO (a file in /proc/self/mountinfo's format): *device malloc'd.
 * Exposed for tests, which give it a mountinfo of their own.
 */
errcode_t fsopen_mount_source(const char *mountinfo, const char *dir,
			      char **device);

/*
 * Open SPEC read-only or (FSOPEN_WRITE) read-write, always with 64-bit
 * bitmaps.  Rejects non-ext input, directories, empty and truncated
 * images, corrupt group descriptors, normal-format e2image dumps
 * (E2F_ERR_E2IMAGE_NORMAL); reads qcow2 dumps (e2image -Q) through their
 * tables, and refuses to write one (E2F_ERR_DUMP_READONLY) unless
 * FSOPEN_DRY_RUN says nothing will be written.  For writing it also refuses a
 * mounted, busy, dirty, erroneous, needs-recovery, orphan-carrying
 * filesystem or one with an unsupported feature, with the E2F_ERR_* code
 * naming why (info->unsupported names the feature).  IO may be NULL
 * (unix_io_manager) or a stacked manager such as undo_io_manager.
 * info is filled as far as the open got, even on failure.
 */
errcode_t fsopen_open(const char *spec, int flags, io_manager io,
		      ext2_filsys *ret_fs, struct fsopen_info *info);

/*
 * What fsopen_open() checks once ext2fs_open2() has opened FS (read-only,
 * with EXT2_FLAG_64BITS, EXT2_FLAG_SKIP_MMP and
 * EXT2_FLAG_IGNORE_CSUM_ERRORS) on a device or image of BYTES bytes: not
 * truncated, sane group descriptors; then INFO's state is filled.  And
 * why FS must not be written (FSOPEN_FORCE in FLAGS lets "not checked
 * since mount" pass), given that state and INFO's mount flags; 0 when it
 * may.  Exposed for a filesystem opened from memory (tests/fuzz).
 */
errcode_t fsopen_check_opened(ext2_filsys fs, uint64_t bytes,
			      struct fsopen_info *info);
errcode_t fsopen_write_refusal(ext2_filsys fs, const struct fsopen_info *info,
			       int flags);

/* Close (flushing when opened for writing) and free info->device. */
errcode_t fsopen_close(ext2_filsys fs, struct fsopen_info *info);

/* "ext2", "ext3" or "ext4", the way blkid would name the filesystem. */
const char *fsopen_fs_type(ext2_filsys fs);

/* ------------------------------------------------------------------ layout.c */

enum layout_type { LAYOUT_FILE, LAYOUT_DIR, LAYOUT_SYMLINK, LAYOUT_OTHER };

/* Flags of a struct layout_file. */
enum {
	LAYOUT_F_EXTENTS    = 1 << 0,	/* extent-mapped (else block-mapped) */
	LAYOUT_F_CORRUPT    = 1 << 1,	/* map could not be read whole; counts are partial */
	LAYOUT_F_HAS_XATTR_BLOCK = 1 << 2,
	LAYOUT_F_SELECTED   = 1 << 3,	/* inside the PATH arguments of the report */
	LAYOUT_F_UNINIT     = 1 << 4,	/* has uninitialized (unwritten) extents */
	/*
	 * A plain map: logical blocks 0 to n-1 all mapped, initialized, and
	 * either a block map with no mapping block more than they need
	 * (blockmap_meta_blocks) or extents all in the inode, one a piece;
	 * from an inode whose checksum holds, with no compression, snapshot
	 * or inline-data flag.  Its pieces alone say the whole map, so
	 * e2defrag's planner need not read it again (fmap_from_stream).
	 */
	LAYOUT_F_PLAIN_MAP  = 1 << 5,
	/* Owns extent tree blocks: layout->file_etb says how many. */
	LAYOUT_F_ETB        = 1 << 6,
};

/* A run of physically consecutive blocks. */
struct layout_piece {
	blk64_t	start;
	blk64_t	len;
};

/* Blocks the N runs of P hold together. */
static inline blk64_t layout_pieces_blocks(const struct layout_piece *p, size_t n)
{
	blk64_t blocks = 0;
	size_t i;

	for (i = 0; i < n; i++)
		blocks += p[i].len;
	return blocks;
}

/* Whether a block of the NA runs of A is one of the NB runs of B. */
static inline int layout_pieces_overlap(const struct layout_piece *a, size_t na,
					const struct layout_piece *b, size_t nb)
{
	size_t i, k;

	for (i = 0; i < na; i++)
		for (k = 0; k < nb; k++)
			if (a[i].start < b[k].start + b[k].len &&
			    b[k].start < a[i].start + a[i].len)
				return 1;
	return 0;
}

/*
 * One inode that owns blocks.  Kept small (24 bytes): a scan holds one per
 * file, and every program must stay within a few times e2fsck's memory.
 * What can be derived is: best (layout_file_best), read times
 * (layout_file_times), interleaving (layout_file_interleave), pieces
 * (layout_file_piece), every block it owns (layout_file_blocks: the few
 * files with extent tree blocks have their count in layout->file_etb, not
 * 4 bytes in every record).
 *
 * Counts are kept in as few bits as nearly every file needs; the rare file
 * whose size, stream, pieces or extents do not fit has the field at its
 * largest value (LAYOUT_BIG32, LAYOUT_BIG16) and the whole figures in
 * layout->file_big.  Read the record through the accessors below, never
 * its fields but ino, type and flags; write it with layout_file_set.
 */
#define LAYOUT_BIG32	UINT32_MAX
#define LAYOUT_BIG16	UINT16_MAX
/* where holds 48 bits: ext4 block numbers, and indexes into pieces. */
#define LAYOUT_WHERE_MAX	((UINT64_C(1) << 48) - 1)

struct layout_file {
	ext2_ino_t	ino;
	uint32_t	size32;		/* i_size, bytes (LAYOUT_BIG32: file_big) */
	uint32_t	stream32;	/* stream blocks: data and IND/DIND/TIND */
	uint32_t	where_lo;	/* where, low 32 bits: pieces == 1: its first
					 * block; else index of its first piece in
					 * layout->pieces (logical order) */
	uint16_t	where_hi;	/* ... and bits 32 to 47 */
	uint16_t	pieces16;	/* doc/design.md: piece (LAYOUT_BIG16: file_big) */
	uint16_t	extents16;	/* doc/design.md: extent (filefrag's notion) */
	uint8_t		type;		/* enum layout_type */
	uint8_t		flags;		/* LAYOUT_F_* */
};
_Static_assert(sizeof(struct layout_file) == 24,
	       "lib/e2frag.h states 24 bytes a file record");

/* The whole figures of a file some field of whose record is too small. */
struct layout_file_big {
	uint64_t	size;
	blk64_t		stream;
	uint32_t	pieces;
	uint32_t	extents;
	ext2_ino_t	ino;
};

struct layout;

/* F's entry in layout->file_big (a zeroed one when it has none). */
const struct layout_file_big *layout_file_big(const struct layout *layout,
					      const struct layout_file *f);

/*
 * Set F's figures, putting those its record cannot hold in layout->file_big
 * (kept sorted by inode; F must have its ino).  EOVERFLOW when WHERE does
 * not fit 48 bits, which no block number or piece index reaches; ENOMEM.
 */
errcode_t layout_file_set(struct layout *layout, struct layout_file *f,
			  uint64_t size, blk64_t stream, uint64_t where,
			  uint32_t pieces, uint32_t extents);

/* Change where alone (a piece index moved). */
static inline void layout_file_set_where(struct layout_file *f, uint64_t where)
{
	f->where_lo = (uint32_t)where;
	f->where_hi = (uint16_t)(where >> 32);
}

static inline uint64_t layout_file_where(const struct layout_file *f)
{
	return (uint64_t)f->where_hi << 32 | f->where_lo;
}

/* i_size, bytes. */
static inline uint64_t layout_file_size(const struct layout *layout,
					const struct layout_file *f)
{
	return f->size32 != LAYOUT_BIG32 ? f->size32 :
		layout_file_big(layout, f)->size;
}

/* Data and IND blocks: what a sequential read of the file touches. */
static inline blk64_t layout_stream_blocks(const struct layout *layout,
					   const struct layout_file *f)
{
	return f->stream32 != LAYOUT_BIG32 ? f->stream32 :
		layout_file_big(layout, f)->stream;
}

/* doc/design.md: piece. */
static inline uint32_t layout_file_pieces(const struct layout *layout,
					  const struct layout_file *f)
{
	return f->pieces16 != LAYOUT_BIG16 ? f->pieces16 :
		layout_file_big(layout, f)->pieces;
}

/* doc/design.md: extent (filefrag's notion). */
static inline uint32_t layout_file_extents(const struct layout *layout,
					   const struct layout_file *f)
{
	return f->extents16 != LAYOUT_BIG16 ? f->extents16 :
		layout_file_big(layout, f)->extents;
}

/* Extent tree blocks a file owns (LAYOUT_F_ETB), by inode. */
struct layout_file_etb {
	ext2_ino_t	ino;
	uint32_t	blocks;
};

/* An interleaved file's partners and set (layout->interleaved, by file). */
struct layout_interleave {
	uint32_t	file;		/* index into layout->files */
	uint32_t	set;		/* 1-based index into layout->sets */
	uint32_t	first_partner;	/* layout->partners[first_partner ...] */
	uint32_t	partners;
	uint32_t	alternations;	/* summed over its partners */
};

/* Blocks an inode owns outside its data stream (for the map and planner). */
enum layout_aux_kind { LAYOUT_AUX_ETB, LAYOUT_AUX_XATTR };
struct layout_aux {
	blk64_t		start;
	blk64_t		len;
	ext2_ino_t	ino;
	uint8_t		kind;	/* enum layout_aux_kind */
};

/* A group of files written together: doc/design.md, interleaving. */
struct layout_set {
	uint32_t	first_member;	/* layout->set_members[...]: file indexes, path order */
	uint32_t	members;
	uint64_t	alternations;	/* summed over member pairs */
	blk64_t		blocks;		/* stream blocks of all members */
	double		read_seconds;	/* modeled, all members */
	double		ideal_seconds;
};

/* A set with more members than this is outlined in the reports. */
#define LAYOUT_SET_LARGE	10
#define LAYOUT_OUTLINE_DIRS	5
#define LAYOUT_OUTLINE_PAIRS	5

struct layout_set_dir {
	ext2_ino_t	ino;		/* 0: members no directory entry names */
	uint32_t	members;
};

struct layout_pair {
	ext2_ino_t	a, b;		/* a < b */
	uint32_t	alternations;
};

/*
 * A reserved inode described under "filesystem" (journal, resize inode).
 * Its blocks are fixed metadata (layout->fixed); RUNS keeps its pieces too,
 * in logical order, so that the map can tell the journal from the rest.
 */
struct layout_reserved {
	ext2_ino_t	ino;
	blk64_t		blocks;
	uint32_t	pieces;
	struct layout_piece *runs;	/* PIECES entries, malloc'd; NULL when none */
};

/* A maximal run of blocks free of fixed metadata (zones.c). */
struct layout_zone {
	blk64_t	start;
	blk64_t	len;
};

struct layout_summary {
	uint64_t files, fragmented_files, avoidably_fragmented_files;
	uint64_t fragmented_small_files;	/* fragmented and < one group: e2fsck's "non-contiguous" */
	uint64_t pieces, best_pieces, extents, blocks;
	uint64_t interleaved_files, interleave_sets;
	uint64_t corrupt_files;
	double modeled_read_seconds, ideal_read_seconds;
	double read_efficiency;		/* ideal / modeled; 1 when nothing to read */
	double score;			/* 0..100 */
};

struct free_group {
	blk64_t	free_blocks;
	blk64_t	free_extents;
	blk64_t	largest_free;
};

struct free_bucket {		/* e2freefrag-style power-of-two histogram */
	blk64_t	min_blocks;
	uint64_t count;
	blk64_t	blocks;
};

#define FREE_BUCKETS 48

struct free_space {
	blk64_t	free_blocks;
	blk64_t	free_extents;
	blk64_t	largest_free_extent;
	struct free_bucket histogram[FREE_BUCKETS];	/* bucket i: [2^i, 2^(i+1)) blocks */
	struct free_group *groups;			/* fs->group_desc_count entries */
};

/* The read model's parameters (readmodel.c).  Defaults: readmodel_defaults(). */
struct readmodel {
	double	rpm;		/* spindle speed */
	double	mbps;		/* sustained transfer rate, 10^6 bytes per second */
	double	seek_ms;	/* average seek: a jump over a third of the disk */
	double	track_seek_ms;	/* shortest seek: to the next track */
	double	disk_bytes;	/* capacity the seek curve spans (>= the filesystem) */
};

struct layout {
	ext2_filsys		fs;		/* borrowed; the caller closes it */
	struct layout_file	*files;		/* sorted by inode number */
	uint64_t		nfiles;
	struct layout_piece	*pieces;
	uint64_t		npieces;
	struct layout_aux	*aux;		/* sorted by start */
	uint64_t		naux;
	struct layout_file_etb	*file_etb;	/* files with LAYOUT_F_ETB, by inode */
	uint64_t		nfile_etb;
	struct layout_file_big	*file_big;	/* files too big for their record, by inode */
	uint64_t		nfile_big, file_big_cap;
	struct layout_interleave *interleaved;	/* sorted by file index */
	uint64_t		ninterleaved;
	ext2_ino_t		*partners;	/* inode numbers, per file in the
						 * order found, not sorted: only
						 * the JSON lists them, and sorts
						 * (NULL: layout_opts.partner_counts_only) */
	uint64_t		npartners;
	uint32_t		*set_members;	/* file indexes */
	uint64_t		nset_members;
	struct layout_set	*sets;
	uint64_t		nsets;
	struct layout_zone	*zones;		/* address order */
	uint64_t		nzones;
	blk64_t			*zone_prefix;	/* sums of zone lengths, largest first */
	ext2fs_block_bitmap	fixed;		/* fixed metadata: superblocks .. journal */
	struct layout_reserved	journal, resize;
	struct free_space	free;
	struct layout_summary	summary;
	struct readmodel	model;
	uint64_t		inodes_used;	/* in use as e2fsck -fn counts them (superblock) */
	uint64_t		unreadable_inodes;
	/* names.c: the name each inode is shown under (the first found) */
	struct layout_name	*names;
	uint64_t		nnames;
	char			*name_pool;
	uint64_t		name_pool_len, name_pool_size;
	/* names.c: the other entries of named inodes (hard links), by inode */
	struct layout_link	*links;
	uint64_t		nlinks, links_size;
	/* where each bucket of inode numbers (ino >> name_shift) starts in
	 * names, name_buckets + 1 of them; NULL: search the whole of names */
	uint32_t		*name_index;
	uint64_t		name_buckets;
	unsigned		name_shift;
	/* interleave.c: additions, NULL in a layout put together by hand */
	struct layout_pair	*interleave_top;	/* per interleaved entry,
							 * LAYOUT_OUTLINE_PAIRS: its strongest
							 * pairs (alternations 0: no more) */
	int			partner_counts_only;	/* layout_opts: partners is NULL */
	int			no_outlines;		/* layout_opts: interleave_top is NULL */
	/* sanity.c: what the scan noted for sanity_check_layout, or NULL */
	struct sanity_notes	*sanity;
};

/* Which inodes get a name (a path) from the scan. */
enum layout_names {
	LAYOUT_NAMES_ALL,	/* every file: JSON, the planner, the map */
	LAYOUT_NAMES_LOSSY,	/* directories and files that lose read time:
				 * what a summary shows; saves memory and time */
	LAYOUT_NAMES_NONE,	/* no directory is read; paths are "<ino N>" */
};

/* Options of a scan. */
struct layout_opts {
	struct readmodel model;
	enum layout_names names;
	e2f_progress_fn	progress;
	void		*progress_priv;
	/*
	 * Keep how many partners each interleaved file has, not who they
	 * are: layout->partners stays NULL.  A summary needs no more, and
	 * a large set's lists are most of the memory.
	 */
	int		partner_counts_only;
	/*
	 * Keep no set outline's strongest pairs (interleave_top stays NULL,
	 * layout_set_outline names no pairs): for a program that never
	 * shows an outline, as e2defrag, which would only throw them away.
	 */
	int		no_outlines;
	int		sanity;		/* note what sanity_check_layout needs (sanity.h) */
};

/*
 * Scan FS into a new layout: every in-use inode that owns blocks, the fixed
 * metadata, free space, best, interleaving, names, read times and the
 * summary.  Corrupt inodes (a map that cannot be read whole, flags the
 * features do not allow) are kept with LAYOUT_F_CORRUPT and counted in
 * summary.corrupt_files; unreadable inode table blocks are skipped and
 * counted in unreadable_inodes.  The layout borrows FS.
 */
errcode_t layout_scan(ext2_filsys fs, const struct layout_opts *opts,
		      struct layout **ret);
void layout_free(struct layout *layout);

/* Index of INO in layout->files, or -1. */
int64_t layout_find(const struct layout *layout, ext2_ino_t ino);

/* Piece I (0-based, logical order) of F. */
static inline struct layout_piece
layout_file_piece(const struct layout *layout, const struct layout_file *f,
		  uint32_t i)
{
	if (f->pieces16 == 1) {
		struct layout_piece p = { layout_file_where(f),
					  layout_stream_blocks(layout, f) };
		return p;
	}
	return layout->pieces[layout_file_where(f) + i];
}

/* Fewest pieces F could have here (doc/design.md: best). */
uint32_t layout_file_best(const struct layout *layout, const struct layout_file *f);

/*
 * room.c: the free blocks F's best layout needs (its largest part: the
 * whole stream, or the largest zone's worth), and the free blocks the
 * disk has.  With the second at least the first, the zones F's best takes
 * can be cleared and filled a zone at a time; with less, F cannot reach
 * its best here whatever moves (doc/design.md: no room).
 */
blk64_t layout_room_needed(const struct layout *layout, const struct layout_file *f);
blk64_t layout_room_available(const struct layout *layout);
/*
 * Of the avoidably fragmented files (those flagged LAYOUT_F_SELECTED
 * only, with SELECTED_ONLY), how many e2defrag could bring closer to
 * their best on the disk as it is, estimated from the layout
 * (doc/design.md: improvable): best within reach (above), or fewer pieces
 * without moving another file (whole in one run of its own blocks and
 * free ones, or in fewer of the largest free extents than its pieces).
 * Not the planner's answer: e2frag(8) says how it can differ.
 */
errcode_t layout_count_improvable(const struct layout *layout, int selected_only,
				  uint64_t *count);

/* Extent tree blocks F owns (owned, not read). */
uint32_t layout_file_etb(const struct layout *layout, const struct layout_file *f);

/* Every block F owns: its stream and its extent tree (not the EA block). */
static inline blk64_t layout_file_blocks(const struct layout *layout,
					 const struct layout_file *f)
{
	return layout_stream_blocks(layout, f) + layout_file_etb(layout, f);
}

/* Modeled and ideal seconds to read F (doc/design.md: modeled read time). */
void layout_file_times(const struct layout *layout, const struct layout_file *f,
		       double *read, double *ideal);

/* F's interleaving, or NULL when it interleaves with nothing. */
const struct layout_interleave *
layout_file_interleave(const struct layout *layout, const struct layout_file *f);

const char *layout_type_name(enum layout_type type);

/*
 * Recompute the summary over the files flagged LAYOUT_F_SELECTED, or over
 * all files when ALL is set.
 */
void layout_summarize(struct layout *layout, int all);

/* ---------------------------------------------------------------- blockmap.c */

struct blockmap_visitor {
	/* LEN data blocks at logical LBLK, physical PBLK */
	errcode_t (*data)(void *priv, blk64_t lblk, blk64_t pblk, blk64_t len,
			  int uninit);
	/* an indirect block (IND, DIND or TIND), visited before what it maps */
	errcode_t (*ind)(void *priv, blk64_t pblk);
	/* an extent tree block below the inode */
	errcode_t (*etb)(void *priv, blk64_t pblk);
};

/*
 * Walk INODE's blocks in logical order, calling V.  Block numbers outside
 * the filesystem, loops and disorder in the map end the walk with
 * E2F_ERR_CORRUPT_INODE (what was visited stays visited).  BUF must hold
 * three filesystem blocks.
 */
errcode_t blockmap_walk(ext2_filsys fs, ext2_ino_t ino, struct ext2_inode *inode,
			const struct blockmap_visitor *v, void *priv, char *buf);

/* COUNT blocks from START, already read into DATA. */
struct blockmap_cache {
	blk64_t		start, count;
	const char	*data;
};

/*
 * The same, taking the indirect blocks that CACHE holds from it instead
 * of the disk: a scan reads many files' indirect blocks in one read.
 */
errcode_t blockmap_walk_cached(ext2_filsys fs, ext2_ino_t ino,
			       struct ext2_inode *inode,
			       const struct blockmap_visitor *v, void *priv,
			       char *buf, const struct blockmap_cache *cache);

/*
 * How many of an indirect block's N entries come before its trailing
 * zeros (a small file's block uses its first few): the walkers of a block
 * map, here and e2defrag's, look at no more.
 */
unsigned blockmap_entries_used(const __u32 *entries, unsigned n);

/*
 * The mapping blocks (IND, DIND, TIND) a block map without holes needs for
 * DATA data blocks, with PER_BLOCK entries a block.
 */
blk64_t blockmap_meta_blocks(blk64_t data, blk64_t per_block);

/* ------------------------------------------------------------------ names.c */

/*
 * 12 bytes an inode: the name's length is the byte before it in the pool
 * (a directory entry's name has at most 255), not 4 more in every entry.
 */
struct layout_name {
	ext2_ino_t	ino;
	ext2_ino_t	parent;		/* 0: no name found (disconnected) */
	uint32_t	name;		/* offset into name_pool of its length byte */
};
_Static_assert(sizeof(struct layout_name) == 12,
	       "lib/e2frag.h states 12 bytes a name");

/*
 * An entry naming INO besides its name in layout->names: where a hard
 * link's other names are.  No text (a file with many links would cost
 * its names twice): the selection needs only the directory, and reads
 * the name again the rare time it shows it.
 */
struct layout_link {
	ext2_ino_t	ino;
	ext2_ino_t	parent;		/* the directory holding the entry */
};

/* N's name (not terminated) and its length; none while N->parent is 0. */
static inline const char *layout_name_text(const struct layout *layout,
					   const struct layout_name *n)
{
	return layout->name_pool + n->name + 1;
}

static inline unsigned layout_name_len(const struct layout *layout,
				       const struct layout_name *n)
{
	return n->parent ? (unsigned char)layout->name_pool[n->name] : 0;
}

/*
 * Absolute path of INO ("/", "/a/b"), or "<ino N>" when no directory
 * entry names it.  Writes at most LEN bytes (always terminated); returns
 * the length the whole path needs, like snprintf.
 */
size_t layout_path(const struct layout *layout, ext2_ino_t ino,
		   char *buf, size_t len);

/* The directory INO is shown in (its name's), or 0 when none. */
ext2_ino_t layout_parent(const struct layout *layout, ext2_ino_t ino);

/*
 * Name the files WANT says (every file when WANT is NULL) that a scan with
 * LAYOUT_NAMES_LOSSY left nameless, reading the directories again, as a
 * scan with LAYOUT_NAMES_ALL would have named them.  Not on a filesystem
 * with inline data (map_names_can_wait): its inline directories are not
 * read again.  lib/map_names.c.
 */
errcode_t layout_names_more(struct layout *layout,
			    int (*want)(void *priv, uint64_t file), void *priv);

/*
 * Mark the files under PATH (a file, or a directory and everything below)
 * LAYOUT_F_SELECTED.  ENOENT when PATH names nothing.  A hard link is
 * under PATH when any of its names is; one selected by no earlier PATH is
 * shown from now on under the name PATH reached it by.  Needs a scan with
 * LAYOUT_NAMES_ALL (every name read).
 */
errcode_t layout_select_path(struct layout *layout, const char *path);

/* --------------------------------------------------------------- readmodel.c */

void readmodel_defaults(struct readmodel *m);

/* Seconds to transfer NBYTES at the sustained rate. */
double readmodel_transfer_seconds(const struct readmodel *m, double nbytes);

/*
 * Seconds one jump costs when the next piece starts GAP_BYTES after the
 * end of the previous one (negative: behind it).  0 for 0.  A forward
 * gap costs the time the platter takes to carry it past the head when
 * that is less than repositioning; repositioning is a seek that grows with
 * the square root of the distance, from track_seek_ms to the full stroke
 * (where seek_ms is the seek over a third of the disk), plus half a
 * rotation.  readmodel.c has the formulas.
 */
double readmodel_jump_seconds(const struct readmodel *m, double gap_bytes);

/* Seconds a jump between two of the file's best zones is assumed to cost. */
double readmodel_zone_jump_seconds(const struct readmodel *m);

/*
 * Modeled and ideal read time of F (readmodel.c has the formulas), given
 * its best.
 */
void readmodel_file(const struct readmodel *m, const struct layout *layout,
		    const struct layout_file *f, uint32_t best,
		    double *read, double *ideal);

/* Score 0..100 from modeled and ideal seconds: 100 * (1 - ideal / modeled). */
double readmodel_score(double modeled, double ideal);

/* -------------------------------------------------------------- interleave.c */

/* Where a set's members are and which of them interleave most. */
struct layout_set_outline {
	uint32_t	directories;	/* distinct directories holding members */
	uint32_t	ndirs, npairs;
	struct layout_set_dir dirs[LAYOUT_OUTLINE_DIRS];	/* most members first */
	struct layout_pair pairs[LAYOUT_OUTLINE_PAIRS];	/* most alternations first */
};

/*
 * Give back what only e2frag's reports and the sanity check read: each
 * interleaved file's strongest pairs (layout_set_outline then names no
 * pairs) and the scan's sanity notes (sanity_check_layout then finds
 * nothing).  For a program done with both, as e2defrag is once it checked
 * the layout (its peak memory, the planner's, comes after).
 */
void layout_drop_extras(struct layout *layout);

/* Outline S: its top directories by members and its strongest pairs. */
errcode_t layout_set_outline(const struct layout *layout, const struct layout_set *s,
			     struct layout_set_outline *o);

/*
 * One file's partners asked for when they are wanted, not kept for every
 * file: a scan with partner_counts_only keeps none, and on a tree the
 * kernel interleaved the lists are millions of entries (e2fragmap marks
 * one file's partners at a time).  The index is the interleave
 * detection's own (the fragmented files' pieces in physical order, some
 * 13 bytes a piece); a file's list is the one a full scan keeps for it,
 * sorted by inode number.  The layout must not change while it is open.
 */
struct layout_partners;

errcode_t layout_partners_open(const struct layout *layout,
			       struct layout_partners **ret);
/* FILE's partners (an index into layout->files): *INOS (free() it), *N of them. */
errcode_t layout_partners_of(struct layout_partners *lp, uint64_t file,
			     ext2_ino_t **inos, uint32_t *n);
void layout_partners_close(struct layout_partners *lp);

/* ------------------------------------------------------------------- util.c */

/*
 * Parse a size such as "512M", "8G", "4096", "64k" into bytes (binary
 * units).  EINVAL on junk, ERANGE on overflow.
 */
errcode_t util_parse_size(const char *s, uint64_t *bytes);

/*
 * Copy the string IN to OUT (OUTLEN bytes, always terminated) so that it
 * is printable text: control characters, backslashes and bytes that are
 * not UTF-8 become \xNN.  File names are arbitrary bytes; terminals and
 * JSON want text.  Returns the length written.
 */
size_t util_printable(const char *in, char *out, size_t outlen);

/* ONE when N is 1, else MANY: "1 file", "2 files", "0 files". */
static inline const char *util_plural(uint64_t n, const char *one,
				      const char *many)
{
	return n == 1 ? one : many;
}

/*
 * Parse S as a decimal number from MIN to MAX into *OUT: EINVAL on junk,
 * on a number out of range and on NaN, *OUT untouched then.
 */
errcode_t util_parse_double(const char *s, double min, double max, double *out);

/* Seconds on the monotonic clock: for durations, never for the date. */
double util_now_seconds(void);

/*
 * Make room for NEED elements of SIZE bytes in *ARRAY, which has room for
 * *CAP: the room doubles (from 16), so that appending is amortized O(1).
 * ENOMEM, with *ARRAY and *CAP untouched, when the bytes would not fit a
 * size_t or realloc fails.  The one growable array of the project.
 */
errcode_t util_grow_room(void *array, uint64_t *cap, uint64_t need, size_t size);
/* Inline when there is room: the scan appends millions of times. */
static inline errcode_t util_grow(void *array, uint64_t *cap, uint64_t need,
				  size_t size)
{
	return need <= *cap ? 0 : util_grow_room(array, cap, need, size);
}
/*
 * Give back the room of *ARRAY past its first N elements (N > 0, below
 * *CAP): a grown array's doubling left unwritten.  Kept as it is if
 * realloc fails.
 */
void util_fit(void *array, uint64_t *cap, uint64_t n, size_t size);

/*
 * Ask for transparent huge pages for P, a block from malloc of LEN bytes
 * or more, when it spans a whole 2 MiB page: arrays of millions of
 * entries read at random cost a TLB miss per access in 4 KiB pages (where
 * the system leaves THP to madvise; a hint, never an error).
 */
void util_huge_pages(void *p, size_t len);

/* What PHASE works on, for a progress line: "inodes", "planning"... */
const char *util_phase_name(enum e2f_phase phase);

/* Format BYTES as "4.0 GiB" (or "512 B") into BUF. */
const char *util_format_size(uint64_t bytes, char *buf, size_t len);

/*
 * V with DECIMALS digits after the point, exactly as printf's "%.*f"
 * writes it, into BUF (LEN bytes); returns the length.  Done in integers
 * for 0 <= V < 2^52 and DECIMALS <= 3 (printf's floating-point path costs
 * thousands of instructions a number, and a plan prints two for every
 * file it lists), by snprintf otherwise.
 */
size_t util_format_fixed(char *buf, size_t len, double v, unsigned decimals);

/*
 * Format seconds for people, as every program of the suite prints a
 * duration: seconds with three decimals ("12.000 s", "0.035 s").
 */
const char *util_format_seconds(double s, char *buf, size_t len);

#endif /* E2FRAG_H */
