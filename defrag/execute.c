/*
 * execute.c --- carry out a plan: its units, each one crash-safe
 * (move.c), stopping cleanly when asked to or when the time is up.
 *
 * A failed move leaves its file as it was and does not stop the run: the
 * moves after it check for themselves that their blocks are free, so one
 * that depended on the failed one fails too, cleanly, and is reported.
 *
 * Moves share commits (group commit, writer.h): a move counts as done
 * when its batch is durable.  A commit that fails leaves the moves of
 * its batch failed, as a power cut there would leave each old or new.
 *
 * Moves are carried out in groups (move.h): the units that may start
 * now (as --max-time, --max-units and a signal allow each), up to
 * MOVE_GROUP_MOVES moves and MOVE_GROUP_BUFFERS buffers of data, their
 * data read in one pass in the disk's order before they are switched in
 * order.  Which units a group takes is unit_walk.c's: where the model
 * finds it faster (units.h: waiting), a unit whose first move would gain
 * blocks the open batch released waits, and later units that need no
 * commit go ahead of it (waiting.c says why that is safe), so that a
 * commit is made when a batch is full rather than at each such move;
 * when every unit left waits, the batch commits.  Otherwise units go in
 * plan order, a commit where one needs it.  A unit once started goes on,
 * in plan order, before any other.  A first signal during a group stops at the
 * end of the unit being switched; the copies of the units after it are
 * left unused in free blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "unit_walk.h"
#include "units.h"
#include "verify.h"
#include "waiting.h"
#include "writer.h"

/* Unit U's modeled time (none without units). */
static double unit_seconds(const struct run_opts *opts, uint64_t u)
{
	return opts->units && u < opts->units->n ? opts->units->seconds[u] : 0;
}

/*
 * Before a group, no unit in progress: whether to stop here.  A signal,
 * --max-units, or --max-time when the estimate of unit NEXT (the first
 * the group would try) does not fit what is left: its modeled time
 * times the rate this run measured so far (measured seconds per modeled
 * second of the units done; the model alone before the first).
 */
static int unit_stop(const struct run_opts *opts, struct run_state *st,
		     uint64_t next, double start, double model_done)
{
	double elapsed = util_now_seconds() - start, est;

	if (opts->stop && *opts->stop) {
		st->cancelled = 1;
		return 1;
	}
	if (opts->max_units && st->units_done >= opts->max_units) {
		st->timed_out = 1;
		st->unit_limit = 1;
		return 1;
	}
	if (opts->max_seconds < 0)
		return 0;
	if (model_done > 0 && elapsed > 0)
		st->estimate_rate = elapsed / model_done;
	est = unit_seconds(opts, next) * st->estimate_rate;
	if (elapsed >= opts->max_seconds || elapsed + est > opts->max_seconds) {
		st->timed_out = 1;
		st->next_unit = next;
		st->next_unit_seconds = est;
		/* --max-time 0 asks for no move at all: nothing to say. */
		st->too_long = opts->max_seconds > 0 && est > opts->max_seconds;
		return 1;
	}
	return 0;
}

/* The last of the NBATCH moves BATCH lists that SW's open batch holds. */
static uint64_t keep_open(uint64_t *batch, uint64_t nbatch,
			  const struct switch_ctx *sw)
{
	uint64_t open = switch_batch_size(sw);

	if (open >= nbatch)
		return nbatch;
	if (open)
		memmove(batch, batch + (nbatch - open), open * sizeof(*batch));
	return open;
}

/* A commit failed: the moves of its batch are not done. */
static void batch_failed(struct run_state *st, const struct layout *layout,
			 const struct plan *plan, const uint64_t *batch,
			 uint64_t nbatch, uint8_t *failed_file)
{
	uint64_t k;

	for (k = 0; k < nbatch; k++) {
		struct run_result *res = &st->results[batch[k]];
		uint32_t f = plan->moves[batch[k]].file;

		if (!res->done)
			continue;
		res->done = 0;
		res->err = EIO;
		if (st->done)
			st->done--;
		st->failed++;
		if (f < layout->nfiles && !failed_file[f]) {
			failed_file[f] = 1;
			st->files_failed++;
		}
	}
}

/*
 * A group being gathered (execute.c's loop): its members' moves and
 * units, the files it moves, its data and the estimate of its units.
 */
struct gather {
	struct move_ctx	c;
	struct move_group g;
	struct waiting	w;
	const struct layout *layout;
	const struct plan *plan;
	const struct run_opts *opts;
	struct run_state *st;
	double		start;
	uint64_t	*move;		/* per member: its plan move */
	uint64_t	*unit;		/* ... and unit */
	uint8_t		*in_group;	/* per file: a move of it is in the group */
	blk64_t		*wait_blk;	/* per unit waiting for a group: a block
					 * it needs (move_ctx's), 0: none known */
	struct move_req	*req;
	struct runs_change *whole;
	blk64_t		blocks;		/* copy blocks of the members */
	double		seconds;	/* modeled time of the units it took */
	uint64_t	units;		/* units it took */
	int		switch_failed;
	struct unit_walk walk;		/* which units go, in which order */
	ext2fs_block_bitmap held;	/* what the run read or wrote (move.h) */
};

/*
 * Whether unit U may join the group: within its bounds (a group takes
 * one unit at least), no signal, within --max-units and --max-time (a
 * unit that goes ahead of the one unit_stop weighed is weighed too).
 * FORCE: the first unit left, which unit_stop let start, goes.
 */
/* Blocks unit U has left to copy from FROM. */
static blk64_t unit_blocks(const struct gather *x, uint64_t u, uint64_t from)
{
	uint64_t first, end, m;
	blk64_t b = 0;

	waiting_unit_moves(&x->w, u, &first, &end);
	for (m = from > first ? from : first; m < end; m++)
		b += x->plan->moves[m].copy_blocks;
	return b;
}

static int may_join(void *priv, uint64_t u, int force)
{
	const struct gather *x = priv;
	const struct run_opts *opts = x->opts;

	if (x->switch_failed)
		return 0;
	if (force && !x->g.n)
		return 1;
	if (x->g.n && (x->g.n >= MOVE_GROUP_MOVES ||
		       x->blocks + unit_blocks(x, u, 0) > MOVE_GROUP_BUFFERS * x->c.buf_blocks))
		return 0;
	if (opts->stop && *opts->stop)
		return 0;
	if (opts->max_units && x->st->units_done + x->units >= opts->max_units)
		return 0;
	if (opts->max_seconds < 0)
		return 1;
	return util_now_seconds() - x->start + (x->seconds + unit_seconds(opts, u)) *
	       x->st->estimate_rate <= opts->max_seconds;
}

/* Reserve unit U's moves from FROM into the group (unit_walk.h). */
static enum unit_take take_unit(void *priv, uint64_t u, uint64_t from,
				enum move_reserve mode)
{
	struct gather *x = priv;
	const struct plan *plan = x->plan;
	uint64_t first, end, m, n, k;
	size_t before = x->g.n, used;
	enum move_wait waits = MOVE_WAIT_NONE;
	int switch_failed = 0;

	waiting_unit_moves(&x->w, u, &first, &end);
	if (from < first)
		from = first;
	/* A file's second move waits for its first one's switch. */
	for (m = from; m < end && m - from < MOVE_GROUP_MOVES - before; m++) {
		uint32_t f = plan->moves[m].file;

		if (x->in_group[f])
			break;
		x->in_group[f] = 1;
	}
	n = m - from;
	for (k = 0; k < n; k++)
		x->in_group[plan->moves[from + k].file] = 0;
	x->wait_blk[u] = 0;
	if (mode == MOVE_RESERVE_WHOLE && n < end - from)
		return m - from == MOVE_GROUP_MOVES - before ? UNIT_FULL : UNIT_WAITS;
	if (!n)
		return UNIT_FULL;
	for (k = 0; k < n; k++) {
		const struct plan_move *mv = &plan->moves[from + k];
		struct move_req *q = &x->req[k];

		/* A whole move's one segment, put back together (struct plan_move). */
		x->whole[k].off = 0;
		x->whole[k].len = layout_stream_blocks(x->layout, &x->layout->files[mv->file]);
		x->whole[k].pblk = plan_move_whole_at(mv);
		q->ino = x->layout->files[mv->file].ino;
		/*
		 * A plan whose moves are all whole, or need no new mapping
		 * blocks, has no segs or meta array at all: no pointer into
		 * one then (arithmetic on NULL is undefined).
		 */
		q->changes = mv->whole ? &x->whole[k] : plan->segs + x->w.seg_at[from + k];
		q->nchanges = mv->whole ? 1 : plan_move_nsegs(mv);
		q->meta = mv->nmeta ? plan->meta + x->w.meta_at[from + k] : NULL;
		q->nmeta = mv->nmeta;
	}
	used = move_group_reserve(&x->c, &x->g, x->req, n, mode, &waits, &switch_failed);
	if (switch_failed)
		x->switch_failed = 1;
	for (k = 0; k < used; k++) {
		x->move[before + k] = from + k;
		x->unit[before + k] = u;
		x->in_group[plan->moves[from + k].file] = 1;
		x->blocks += plan->moves[from + k].copy_blocks;
	}
	if (waits == MOVE_WAIT_GROUP)
		x->wait_blk[u] = x->c.wait_blk;
	if (!used)
		return waits == MOVE_WAIT_COMMIT ? UNIT_WAITS_COMMIT :
		       waits ? UNIT_WAITS : before ? UNIT_FULL : UNIT_NONE;
	x->units++;
	if (from == first)
		x->seconds += unit_seconds(x->opts, u);
	return from + used < end ? UNIT_PART : UNIT_TAKEN;
}

/*
 * Whether unit U, which waited for the moves before it, may go now as far
 * as the block it waited for says: free and unclaimed.  Trying it whole
 * reads its files' maps; on a tree whose files fill each other's places
 * a thousand units wait for blocks others still hold, group after group.
 */
static int ready(void *priv, uint64_t u)
{
	const struct gather *x = priv;
	blk64_t b = x->wait_blk[u];

	return !b || (!ext2fs_fast_test_block_bitmap2(x->c.fs->block_map, b) &&
		      !ext2fs_fast_test_block_bitmap2(x->c.claimed, b));
}

static void unmark(void *priv, int layer)
{
	waiting_unmark(&((struct gather *)priv)->w, layer);
}

static int conflicts(void *priv, uint64_t u)
{
	return waiting_conflicts(&((struct gather *)priv)->w, u, 0);
}

static void keep(void *priv, uint64_t u, int layer)
{
	waiting_mark(&((struct gather *)priv)->w, u, layer);
}

/* The commits made so far: a unit that waited for one is tried again after the next. */
static uint64_t commits_made(void *priv)
{
	const struct gather *x = priv;
	uint64_t commits, reuse;

	switch_counts(x->c.sw, &commits, &reuse);
	return commits;
}

static const struct unit_walk_ops walk_ops = {
	.may_join = may_join,
	.take = take_unit,
	.ready = ready,
	.unmark = unmark,
	.conflicts = conflicts,
	.keep = keep,
	.commits = commits_made,
};

/* The next group (unit_walk.h), its counts from nothing. */
static void gather_group(struct gather *x, int force)
{
	x->blocks = 0;
	x->seconds = 0;
	x->units = 0;
	unit_walk_gather(&x->walk, force);
}

errcode_t run_plan(ext2_filsys fs, struct switch_ctx *sw, struct layout *layout,
		   const struct plan *plan, const struct run_opts *opts,
		   struct run_state *st)
{
	struct gather x;
	uint8_t *failed_file = NULL;
	uint64_t *batch = NULL, nbatch = 0;	/* moves in the open batch */
	uint64_t nunits = opts->units ? opts->units->n : plan->nmoves;
	uint64_t i;
	double model_done = 0;		/* modeled seconds of the units done */
	errcode_t ret;

	memset(st, 0, sizeof(*st));
	memset(&x, 0, sizeof(x));
	x.layout = layout;
	x.plan = plan;
	x.opts = opts;
	x.st = st;
	x.start = util_now_seconds();
	st->results = calloc(plan->nmoves + 1, sizeof(*st->results));
	failed_file = calloc(layout->nfiles + 1, 1);
	x.in_group = calloc(layout->nfiles + 1, 1);
	batch = calloc(plan->nmoves + 1, sizeof(*batch));
	x.req = calloc(MOVE_GROUP_MOVES, sizeof(*x.req));
	x.whole = calloc(MOVE_GROUP_MOVES, sizeof(*x.whole));
	x.move = calloc(MOVE_GROUP_MOVES, sizeof(*x.move));
	x.unit = calloc(MOVE_GROUP_MOVES, sizeof(*x.unit));
	x.wait_blk = calloc(nunits + 1, sizeof(*x.wait_blk));
	ret = ENOMEM;
	if (!st->results || !failed_file || !x.in_group || !batch || !x.req ||
	    !x.whole || !x.move || !x.unit || !x.wait_blk)
		goto fail;
	ret = waiting_init(&x.w, fs, layout, plan, opts);
	if (!ret)
		ret = unit_walk_init(&x.walk, nunits, opts->units && opts->units->waiting,
				     &walk_ops, &x);
	if (ret)
		goto fail;
	ret = move_init(&x.c, fs, sw, opts->buffer_bytes);
	if (ret)
		goto fail;
	if (opts->verify) {
		ret = verify_open(fs, x.c.buf_blocks * fs->blocksize, &x.c.verify);
		if (ret) {
			move_fini(&x.c);
			goto fail;
		}
	}
	/* The plan's sources, and what the run has read of them (out of
	 * memory, only short gaps are read through). */
	if (opts->units && opts->units->sources &&
	    !ext2fs_allocate_block_bitmap(fs, "blocks the run read or wrote", &x.held)) {
		x.c.later = opts->units->sources;
		x.c.held = x.held;
	}
	x.c.progress = opts->progress;
	x.c.progress_priv = opts->progress_priv;
	for (i = 0; i < plan->nmoves; i++)
		x.c.total += plan->moves[i].copy_blocks;
	st->estimate_rate = 1;

	/* The units the limit leaves room for first (units_fit), as modeled. */
	if (opts->units && opts->units->horizon < nunits)
		x.walk.nunits = opts->units->horizon;
	for (;;) {
		uint64_t k;
		int stopped = 0;
		errcode_t cret;

		/* Those done with time left (a disk faster than the model):
		 * the rest, without read-ahead. */
		if (!unit_walk_left(&x.walk)) {
			if (x.walk.nunits >= nunits)
				break;
			x.walk.nunits = nunits;
		}

		/* Between two units: the place to stop. */
		if (!x.walk.has_cur &&
		    unit_stop(opts, st, unit_walk_next(&x.walk), x.start, model_done))
			break;
		if (x.c.progress && x.c.progress(x.c.progress_priv, E2F_PHASE_MOVE,
						 x.c.done, x.c.total)) {
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		/*
		 * The group: the unit in progress, the units that may go now,
		 * later ones; when all must wait for a commit, the commit,
		 * and at last the first waiting unit whatever it needs.
		 */
		gather_group(&x, 0);
		if (!x.g.n && !x.switch_failed && switch_batch_size(sw)) {
			if (move_commit_for_reuse(&x.c))
				x.switch_failed = 1;
			if (!x.switch_failed)
				gather_group(&x, 0);
		}
		if (!x.g.n && !x.switch_failed && unit_walk_left(&x.walk))
			gather_group(&x, 1);
		if (x.switch_failed) {
			/* A commit the group needed failed: stop here. */
			move_group_drop(&x.c, &x.g);
			st->switch_failed = 1;
			break;
		}
		if (!x.g.n) {
			ret = ENOMEM;
			break;
		}
		cret = move_group_copy(&x.c, &x.g);
		if (cret == E2F_ERR_CANCELLED) {
			/* Nothing of the group is switched: every file as it was. */
			move_group_drop(&x.c, &x.g);
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		if (cret) {
			/*
			 * The device failed a read, write or flush of the
			 * copies: nothing of the group is switched, and later
			 * moves, many needing this one, would only fail in
			 * turn with errors that hide the device's.  Stop.
			 */
			move_group_drop(&x.c, &x.g);
			st->device_error = cret;
			break;
		}
		/* The switches, in order, a first signal heeded between units. */
		for (k = 0; k < x.g.n; k++) {
			uint64_t m = x.move[k], u = x.unit[k], first, end;
			const struct plan_move *mv = &plan->moves[m];
			struct run_result *res = &st->results[m];
			struct move_member *mb = &x.g.mem[k];

			if (k && u != x.unit[k - 1] && opts->stop && *opts->stop) {
				stopped = 1;
				break;
			}
			res->err = mb->err;
			if (mb->active)
				res->err = move_group_switch(&x.c, &x.g, k);
			res->done = mb->st.switched;
			res->attempted = 1;
			if (mb->st.switched)
				batch[nbatch++] = m;
			nbatch = keep_open(batch, nbatch, sw);
			res->copied = mb->st.copied;
			res->written = mb->st.written;
			/* Progress counts planned blocks; keep it in step with the plan. */
			x.c.done = x.c.done - mb->st.written + mv->copy_blocks;
			waiting_unit_moves(&x.w, u, &first, &end);
			if (m + 1 == end) {
				st->units_done++;
				model_done += unit_seconds(opts, u);
			} else {
				x.walk.cur_next = m + 1;
			}
			if (mb->st.switch_failed) {
				/* The metadata writer refuses further work: stop here. */
				st->switch_failed = 1;
				if (!mb->st.switched) {
					st->failed++;
					st->files_failed++;
				}
				break;
			}
			if (res->err) {
				st->failed++;
				if (!failed_file[mv->file]) {
					failed_file[mv->file] = 1;
					st->files_failed++;
				}
			} else {
				st->done++;
			}
		}
		for (k = 0; k < x.g.n; k++)
			x.in_group[plan->moves[x.move[k]].file] = 0;
		if (!st->switch_failed && move_group_end(&x.c, &x.g))
			st->switch_failed = 1;
		if (st->switch_failed)
			break;
		if (stopped) {
			st->cancelled = 1;
			break;
		}
	}
	/* What is left in the batch is made durable now (a stop, the end). */
	if (!st->switch_failed && switch_commit(sw))
		st->switch_failed = 1;
	if (st->switch_failed)
		batch_failed(st, layout, plan, batch,
			     keep_open(batch, nbatch, sw), failed_file);
	switch_counts(sw, &st->commits, &st->reuse_commits);
	st->reuse_commits += x.c.reuse_commits;
	st->logged_blocks = switch_logged_blocks(sw);
	st->copied = x.c.copied;
	st->written = x.c.written;
	st->seconds = util_now_seconds() - x.start;
	move_group_drop(&x.c, &x.g);
	move_group_free(&x.g);
	move_fini(&x.c);
	if (x.held)
		ext2fs_free_block_bitmap(x.held);
fail:
	unit_walk_fini(&x.walk);
	waiting_fini(&x.w);
	free(failed_file);
	free(x.in_group);
	free(batch);
	free(x.req);
	free(x.whole);
	free(x.move);
	free(x.unit);
	free(x.wait_blk);
	return ret;
}

void run_free(struct run_state *st)
{
	free(st->results);
	memset(st, 0, sizeof(*st));
}
