/*
 * execute.c --- carry out a plan: its moves in order, each one crash-safe
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
 * MOVE_GROUP_MOVES moves and MOVE_GROUP_BUFFERS buffers of data, their data read
 * in one pass in the disk's order before they are switched in order.  A
 * first signal during a group stops at the end of the unit being
 * switched; the copies of the units after it are left unused in free
 * blocks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "units.h"
#include "verify.h"
#include "writer.h"

/* Where unit K ends (a move of its own when there are no units). */
static uint64_t unit_end(const struct run_opts *opts, uint64_t k, uint64_t nmoves)
{
	if (!opts->units)
		return k + 1 < nmoves ? k + 1 : nmoves;
	return k < opts->units->n ? opts->units->end[k] : nmoves;
}

/*
 * Before unit K: whether to stop here.  A signal, --max-units, or
 * --max-time when the unit's estimate does not fit what is left: its
 * modeled time times the rate this run measured so far (measured
 * seconds per modeled second of the units done; the model alone before
 * the first).
 */
static int unit_stop(const struct run_opts *opts, struct run_state *st,
		     uint64_t k, double start, const double *model_done)
{
	double elapsed = util_now_seconds() - start, est = 0;

	if (opts->stop && *opts->stop) {
		st->cancelled = 1;
		return 1;
	}
	if (opts->max_units && k >= opts->max_units) {
		st->timed_out = 1;
		st->unit_limit = 1;
		return 1;
	}
	if (opts->max_seconds < 0)
		return 0;
	if (*model_done > 0 && elapsed > 0)
		st->estimate_rate = elapsed / *model_done;
	if (opts->units && k < opts->units->n)
		est = opts->units->seconds[k] * st->estimate_rate;
	if (elapsed >= opts->max_seconds || elapsed + est > opts->max_seconds) {
		st->timed_out = 1;
		st->next_unit = k;
		st->next_unit_seconds = est;
		/* --max-time 0 asks for no move at all: nothing to say. */
		st->too_long = opts->max_seconds > 0 && est > opts->max_seconds;
		return 1;
	}
	return 0;
}

/*
 * Whether unit K may start with the group that started with unit K0:
 * no signal, within --max-units, and the group's estimate up to K's end
 * fits what is left of --max-time at the rate unit_stop used.
 */
static int unit_joins(const struct run_opts *opts, const struct run_state *st,
		      uint64_t k0, uint64_t k, double start)
{
	double est = 0;
	uint64_t u;

	if (opts->stop && *opts->stop)
		return 0;
	if (opts->max_units && k >= opts->max_units)
		return 0;
	if (opts->max_seconds < 0)
		return 1;
	if (opts->units)
		for (u = k0; u <= k && u < opts->units->n; u++)
			est += opts->units->seconds[u];
	return util_now_seconds() - start + est * st->estimate_rate <= opts->max_seconds;
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

/* A file's move already in the group: its next move waits for the switch. */
static uint64_t cut_repeats(const struct plan *plan, uint8_t *in_group,
			    uint64_t i, uint64_t end)
{
	uint64_t j;

	for (j = i; j < end; j++) {
		uint32_t f = plan->moves[j].file;

		if (in_group[f])
			break;
		in_group[f] = 1;
	}
	end = j;
	for (j = i; j < end; j++)
		in_group[plan->moves[j].file] = 0;
	return end;
}

/* The requests of moves [I, END): segs and meta from where move I's start. */
static void make_reqs(const struct layout *layout, const struct plan *plan,
		      uint64_t i, uint64_t end, uint64_t seg, uint64_t meta,
		      struct runs_change *whole, struct move_req *req)
{
	uint64_t j;

	for (j = i; j < end; j++) {
		const struct plan_move *mv = &plan->moves[j];
		struct move_req *q = &req[j - i];

		/* A whole move's one segment, put back together (struct plan_move). */
		whole[j - i].off = 0;
		whole[j - i].len = layout_stream_blocks(layout, &layout->files[mv->file]);
		whole[j - i].pblk = plan_move_whole_at(mv);
		q->ino = layout->files[mv->file].ino;
		/*
		 * A plan whose moves are all whole, or need no new mapping
		 * blocks, has no segs or meta array at all: no pointer into
		 * one then (arithmetic on NULL is undefined).
		 */
		q->changes = mv->whole ? &whole[j - i] : plan->segs + seg;
		q->nchanges = mv->whole ? 1 : plan_move_nsegs(mv);
		q->meta = mv->nmeta ? plan->meta + meta : NULL;
		q->nmeta = mv->nmeta;
		seg += plan_move_nsegs(mv);
		meta += mv->nmeta;
	}
}

errcode_t run_plan(ext2_filsys fs, struct switch_ctx *sw, struct layout *layout,
		   const struct plan *plan, const struct run_opts *opts,
		   struct run_state *st)
{
	struct move_ctx c;
	struct move_group g;
	uint8_t *failed_file = NULL, *in_group = NULL;
	uint64_t *batch = NULL, nbatch = 0;	/* moves in the open batch */
	struct move_req *req = NULL;
	struct runs_change *whole = NULL;
	uint64_t nunits = opts->units ? opts->units->n : plan->nmoves;
	uint64_t unit = 0;		/* the unit move i is in */
	int started = 0;		/* whether it has started */
	double model_done = 0;		/* modeled seconds of the units done */
	double start = util_now_seconds();
	uint64_t i = 0, seg = 0, meta = 0;	/* where move i's segs and meta start */
	errcode_t ret;

	memset(st, 0, sizeof(*st));
	memset(&g, 0, sizeof(g));
	st->results = calloc(plan->nmoves + 1, sizeof(*st->results));
	failed_file = calloc(layout->nfiles + 1, 1);
	in_group = calloc(layout->nfiles + 1, 1);
	batch = calloc(plan->nmoves + 1, sizeof(*batch));
	req = calloc(MOVE_GROUP_MOVES, sizeof(*req));
	whole = calloc(MOVE_GROUP_MOVES, sizeof(*whole));
	ret = ENOMEM;
	if (!st->results || !failed_file || !in_group || !batch || !req || !whole)
		goto fail;
	ret = move_init(&c, fs, sw, opts->buffer_bytes);
	if (ret)
		goto fail;
	if (opts->verify) {
		ret = verify_open(fs, c.buf_blocks * fs->blocksize, &c.verify);
		if (ret) {
			move_fini(&c);
			goto fail;
		}
	}
	c.progress = opts->progress;
	c.progress_priv = opts->progress_priv;
	for (i = 0; i < plan->nmoves; i++)
		c.total += plan->moves[i].copy_blocks;
	st->estimate_rate = 1;

	i = 0;
	while (i < plan->nmoves) {
		uint64_t end, u, k, used, blocks = 0, unit_at, unit_to;
		int stopped = 0, switch_failed = 0;
		errcode_t cret;

		st->next = i;
		if (!started) {
			/* Between two units: the place to stop. */
			if (st->units_done < unit)
				st->units_done = unit;
			if (unit_stop(opts, st, unit, start, &model_done))
				break;
			started = 1;
		}
		if (c.progress && c.progress(c.progress_priv, E2F_PHASE_MOVE,
					     c.done, c.total)) {
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		/* The group: the rest of this unit, and the units that may join. */
		end = unit_end(opts, unit, plan->nmoves);
		for (k = i; k < end; k++)
			blocks += plan->moves[k].copy_blocks;
		for (u = unit + 1; u < nunits && end < plan->nmoves; u++) {
			uint64_t uend = unit_end(opts, u, plan->nmoves), ub = 0;

			for (k = end; k < uend; k++)
				ub += plan->moves[k].copy_blocks;
			if (uend - i > MOVE_GROUP_MOVES ||
			    blocks + ub > MOVE_GROUP_BUFFERS * c.buf_blocks ||
			    !unit_joins(opts, st, unit, u, start))
				break;
			end = uend;
			blocks += ub;
		}
		if (end - i > MOVE_GROUP_MOVES)
			end = i + MOVE_GROUP_MOVES;
		end = cut_repeats(plan, in_group, i, end);
		make_reqs(layout, plan, i, end, seg, meta, whole, req);
		used = move_group_reserve(&c, &g, req, end - i, &switch_failed);
		if (switch_failed) {
			/* A commit the group needed failed: stop here. */
			move_group_drop(&c, &g);
			st->switch_failed = 1;
			break;
		}
		if (!used) {
			ret = ENOMEM;
			break;
		}
		cret = move_group_copy(&c, &g);
		if (cret == E2F_ERR_CANCELLED) {
			/* Nothing of the group is switched: every file as it was. */
			move_group_drop(&c, &g);
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		/* The switches, in order, a first signal heeded between units. */
		unit_at = unit;
		unit_to = unit_end(opts, unit, plan->nmoves);
		for (k = 0; k < used; k++) {
			uint64_t m = i + k;
			const struct plan_move *mv = &plan->moves[m];
			struct run_result *res = &st->results[m];
			struct move_member *mb = &g.mem[k];

			if (m == unit_to) {
				unit_at++;
				unit_to = unit_end(opts, unit_at, plan->nmoves);
				if (opts->stop && *opts->stop) {
					stopped = 1;
					break;
				}
			}
			res->err = mb->err;
			if (mb->active)
				res->err = move_group_switch(&c, &g, k);
			res->done = mb->st.switched;
			if (mb->st.switched)
				batch[nbatch++] = m;
			nbatch = keep_open(batch, nbatch, sw);
			res->copied = mb->st.copied;
			res->written = mb->st.written;
			/* Progress counts planned blocks; keep it in step with the plan. */
			c.done = c.done - mb->st.written + mv->copy_blocks;
			seg += plan_move_nsegs(mv);
			meta += mv->nmeta;
			st->next = m + 1;
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
		if (!st->switch_failed && move_group_end(&c, &g))
			st->switch_failed = 1;
		if (st->switch_failed)
			break;
		i = st->next;
		/* The units the group finished. */
		while (unit < nunits && unit_end(opts, unit, plan->nmoves) <= i) {
			if (opts->units)
				model_done += opts->units->seconds[unit];
			unit++;
			started = 0;
		}
		if (stopped) {
			st->units_done = unit;
			st->cancelled = 1;
			break;
		}
	}
	if (st->next == plan->nmoves && !st->abandoned)
		st->units_done = opts->units ? opts->units->n : plan->nmoves;
	/* What is left in the batch is made durable now (a stop, the end). */
	if (!st->switch_failed && switch_commit(sw))
		st->switch_failed = 1;
	if (st->switch_failed)
		batch_failed(st, layout, plan, batch,
			     keep_open(batch, nbatch, sw), failed_file);
	switch_counts(sw, &st->commits, &st->reuse_commits);
	st->reuse_commits += c.reuse_commits;
	st->copied = c.copied;
	st->written = c.written;
	st->seconds = util_now_seconds() - start;
	move_group_drop(&c, &g);
	move_group_free(&g);
	move_fini(&c);
fail:
	free(failed_file);
	free(in_group);
	free(batch);
	free(req);
	free(whole);
	return ret;
}

void run_free(struct run_state *st)
{
	free(st->results);
	memset(st, 0, sizeof(*st));
}
