/*
 * unit_walk.c --- the order of a plan's units (defrag/unit_walk.c), whose
 * waiting units' marks stay from group to group in two layers, against a
 * reference that marks every waiting unit afresh at every group (the
 * walk as it was): on random queues of units that touch overlapping
 * blocks, wait for a commit or for the next group (tried again there
 * where the ops' ready says so), go in part, fill groups, both must take
 * the same units in the same groups.  A mark left of a unit that has
 * gone, or missing of one that waits, changes what a later check finds;
 * a unit waiting for a group not tried again at the next, or one waiting
 * for a commit tried before it, changes the groups.
 */
#include <stdlib.h>
#include <string.h>

#include "unit_walk.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define NUNITS	3000
#define NBLOCKS	700

/* Each unit touches one to three blocks, drawn once. */
static uint16_t unit_block[NUNITS][3];
static uint8_t unit_nblocks[NUNITS];

/* One walker's world: its marks, commits and the log of what it took. */
struct world {
	uint8_t		mark[2][NBLOCKS];	/* per layer (the reference uses 0) */
	uint64_t	commits, gather_no;
	size_t		group_n, cap;
	int		batch;			/* units taken since the last commit */
	uint64_t	*log;			/* gather number << 32 | unit, in order */
	size_t		nlog;
	uint64_t	waits, commit_waits, parts, fulls;
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL ^
		     c * 0x94d049bb133111ebULL;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ULL;
	return h ^ (h >> 32);
}

static int marked(const struct world *x, uint64_t u)
{
	int i;

	for (i = 0; i < unit_nblocks[u]; i++)
		if (x->mark[0][unit_block[u][i]] || x->mark[1][unit_block[u][i]])
			return 1;
	return 0;
}

static int may_join(void *priv, uint64_t u, int force)
{
	const struct world *x = priv;

	(void)u;
	(void)force;
	return x->group_n < x->cap;
}

/*
 * A unit's fate is drawn from it, the commits made and the mode, the same
 * for both walkers: it waits for a commit or a group, the group is full,
 * it goes in part or whole.  Going ahead of waiting units (WHOLE), it
 * also waits where a marked unit touches its blocks, as the model's take
 * does.
 */
static enum unit_take take(void *priv, uint64_t u, uint64_t from, enum move_reserve mode)
{
	struct world *x = priv;
	uint64_t r = mix(u, x->commits, mode * 7 + from) % 100;

	if (mode == MOVE_RESERVE_WHOLE && marked(x, u)) {
		x->waits++;
		return UNIT_WAITS;
	}
	if (!from && mode != MOVE_RESERVE_PLAN && r < 15) {
		x->commit_waits++;
		return UNIT_WAITS_COMMIT;
	}
	if (!from && mode != MOVE_RESERVE_PLAN && r < 30) {
		x->waits++;
		return UNIT_WAITS;
	}
	if (x->group_n && r < 36) {
		x->fulls++;
		return UNIT_FULL;
	}
	x->group_n++;
	x->batch = 1;
	x->log[x->nlog++] = x->gather_no << 32 | u;
	if (!from && mode != MOVE_RESERVE_WHOLE && r < 44) {
		x->parts++;
		return UNIT_PART;
	}
	return UNIT_TAKEN;
}

/* Whether a unit that waited for a group is tried again: drawn per group. */
static int ready(void *priv, uint64_t u)
{
	return mix(u, ((const struct world *)priv)->gather_no, 9) % 3 != 0;
}

static void unmark(void *priv, int layer)
{
	memset(((struct world *)priv)->mark[layer], 0, NBLOCKS);
}

static int conflicts(void *priv, uint64_t u)
{
	return marked(priv, u);
}

static void keep(void *priv, uint64_t u, int layer)
{
	struct world *x = priv;
	int i;

	for (i = 0; i < unit_nblocks[u]; i++)
		x->mark[layer][unit_block[u][i]] = 1;
}

static uint64_t commits(void *priv)
{
	return ((const struct world *)priv)->commits;
}

static const struct unit_walk_ops ops = {
	.may_join = may_join, .take = take, .ready = ready, .unmark = unmark,
	.conflicts = conflicts, .keep = keep, .commits = commits,
};

/* ------------------------------------------------ the reference: every
 * walk clears the marks and marks each unit it keeps (the walk as it was). */

/* What a unit waits for, and tried[] of one waiting for a group. */
enum { REF_COMMIT = 1, REF_GROUP = 2 };
#define REF_NEXT_GROUP	UINT64_MAX

struct ref_walk {
	struct world	*x;
	uint64_t	unit[UNIT_WALK_WAITING_MAX], tried[UNIT_WALK_WAITING_MAX];
	size_t		n;
	uint64_t	pos, cur, cur_next;
	int		has_cur, closed, waiting;
};

static int ref_try(struct ref_walk *w, uint64_t u, int earliest, int force, int *full)
{
	enum unit_take t;

	if (w->closed || !may_join(w->x, u, force)) {
		*full = 1;
		return -1;
	}
	if (!earliest && conflicts(w->x, u)) {
		keep(w->x, u, 0);
		return REF_GROUP;
	}
	t = take(w->x, u, 0, !earliest ? MOVE_RESERVE_WHOLE :
			     force ? MOVE_RESERVE_PLAN : MOVE_RESERVE_WAIT_FIRST);
	if (t == UNIT_WAITS_COMMIT || t == UNIT_WAITS) {
		keep(w->x, u, 0);
		return t == UNIT_WAITS_COMMIT ? REF_COMMIT : REF_GROUP;
	}
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

static void ref_gather(struct ref_walk *w, int force)
{
	size_t i, kept = 0;
	int full = 0;

	w->closed = 0;
	if (w->has_cur) {
		if (take(w->x, w->cur, w->cur_next, MOVE_RESERVE_PLAN) == UNIT_TAKEN)
			w->has_cur = 0;
		else
			w->closed = 1;
	}
	unmark(w->x, 0);
	for (i = 0; i < w->n; i++) {
		uint64_t u = w->unit[i];
		int earliest = !w->has_cur && !kept, r = -1;

		if (!full && !earliest && w->tried[i] == w->x->commits) {
			keep(w->x, u, 0);
			r = REF_COMMIT;
		} else if (!full && !earliest && w->tried[i] == REF_NEXT_GROUP &&
			   !ready(w->x, u)) {
			keep(w->x, u, 0);
			r = REF_GROUP;
		} else if (!full) {
			r = ref_try(w, u, earliest, force && earliest, &full);
		}
		if (r == 0)
			continue;
		if (r < 0)
			keep(w->x, u, 0);
		else
			w->tried[i] = r == REF_COMMIT ? w->x->commits : REF_NEXT_GROUP;
		w->unit[kept] = u;
		w->tried[kept] = w->tried[i];
		kept++;
	}
	w->n = kept;
	while (!full && w->pos < NUNITS && w->n < UNIT_WALK_WAITING_MAX) {
		int earliest = !w->waiting || (!w->has_cur && !w->n);
		int r = ref_try(w, w->pos, earliest, (force || !w->waiting) && earliest, &full);

		if (r < 0)
			break;
		if (r > 0) {
			w->unit[w->n] = w->pos;
			w->tried[w->n] = r == REF_COMMIT ? w->x->commits : REF_NEXT_GROUP;
			w->n++;
		}
		w->pos++;
	}
}

/* ------------------------------------------------------------ the driver */

/* One group as execute.c makes it: commit when nothing goes, then force. */
static int group(struct world *x, void (*gather)(void *, int), int (*left)(void *),
		 void *walk)
{
	x->gather_no++;
	x->group_n = 0;
	x->cap = 1 + mix(x->gather_no, 1, 2) % 6;
	gather(walk, 0);
	if (!x->group_n && x->batch) {
		x->commits++;
		x->batch = 0;
		gather(walk, 0);
	}
	if (!x->group_n && left(walk))
		gather(walk, 1);
	if (!x->group_n)
		return -1;
	/* The batch commits as it fills. */
	if (mix(x->gather_no, 3, 4) % 5 == 0) {
		x->commits++;
		x->batch = 0;
	}
	return 0;
}

static void lazy_gather(void *walk, int force)
{
	struct unit_walk *w = walk;

	unit_walk_gather(w, force);
	w->cur_next = 1;
}

static int lazy_left(void *walk)
{
	return unit_walk_left(walk);
}

static void ref_gather_cb(void *walk, int force)
{
	struct ref_walk *w = walk;

	ref_gather(w, force);
	w->cur_next = 1;
}

static int ref_left(void *walk)
{
	const struct ref_walk *w = walk;

	return w->has_cur || w->n || w->pos < NUNITS;
}

int main(void)
{
	static struct ref_walk ref;
	struct world a, b;
	struct unit_walk w;
	int round, same = 1, stuck = 0;
	uint64_t waits = 0, commit_waits = 0, parts = 0, fulls = 0, groups = 0;

	tap_plan(3);
	for (round = 0; round < 12; round++) {
		uint64_t u;
		int waiting = round % 6 != 5;	/* a few in the plan's order */

		for (u = 0; u < NUNITS; u++) {
			int i;

			unit_nblocks[u] = 1 + rnd() % 3;
			for (i = 0; i < unit_nblocks[u]; i++)
				unit_block[u][i] = rnd() % (round % 2 ? NBLOCKS : NBLOCKS / 8);
		}
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		a.log = calloc(4 * NUNITS, sizeof(*a.log));
		b.log = calloc(4 * NUNITS, sizeof(*b.log));
		memset(&ref, 0, sizeof(ref));
		ref.x = &b;
		ref.waiting = waiting;
		if (!a.log || !b.log || unit_walk_init(&w, NUNITS, waiting, &ops, &a))
			return 99;
		while (unit_walk_left(&w) && !stuck)
			stuck = group(&a, lazy_gather, lazy_left, &w) != 0;
		while (ref_left(&ref) && !stuck)
			stuck = group(&b, ref_gather_cb, ref_left, &ref) != 0;
		same &= a.nlog == b.nlog && !memcmp(a.log, b.log, a.nlog * sizeof(*a.log)) &&
			a.gather_no == b.gather_no && a.commits == b.commits;
		waits += a.waits;
		commit_waits += a.commit_waits;
		parts += a.parts;
		fulls += a.fulls;
		groups += a.gather_no;
		unit_walk_fini(&w);
		free(a.log);
		free(b.log);
	}
	tap_ok(!stuck, "every walk ends (a group always takes a unit)");
	tap_ok(same, "the same units in the same groups as the reference, over 12 plans of %d units",
	       NUNITS);
	tap_ok(waits > NUNITS && commit_waits > NUNITS && parts > 100 && fulls > 100,
	       "units waited for a group (%llu times) and a commit (%llu), went in part (%llu) "
	       "and found groups full (%llu) in %llu groups",
	       (unsigned long long)waits, (unsigned long long)commit_waits,
	       (unsigned long long)parts, (unsigned long long)fulls,
	       (unsigned long long)groups);
	return tap_failed ? 1 : 0;
}
