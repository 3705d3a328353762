/*
 * planner_int.h --- what the planner's files share: the planner's state
 * while it decides one move after another, and each file's entry points.
 * The planner, this folder (doc/planner.md tells the steps and the
 * promises):
 *
 *   plan_search.c    the plans tried (a table) and the rule keeping one
 *   plan.c           one plan: set-up, the order of the steps
 *   plan_figures.c   the finished plan's lines and figures
 *   setup.c          the space map, the candidates, the units
 *   filestate.c      where each file is now, and recording a move
 *   snapshot.c       a series of moves taken back whole
 *   place.c          where one unit goes (free run, own piece, window)
 *   window.c         making room: the cheapest window, cleared
 *   selfstage.c      a file's own blocks out of its window
 *   rebuild.c        a file with no room for its best, rebuilt where
 *                    the fewest blocks of others step aside
 *   zonewalk.c       a stream laid across zones
 *   compact.c        packing a nearly full disk (compact_stage.c: where
 *                    what must leave goes; compact_move.c: the moves;
 *                    compact_holes.c: across zones, the room a fill
 *                    point skips; compact_split.c: a file with no
 *                    place, in pieces; compact_bridge.c: settled files
 *                    that part a zone's gaps; compact_int.h: their
 *                    shared state)
 *   consolidate.c    free space in few large runs
 *   runs_index.c     a file's run offsets, kept from move to move
 *   spacemap.c       who owns which block (spacemap.h)
 *
 * It reads files' maps and works out what a move takes with the file map
 * (filemap/fmap.h), and hands its moves to the mover (defrag/execute.c)
 * through planner.h.
 */
#ifndef PLANNER_PLANNER_INT_H
#define PLANNER_PLANNER_INT_H

#include "planner.h"
#include "fmap.h"
#include "spacemap.h"

/* Per layout file, where the plan has it now. */
enum {
	PF_PENDING	= 1 << 0,	/* a candidate not yet placed */
	PF_PLACED	= 1 << 1,	/* the plan moved it */
	PF_UNMOVABLE	= 1 << 2,	/* never moved (select.c) */
	PF_IN_SET	= 1 << 3,	/* pending member of a multi-file unit */
	PF_REBUILT	= 1 << 4,	/* placed at best by rebuild.c: its writes
					 * may reach REBUILD_AMPLIFICATION */
	PF_IN_UNIT	= 1 << 5,	/* member of the unit being placed (window.c) */
};

/*
 * Per layout file: its flags and, once the planner read its map, moved it
 * or found extent tree blocks, the rest of its state.  Most files of a
 * large filesystem are never looked at: they cost these 5 bytes (packed:
 * 8 with the padding, 3 MB more at a million files).
 */
struct __attribute__((packed)) planner_file {
	uint32_t	st;		/* 1 + index of its struct file_state, or 0 */
	uint8_t		flags;		/* PF_* */
};
_Static_assert(sizeof(struct planner_file) == 5, "doc/planner.md states 5 bytes a file");

/* A file's state beyond its flags (none: as the scan found it). */
enum {
	FILE_STATE_OWN_RUNS	= 1 << 0,	/* runs is its own array */
	FILE_STATE_KEEP_MAP	= 1 << 2,	/* moved before: its map, once read
					 * again, stays (filestate.c) */
	FILE_STATE_MAP_OK	= 1 << 3,	/* its map was read and checked: the
					 * figures hold even once the map is
					 * let go */
	FILE_STATE_EXTENTS	= 1 << 4,	/* ... and it is extent-mapped */
};

/* file_state.contig16 saying the figure is in the state's struct file_state_more. */
#define PSTATE_BIG16	UINT16_MAX

/*
 * Most states are of files moved once, whole, into one run (to join free
 * runs, a plan may move a quarter of a large filesystem's files), and the
 * states are a large part of the planner's peak memory: so a state is 24
 * bytes, and what few files have beyond that (an extent tree, a map read
 * and kept) is in a struct file_state_more of their own; how often a file moved to
 * join free runs is the plan's moves' (plan_move.joining).  The plan's
 * lines are made once planning ends (plan_figures.c), from these and the moves.
 */
struct file_state {
	union {
		blk64_t		one_start;	/* where its piece starts while in one
						 * (the layout keeps none; the piece is
						 * the whole stream) */
		struct layout_piece *runs;	/* with FILE_STATE_OWN_RUNS: stream runs after
						 * a planned move, when not one */
	};
	uint32_t	nruns;		/* runs, or the one, or (else) in the layout */
	uint32_t	snap_gen;	/* snapshot.c: saved up to this snapshot */
	uint32_t	more;		/* 1 + index in planner->more, or 0 */
	/*
	 * Extents it would have when contiguous, once its map is read
	 * (planner_extents_contig); PSTATE_BIG16: in more.
	 */
	uint16_t	contig16;
	uint8_t		own;		/* PS_* */
	uint8_t		skip;		/* enum skip_reason when its map says so */
};
_Static_assert(sizeof(struct file_state) == 24, "doc/planner.md states 24 bytes a state");

/*
 * The rest of a state, for the files that have it: an extent tree (its
 * runs now), a map read and kept, an extents figure too large for
 * contig16.  Given back (for the next file) once it holds nothing, unless
 * its file had a tree.
 */
struct file_state_more {
	union {
		struct layout_piece *meta;	/* with own_meta: extent tree runs
						 * after a move */
		uint64_t	meta_off;	/* else in planner->tree_blocks (none after a
						 * move without a tree: nmeta 0) */
	};
	struct fmap	*fmap;		/* read when needed; let go after a move */
	uint32_t	nmeta;
	uint32_t	contig;		/* extents when contiguous, if past contig16 */
	uint8_t		own_meta;	/* meta is its own array */
	/*
	 * It had a tree: kept while the file has a state, so that a
	 * snapshot taken back finds it to put the tree back in.
	 */
	uint8_t		had_tree;
};

/*
 * States come in chunks of this many, which never move: over the mmap
 * threshold (e2defrag's main), so mapped on their own unless the heap has
 * that much free; what they took of the heap goes back to the system
 * with malloc_trim once they are given back (plan_figures.c).
 */
#define PSTATE_CHUNK	8192

/* struct plan_variant's split: never; when no packing is kept without; always. */
enum { SPLIT_NONE, SPLIT_FALLBACK, SPLIT_ALWAYS };
/*
 * struct plan_variant's idle: every step; no file placed (free space
 * joined only, as --pack asks); no move at all.
 */
enum { IDLE_NONE, IDLE_PLACING, IDLE_ALL };

/*
 * One plan of those plan_search.c tries: units placed in turn, or
 * (PACK_FIRST) all packed at once; LENIENT: a packing may stand though a
 * file it moved out of the way is left in more pieces for now (later
 * turns may still place it: compact_once); NO_DIRECT: no direct moves
 * before a chunk (compact.c); SPLIT (SPLIT_*): packings may give a file
 * with no place the gaps' ends, in pieces (compact_split.c); IDLE
 * (IDLE_*): steps left out, for a plan no better than the disk as it is
 * (plan_search.c); REBUILD: a file still short of best then is rebuilt
 * where others step aside (rebuild.c), a plan made only when the others
 * leave files short.
 */
struct plan_variant {
	uint8_t		pack_first, lenient, no_direct, split, idle;
	uint8_t		rebuild;	/* files still short rebuilt (rebuild.c) */
};

/* Files placed as one: an interleave set (path order) or a single file. */
struct unit {
	uint32_t	first;		/* planner->members[...] */
	uint32_t	n;
	blk64_t		blocks;		/* stream blocks of all members */
};

#define NO_MEMBER	UINT32_MAX

struct member_key {
	uint32_t	file, at;
};

/*
 * runs_index.c: the stream offsets of one file's runs (N of them, at
 * RUNS: the file's array, compared by address), kept between its moves
 * while VALID, and shifted in place by a commit that splices its runs
 * (filestate.c).
 */
struct runs_index {
	blk64_t		*off;		/* N + 1 of them; room for CAP */
	size_t		cap;
	const struct layout_piece *runs;
	uint32_t	file, n;
	int		valid;
};

/* Whether X holds the offsets of FILE's runs RUNS (N of them). */
static inline int runs_index_holds(const struct runs_index *x, uint32_t file,
				   const struct layout_piece *runs, uint32_t n)
{
	return x->valid && x->file == file && x->runs == runs && x->n == n;
}

/*
 * filestate.c's scratch for planner_commit, kept between moves: the space
 * map changes of a move, and the runs a move makes of the stretch of a
 * file it touches (runs_apply_span).
 */
struct commit_scratch {
	struct sm_seg	*changes;
	size_t		changes_cap;
	struct piece_vec span;
};

struct planner {
	struct layout	*layout;
	ext2_filsys	fs;
	const struct selection *sel;
	struct plan	*plan;
	struct spacemap	sm;
	struct planner_file	*pf;
	struct file_state	**states;	/* chunks of PSTATE_CHUNK */
	uint32_t	nstates;
	size_t		states_cap;
	struct file_state_more *more;	/* file_state.more's (a free one: contig is the next) */
	uint32_t	nmore, more_free;	/* used; 1 + first free one, or 0 */
	size_t		more_cap;
	struct layout_piece *tree_blocks;	/* every file's extent tree blocks, by file */
	uint64_t	ntree_blocks;
	struct unit	*units;
	uint64_t	nunits;
	uint32_t	*members;
	uint64_t	nmembers;
	/*
	 * (file, its index in members) by file: few next to the files of a
	 * large filesystem, where an index per file would take 4 bytes each.
	 */
	struct member_key *member_keys;
	blk64_t		largest_zone;
	int		consolidating;	/* moves now are consolidate.c's */
	/*
	 * --pack: the most free runs placing and settle_partial may leave
	 * (plan.c's free_runs_cap), 0 without --pack.
	 */
	uint64_t	free_runs_cap;
	/*
	 * Which plan this is (plan_search.c): packing first, lenient
	 * packings, no direct moves, packings that split files.
	 */
	const struct plan_variant *variant;
	/*
	 * compact.c: files a zone-by-zone packing leaves with no place get
	 * the room left at the gaps' ends, in pieces (compact_split.c), while
	 * SPLITTING, which plan.c sets as the variant's split says.
	 */
	int		splitting;
	int		chunk_div;	/* compact.c: chunks of 1/N of the free space (0: 1) */
	/* Progress and cancellation (plan_opts): polled between steps. */
	e2f_progress_fn	progress;
	void		*progress_priv;
	uint64_t	steps_done, steps_total;
	/*
	 * window.c's and compact.c's scratch: a count per space map owner,
	 * zero between uses; made on first use (planner_owner_count), as
	 * many plans (moving files only whole, to join free runs) never need
	 * it, and its pages are 4 bytes for every file.
	 */
	uint32_t	*owner_count;
	struct commit_scratch commit;	/* filestate.c's, kept between moves */
	/*
	 * fmap_close.c's scratch (compact_move.c's partial moves), kept
	 * between moves: made and freed at every move, its arrays (over the
	 * mmap threshold) would be mapped and unmapped each time.
	 */
	struct fmap_close close;
	/*
	 * window.c's space map in virtual addresses, kept between windows:
	 * a segment each, made and freed at every window tried (every file
	 * placing tries one), it was faulted in afresh each time, a third of
	 * a recordings disk's planning (e2fragimg's aged 2 GiB disk).
	 */
	void		*window_segs;
	uint64_t	window_segs_cap;
	/* compact_move.c's runs of a file after a move, counted and thrown
	 * away at every move it plans: kept for the next. */
	struct piece_vec after_runs;
	struct runs_index runs_index;	/* runs_index.c's: one file's run offsets */
	struct psnap	*snap;		/* snapshot.c: moves that may be taken back */
	uint32_t	snap_gen;	/* snapshot.c: snapshots taken so far */
};

/* Modeled seconds to read FILE as the scan found it. */
static inline double file_read_seconds(const struct planner *p, uint32_t file)
{
	double read, ideal;

	layout_file_times(p->layout, &p->layout->files[file], &read, &ideal);
	return read;
}

/* FILE's state, or NULL while it is as the scan found it. */
static inline struct file_state *planner_state_if(const struct planner *p,
					       uint32_t file)
{
	uint32_t s = p->pf[file].st;

	return s ? &p->states[(s - 1) / PSTATE_CHUNK][(s - 1) % PSTATE_CHUNK] : NULL;
}

/* filestate.c: FILE's state, made (as the scan found it) when it has none yet. */
errcode_t planner_state(struct planner *p, uint32_t file, struct file_state **ret);

void planner_free_states(struct planner *p);

/* ST's struct file_state_more, or NULL. */
static inline struct file_state_more *planner_more_if(const struct planner *p,
						  const struct file_state *st)
{
	return st && st->more ? &p->more[st->more - 1] : NULL;
}

/* filestate.c: ST's struct file_state_more, made (empty) when it has none. */
errcode_t planner_more(struct planner *p, struct file_state *st,
		       struct file_state_more **ret);
/* filestate.c: ST's struct file_state_more given back when it holds nothing. */
void planner_more_release(struct planner *p, struct file_state *st);

/* Extents FILE would have when contiguous (valid once its map is read). */
static inline uint64_t planner_extents_contig(const struct planner *p,
					      uint32_t file)
{
	const struct file_state *st = planner_state_if(p, file);

	if (!st)
		return 0;
	return st->contig16 == PSTATE_BIG16 ? planner_more_if(p, st)->contig :
					      st->contig16;
}

const struct layout_piece *planner_meta(const struct planner *p, uint32_t file,
					uint32_t *n);

/* Extent tree blocks FILE owns now: its tree's runs (a state keeps no sum). */
static inline uint32_t planner_etb_now(const struct planner *p, uint32_t file)
{
	const struct layout_piece *meta;
	uint32_t nmeta;

	meta = planner_meta(p, file, &nmeta);
	return (uint32_t)layout_pieces_blocks(meta, nmeta);
}

/*
 * ... would own when contiguous, and its extents then (valid once its map
 * is read): the tree those extents need (0 without extents).
 */
static inline uint32_t planner_etb_contig(const struct planner *p, uint32_t file)
{
	return planner_state_if(p, file) ?
		fmap_build_tree_blocks(p->fs, planner_extents_contig(p, file)) : 0;
}

/* Fewest pieces FILE could have (layout_file_best). */
static inline uint32_t planner_best(const struct planner *p, uint32_t file)
{
	return layout_file_best(p->layout, &p->layout->files[file]);
}

/* setup.c */
errcode_t planner_build_space(struct planner *p);
errcode_t planner_check_candidates(struct planner *p);
errcode_t planner_build_units(struct planner *p);
/* FILE's index in p->members, or NO_MEMBER. */
uint32_t planner_member_at(const struct planner *p, uint32_t file);

/* plan.c */
/* Plan V, from the start (a planner of its own). */
errcode_t plan_once(struct layout *layout, const struct selection *sel,
		    const struct plan_opts *opts, const struct plan_variant *v,
		    struct plan **ret);
/* Stream blocks of the files rebuild.c placed: plan_write_target's REBUILT. */
blk64_t planner_rebuilt_blocks(const struct planner *p);
/* The blocks the plan may write now (plan_write_target). */
blk64_t planner_write_target(const struct planner *p);
/* p->owner_count, made (zeroed) if it is not yet. */
errcode_t planner_owner_count(struct planner *p);
/*
 * Report progress; E2F_ERR_CANCELLED when the caller asked to stop.  Long
 * loops of the planner call it between steps, so that a signal stops a
 * long plan promptly (nothing is written while planning).
 */
errcode_t planner_check(struct planner *p);

/* plan_figures.c */
/*
 * The plan's lines, made from the files' states (what was moved, and
 * how) for the files selected and the files moved, in layout order; and
 * the figures.  The states are given back (their figures taken first).
 */
errcode_t plan_finish_figures(struct planner *p);

/* filestate.c */
/*
 * FILE's stream runs now, *N of them.  SOLE is room for the piece of a
 * file in one piece that has no state (the pointer may be to it).
 */
const struct layout_piece *planner_runs(const struct planner *p, uint32_t file,
					uint32_t *n, struct layout_piece *sole);
/* Whether the plan moves FILE (so far). */
static inline int planner_moves(const struct planner *p, uint32_t file)
{
	return !!(p->pf[file].flags & PF_PLACED);
}
/* Pieces FILE is in now, and its modeled read time then (plan_read_seconds). */
uint32_t planner_pieces_now(const struct planner *p, uint32_t file);
double planner_read_now(const struct planner *p, uint32_t file);
errcode_t planner_fmap(struct planner *p, uint32_t file, struct fmap **ret);
/*
 * FILE's map figures in its state (map_ok, extents...), as planner_fmap
 * finds them, without making the map when its stream says them: a plain
 * block map is its stream, and needs no more room than that.  With M,
 * also the map when one was made or read, NULL when it is such a plain
 * block map (fmap_from_stream's: i_flags 0).
 */
errcode_t planner_map_figures(struct planner *p, uint32_t file, struct fmap **m);
/*
 * Where in the free stretch [START, START+LEN) of SM to put NEED blocks of
 * the files GOING (N of them), which leave blocks behind: against the end
 * whose far side stays in use, so that the rest of the stretch borders
 * blocks that are free or will be (theirs, pending files') and joins them
 * once they are.  The start when neither side will grow.
 */
blk64_t planner_edge(const struct planner *p, const struct spacemap *sm,
		     blk64_t start, blk64_t len, blk64_t need,
		     const uint32_t *going, uint32_t ngoing);
/* Blocks a file's stream may not reach: 2^32 for block-mapped files. */
blk64_t planner_limit(const struct planner *p, uint32_t file);
/* Zone index holding BLK, or -1 when BLK is fixed metadata. */
int64_t planner_zone_of(const struct planner *p, blk64_t blk);
/*
 * Record a move of FILE to RUNS (its whole stream, in order) and META (its
 * new extent tree blocks) and update the space map: *DONE 1.  Blocks of
 * RUNS where the file has that part of its stream already stay; every
 * other new block must be free.  When the move does not fit (a new block
 * not free, RUNS not as long as the stream), *DONE 0 and nothing changed:
 * a result the caller steers by, not an error.  Errors (ENOMEM) are real
 * ones; *DONE is 0 with them.
 */
errcode_t planner_commit(struct planner *p, uint32_t file,
			 enum plan_move_kind kind,
			 const struct layout_piece *runs, size_t nruns,
			 const struct layout_piece *meta, size_t nmeta, int *done);
/*
 * The same with CHANGES to the stream rather than all of it (*DONE 0 also
 * when they do not fit its stream: runs_changes_fit).
 */
errcode_t planner_commit_changes(struct planner *p, uint32_t file,
				 enum plan_move_kind kind,
				 const struct runs_change *changes, size_t nchanges,
				 const struct layout_piece *meta, size_t nmeta,
				 int *done);

/* snapshot.c */
/* Remember the plan as it is, to return to it (snapshots nest). */
errcode_t snapshot_take(struct planner *p);
/*
 * The same, outermost and before any move, keeping only which files
 * change and their flags then: snapshot_gain and the others answer as for
 * any level, but snapshot_restore takes back nothing (for a level where
 * nothing changed, or a planner dropped).  The caller takes its moves
 * back by planning again (plan.c), with snapshot_changes's list.
 */
errcode_t snapshot_take_light(struct planner *p);
struct snapshot_change {
	uint32_t	file;
	uint8_t		flags;		/* PF_* when it first changed */
};
/* The files the newest level, a light one, saw change, first change first. */
errcode_t snapshot_changes(const struct planner *p, const struct snapshot_change **out,
			size_t *n);
/* FILE is about to change: save what it was (planner_commit calls this). */
errcode_t snapshot_touch(struct planner *p, uint32_t file);
/* Whether a file changed since the snapshot is now in more pieces. */
int snapshot_any_worse(const struct planner *p);
/*
 * Whether the moves since the snapshot gained anything: a selected file
 * changed since is now in fewer pieces, or placed.  Moves without a gain
 * are taken back (no move for nothing).
 */
int snapshot_gain(const struct planner *p);
/* Files changed since the snapshot and still pending, into *OUT (malloc'd). */
errcode_t snapshot_pending(const struct planner *p, uint32_t **out, size_t *n);
/* Back to the newest snapshot / keep what was planned since; either ends it. */
void snapshot_restore(struct planner *p);
void snapshot_forget(struct planner *p);

/* place.c */
/* Place unit U; *placed says whether all its files reached best. */
errcode_t place_unit(struct planner *p, const struct unit *u, int *placed);
/*
 * Blocks FILE takes moved whole out of the way (its stream and the extent
 * tree it needs contiguous) in *NEED; 0 when it cannot move (a map that
 * changed or cannot be trusted, inline data).  Errors other than those
 * are returned.
 */
errcode_t evacuee_need(struct planner *p, uint32_t file, blk64_t *need);
/*
 * Move FILE, contiguous, into free space outside [EXCL_START, EXCL_END)
 * at AT when AT is nonzero (a position window.c checked), else best-fit;
 * KIND is MOVE_EVACUATE (out of a unit's way: a candidate's own move) or
 * MOVE_CONSOLIDATE.
 */
errcode_t place_evacuee(struct planner *p, uint32_t file,
			enum plan_move_kind kind, blk64_t at,
			blk64_t excl_start, blk64_t excl_end, int *ok);
/*
 * Lay members of U out one after another over the window RUNS (physical):
 * *PLACED 1.  *PLACED 0 when they do not fit (the window too short, no
 * room for a tree, a member's move does not fit); the members before
 * the one that did not stay moved (try_window's callers take them back
 * with their snapshot).
 */
errcode_t place_members(struct planner *p, const struct unit *u,
			const struct layout_piece *runs, size_t nruns,
			int *placed);
/*
 * Blocks FILE needs when laid out in at most 1 + SPLITS runs: its stream
 * plus the extent tree that many extents need.  Reads its map.
 */
errcode_t place_need(struct planner *p, uint32_t file, int splits,
		     blk64_t *need);

/* Step 4: fewer pieces in the largest free runs, if that is fewer. */
errcode_t place_partial(struct planner *p, uint32_t file);

/* runs_index.c */
/*
 * *OFF: the stream offsets of FILE's runs RUNS (N of them, as
 * planner_runs gives them; N + 1 entries), good until its runs change.
 * Kept for the file asked about last, while its runs stay.
 */
errcode_t planner_run_offsets(struct planner *p, uint32_t file,
			      const struct layout_piece *runs, uint32_t n,
			      const blk64_t **off);
/* Any file's runs changed or freed but by filestate.c's splice: forget them. */
void planner_run_offsets_forget(struct planner *p);
void planner_run_offsets_free(struct planner *p);

/* zonewalk.c: a stream laid out from START on, the metadata between zones skipped */
/* Block at stream offset OFF; *LEFT (if asked): blocks from it to its zone's end. */
blk64_t zonewalk_blk(const struct planner *p, blk64_t start, blk64_t off,
		     blk64_t *left);
/* Stream offset of BLK (or of the next zone's start, BLK in metadata). */
blk64_t zonewalk_off(const struct planner *p, blk64_t start, blk64_t blk);
/* Zone boundaries LEN blocks from START on cross. */
uint32_t zonewalk_cross(const struct planner *p, blk64_t start, blk64_t len);

/* compact.c */
/*
 * Pack the pending files of UNITS into the gaps they share with free
 * space, moving parts out of the way and in, chunk by chunk.  With ZONE
 * (>= 0), pack them into that zone alone, with every movable file in it:
 * its free space ends up in one run per gap, room made for them.
 * *COMPLETE is 0 when it got stuck half-way (the caller takes the moves
 * back: snapshot.c).  Files that found no place may have been moved out of
 * the way: they are still pending.
 */
errcode_t compact_place(struct planner *p, const struct unit *units,
			size_t nunits, int64_t zone, int *complete);

/* consolidate.c */
/*
 * Join free runs by moving the settled files between them into holes
 * elsewhere, cheapest first; bring the largest free run back to
 * LARGEST_BEFORE if a window can be cleared; with PACK also pack zones.
 * Without PACK within the budgets of planner.h, NEEDED being the blocks of
 * the files that needed moving.  *OVER_BUDGET: something was left for
 * want of budget.
 */
errcode_t consolidate(struct planner *p, blk64_t needed, blk64_t largest_before,
		      int pack, int *over_budget);

/* window.c */
/*
 * Make room for U (NEED blocks, crossing at most MAXCROSS zone
 * boundaries) by moving other, smaller files out of the way; then place
 * U there.  *placed is 0 when no window works.
 */
errcode_t window_place(struct planner *p, const struct unit *u, blk64_t need,
		       int maxcross, int *placed);
/*
 * Window_place for FILE alone, a candidate with no room for its best, in
 * 1 + MAXCROSS pieces: its own blocks in the window are staged out first
 * when it is extent-mapped (selfstage.c), and windows whose clearing
 * writes more than BUDGET blocks are not tried.
 */
errcode_t window_partial(struct planner *p, uint32_t file, blk64_t need,
			 int maxcross, blk64_t budget, int *placed);
/*
 * Clear the cheapest window of NEED blocks within a zone, moving the
 * files in it (writing at most BUDGET blocks) out, into free space
 * elsewhere: a free run of NEED blocks.  *cleared 0: no window works.
 */
errcode_t window_clear(struct planner *p, blk64_t need, blk64_t budget,
		       int *cleared);

/* selfstage.c */
/*
 * Stage FILE's blocks in [LO, HI) (its stream and its extent tree) out
 * to free space outside, in one MOVE_STAGE: a window there is then clear
 * for its own move.  *OK 0: not possible (block-mapped, no room).
 */
errcode_t selfstage_out(struct planner *p, uint32_t file, blk64_t lo,
			blk64_t hi, int *ok);
/*
 * The same for any file, block-mapped too (a block map's indirect blocks
 * are its stream's: they move as the stream does), into free space
 * outside [XLO, XHI) as well (XLO == XHI: no such bound), which holds
 * [LO, HI) when given.  With KEEP_SHIFT, a run of it in [LO, HI) whose
 * stream offset is its distance from LO plus *KEEP_SHIFT is where it is to
 * go, and stays.  MOVE_STAGE, so a pending file stays pending.
 */
errcode_t stage_out_of(struct planner *p, uint32_t file, blk64_t lo,
		       blk64_t hi, blk64_t xlo, blk64_t xhi,
		       const int64_t *keep_shift, int *ok);

/*
 * Free stretches of P's space map below LIMIT and outside [LO, HI) and
 * [XLO, XHI) (XLO == XHI: no second), longest first, into *OUT (malloc'd).
 */
errcode_t stage_room(const struct planner *p, blk64_t limit,
		     blk64_t lo, blk64_t hi, blk64_t xlo, blk64_t xhi,
		     struct layout_piece **out, size_t *n);
/*
 * Take LEN blocks from the stretches F (NF; cursor *FI, *FO) as changes
 * from stream offset OFF onto OUT; nonzero: not that many left.
 */
int stage_room_take(const struct layout_piece *f, size_t nf, size_t *fi,
		    blk64_t *fo, blk64_t off, blk64_t len, struct change_vec *out);
/* A cursor over stage_room's stretches, for stage_cursor_alloc. */
struct stage_cursor {
	const struct layout_piece *f;
	size_t		nf;
	size_t		*fi;
	blk64_t		*fo;
};
/* fmap_close_alloc_fn taking a block from a struct stage_cursor. */
int stage_cursor_alloc(void *priv, blk64_t pos, blk64_t *pblk);
/*
 * CH (changes to block-mapped FILE's stream, M its map, sorted) with the
 * indirect blocks whose contents they change moved too, to blocks from
 * ALLOC (fmap_close_changes); E2F_ERR_NO_SPACE when ALLOC had none.
 */
errcode_t stage_close(struct planner *p, uint32_t file, struct fmap *m,
		      struct change_vec *ch, fmap_close_alloc_fn alloc, void *priv);

/* rebuild.c */
/*
 * FILE, short of best with no room for it otherwise, rebuilt in the region
 * where the fewest blocks of others must step aside, cleared a chunk at a
 * time, its own blocks the staging room; taken back unless it reaches best
 * with no other file in more pieces and the plan within its write target
 * (planner_write_target).  *PLACED: it did (PF_REBUILT set).
 */
errcode_t rebuild_file(struct planner *p, uint32_t file, int *placed);

#endif /* PLANNER_PLANNER_INT_H */
