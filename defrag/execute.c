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
		     uint64_t k, double start, double *model_done)
{
	double elapsed = util_now_seconds() - start, est = 0;

	if (opts->units && k > 0 && k <= opts->units->n)
		*model_done += opts->units->seconds[k - 1];
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

errcode_t run_plan(ext2_filsys fs, struct switch_ctx *sw, struct layout *layout,
		   const struct plan *plan, const struct run_opts *opts,
		   struct run_state *st)
{
	struct move_ctx c;
	uint8_t *failed_file = NULL;
	uint64_t *batch = NULL, nbatch = 0;	/* moves in the open batch */
	uint64_t unit = 0, unit_start = 0;	/* the next unit, where it starts */
	double model_done = 0;			/* modeled seconds of the units done */
	double start = util_now_seconds();
	uint64_t i, seg = 0, meta = 0;	/* where the move's segs and meta start */
	errcode_t ret;

	memset(st, 0, sizeof(*st));
	st->results = calloc(plan->nmoves + 1, sizeof(*st->results));
	failed_file = calloc(layout->nfiles + 1, 1);
	batch = calloc(plan->nmoves + 1, sizeof(*batch));
	if (!st->results || !failed_file || !batch) {
		free(failed_file);
		free(batch);
		return ENOMEM;
	}
	ret = move_init(&c, fs, sw, opts->buffer_bytes);
	if (ret) {
		free(failed_file);
		free(batch);
		return ret;
	}
	if (opts->verify) {
		ret = verify_open(fs, c.buf_blocks * fs->blocksize, &c.verify);
		if (ret) {
			move_fini(&c);
			free(failed_file);
			free(batch);
			return ret;
		}
	}
	c.progress = opts->progress;
	c.progress_priv = opts->progress_priv;
	for (i = 0; i < plan->nmoves; i++)
		c.total += plan->moves[i].copy_blocks;
	st->estimate_rate = 1;

	for (i = 0; i < plan->nmoves; seg += plan_move_nsegs(&plan->moves[i]),
		     meta += plan->moves[i].nmeta, i++) {
		const struct plan_move *mv = &plan->moves[i];
		struct run_result *res = &st->results[i];
		struct move_stats ms;
		/* A whole move's one segment, put back together (struct plan_move). */
		struct runs_change whole = {
			0, layout_stream_blocks(layout, &layout->files[mv->file]),
			plan_move_whole_at(mv)
		};

		st->next = i;
		if (i == unit_start) {
			/* Between two units: the place to stop. */
			if (unit && st->units_done < unit)
				st->units_done = unit;
			if (unit_stop(opts, st, unit, start, &model_done))
				break;
			unit_start = unit_end(opts, unit, plan->nmoves);
			unit++;
		}
		if (c.progress && c.progress(c.progress_priv, E2F_PHASE_MOVE,
					     c.done, c.total)) {
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		/*
		 * A plan whose moves are all whole, or need no new mapping
		 * blocks, has no segs or meta array at all: no pointer into
		 * one then (arithmetic on NULL is undefined).
		 */
		res->err = move_file(&c, layout->files[mv->file].ino,
				     mv->whole ? &whole : plan->segs + seg,
				     mv->whole ? 1 : plan_move_nsegs(mv),
				     mv->nmeta ? plan->meta + meta : NULL, mv->nmeta,
				     &ms);
		res->done = ms.switched;
		if (ms.switched)
			batch[nbatch++] = i;
		nbatch = keep_open(batch, nbatch, sw);
		res->copied = ms.copied;
		res->written = ms.written;
		/* Progress counts planned blocks; keep it in step with the plan. */
		c.done = c.done - ms.written + mv->copy_blocks;
		if (res->err == E2F_ERR_CANCELLED) {
			res->err = 0;
			st->cancelled = 1;
			st->abandoned = 1;
			break;
		}
		if (ms.switch_failed) {
			/* The metadata writer refuses further work: stop here. */
			st->switch_failed = 1;
			if (!ms.switched) {
				st->failed++;
				st->files_failed++;
			}
			st->next = i + 1;
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
		st->next = i + 1;
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
	move_fini(&c);
	free(failed_file);
	free(batch);
	return 0;
}

void run_free(struct run_state *st)
{
	free(st->results);
	memset(st, 0, sizeof(*st));
}
