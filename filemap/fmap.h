/*
 * fmap.h --- the file map: one file's block map as e2defrag needs it, and
 * the rebuilt map at new locations (filemap/: fmap.c reads it, runs.c
 * works on its runs, fmap_build.c and fmap_tree.c rebuild it, fmap_close.c
 * finds the indirect blocks a partial move changes).  The planner uses it
 * to find what a move takes, the mover to make the move; it prints
 * nothing and writes nothing (the blocks it builds, the mover writes).
 *
 * The layout (lib/) knows where a file's pieces lie; to move a file we
 * need more: every data run with its logical address, every mapping block
 * (IND/DIND/TIND) with the pointer slot that refers to it, and the extent
 * tree blocks.  With that the map can be rebuilt with the same shape at
 * new locations (fmap_build.c).
 *
 * Whether a target fits a map is a result, not an error: the functions
 * that fit one to the other say so in *FITS (1: it fits; 0: it does not,
 * and nothing is output), and return an errcode_t only for what went
 * wrong (ENOMEM, an I/O error, a map that cannot be trusted).  *FITS is
 * set whenever they return 0.  A caller for which a misfit is a bug (the
 * planner's own figures disagree, the plan and the disk disagree) turns
 * it into its own layer's error code.
 */
#ifndef FILEMAP_FMAP_H
#define FILEMAP_FMAP_H

#include "e2frag.h"
#include "writer.h"
#include "fmap_err.h"
#include "array.h"

/* ------------------------------------------------------------------ fmap.c */

enum fmap_kind { FMAP_DATA, FMAP_IND, FMAP_DIND, FMAP_TIND };

/* Parent of an item whose pointer lives in the inode's i_block[]. */
#define FMAP_ROOT UINT32_MAX

/*
 * One item of the stream: a run of data blocks, or one mapping block.
 * Items are in stream order (doc/design.md: piece): an indirect block comes
 * before the blocks it maps, exactly as blockmap_walk() visits them.
 */
struct fmap_item {
	blk64_t		pblk;	/* where it is now */
	blk64_t		lblk;	/* data: logical block of the first block; mapping: 0 */
	blk64_t		len;	/* data: blocks in the run; mapping: 1 */
	uint32_t	parent;	/* item holding its pointer(s), or FMAP_ROOT */
	uint32_t	slot;	/* index of the (first) pointer in the parent / i_block */
	uint8_t		kind;	/* enum fmap_kind */
	uint8_t		uninit;	/* an uninitialized extent */
};

struct fmap {
	ext2_ino_t	ino;
	int		extents;	/* extent-mapped (else block-mapped) */
	int		depth;		/* extent tree depth; 0: all in the inode */
	struct fmap_item *items;
	uint32_t	nitems, items_cap;
	blk64_t		stream_blocks;	/* data and mapping blocks: the stream */
	blk64_t		data_blocks;
	blk64_t		*tree_blocks;		/* extent tree blocks below the inode */
	uint32_t	ntree_blocks, tree_blocks_cap;
	char		*inode;		/* the inode as read, inode_size bytes (the
					 * planner frees it: NULL) */
	unsigned	inode_size;	/* >= sizeof(struct ext2_inode_large) */
	uint32_t	i_flags;	/* the inode's flags */
	/*
	 * The planner's, made when first needed (the map's shape never
	 * changes while it plans): each item's stream position (nitems + 1
	 * entries, the last the stream's end) and the end of the blocks
	 * each item maps (its own end for a data run).  fmap_free frees them.
	 */
	blk64_t		*ipos;
	blk64_t		*iend;
};

/*
 * Read INO's inode and whole map into M (which fmap_free releases).
 * E2F_ERR_CORRUPT_INODE when the map cannot be trusted: block numbers
 * outside the filesystem, loops, bad inode or extent tree checksums.  Inodes
 * without a block map (inline data, fast symlinks) give EXT2_ET_INLINE_DATA_NO_BLOCK.
 */
errcode_t fmap_read(ext2_filsys fs, ext2_ino_t ino, struct fmap *m);
void fmap_free(struct fmap *m);

/*
 * The map fmap_read() would read for an inode whose scan found its map
 * plain (LAYOUT_F_PLAIN_MAP: no holes, no spare mapping blocks, or EXTENTS
 * all in the inode, one a run), made from its stream RUNS (as the scan
 * found them) without reading the disk; M has no inode copy, and of
 * i_flags only EXT4_EXTENTS_FL (the flag says the others the planner tests
 * are clear).  EINVAL when the stream
 * is not one such a map makes.
 */
errcode_t fmap_from_stream(ext2_filsys fs, ext2_ino_t ino, int extents,
			   const struct layout_piece *runs, size_t nruns,
			   struct fmap *m);

/*
 * Whether fmap_from_stream() makes a block map (EXTENTS 0) from RUNS,
 * short of memory: a map of *TOTAL blocks, its stream.  The planner asks
 * this of the tens of thousands of small files consolidation moves, whose
 * room is their stream: their maps are not made until they are needed.
 */
int fmap_stream_plain(ext2_filsys fs, const struct layout_piece *runs,
		      size_t nruns, blk64_t *total);

/* ---------------------------------------------------------------- fmap_build.c */

/*
 * Where the stream goes: runs of new physical blocks covering stream
 * positions 0 .. stream_blocks-1 in order.  A stream block whose new home
 * is where it is now stays (it is neither copied nor reallocated).
 */
struct fmap_target {
	const struct layout_piece *runs;
	size_t		nruns;
};

/* A copy of LEN data blocks from SRC to DST. */
struct copy_op {
	blk64_t		src;
	blk64_t		dst;
	blk64_t		len;
};

/* A mapping block (IND or extent tree block) to write before the switch. */
struct map_write {
	blk64_t		pblk;
	char		*buf;	/* one filesystem block */
};

/* What it takes to put a file at its target: fmap_build_rebuild()'s output. */
struct fmap_rebuild {
	struct copy_op	*copies;
	size_t		ncopies, copies_cap;
	blk64_t		copy_blocks;
	struct map_write *writes;
	size_t		nwrites, writes_cap;
	struct exttree_extent *extents;	/* extent files: the new extents */
	size_t		nextents, extents_cap;
	struct layout_piece *gained;		/* sorted, merged */
	size_t		ngained, gained_cap;
	struct layout_piece *released;		/* sorted, merged */
	size_t		nreleased, released_cap;
	blk64_t		gained_blocks, released_blocks;
	__u32		i_block[EXT2_N_BLOCKS];	/* the inode's new block array */
};

/* Tree blocks below the inode that NEXTENTS extents need (0: fit in the inode). */
uint32_t fmap_build_tree_blocks(ext2_filsys fs, uint64_t nextents);

/*
 * The fewest extents M's data makes at TARGET: runs merged where both
 * logically and physically contiguous and alike in being uninitialized,
 * split at the maximum extent length.  OUT (may be NULL: count only) gets
 * them (malloc'd); *COUNT their number.  *FITS 0 when TARGET is not as
 * long as M's stream.
 */
errcode_t fmap_build_extents(const struct fmap *m, const struct fmap_target *t,
			   struct exttree_extent **out, size_t *count, int *fits);

/*
 * Work out everything moving M to TARGET takes: the data copies, the new
 * mapping blocks (IND/DIND/TIND in their stream slots; for extent files a
 * new tree in the first blocks of META), the new i_block, and the runs
 * gained and released.  Checks, without reading blocks, that a mapping
 * block left in place keeps its contents.  *FITS 0 when TARGET does not
 * fit M (wrong length, a changed mapping block left in place, a pointer
 * that cannot hold its block, too few META blocks, a block both gained
 * and released); R then holds part of the work, for fmap_rebuild_free().  R
 * must be zeroed; fmap_rebuild_free() frees it.
 */
errcode_t fmap_build_rebuild(ext2_filsys fs, const struct fmap *m,
			   const struct fmap_target *t,
			   const struct layout_piece *meta, size_t nmeta,
			   struct fmap_rebuild *r, int *fits);
void fmap_rebuild_free(struct fmap_rebuild *r);
/* Add a block to write (BUF: one block, R takes it) / a gained run to R. */
errcode_t fmap_rebuild_add_write(struct fmap_rebuild *r, blk64_t pblk, char *buf);
errcode_t fmap_rebuild_add_gained(struct fmap_rebuild *r, blk64_t start, blk64_t len);

/* ----------------------------------------------------------------- exttree.c */

/*
 * Build the tree for R->extents in META's blocks (as many as it needs,
 * in order), into R->i_block and R->writes, the blocks gained into R.
 * *FITS 0 when META is too short or the extents need a deeper tree.
 */
errcode_t fmap_tree_build(ext2_filsys fs, ext2_ino_t ino, struct fmap_rebuild *r,
			const struct layout_piece *meta, size_t nmeta, int *fits);

/*
 * Whether TARGET keeps every mapping block of block-mapped M that stays
 * where it is unchanged (so the move is possible), without reading blocks:
 * a mapping block may stay only if everything below it stays.  Always 1
 * for extent files (their tree is rebuilt in new blocks).
 */
int fmap_build_stays_valid(ext2_filsys fs, const struct fmap *m,
			 const struct fmap_target *t);

/* ------------------------------------------------------------------ runs.c */

/*
 * A change to where a stream lies: stream positions [off, off+len) go to
 * physical blocks [pblk, pblk+len).  A plan's move is a list of these,
 * sorted by off and not overlapping; positions no change names stay where
 * they are.
 */
struct runs_change {
	blk64_t		off;
	blk64_t		len;
	blk64_t		pblk;
};

/*
 * Whether CHANGES (N) fit a stream of TOTAL blocks: sorted by offset,
 * apart, none reaching past its end.
 */
int runs_changes_fit(const struct runs_change *changes, size_t n, blk64_t total);

/* A growable list of changes (lib/array.h's shape). */
struct change_vec {
	struct runs_change	*v;
	size_t		n, cap;
};

static inline int change_vec_add(struct change_vec *a, blk64_t off, blk64_t len,
				 blk64_t pblk)
{
	if (grow_n(&a->v, &a->cap, a->n + 1, sizeof(*a->v)))
		return ENOMEM;
	a->v[a->n++] = (struct runs_change){ off, len, pblk };
	return 0;
}

static inline void change_vec_free(struct change_vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}

/*
 * The runs (stream order, adjacent runs merged) of stream CUR after
 * CHANGES.  *OUT is malloc'd.  *FITS 0 (*OUT NULL) when CHANGES do not
 * fit CUR (runs_changes_fit).
 */
errcode_t runs_apply(const struct layout_piece *cur, size_t ncur,
		     const struct runs_change *changes, size_t nchanges,
		     struct layout_piece **out, size_t *nout, int *fits);
/*
 * runs_apply() into OUT, emptied first and kept (its room too) for the
 * next call: for a caller that only looks at the runs and throws them
 * away, move after move.
 */
errcode_t runs_apply_into(const struct layout_piece *cur, size_t ncur,
			  const struct runs_change *changes, size_t nchanges,
			  struct piece_vec *out, int *fits);

/* OFF[0..N]: where each of RUNS starts in the stream, and the stream's end. */
void runs_offsets(const struct layout_piece *runs, size_t n, blk64_t *off);
/* The run (of N, offsets OFF) holding stream position POS. */
size_t runs_at(const blk64_t *off, size_t n, blk64_t pos);

/*
 * runs_apply() for a caller that keeps CUR's offsets (OFF, N+1) from
 * change to change: the runs [*FIRST, *LAST) of CUR that CHANGES touch
 * become OUT's (merged among themselves but not yet with the runs either
 * side; OUT is scratch the caller keeps, emptied first).  Its cost is
 * that of the runs touched, not of the whole stream.  *FITS as
 * runs_apply() says it (OUT empty when not).
 */
errcode_t runs_apply_span(const struct layout_piece *cur, const blk64_t *off,
			  size_t ncur, const struct runs_change *changes,
			  size_t nchanges, size_t *first, size_t *last,
			  struct piece_vec *out, int *fits);
/*
 * The runs of RUNS (N, merged) once runs_splice() puts SPAN (NSPAN, from
 * runs_apply_span) in place of [FIRST, LAST): runs_apply()'s count.
 */
size_t runs_spliced_count(const struct layout_piece *runs, size_t n,
			  size_t first, size_t last,
			  const struct layout_piece *span, size_t nspan);
/*
 * Put SPAN in place of RUNS[FIRST, LAST), in place, merged with the runs
 * either side: RUNS (room for max(N, the new count)) ends as runs_apply()
 * would make it.  OFF (N+1 entries and room for the new count's + 1, or
 * NULL) is kept RUNS' offsets: only the tail is shifted, as a move keeps
 * every run's stream position.
 */
void runs_splice(struct layout_piece *runs, size_t n, size_t first, size_t last,
		 const struct layout_piece *span, size_t nspan, blk64_t *off);

/* The stream runs of M as it is now (stream order, merged). *OUT malloc'd. */
errcode_t runs_of_fmap(const struct fmap *m, struct layout_piece **out,
		       size_t *nout);

/* Blocks of stream position range where A and B (same length) differ. */
blk64_t runs_differ(const struct layout_piece *a, size_t na,
		    const struct layout_piece *b, size_t nb);

/*
 * qsort orders: runs longest first (then by start; by start alone is
 * lib/compare.h's compare_piece_start); changes by stream position.
 */
int runs_cmp_len_desc(const void *a, const void *b);
int runs_change_cmp_off(const void *a, const void *b);

/* ---------------------------------------------------------------- fmap_close.c */

/*
 * Scratch of fmap_close_changes, kept between calls by its caller (a
 * planner moving file after file): two flags a map item, all clear
 * between calls, the items a call changes, and the indirect blocks left
 * to place, largest index first (a heap).  Zeroed to start;
 * fmap_close_free gives it back.
 */
struct fmap_close {
	uint8_t		*flags;
	size_t		flags_cap;
	uint32_t	*list, *heap;
	size_t		list_cap, heap_cap;
};

/* Give the mapping block at stream position POS a new block; nonzero: none. */
typedef int (*fmap_close_alloc_fn)(void *priv, blk64_t pos, blk64_t *pblk);

/*
 * CHANGES for M, a block-mapped file's map whose stream is now CUR (NCUR
 * runs, stream offsets CO: NCUR + 1 of them), plus new places (from
 * ALLOC) for every indirect block whose contents they change and which
 * does not move already.  *OUT (malloc'd, sorted) is CHANGES as they are
 * for extent files (CUR and CO unused then).  *FITS 0 (*OUT NULL) when
 * CHANGES do not fit CUR (runs_changes_fit; not checked for extent
 * files); E2F_ERR_NO_SPACE when ALLOC had no block.
 */
errcode_t fmap_close_changes(struct fmap_close *sc, struct fmap *m,
			     const struct layout_piece *cur, const blk64_t *co,
			     uint32_t ncur, const struct runs_change *changes,
			     size_t nchanges, fmap_close_alloc_fn alloc,
			     void *priv, struct runs_change **out, size_t *nout,
			     int *fits);
void fmap_close_free(struct fmap_close *sc);
/*
 * Stream positions of M's indirect blocks in [A, B); with INCOMPLETE
 * only those that map blocks at or after B, whose contents are not final
 * until those are placed.  None for extent files.
 */
errcode_t fmap_close_positions(struct fmap *m, blk64_t a, blk64_t b,
			       int incomplete, blk64_t **out, size_t *nout);

#endif /* FILEMAP_FMAP_H */
