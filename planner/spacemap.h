/*
 * spacemap.h --- who owns each run of the block space, as the planner
 * sees it while it plans moves one after another.
 *
 * The whole block space [first data block, blocks count) is cut into
 * segments, each with one owner: free, fixed metadata, pinned (used by
 * something that never moves: an EA block, a file that is skipped), or
 * a file of the layout.  Adjacent segments never have the same owner.
 * Planning a move is two assignments: the old runs become free, the new
 * ones the file's.
 */
#ifndef PLANNER_SPACEMAP_H
#define PLANNER_SPACEMAP_H

#include "e2frag.h"

enum {
	SM_FREE = 0,
	SM_META,	/* fixed metadata: between zones */
	SM_PINNED,	/* in use, never moved */
	SM_RESERVED,	/* free, but kept for a block's final place (compact.c) */
	SM_FILE0	/* SM_FILE0 + i: layout->files[i] */
};

/* A segment, as the map's users see it (and give runs and changes). */
struct sm_seg {
	blk64_t		start;
	blk64_t		len;
	uint32_t	owner;
};

/*
 * A segment as the chunks keep it, in 10 bytes, well under a struct
 * sm_seg: its length is where the next one starts (the segments cover the
 * block space end to end), and its start is 48 bits (ext4's block numbers
 * are; spacemap_build refuses a larger block space), packed so that
 * nothing pads it.  The map holds one per file and gap: on a large
 * filesystem this is most of the planner's memory.
 */
struct __attribute__((packed)) sm_cell {
	uint32_t	start_lo;
	uint16_t	start_hi;
	uint32_t	owner;
};
_Static_assert(sizeof(struct sm_cell) == 10,
	       "doc/planner.md states 10 bytes a space map cell");

/* Blocks a space map may cover: block numbers of 48 bits. */
#define SM_BLOCKS_MAX	((blk64_t)1 << 48)

static inline blk64_t sm_cell_start(const struct sm_cell *c)
{
	return (blk64_t)c->start_hi << 32 | c->start_lo;
}

static inline void sm_cell_set(struct sm_cell *c, blk64_t start, uint32_t owner)
{
	c->start_lo = (uint32_t)start;
	c->start_hi = (uint16_t)(start >> 32);
	c->owner = owner;
}

/* A run of consecutive segments (spacemap.c keeps each at most chunk_max). */
struct sm_chunk {
	uint32_t	n;
	struct sm_cell	*seg;
	/*
	 * Where seg[0] starts (n > 0), kept as it changes: a lookup's search
	 * over the chunks reads this array alone, not a cell of every chunk
	 * it passes (a cache miss each).
	 */
	blk64_t		first;
};

/* A free segment in the best-fit index (spacemap.c). */
struct sm_fnode {
	blk64_t		len, start;	/* the key, in that order */
	uint32_t	left, right;	/* 0: none (node 0 is unused) */
	uint32_t	prio;
};

/*
 * What an undoable change replaced (spacemap.c): the segments, in
 * undo_seg, follow those of the changes before it, from where the
 * segments put in their place start.  All of placing is one series, so
 * on a large map the log can be the planner's peak: 12 bytes a change and
 * 8 a segment replaced.
 */
struct sm_undo {
	uint32_t	at;		/* first segment replaced */
	uint32_t	nnew;		/* segments put there */
	uint32_t	nold;		/* ... in place of these, in nold sm_undo_segs */
};
_Static_assert(sizeof(struct sm_undo) == 12, "spacemap.h states 12 bytes a change");

/* A replaced segment (one longer than 2^32 - 1 blocks in several, joined again). */
struct sm_undo_seg {
	uint32_t	len, owner;
};
_Static_assert(sizeof(struct sm_undo_seg) == 8,
	       "spacemap.h states 8 bytes a replaced segment");

/*
 * The segments are kept in chunks of a bounded size, so that a change
 * moves at most a chunk's worth of them, never the whole map; SM_SEG()
 * reaches one by its index.  The free ones are also in a treap ordered
 * by (length, start), for best fit without scanning, with their count
 * and total kept as they change.  While a mark is held, every change is
 * logged so that it can be undone.
 */
struct spacemap {
	size_t		n;		/* segments */
	blk64_t		first, end;	/* the block space */
	struct sm_chunk	*chunk;
	size_t		nchunks, chunk_cap;
	size_t		chunk_max;	/* segments a chunk holds at most */
	/*
	 * Room for the chunks spacemap_build makes, in one block (a malloc
	 * per chunk costs more than the rest of the set-up in a heap the
	 * scan left in pieces): chunk_max segments a slot, slab_used of
	 * slab_chunks taken; a slot given back is taken again first.
	 */
	struct sm_cell	*slab;
	size_t		slab_chunks, slab_used;
	size_t		slab_free;	/* 1 + a slot given back, or 0 (chunk_seg_free) */
	/*
	 * Where each chunk starts, as a Fenwick tree of their counts
	 * (fen[1..nchunks]): a change updates it in log time, where
	 * renumbering every chunk after it made a plan quadratic.
	 */
	size_t		*fen, fen_cap;
	size_t		hint, hint_first; /* chunk of the last lookup, index of its seg[0] */
	size_t		hint_off;	/* spacemap_find's last answer in that chunk (a guess) */
	/* free segments */
	struct sm_fnode	*fnode;
	uint32_t	nfnodes, fnode_cap, froot, ffree, fseed;
	uint64_t	free_extents;
	blk64_t		free_blocks;
	/* undo log */
	struct sm_undo	*undo;
	size_t		nundo, undo_cap;
	struct sm_undo_seg *undo_seg;
	size_t		nundo_seg, undo_seg_cap;
	unsigned	marks;
	errcode_t	err;		/* a rollback that failed: every change fails */
};

struct sm_cell *spacemap_cell_slow(const struct spacemap *sm, size_t i);

/* Segment I's cell (< sm->n); sm->hint is then its chunk. */
static inline struct sm_cell *spacemap_cell(const struct spacemap *sm, size_t i)
{
	const struct sm_chunk *c = &sm->chunk[sm->hint];

	if (i - sm->hint_first < c->n)
		return &c->seg[i - sm->hint_first];
	return spacemap_cell_slow(sm, i);
}

/* Where the segment after cell I of chunk K starts (the map's end after the last). */
static inline blk64_t spacemap_next_start(const struct spacemap *sm, size_t k,
					  size_t i)
{
	if (i + 1 < sm->chunk[k].n)
		return sm_cell_start(&sm->chunk[k].seg[i + 1]);
	return k + 1 < sm->nchunks ? sm_cell_start(&sm->chunk[k + 1].seg[0]) :
		sm->end;
}

/* Segment I (< sm->n). */
static inline struct sm_seg spacemap_seg(const struct spacemap *sm, size_t i)
{
	const struct sm_cell *c = spacemap_cell(sm, i);
	struct sm_seg g;

	g.start = sm_cell_start(c);
	g.len = spacemap_next_start(sm, sm->hint, i - sm->hint_first) - g.start;
	g.owner = c->owner;
	return g;
}
#define SM_SEG(sm, i)	(spacemap_seg((sm), (i)))

/*
 * A run spacemap_build takes: 16 bytes, as the runs of every file and the
 * sort's copy of them are the planner's peak while the map is built.  Shorter than
 * 2^32 blocks (the caller cuts a longer one: the pieces join again).
 */
struct sm_run {
	blk64_t		start;
	uint32_t	len;
	uint32_t	owner;
};
_Static_assert(sizeof(struct sm_run) == 16, "spacemap.h states 16 bytes a run");

/* Sort V by start, then owner, stably (in linear time). */
errcode_t spacemap_sort(struct sm_run *v, size_t n);

/*
 * Build SM over [FIRST, END) from RUNS (any order, not overlapping: the
 * caller resolved shared blocks); blocks in no run are free when clear in
 * USED, else pinned.  E2F_ERR_CORRUPT_INODE when runs overlap, EFBIG when
 * END is past SM_BLOCKS_MAX (the cells' starts are 48 bits).  RUNS is
 * sorted, and what it holds after is undefined (its pages are given back
 * as the map is built): the caller only frees it.
 */
errcode_t spacemap_build(struct spacemap *sm, blk64_t first, blk64_t end,
			 struct sm_run *runs, size_t nruns,
			 ext2fs_block_bitmap used);
void spacemap_free(struct spacemap *sm);

/*
 * Start logging changes, to undo them back to here: the mark returned.
 * Marks nest; each ends (last first) with spacemap_rollback, which undoes
 * every change since, or spacemap_release, which keeps them.
 */
size_t spacemap_mark(struct spacemap *sm);
void spacemap_rollback(struct spacemap *sm, size_t mark);
void spacemap_release(struct spacemap *sm, size_t mark);

/*
 * Give back the undo log's memory, kept from one series to the next,
 * when no mark is open: at the end of a phase of many series (placing,
 * consolidation), before the plan's next arrays grow.
 */
void spacemap_trim(struct spacemap *sm);

/* Index of the segment holding BLK (FIRST <= BLK < END). */
size_t spacemap_find(const struct spacemap *sm, blk64_t blk);

/* Give [START, START+LEN) to OWNER. */
errcode_t spacemap_assign(struct spacemap *sm, blk64_t start, blk64_t len,
			  uint32_t owner);

/*
 * Apply CHANGES (sorted by start, not overlapping): each run goes to its
 * owner.  One pass over the map, for moves that change many runs.
 */
errcode_t spacemap_apply(struct spacemap *sm, const struct sm_seg *changes,
			 size_t n);

/* Whether all of [START, START+LEN) belongs to OWNER. */
int spacemap_is(const struct spacemap *sm, blk64_t start, blk64_t len,
		uint32_t owner);

/*
 * The smallest free stretch of at least LEN blocks lying wholly below
 * LIMIT and outside [EXCL_START, EXCL_END) (free segments are clipped to
 * that), lowest first among equals.  Returns its start and length, or -1.
 */
int spacemap_best_fit(const struct spacemap *sm, blk64_t len, blk64_t limit,
		      blk64_t excl_start, blk64_t excl_end,
		      blk64_t *start, blk64_t *stretch);

/* Free-space figures: number of free segments, free blocks, largest. */
void spacemap_free_stats(const struct spacemap *sm, uint64_t *extents,
			 blk64_t *blocks, blk64_t *largest);

#endif /* PLANNER_SPACEMAP_H */
