/*
 * unit_walk.h --- the order a plan's units go in, group after group
 * (unit_walk.c): one walk for the mover (execute.c) and for the model
 * of its I/O (iomodel.c), each saying through unit_walk_ops what taking
 * a unit means to it.
 */
#ifndef DEFRAG_UNIT_WALK_H
#define DEFRAG_UNIT_WALK_H

#include "defrag.h"
#include "move.h"

/*
 * At most this many units wait at once: the queue is walked at every
 * group, and the later units it lets go ahead are bounded by it too.
 */
#define UNIT_WALK_WAITING_MAX	4096

/*
 * The marks of the units kept waiting are in two layers (unit_walk.c):
 * the first UNIT_WALK_FRONT units of the queue, which go first, and the
 * rest, so that a unit going from the front costs a front's marks again,
 * not the whole queue's.
 */
#define UNIT_WALK_FRONT		64
enum { MARKS_REST, MARKS_FRONT, MARK_LAYERS };

enum unit_take {
	UNIT_TAKEN,	/* all of its moves joined the group */
	UNIT_PART,	/* some: it goes on in the next group, before any other */
	UNIT_WAITS,	/* none: they must wait for the moves before them (blocks
			 * not free yet, or claimed in the group, a file in it):
			 * tried again at the next group */
	UNIT_WAITS_COMMIT,	/* none: they must wait for a commit (blocks the
				 * open batch freed that they may not log) */
	UNIT_FULL,	/* none: the group is full */
	UNIT_NONE	/* none at all: out of memory, a failed commit */
};

struct unit_walk_ops {
	/* Whether unit U may join the group; FORCE: the first unit left goes. */
	int		(*may_join)(void *priv, uint64_t u, int force);
	/* Reserve unit U's moves from FROM into the group in MODE (move.h). */
	enum unit_take	(*take)(void *priv, uint64_t u, uint64_t from,
				enum move_reserve mode);
	/* Whether unit U, which waited for a group (UNIT_WAITS), may be tried
	 * again: a cheap check, 1 when unsure; NULL: always. */
	int		(*ready)(void *priv, uint64_t u);
	/* Forget the marks of LAYER (MARKS_FRONT or MARKS_REST). */
	void		(*unmark)(void *priv, int layer);
	/* Whether unit U moves a file or may gain a block of a marked unit
	 * (in either layer). */
	int		(*conflicts)(void *priv, uint64_t u);
	/* Unit U is kept waiting: mark its files and blocks in LAYER. */
	void		(*keep)(void *priv, uint64_t u, int layer);
	/* Commits made so far. */
	uint64_t	(*commits)(void *priv);
};

struct unit_walk {
	const struct unit_walk_ops *ops;
	void		*priv;
	uint64_t	nunits;
	int		waiting;	/* units may wait (else the plan's order) */
	uint64_t	*unit;		/* waiting units, in plan order */
	uint64_t	*tried;		/* the commits made when each last waited */
	size_t		n;
	uint64_t	pos;		/* the first unit not yet looked at */
	uint64_t	cur, cur_next;	/* the unit in progress and its next move */
	int		has_cur;	/* (when one is; the caller sets cur_next) */
	int		closed;		/* the group takes no more units */
	size_t		front;		/* unit[0, front) are marked in MARKS_FRONT */
	size_t		marked;		/* ... and unit[front, marked) in MARKS_REST */
	int		front_stale;	/* MARKS_FRONT holds a unit no longer waiting */
	int		rest_stale;	/* MARKS_REST does, or the marks are unknown */
};

errcode_t unit_walk_init(struct unit_walk *w, uint64_t nunits, int waiting,
			 const struct unit_walk_ops *ops, void *priv);
void unit_walk_fini(struct unit_walk *w);

/* Whether units are left: one in progress, waiting, or not looked at. */
int unit_walk_left(const struct unit_walk *w);

/* The unit a group would try first (for a stop's estimate). */
uint64_t unit_walk_next(const struct unit_walk *w);

/*
 * Gather the next group: the unit in progress, then the waiting units
 * that may go now, then later units, a unit that must wait kept in the
 * queue.  FORCE: the first unit left goes, committing if it needs to.
 */
void unit_walk_gather(struct unit_walk *w, int force);

#endif /* DEFRAG_UNIT_WALK_H */
