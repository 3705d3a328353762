/*
 * units.h --- the plan cut into units (units.c), and what a unit is
 * estimated to take on the modeled disk.
 */
#ifndef DEFRAG_UNITS_H
#define DEFRAG_UNITS_H

#include "defrag.h"
#include "iomodel.h"

struct units {
	uint64_t	*end;		/* unit k is moves [end[k-1], end[k]) */
	double		*seconds;	/* its modeled time */
	double		*gain;		/* the modeled read time it saves (>= 0 but
					 * for rounding: a unit is no worse) */
	uint64_t	n;
	double		total_seconds, longest_seconds;
	uint64_t	longest;	/* its index */
	int		by_gain;	/* the units were put in order of the read
					 * time they save per second (units_by_gain) */
	double		plan_order_saved;	/* ... and what the plan's order
						 * saved within the limit */
	int		waiting;	/* the mover's order: 1 units that need a
					 * commit wait (waiting.c), 0 the plan's */
	ext2fs_block_bitmap sources;	/* every block a move of the plan
					 * reads, as the plan leaves the files
					 * move after move (move.h: read
					 * through), or NULL */
	struct io_copy	*copies;	/* the moves' copies, in their order ... */
	struct io_move	*io;		/* ... and each move's, for iomodel.c
					 * (units_fit) */
	uint64_t	nio;
	uint64_t	horizon;	/* the mover walks units [0, horizon)
					 * first: n, or where a limit cuts the
					 * run (units_fit) */
	int		fitted;		/* units_fit made it */
};

/* What cuts a run: at most UNITS units (0: any), SECONDS of units (< 0: any). */
struct units_limit {
	uint64_t	units;
	double		seconds;
};

/*
 * The units of U a run under LIMIT does, in the plan's order, each
 * started only if its estimate fits what is left (the model's: the run
 * scales it by the rate it measures), none past U->horizon (units_fit);
 * *SAVED: the read time they save.
 */
uint64_t units_within(const struct units *u, const struct units_limit *limit,
		      double *saved);

/* The unit (index) plan move I belongs to; U->n past the last. */
uint64_t units_of_move(const struct units *u, uint64_t i);

/*
 * Cut PLAN into units: a unit ends after a move where the filesystem, as
 * the plan leaves it there, is no worse than where the unit began (its
 * pieces and modeled read time), so that a stop between two units never
 * leaves it worse (a staging step and the moves it makes room for are one
 * unit); U->gain says how much read time each saves.  Each unit's time is
 * modeled on MODEL with BUFFER_BYTES of data per commit and the journal
 * LOG (iomodel.h; units.c says how), in whichever of the two orders the
 * model finds faster, which U->waiting names for the mover.  ENOMEM,
 * else 0.
 */
errcode_t units_make(const struct layout *layout, const struct plan *plan,
		     const struct readmodel *model, size_t buffer_bytes,
		     const struct switch_log_limits *log, struct units *u);
void units_free(struct units *u);


/* What units_plan_seconds models a plan with: units_make's arguments. */
struct units_model {
	const struct layout	*layout;
	const struct readmodel	*model;
	size_t			buffer_bytes;
	struct switch_log_limits log;
};

/*
 * The planner's plan_opts.seconds (planner.h): what units_make models
 * PLAN's moves to take, and its longest unit in *LONGEST, PRIV a struct
 * units_model; -1 when it cannot say.
 */
double units_plan_seconds(const struct plan *plan, void *priv, double *longest);

/*
 * Where LIMIT cuts the run: the most units K whose run, modeled on M as
 * the run that stops after them, fits it; U->horizon = K.  That run ends
 * after unit K (its last commit and the journal's checkpoint are its
 * own) and reads ahead, and through long gaps, only for them, as the
 * mover then does with U->sources and walks them first: read for a unit
 * the run will not start, it is time the window loses, and the next run
 * reads it again.  Their seconds in U are that run's, and the next
 * unit's its own as the last of a run that gets to it (what the mover
 * weighs before it, and a run stopped there names); the rest, and U's
 * total and longest, stay the whole plan's.  *SAVED (SAVED may be NULL):
 * what they save.  ENOMEM, else 0.
 */
errcode_t units_fit(const struct units_model *m, struct units *u,
		    const struct units_limit *limit, double *saved);


/*
 * Under LIMIT, the units that save the most read time per second first
 * (unit_order.c says which can go earlier): where LIMIT cuts the run and
 * that order saves more within it, on the model M, than the plan's,
 * PLAN's moves are put in it and U made again for it (U->by_gain set);
 * else both stay as they are.  ENOMEM.
 */
errcode_t units_by_gain(const struct units_model *m, struct plan *plan, struct units *u,
			const struct units_limit *limit);

#endif /* DEFRAG_UNITS_H */
