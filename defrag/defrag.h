/*
 * defrag.h --- e2defrag's engine: which files to move (select.c, here),
 * where to put them (the planner: planner/planner.h), and moving them
 * (execute.c: the plan's moves in order; move.c: one file, crash-safe,
 * through writer/).  Like resize2fs' engine it prints nothing and exits
 * nowhere: it returns errcode_t, keeps its state in the structs below,
 * and reports progress through a callback.  main.c and the report files
 * are the front end.
 */
#ifndef DEFRAG_DEFRAG_H
#define DEFRAG_DEFRAG_H

#include <signal.h>

#include <time.h>

#include "planner.h"
#include "e2d_err.h"

/* ----------------------------------------------------------------- select.c */

const char *skip_reason_text(enum skip_reason r);

struct select_opts {
	char		**paths;	/* restrict to these files and trees */
	int		npaths;
	double		min_score;	/* 0: any avoidably fragmented file */
	int64_t		newer_than;	/* mtime at least this; INT64_MIN: any */
	int		interleaved_only;
	/*
	 * The layout passed sanity_check_layout: no block has two owners
	 * (files, extent trees, metadata, attribute blocks) and no map is
	 * corrupt, so no piece needs asking the shared-block bitmaps (a
	 * lookup or two for every piece of every file).
	 */
	int		layout_checked;
};

/*
 * Decide which files of LAYOUT to move.  ENOENT (with *bad_path set to
 * the argument) when a PATH names nothing.
 */
errcode_t select_files(struct layout *layout, const struct select_opts *opts,
		       struct selection *sel, const char **bad_path);
void select_free(struct selection *sel);

/* ------------------------------------------------------------------- execute.c */

struct switch_ctx;

/* How one move went. */
struct run_result {
	errcode_t	err;		/* 0: done */
	int		done;		/* switched */
	int		attempted;	/* reserved and switched, or failed */
	blk64_t		copied;		/* data blocks copied */
	blk64_t		written;	/* all blocks written: data and mapping */
};

struct units;

struct run_opts {
	e2f_progress_fn	progress;	/* E2F_PHASE_MOVE, units: blocks; nonzero: cancel */
	void		*progress_priv;
	double		max_seconds;	/* < 0: no limit; a unit starts only if it fits */
	uint64_t	max_units;	/* 0: no limit; stop after that many units */
	const struct units *units;	/* the plan's units (units.h); NULL: each move one */
	volatile sig_atomic_t *stop;	/* signals: 1 stops at a unit's end */
	size_t		buffer_bytes;	/* copy buffer; 0: default */
	int		verify;		/* read every move back past the cache (verify.h) */
};

struct run_state {
	struct run_result *results;	/* per plan move */
	uint64_t	done, failed;	/* moves */
	uint64_t	files_failed;
	blk64_t		copied, written;
	int		cancelled;	/* stopped by the progress callback */
	int		timed_out;	/* stopped by max_seconds or max_units */
	int		unit_limit;	/* stopped by max_units */
	int		abandoned;	/* cancelled inside a unit (a second signal) */
	uint64_t	units_done;	/* units finished */
	double		estimate_rate;	/* measured seconds per modeled second */
	/* Stopped by the clock before unit NEXT_UNIT, whose estimate (at
	 * the measured rate) NEXT_UNIT_SECONDS did not fit what was left;
	 * TOO_LONG: it does not fit the whole window the moves had. */
	uint64_t	next_unit;
	double		next_unit_seconds;
	int		too_long;
	int		switch_failed;	/* a switch failed: the run stopped there */
	errcode_t	device_error;	/* reading or writing a group's copies failed: stopped */
	uint64_t	commits;	/* batches made durable (group commit) */
	uint64_t	reuse_commits;	/* of them, ended by a reuse of freed blocks */
	uint64_t	logged_blocks;	/* data written through the journal (move.h) */
	double		seconds;
};

/*
 * Carry out PLAN on FS through SW, in order.  A move that fails leaves
 * its file as it was; later moves go on (each checks that its blocks are
 * free), but for a failed read or write of the copies (ST->device_error),
 * where the run stops.  Stops cleanly between moves when cancelled or out
 * of time, and within a move before its switch when cancelled.  ST->results has one
 * entry per move.
 */
errcode_t run_plan(ext2_filsys fs, struct switch_ctx *sw, struct layout *layout,
		   const struct plan *plan, const struct run_opts *opts,
		   struct run_state *st);
void run_free(struct run_state *st);

#endif /* DEFRAG_DEFRAG_H */
