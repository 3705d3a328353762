/*
 * planner.h --- e2defrag's planner: where each selected file goes, decided
 * move after move on a space map of the whole disk before anything is
 * written (doc/planner.md: its steps and promises; planner_int.h: its
 * files).  It takes a layout (lib/) and a selection (which files to move,
 * which never to move), and returns a plan: the moves in the order the
 * mover (defrag/) carries them out, and what they do to each file.  Like
 * the other libraries it prints nothing and exits nowhere; progress and
 * cancellation go through plan_opts' callback.
 */
#ifndef PLANNER_PLANNER_H
#define PLANNER_PLANNER_H

#include "e2frag.h"
#include "plan_err.h"

/* ------------------------------------------------------------ the selection */

/* Why a file is not moved (or not moved as far as asked). */
enum skip_reason {
	SKIP_NONE = 0,
	SKIP_SHARED,		/* shares blocks with another inode */
	SKIP_METADATA,		/* blocks overlap fixed metadata */
	SKIP_CORRUPT,		/* block map cannot be trusted */
	SKIP_INLINE,		/* inline data: no blocks to move */
	SKIP_NO_BLOCKS,		/* no blocks at all (fast symlink, empty file) */
	SKIP_RESERVED,		/* journal, resize inode, other reserved inodes */
	SKIP_FLAGS,		/* inode flags e2defrag does not handle (compression) */
	SKIP_COUNT
};

/* Per file of the layout. */
enum {
	SEL_CANDIDATE	= 1 << 0,	/* meets the selection and needs moving */
	SEL_UNMOVABLE	= 1 << 1,	/* never moved, not even out of the way */
};

/* A skipped inode that is not in the layout (reserved, inline, no blocks). */
struct sel_extra {
	ext2_ino_t	ino;
	uint8_t		reason;		/* enum skip_reason */
	char		*name;		/* path argument or description */
};

struct selection {
	uint8_t		*flags;		/* SEL_*, per layout file */
	uint8_t		*reason;	/* enum skip_reason, per layout file */
	struct sel_extra *extra;
	size_t		nextra, extra_cap;
	uint64_t	candidates;	/* selected and movable */
	uint64_t	skipped;	/* selected but unmovable (extras are only named) */
};

/* ------------------------------------------------------------------ the plan */

enum plan_move_kind {
	MOVE_PLACE,		/* to its final place, best pieces */
	MOVE_PARTIAL,		/* fewer pieces, not best: no room for more */
	MOVE_EVACUATE,		/* out of the way of another file */
	MOVE_STAGE,		/* some blocks out of a compaction window, for now */
	MOVE_FILL,		/* part of its stream into its final place */
	MOVE_CONSOLIDATE,	/* whole, into a hole, to join two free runs */
};

/*
 * One file move: changes to where its stream lies (plan->segs, struct
 * runs_change in fmap.h: stream positions to new blocks; the rest stays) and
 * the blocks for its new extent tree (plan->meta).  Each move's come
 * after the moves' before it: the moves are read in order.  A move of
 * the whole stream into one run (most are: a plan moves tens of thousands
 * of files to consolidate free space) keeps no segment, only where the
 * run starts (48 bits, as the planner's space map's blocks): 24 bytes,
 * half what a move with a segment of its own takes.  plan_move_nsegs and
 * plan_move_whole_at read it.
 */
struct plan_move {
	blk64_t		copy_blocks;	/* blocks this move writes */
	uint32_t	file;		/* index into layout->files */
	uint32_t	nmeta;		/* the next nmeta of plan->meta */
	union {
		uint32_t nsegs;		/* the next nsegs of plan->segs */
		uint32_t whole_lo;	/* whole: where the run starts, low bits */
	};
	uint16_t	whole_hi;	/* ... and its high bits */
	uint8_t		kind;		/* enum plan_move_kind */
	uint8_t		whole : 1;	/* the whole stream into one run */
	uint8_t		joining : 1;	/* made to join free runs (consolidate.c) */
};
_Static_assert(sizeof(struct plan_move) == 24, "doc/planner.md states 24 bytes a move");

/* Segments of plan->segs MV takes (none for a whole move). */
static inline uint32_t plan_move_nsegs(const struct plan_move *mv)
{
	return mv->whole ? 0 : mv->nsegs;
}

/* Where a whole move's run starts. */
static inline blk64_t plan_move_whole_at(const struct plan_move *mv)
{
	return (blk64_t)mv->whole_hi << 32 | mv->whole_lo;
}

enum plan_outcome {
	OUT_NONE = 0,		/* not considered */
	OUT_BEST,		/* will reach best */
	OUT_PARTIAL,		/* fewer pieces than it had, but not best */
	OUT_NO_ROOM,		/* no fewer pieces (left, or moved in as many): no room */
	OUT_SKIPPED,		/* selected but skipped, reason says why */
	OUT_EVACUATED,		/* not selected, moved out of the way */
	OUT_CONSOLIDATED,	/* not selected, moved to join free runs */
};

/* What the plan does to one file (selected, skipped or evacuated). */
struct plan_file {
	uint32_t	file;		/* index into layout->files */
	uint8_t		outcome;	/* enum plan_outcome */
	uint8_t		reason;		/* enum skip_reason when skipped */
	uint32_t	pieces_before, pieces_after, best;
	double		read_before, read_after, ideal;
	blk64_t		moved_blocks;	/* written by its moves */
	uint32_t	moves;
	uint32_t	consolidate_moves;	/* of which to join free runs */
};

struct plan;

struct plan_opts {
	e2f_progress_fn	progress;	/* E2F_PHASE_PLAN, units: files; nonzero: cancel */
	void		*progress_priv;
	int		pack;		/* consolidate free space fully, zones packed, no budget */
	/*
	 * The modeled seconds of PLAN's moves on the disk (the program's
	 * model of its own reads, writes and flushes: e2defrag's units.c), a
	 * negative number when it cannot say; or NULL.  Where two variants
	 * of the plan are otherwise as good and both write within the
	 * target, the faster is kept (plan_search.c), not the one writing
	 * fewer blocks: a few more blocks in long runs cost the disk less
	 * than fewer blocks scattered.  *LONGEST: the seconds of its longest
	 * unit (the stretch of moves a stop cannot fall inside).
	 */
	double		(*seconds)(const struct plan *plan, void *priv, double *longest);
	void		*seconds_priv;
	/*
	 * The window the run's units must fit, in modeled seconds (what
	 * e2defrag's --max-time leaves after scanning and planning), or 0:
	 * none.  A plan whose longest unit does not fit it is never started
	 * there, night after night; so the other variants are tried, and
	 * one whose units fit is kept if it brings as many files to best,
	 * keeps the free-space promise and writes at most
	 * WINDOW_AMPLIFICATION times what needed moving (plan_search.c).
	 */
	double		window;
};

/*
 * Without pack, free space is consolidated within budgets counted in the
 * blocks of the files that needed moving: joining free runs (moving the
 * small files between them) writes at most CONSOLIDATE_JOIN_SHARE times
 * that, and never past what the whole run may write (below), and bringing the largest free run back to its old size only as
 * long as the whole run writes at most CONSOLIDATE_AMPLIFICATION times
 * that (the write amplification bench/defrag.sh holds e2defrag to).  A
 * run with nothing else to move consolidates nothing.
 */
#define CONSOLIDATE_JOIN_SHARE		0.5
#define CONSOLIDATE_AMPLIFICATION	1.5
/*
 * A file with no room for its best but by being rebuilt where others step
 * aside (planner/rebuild.c: larger than the free space, or than any free
 * run packing leaves) reaches best though that writes more: up to
 * REBUILD_AMPLIFICATION times its blocks, CONSOLIDATE_AMPLIFICATION
 * holding for every other file.
 */
#define REBUILD_AMPLIFICATION		2.0

/*
 * The blocks a run may write: CONSOLIDATE_AMPLIFICATION times the blocks
 * of the files that needed moving (NEEDED), and REBUILD_AMPLIFICATION
 * times for those of them rebuilt (REBUILT, counted in NEEDED too).
 */
static inline blk64_t plan_write_target(blk64_t needed, blk64_t rebuilt)
{
	return (blk64_t)(needed * CONSOLIDATE_AMPLIFICATION +
			 rebuilt * (REBUILD_AMPLIFICATION - CONSOLIDATE_AMPLIFICATION));
}

/*
 * What a plan kept because its units fit the window (plan_opts.window)
 * may write, in times the blocks of the files that needed moving: as much
 * as a file rebuilt may (REBUILD_AMPLIFICATION).  A staging plan that
 * writes less but in one unit longer than the window moves nothing on
 * such nights; on e2defrag's kernel-written recordings disk (bench/) it
 * is a unit of 66 of the run's 73 modeled seconds, where the plan without
 * compaction's direct moves writes 1.9 times, in units of at most 5.
 */
#define WINDOW_AMPLIFICATION		REBUILD_AMPLIFICATION

struct runs_change;

struct plan {
	struct plan_move *moves;
	uint64_t	nmoves;
	size_t		moves_cap;
	struct runs_change	*segs;
	uint64_t	nsegs;
	size_t		segs_cap;
	struct layout_piece *meta;
	uint64_t	nmeta;
	size_t		meta_cap;
	/*
	 * The files the plan selects or moves, in no order (a million-file
	 * disk has few): plan_file() finds one by its layout index.
	 */
	struct plan_file *files;
	uint64_t	nfiles;
	size_t		files_cap;
	/*
	 * Which layout files have a line, a bit each, and the lines before
	 * every 64 files: files[] is in layout order, so a file's line is
	 * found by counting (an index would be 4 bytes for every file of
	 * the layout, for the few with a line).
	 */
	uint64_t	*line_bits;
	uint32_t	*line_rank;
	uint64_t	layout_files;	/* files line_bits covers */
	/* Totals */
	uint64_t	selected, best, partial, no_room, skipped, evacuated;
	uint64_t	consolidated;	/* files moved only to join free runs */
	uint64_t	consolidate_files;	/* files with any move to join them */
	blk64_t		copy_blocks;	/* all moves */
	blk64_t		consolidate_blocks;	/* ... of them to consolidate free space */
	int		consolidate_over_budget;	/* more was possible (pack) */
	blk64_t		needed_blocks;	/* stream blocks of the files that needed moving */
	blk64_t		rebuilt_blocks;	/* ... of them rebuilt (plan_write_target) */
	uint64_t	pieces_before, pieces_after;
	double		read_before, read_after, ideal;
	uint64_t	free_extents_before, free_extents_after;
	blk64_t		largest_free_before, largest_free_after, free_blocks;
	uint64_t	direct_moves;	/* compaction's direct moves made while planning */
	double		seconds;	/* plan_opts' seconds of it, once asked
					 * (plan_search.c); 0 until then */
	double		longest_seconds;	/* ... of its longest unit */
	int		seconds_known;
	int		for_window;	/* kept over a plan whose longest unit
					 * did not fit plan_opts' window */
};

/*
 * Plan the moves for the files SEL selected in LAYOUT.  OPTS may be NULL.
 * E2F_ERR_CANCELLED (no plan) when OPTS->progress asked to stop;
 * PLAN_ERR_BUG (no plan) when the planner finds its own figures disagree.
 */
errcode_t plan_build(struct layout *layout, const struct selection *sel,
		     const struct plan_opts *opts, struct plan **ret);
void plan_free(struct plan *plan);

/*
 * Where each move's segments and new mapping blocks start in plan->segs
 * and plan->meta (they follow the moves' order): SEG_AT[m] and
 * META_AT[m] for move m, and the totals at [nmoves]; nmoves + 1 each.
 */
void plan_move_offsets(const struct plan *plan, uint64_t *seg_at, uint64_t *meta_at);

/*
 * Call FN(PRIV, START, LEN) on each run move M gains: its new place (the
 * whole stream's run, or its segments) and its new mapping blocks, as
 * plan_move_offsets' SEG_AT and META_AT find them; stop at FN's first
 * nonzero, returned.
 */
int plan_move_gains(const struct layout *layout, const struct plan *plan, uint64_t m,
		    const uint64_t *seg_at, const uint64_t *meta_at,
		    int (*fn)(void *priv, blk64_t start, blk64_t len), void *priv);

/*
 * Put PLAN's moves in another order: the spans of moves [FIRST[k],
 * END[k]), k < NSPANS, one after another, each move's segments and new
 * mapping blocks with it (plan_reorder.c).  The spans must cover every
 * move once (EINVAL, the plan unchanged, otherwise); that the moves can
 * go in that order is the caller's to know.  ENOMEM.
 */
errcode_t plan_reorder(struct plan *plan, const uint64_t *first, const uint64_t *end,
		       uint64_t nspans);

/* What PLAN does to layout file I: outcome OUT_NONE when nothing. */
const struct plan_file *plan_file(const struct plan *plan, uint64_t i);
/* Whether PLAN has a line for layout file I (selected or moved). */
int plan_has_line(const struct plan *plan, uint64_t i);
/*
 * The first layout file at or after I that PLAN has a line for, or
 * UINT64_MAX when none: a walk of the lines, where asking every file of
 * a million-file layout is a call each.
 */
uint64_t plan_next_line(const struct plan *plan, uint64_t i);

/* Modeled read time of a stream laid out in RUNS (stream order). */
double plan_read_seconds(const struct layout *layout,
			 const struct layout_piece *runs, size_t nruns);

/* Pieces RUNS make: runs that continue each other count once. */
uint32_t plan_pieces(const struct layout_piece *runs, size_t nruns);

#endif /* PLANNER_PLANNER_H */
