/*
 * execute.c --- carry out a plan: its moves in order, each one crash-safe
 * (move.c), stopping cleanly when asked to or when the time is up.
 *
 * A failed move leaves its file as it was and does not stop the run: the
 * moves after it check for themselves that their blocks are free, so one
 * that depended on the failed one fails too, cleanly, and is reported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "move.h"
#include "verify.h"

errcode_t run_plan(ext2_filsys fs, struct switch_ctx *sw, struct layout *layout,
		   const struct plan *plan, const struct run_opts *opts,
		   struct run_state *st)
{
	struct move_ctx c;
	uint8_t *failed_file = NULL;
	double start = util_now_seconds();
	uint64_t i, seg = 0, meta = 0;	/* where the move's segs and meta start */
	errcode_t ret;

	memset(st, 0, sizeof(*st));
	st->results = calloc(plan->nmoves + 1, sizeof(*st->results));
	failed_file = calloc(layout->nfiles + 1, 1);
	if (!st->results || !failed_file) {
		free(failed_file);
		return ENOMEM;
	}
	ret = move_init(&c, fs, sw, opts->buffer_bytes);
	if (ret) {
		free(failed_file);
		return ret;
	}
	if (opts->verify) {
		ret = verify_open(fs, c.buf_blocks * fs->blocksize, &c.verify);
		if (ret) {
			move_fini(&c);
			free(failed_file);
			return ret;
		}
	}
	c.progress = opts->progress;
	c.progress_priv = opts->progress_priv;
	for (i = 0; i < plan->nmoves; i++)
		c.total += plan->moves[i].copy_blocks;

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
		if (opts->max_seconds >= 0 && util_now_seconds() - start >= opts->max_seconds) {
			st->timed_out = 1;
			break;
		}
		if (c.progress && c.progress(c.progress_priv, E2F_PHASE_MOVE,
					     c.done, c.total)) {
			st->cancelled = 1;
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
		res->copied = ms.copied;
		res->written = ms.written;
		/* Progress counts planned blocks; keep it in step with the plan. */
		c.done = c.done - ms.written + mv->copy_blocks;
		if (res->err == E2F_ERR_CANCELLED) {
			res->err = 0;
			st->cancelled = 1;
			break;
		}
		if (ms.switch_failed) {
			/* The metadata writer refuses further work: stop here. */
			st->switch_failed = 1;
			st->failed++;
			st->files_failed++;
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
	st->copied = c.copied;
	st->written = c.written;
	st->seconds = util_now_seconds() - start;
	move_fini(&c);
	free(failed_file);
	return 0;
}

void run_free(struct run_state *st)
{
	free(st->results);
	memset(st, 0, sizeof(*st));
}
