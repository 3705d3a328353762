/*
 * plan_search.c --- which plan e2defrag carries out.  The steps of one
 * plan (plan.c) leave some disks short of what another order of the
 * same steps reaches, so several variants of the plan are made, as this
 * file's tables say, and one rule (plan_prefer) decides between any two.
 * Planning is deterministic: a variant made twice is the same plan.
 *
 * The variants vary along three axes, the last nested innermost:
 *
 *   split:  whether a packing may give a file no zone holds the gaps'
 *           ends in pieces (compact_split.c): never, when no packing is
 *           kept without, or always;
 *   direct: with or without compaction's direct moves;
 *   order:  units placed in turn then the rest packed, everything packed
 *           first, or the first order with lenient packings.
 *
 * Along each axis the first value is always tried; a later one only when
 * the plan kept so far on that axis calls for it (its `when`), and it then
 * replaces that plan if its `rule` prefers it.  What one axis keeps is
 * the candidate of the axis around it.  At most 3 x 2 x 3 = 18 plans, and
 * when the plan kept leaves files short of best, one more: it, with those
 * files rebuilt where others step aside (rebuild.c).  A disk where the
 * first plan brings every file to best within the write target makes one.
 * Under a window (plan_opts' window, e2defrag --max-time) a plan whose
 * units fit it comes first, before any axis' rule (window_prefers).
 */
#include <errno.h>
#include <stdlib.h>

#include "planner_int.h"

/* When a value past the first of an axis is tried. */
enum plan_when {
	WHEN_FIRST,		/* the axis' first value: always */
	WHEN_SHORT,		/* the plan kept leaves selected files short of best */
	WHEN_SHORT_OR_OVER,	/* ... or writes more than the write target */
	WHEN_DIRECT_MOVES,	/* the plan kept made direct moves */
};

/* How a plan tried replaces the plan kept (plan_prefer). */
enum plan_rule {
	RULE_FIRST,		/* nothing kept yet: it */
	RULE_BEST_THEN_WRITES,	/* more files at best, then fewer blocks written */
	RULE_BEST_NONE_WORSE,	/* more files at best, and no file worse than it was */
	RULE_BEST_FREE_TIME,	/* more at best, then the free-space promise, then
				 * the modeled time (faster_on_disk), then writes */
	RULE_SPLIT,		/* split_better */
	RULE_REBUILD,		/* more files at best within the write target */
};

/* One value of an axis: the fields of struct plan_variant it sets. */
struct plan_try {
	struct plan_variant set;
	uint8_t		when;	/* enum plan_when */
	uint8_t		rule;	/* enum plan_rule */
};

/*
 * Outermost.  A packing that splits files changes what later turns find,
 * so it is tried only when the plans without leave files short of best
 * or write past the target, first only where no other packing is kept,
 * then for every packing.  Not at first: where a packing is taken back,
 * later turns may find such a file fewer pieces than the gaps' ends give
 * it.
 */
static const struct plan_try by_split[] = {
	{ { .split = SPLIT_NONE }, WHEN_FIRST, RULE_FIRST },
	{ { .split = SPLIT_FALLBACK }, WHEN_SHORT_OR_OVER, RULE_SPLIT },
	{ { .split = SPLIT_ALWAYS }, WHEN_SHORT_OR_OVER, RULE_SPLIT },
};

/*
 * Direct moves make most packings write less, but they change where free
 * space lies while a packing goes on, and so what later turns place and
 * where free space ends: a plan that made any is made again without.
 * They also cost the disk more where a block's final place frees up a
 * block at a time (recordings interleaved piece by piece): a region is
 * then filled in as many sparse sweeps as there are rounds, each write a
 * seek or a wait for the platter, where the packing without them stages
 * and fills it in long runs.  So, between two plans as good, the faster
 * on the modeled disk is kept, not the one writing fewer blocks.
 */
static const struct plan_try by_direct[] = {
	{ { .no_direct = 0 }, WHEN_FIRST, RULE_FIRST },
	{ { .no_direct = 1 }, WHEN_DIRECT_MOVES, RULE_BEST_FREE_TIME },
};

/*
 * Innermost.  Placing files one by one into the best free run can leave
 * free space cut so that the last ones find no room where packing them
 * all together would fit every one (a zone that holds one recording and
 * not two), or gets them there only by packing whole zones at a cost past
 * the target: so, in those cases, everything packed first.  Still short:
 * packings were taken back because a file they moved out of the way would
 * have been left in more pieces, though later turns may place it (what a
 * second run would do): so, last, packings may stand leniently.
 */
static const struct plan_try by_order[] = {
	{ { .pack_first = 0 }, WHEN_FIRST, RULE_FIRST },
	{ { .pack_first = 1 }, WHEN_SHORT_OR_OVER, RULE_BEST_THEN_WRITES },
	{ { .lenient = 1 }, WHEN_SHORT, RULE_BEST_NONE_WORSE },
};

#define NTRIES(t)	(sizeof(t) / sizeof(*(t)))

/* Whether PLAN leaves a file it moves in more pieces than it had. */
static int plan_any_worse(const struct plan *plan)
{
	uint64_t i;

	for (i = 0; i < plan->nfiles; i++)
		if (plan->files[i].moves &&
		    plan->files[i].pieces_after > plan->files[i].pieces_before)
			return 1;
	return 0;
}

/* Whether PLAN writes more than the target times what needed moving. */
static int plan_over_budget(const struct plan *plan)
{
	return plan->copy_blocks > plan_write_target(plan->needed_blocks, plan->rebuilt_blocks);
}

/* Whether PLAN leaves more free runs than before and than block groups. */
static int plan_cuts_free(const struct layout *layout, const struct plan *plan)
{
	return plan->free_extents_after > plan->free_extents_before &&
	       plan->free_extents_after > layout->fs->group_desc_count;
}

static int plan_short(const struct plan *plan)
{
	return plan->partial || plan->no_room;
}

/*
 * Whether plan B, with files packed in pieces, is better than A: more
 * files at best, and neither more free runs (past the promise's bound)
 * nor more writes than the target where A kept them.  Not for as many in
 * fewer pieces: the run after a plan without pieces would then find such
 * a packing where the first did not, and one run is to be a fixed point;
 * except where A writes more than the target and B, as many at best,
 * does not, in no more pieces or with no file in more pieces than it had
 * (the write target is a promise, a file short of best in 2 pieces
 * rather than 3 is not).
 */
static int split_better(const struct layout *layout, const struct plan *a,
			const struct plan *b)
{
	if (b->best < a->best)
		return 0;
	if (plan_cuts_free(layout, b) && !plan_cuts_free(layout, a))
		return 0;
	if (b->best == a->best)
		return plan_over_budget(a) && !plan_over_budget(b) &&
		       (b->pieces_after <= a->pieces_after || !plan_any_worse(b));
	return !plan_over_budget(b) || plan_over_budget(a);
}

/*
 * Whether PLAN leaves the disk better than it is: a selected file in
 * fewer pieces or at its best (an interleaved one moved to a place of its
 * own), or free space in fewer runs or with a larger largest run.  Moves
 * that change neither serve nothing.
 */
static int plan_gains(const struct selection *sel, const struct plan *plan)
{
	uint64_t i;

	if (plan->free_extents_after < plan->free_extents_before ||
	    plan->largest_free_after > plan->largest_free_before)
		return 1;
	for (i = 0; i < plan->nfiles; i++) {
		const struct plan_file *pf = &plan->files[i];

		if (pf->moves && (sel->flags[pf->file] & SEL_CANDIDATE) &&
		    (pf->pieces_after < pf->pieces_before || pf->outcome == OUT_BEST))
			return 1;
	}
	return 0;
}

/* Whether the plan KEPT (NULL: none yet) calls for a try WHEN. */
static int plan_wanted(enum plan_when when, const struct plan *kept)
{
	if (!kept)
		return 1;
	switch (when) {
	case WHEN_SHORT:
		return plan_short(kept);
	case WHEN_SHORT_OR_OVER:
		return plan_short(kept) || plan_over_budget(kept);
	case WHEN_DIRECT_MOVES:
		return kept->direct_moves != 0;
	default:
		return 0;
	}
}

/* OPTS' modeled seconds of PLAN, asked once; negative when unknown. */
static double plan_seconds(const struct plan_opts *opts, struct plan *plan)
{
	if (!opts || !opts->seconds)
		return -1;
	if (!plan->seconds_known) {
		plan->longest_seconds = 0;
		plan->seconds = opts->seconds(plan, opts->seconds_priv,
					      &plan->longest_seconds);
		plan->seconds_known = 1;
	}
	return plan->seconds;
}

/*
 * Whether PLAN suits OPTS' window: its longest unit fits, and it writes
 * at most WINDOW_AMPLIFICATION times what needed moving.  No window, or
 * no model: every plan does.
 */
static int plan_fits(const struct plan_opts *opts, struct plan *plan)
{
	if (!opts || opts->window <= 0 || plan_seconds(opts, plan) < 0)
		return 1;
	return plan->longest_seconds <= opts->window &&
	       plan->copy_blocks <= (blk64_t)(plan->needed_blocks * WINDOW_AMPLIFICATION);
}

/*
 * Under a window, before any rule: 1 when B suits it and A does not, as
 * many files at best and the free-space promise kept where A keeps it;
 * -1 when A suits it and B does not, no more at best; else 0, the rule
 * decides.  A plan whose unit is longer than the window is never started
 * there, night after night: one that writes more in units that fit
 * brings the disk to the same end.
 */
static int window_prefers(const struct layout *layout, const struct plan_opts *opts,
			  struct plan *a, struct plan *b)
{
	int fa, fb;

	if (!opts || opts->window <= 0)
		return 0;
	fa = plan_fits(opts, a);
	fb = plan_fits(opts, b);
	if (fb && !fa && b->best >= a->best &&
	    !(plan_cuts_free(layout, b) && !plan_cuts_free(layout, a)))
		return 1;
	if (fa && !fb && b->best <= a->best)
		return -1;
	return 0;
}

/*
 * Whether B is faster than A on the modeled disk (OPTS->seconds), both
 * writing within the target: -1 no (A is), 1 yes, 0 neither is known
 * better (no model, a plan past the target, or the same time).
 */
static int faster_on_disk(const struct plan_opts *opts, struct plan *a, struct plan *b)
{
	double ta, tb;

	if (plan_over_budget(a) || plan_over_budget(b))
		return 0;
	ta = plan_seconds(opts, a);
	tb = plan_seconds(opts, b);
	if (ta < 0 || tb < 0 || ta == tb)
		return 0;
	return tb < ta ? 1 : -1;
}

/* RULE's word: whether plan B replaces A, the plan kept. */
static int rule_prefers(const struct layout *layout, const struct plan_opts *opts,
			enum plan_rule rule, struct plan *a, struct plan *b)
{
	int faster;

	switch (rule) {
	case RULE_BEST_THEN_WRITES:
		return b->best > a->best ||
		       (b->best == a->best && b->copy_blocks < a->copy_blocks);
	case RULE_BEST_NONE_WORSE:
		return b->best > a->best && !plan_any_worse(b);
	case RULE_BEST_FREE_TIME:
		if (b->best != a->best)
			return b->best > a->best;
		if (plan_cuts_free(layout, a) != plan_cuts_free(layout, b))
			return plan_cuts_free(layout, a) > plan_cuts_free(layout, b);
		faster = faster_on_disk(opts, a, b);
		if (faster)
			return faster > 0;
		return b->copy_blocks < a->copy_blocks;
	case RULE_SPLIT:
		return split_better(layout, a, b);
	case RULE_REBUILD:
		return b->best > a->best && !plan_over_budget(b);
	default:
		return 0;
	}
}

/*
 * Whether plan B replaces A, the plan kept (NULL: none yet): the
 * window's word first (window_prefers), else RULE's.  The plan kept is
 * marked for_window where the window overrules the rule.
 */
static int plan_prefer(const struct layout *layout, const struct plan_opts *opts,
		       enum plan_rule rule, struct plan *a, struct plan *b)
{
	int window, rule_says;

	if (!a)
		return 1;
	rule_says = rule_prefers(layout, opts, rule, a, b);
	window = window_prefers(layout, opts, a, b);
	if (!window || (window > 0) == rule_says)
		return rule_says;
	if (window > 0)
		b->for_window = 1;
	else
		a->for_window = 1;
	return window > 0;
}

/*
 * *KEPT or B, as RULE prefers; the other is freed.  B may be NULL (none
 * made).  *KV, the variant *KEPT was made with, becomes BV with B.
 */
static void plan_keep(const struct layout *layout, const struct plan_opts *opts,
		      enum plan_rule rule, struct plan **kept,
		      struct plan_variant *kv, struct plan *b,
		      const struct plan_variant *bv)
{
	if (!b)
		return;
	if (plan_prefer(layout, opts, rule, *kept, b)) {
		plan_free(*kept);
		*kept = b;
		*kv = *bv;
	} else {
		plan_free(b);
	}
}

errcode_t plan_build(struct layout *layout, const struct selection *sel,
		     const struct plan_opts *opts, struct plan **ret)
{
	struct plan *kept = NULL, *ks, *kd, *b;
	struct plan_variant kept_v = { 0 }, ks_v = { 0 }, kd_v = { 0 };
	size_t s, d, o;
	errcode_t err = 0;

	*ret = NULL;
	for (s = 0; !err && s < NTRIES(by_split); s++) {
		if (!plan_wanted(by_split[s].when, kept))
			continue;
		ks = NULL;
		for (d = 0; !err && d < NTRIES(by_direct); d++) {
			if (!plan_wanted(by_direct[d].when, ks))
				continue;
			kd = NULL;
			for (o = 0; !err && o < NTRIES(by_order); o++) {
				struct plan_variant v = {
					.pack_first = by_order[o].set.pack_first,
					.lenient = by_order[o].set.lenient,
					.no_direct = by_direct[d].set.no_direct,
					.split = by_split[s].set.split,
				};

				if (!plan_wanted(by_order[o].when, kd))
					continue;
				err = plan_once(layout, sel, opts, &v, &b);
				if (!err)
					plan_keep(layout, opts, by_order[o].rule, &kd, &kd_v, b, &v);
			}
			if (err)
				plan_free(kd);
			else
				plan_keep(layout, opts, by_direct[d].rule, &ks, &ks_v, kd, &kd_v);
		}
		if (err)
			plan_free(ks);
		else
			plan_keep(layout, opts, by_split[s].rule, &kept, &kept_v, ks, &ks_v);
	}
	/*
	 * Files still short of best: the plan kept, made again with them
	 * rebuilt where others step aside (rebuild.c), which writes more;
	 * kept when more files reach best within the write target (which the
	 * rebuilt files raise: plan_write_target).
	 */
	if (!err && kept && plan_short(kept)) {
		struct plan_variant v = kept_v;

		v.rebuild = 1;
		err = plan_once(layout, sel, opts, &v, &b);
		if (!err)
			plan_keep(layout, opts, RULE_REBUILD, &kept, &kept_v, b, &v);
	}
	/*
	 * A plan no better than the disk as it is (a file moved in as many
	 * pieces, free runs as they were: a packing that changed nothing a
	 * reader or a writer sees) is dropped for one that only joins free
	 * space (--pack: kept if it gains, leaves no file in more pieces and
	 * free space in no more runs), or else for no move at all.
	 */
	for (s = IDLE_PLACING; !err && kept && kept->nmoves && s <= IDLE_ALL &&
	     !plan_gains(sel, kept); s++) {
		struct plan_variant v = { .idle = (uint8_t)s };

		if (s == IDLE_PLACING && !(opts && opts->pack))
			continue;
		err = plan_once(layout, sel, opts, &v, &b);
		/* Joining only: kept if it gains within --pack's promises. */
		if (!err && (s == IDLE_ALL ||
			     (plan_gains(sel, b) && !plan_any_worse(b) &&
			      b->free_extents_after <= b->free_extents_before))) {
			plan_free(kept);
			kept = b;
		} else if (!err) {
			plan_free(b);
		}
	}
	if (err) {
		plan_free(kept);
		return err;
	}
	if (opts && opts->progress)
		opts->progress(opts->progress_priv, E2F_PHASE_PLAN, sel->candidates,
			       sel->candidates);
	*ret = kept;
	return 0;
}
