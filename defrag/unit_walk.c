/*
 * unit_walk.c --- the order a plan's units go in, group after group.
 *
 * In the plan's order each unit goes in turn, its moves committing the
 * open batch where they take blocks it freed.  Waiting (units.h: where
 * the model finds it faster), a unit whose first move would take such
 * blocks waits, and later units go ahead of it while they commute with
 * every waiting unit (waiting.c says when they do): whole, with no
 * commit and every block they gain free.  Only the earliest unit left
 * goes as the plan has it, part way or committing; a unit once started
 * goes on before any other.  A unit that waits for a commit (blocks the
 * open batch freed and it may not log) is tried again once one has been
 * made; one that waits for the moves before it (blocks they free, a file
 * they move) at the next group, whose switches may have freed them: on
 * a tree whose files fill each other's places, trying those only after a
 * commit left a group of two units at a time, its reads a seek each.
 *
 * The walk is the mover's (execute.c) and its model's (iomodel.c): the
 * ops say what taking a unit, and keeping one waiting, means to each.
 *
 * A unit is checked (ops->conflicts) against the marks of the units kept
 * waiting before it in the queue.  Marking every waiting unit again at
 * every group cost half of a 200,000-file tree's run, where a group takes
 * one unit from the front of the queue if any.  So the marks stay from
 * group to group, made up to a check's position only when it comes
 * (marks_before), in two layers: the front of the queue (UNIT_WALK_FRONT
 * units), marked again when a unit of it goes, and the rest, marked
 * again only when they hold more than the units before the check (a unit
 * since taken from there, or units after it: when the waiting units are
 * tried again).  Each check sees the very marks it would
 * if every walk marked afresh.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit_walk.h"

/* What a unit tried waits for (try_unit). */
enum { WAIT_COMMIT = 1, WAIT_GROUP = 2 };

/* tried[] of a unit waiting for a group: never the commits made. */
#define TRIED_NEXT_GROUP	UINT64_MAX

errcode_t unit_walk_init(struct unit_walk *w, uint64_t nunits, int waiting,
			 const struct unit_walk_ops *ops, void *priv)
{
	memset(w, 0, sizeof(*w));
	w->ops = ops;
	w->priv = priv;
	w->nunits = nunits;
	w->waiting = waiting;
	w->front_stale = w->rest_stale = 1;	/* cleared before the first check */
	w->unit = calloc(UNIT_WALK_WAITING_MAX, sizeof(*w->unit));
	w->tried = calloc(UNIT_WALK_WAITING_MAX, sizeof(*w->tried));
	if (!w->unit || !w->tried) {
		unit_walk_fini(w);
		return ENOMEM;
	}
	return 0;
}

void unit_walk_fini(struct unit_walk *w)
{
	free(w->unit);
	free(w->tried);
	w->unit = w->tried = NULL;
	w->n = 0;
}

int unit_walk_left(const struct unit_walk *w)
{
	return w->has_cur || w->n || w->pos < w->nunits;
}

uint64_t unit_walk_next(const struct unit_walk *w)
{
	return w->has_cur ? w->cur : w->n ? w->unit[0] : w->pos;
}

/* Make the marks those of the units kept waiting before slot KEPT. */
static void marks_before(struct unit_walk *w, size_t kept)
{
	const struct unit_walk_ops *ops = w->ops;
	size_t i;

	if (w->rest_stale || w->marked > kept) {
		ops->unmark(w->priv, MARKS_FRONT);
		ops->unmark(w->priv, MARKS_REST);
		w->front = w->marked = 0;
		w->front_stale = w->rest_stale = 0;
	}
	if (w->front_stale) {
		ops->unmark(w->priv, MARKS_FRONT);
		for (i = 0; i < w->front; i++)
			ops->keep(w->priv, w->unit[i], MARKS_FRONT);
		w->front_stale = 0;
	}
	for (; w->marked < kept; w->marked++) {
		/* The front while it is all there is and not full. */
		int front = w->marked == w->front && w->front < UNIT_WALK_FRONT;

		ops->keep(w->priv, w->unit[w->marked], front ? MARKS_FRONT : MARKS_REST);
		w->front += front;
	}
}

/*
 * Try unit U (not started) for the group, KEPT units waiting before it
 * (unit[0, KEPT)): WAIT_COMMIT or WAIT_GROUP when it must wait (kept, to
 * be marked when a check comes), 0 when the group took it, -1 when it is
 * left for a later group (the group is full or closed: *FULL set).
 * EARLIEST: no unit before it in plan order is left, so it goes as the
 * plan has it, its first move waiting rather than committing; a unit
 * going ahead of waiting ones is taken whole or not at all.  FORCE (with
 * EARLIEST): it goes, committing where it must.
 */
static int try_unit(struct unit_walk *w, uint64_t u, size_t kept, int earliest,
		    int force, int *full)
{
	const struct unit_walk_ops *ops = w->ops;
	enum unit_take t;

	if (w->closed || !ops->may_join(w->priv, u, force)) {
		*full = 1;
		return -1;
	}
	if (!earliest) {
		marks_before(w, kept);
		if (ops->conflicts(w->priv, u))
			return WAIT_GROUP;
	}
	t = ops->take(w->priv, u, 0, !earliest ? MOVE_RESERVE_WHOLE :
				     force ? MOVE_RESERVE_PLAN : MOVE_RESERVE_WAIT_FIRST);
	if (t == UNIT_WAITS_COMMIT)
		return WAIT_COMMIT;
	if (t == UNIT_WAITS)
		return WAIT_GROUP;
	if (t == UNIT_FULL || t == UNIT_NONE) {
		*full = 1;
		return -1;
	}
	if (t == UNIT_PART) {
		w->closed = 1;
		w->has_cur = 1;
		w->cur = u;
	}
	return 0;
}

void unit_walk_gather(struct unit_walk *w, int force)
{
	const struct unit_walk_ops *ops = w->ops;
	size_t i, kept = 0;
	int full = 0;

	w->closed = 0;
	if (w->has_cur) {
		if (ops->take(w->priv, w->cur, w->cur_next, MOVE_RESERVE_PLAN) == UNIT_TAKEN)
			w->has_cur = 0;
		else
			w->closed = 1;
	}
	for (i = 0; i < w->n; i++) {
		uint64_t u = w->unit[i];
		int earliest = !w->has_cur && !kept, r = -1;

		/* One that waited for a commit since the last one waits on,
		 * one that waited for a group while its ops say so. */
		if (!full && !earliest && w->tried[i] == ops->commits(w->priv))
			r = WAIT_COMMIT;
		else if (!full && !earliest && w->tried[i] == TRIED_NEXT_GROUP &&
			 ops->ready && !ops->ready(w->priv, u))
			r = WAIT_GROUP;
		else if (!full)
			r = try_unit(w, u, kept, earliest, force && earliest, &full);
		if (r == 0) {
			/* It goes with this group: marked, its marks must go. */
			if (kept < w->front) {
				w->front_stale = 1;
				w->front--;
				w->marked--;
			} else if (kept < w->marked) {
				w->rest_stale = 1;
			}
			continue;
		}
		if (r > 0)
			w->tried[i] = r == WAIT_COMMIT ? ops->commits(w->priv) : TRIED_NEXT_GROUP;
		w->unit[kept] = u;
		w->tried[kept] = w->tried[i];
		kept++;
	}
	w->n = kept;
	while (!full && w->pos < w->nunits && w->n < UNIT_WALK_WAITING_MAX) {
		/* In the plan's order each unit goes as the plan has it. */
		int earliest = !w->waiting || (!w->has_cur && !w->n);
		int r = try_unit(w, w->pos, w->n, earliest,
				 (force || !w->waiting) && earliest, &full);

		if (r < 0)
			break;
		if (r > 0) {
			w->unit[w->n] = w->pos;
			w->tried[w->n] = r == WAIT_COMMIT ? ops->commits(w->priv) : TRIED_NEXT_GROUP;
			w->n++;
		}
		w->pos++;
	}
}
