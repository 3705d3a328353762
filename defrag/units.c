/*
 * units.c --- the plan cut into units, and their modeled time.
 *
 * A stop (--max-time, --max-units, a signal) falls only between units.
 * A unit ends after a move when the filesystem, as the plan leaves it
 * there, is no worse than where the unit began: its total pieces and its
 * modeled read time (the files' runs are followed move after move; a
 * file's read time changes only by its jumps, its transfer stays).  The
 * plan's order puts a staging step (files pushed aside, a file's own
 * blocks parked in holes) before the moves it makes room for: they make
 * things worse until those moves are done, so the step and those moves
 * are one unit, and a stop never leaves the disk worse.  The interleave
 * sets are not followed here: tests/cli/defrag-units.sh checks them,
 * with the pieces and read time, against debugfs.
 *
 * The modeled time of a move, on the disk the read model describes
 * (e2defrag's disk-model options): its data read and written at the
 * transfer rate, with the jumps between the pieces it reads from and
 * writes to, a seek from where the last move's reads ended to its source
 * and one from where the last move's writes ended to its destination
 * (the seek model's, by distance: moves into consecutive blocks go out
 * as one write at the commit); each commit adds three flushes, an
 * average seek and a rotation each: once per BUFFER_BYTES of data, and
 * before a move into blocks a move of the open batch released (the run's
 * group commit, writer.h).  A run measures its own rate as it goes
 * (execute.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fmap.h"
#include "units.h"

/*
 * MV's modeled time: its data read (the transfer, and the jumps between
 * the file's pieces as they are, in the share the move copies: reading an
 * interleaved file crosses its partners' blocks) and written (the same
 * for the pieces it ends in), and a seek to each side.  JUMPS_FROM, JUMPS_TO: the jumps of the file's whole
 * stream before and after.
 */
static double move_seconds(const struct readmodel *m, unsigned bs,
			   const struct plan_move *mv, blk64_t stream_blocks,
			   double jumps_from, double jumps_to)
{
	double bytes = (double)mv->copy_blocks * bs;
	double share = stream_blocks ? (double)mv->copy_blocks / stream_blocks : 1;

	if (share > 1)
		share = 1;
	return 2 * readmodel_transfer_seconds(m, bytes) +
	       share * (jumps_from + jumps_to);
}

/* A commit's three flushes, each a seek and a rotation. */
static double commit_seconds(const struct readmodel *m)
{
	double rotation = m->rpm > 0 ? 60.0 / m->rpm : 0;

	return 3 * (readmodel_jump_seconds(m, m->disk_bytes / 3) + rotation);
}

/* The files' runs as the plan leaves them move after move. */
struct sim {
	const struct layout *layout;
	const struct readmodel *model;
	unsigned bs;
	struct layout_piece **runs;	/* per file, NULL: as in the layout */
	size_t *nruns;
	/* The batch the run would have open (group commit): the blocks its
	 * moves released, and its data so far. */
	struct layout_piece *released;
	uint64_t nreleased, released_cap;
	double batch_bytes;
	/* Where the last move's reads and writes ended: the next seeks
	 * from there (writes go out in block order at each commit, so
	 * moves into consecutive blocks seek once). */
	blk64_t read_at, write_at;
	double seeks;		/* of the move at hand */
};

/* Add what of FROM (N) is not in TO (NTO) to the batch's releases. */
static errcode_t sim_release(struct sim *s, const struct layout_piece *from,
			     size_t n, const struct layout_piece *to, size_t nto)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		blk64_t a = from[i].start, end = from[i].start + from[i].len;

		/* The part before each run of TO that cuts it (runs of one
		 * file never overlap one another: at most a few cuts). */
		while (a < end) {
			blk64_t cut = end, resume = end;

			for (k = 0; k < nto; k++) {
				blk64_t ts = to[k].start, te = to[k].start + to[k].len;

				if (te <= a || ts >= end)
					continue;
				if (ts <= a) {
					cut = a;
					resume = te;
					break;
				}
				if (ts < cut) {
					cut = ts;
					resume = te;
				}
			}
			if (cut > a) {
				if (util_grow(&s->released, &s->released_cap,
					      s->nreleased + 1, sizeof(*s->released)))
					return ENOMEM;
				s->released[s->nreleased].start = a;
				s->released[s->nreleased].len = cut - a;
				s->nreleased++;
			}
			a = resume > a ? resume : a + 1;
		}
	}
	return 0;
}

/* Pieces (runs not adjacent) and the jumps' read time of RUNS. */
static void runs_cost(const struct sim *s, const struct layout_piece *runs,
		      size_t n, uint64_t *pieces, double *jumps)
{
	size_t i;

	*pieces = n ? 1 : 0;
	*jumps = 0;
	for (i = 1; i < n; i++) {
		blk64_t prev_end = runs[i - 1].start + runs[i - 1].len;

		if (runs[i].start == prev_end)
			continue;
		(*pieces)++;
		*jumps += readmodel_jump_seconds(s->model, ((double)runs[i].start -
					(double)prev_end) * s->bs);
	}
}

/* File F's runs now, into S (from the layout the first time). */
static errcode_t sim_runs(struct sim *s, uint32_t f)
{
	const struct layout_file *lf = &s->layout->files[f];
	uint32_t i, n;

	if (s->runs[f])
		return 0;
	n = layout_file_pieces(s->layout, lf);
	s->runs[f] = calloc(n + 1, sizeof(**s->runs));
	if (!s->runs[f])
		return ENOMEM;
	for (i = 0; i < n; i++)
		s->runs[f][i] = layout_file_piece(s->layout, lf, i);
	s->nruns[f] = n;
	return 0;
}

/*
 * Apply move MV (segments SEGS) to its file: *DPIECES and *DREAD, how
 * the filesystem's pieces and modeled read time change.
 */
static errcode_t sim_move(struct sim *s, const struct plan_move *mv,
			  const struct runs_change *segs, int64_t *dpieces,
			  double *dread, double *jumps_from, double *jumps_to,
			  int *reuse)
{
	uint32_t f = mv->file;
	struct layout_piece *to = NULL;
	size_t nto = 0;
	uint64_t p0, p1;
	double j0, j1;
	int fits = 0;
	errcode_t ret;

	*dpieces = 0;
	*dread = 0;
	*reuse = 0;
	s->seeks = 0;
	ret = sim_runs(s, f);
	if (ret)
		return ret;
	runs_cost(s, s->runs[f], s->nruns[f], &p0, &j0);
	*jumps_from = *jumps_to = j0;
	if (mv->whole) {
		to = calloc(1, sizeof(*to));
		if (!to)
			return ENOMEM;
		to->start = plan_move_whole_at(mv);
		to->len = layout_stream_blocks(s->layout, &s->layout->files[f]);
		nto = 1;
	} else {
		ret = runs_apply(s->runs[f], s->nruns[f], segs,
				 plan_move_nsegs(mv), &to, &nto, &fits);
		if (ret)
			return ret;
		if (!fits) {	/* not for the model to judge: as it was */
			free(to);
			return 0;
		}
	}
	runs_cost(s, to, nto, &p1, &j1);
	if (s->nruns[f] && nto) {
		const struct layout_piece *a = &s->runs[f][0], *b = &to[0];

		s->seeks = readmodel_jump_seconds(s->model, ((double)a->start -
						  (double)s->read_at) * s->bs) +
			   readmodel_jump_seconds(s->model, ((double)b->start -
						  (double)s->write_at) * s->bs);
		s->read_at = s->runs[f][s->nruns[f] - 1].start +
			     s->runs[f][s->nruns[f] - 1].len;
		s->write_at = to[nto - 1].start + to[nto - 1].len;
	}
	/* Into blocks the open batch released: the run commits first. */
	*reuse = layout_pieces_overlap(to, nto, s->released, s->nreleased);
	if (*reuse)
		s->nreleased = 0;
	ret = sim_release(s, s->runs[f], s->nruns[f], to, nto);
	if (ret) {
		free(to);
		return ret;
	}
	free(s->runs[f]);
	s->runs[f] = to;
	s->nruns[f] = nto;
	*dpieces = (int64_t)p1 - (int64_t)p0;
	*dread = j1 - j0;
	*jumps_to = j1;
	return 0;
}

static void sim_free(struct sim *s, uint64_t nfiles)
{
	uint64_t i;

	for (i = 0; s->runs && i < nfiles; i++)
		free(s->runs[i]);
	free(s->runs);
	free(s->nruns);
	free(s->released);
}

errcode_t units_make(const struct layout *layout, const struct plan *plan,
		     const struct readmodel *model, size_t buffer_bytes,
		     struct units *u)
{
	struct sim s;
	uint64_t i, seg = 0;
	int64_t pieces = 0, pieces_at = 0, dp;	/* relative to the start */
	double read = 0, read_at = 0, dr, t = 0, jf, jt;
	int reuse;
	errcode_t ret = 0;

	memset(u, 0, sizeof(*u));
	memset(&s, 0, sizeof(s));
	if (!buffer_bytes)
		buffer_bytes = 32u << 20;
	if (!plan->nmoves)
		return 0;
	s.layout = layout;
	s.model = model;
	s.bs = layout->fs->blocksize;
	s.runs = calloc(layout->nfiles + 1, sizeof(*s.runs));
	s.nruns = calloc(layout->nfiles + 1, sizeof(*s.nruns));
	u->end = calloc(plan->nmoves, sizeof(*u->end));
	u->seconds = calloc(plan->nmoves, sizeof(*u->seconds));
	if (!s.runs || !s.nruns || !u->end || !u->seconds) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < plan->nmoves; seg += plan_move_nsegs(&plan->moves[i]), i++) {
		const struct plan_move *mv = &plan->moves[i];

		ret = sim_move(&s, mv, plan->segs ? plan->segs + seg : NULL,
			       &dp, &dr, &jf, &jt, &reuse);
		if (ret)
			goto out;
		/* The commits: one before a move into blocks the batch
		 * released, one when its data reaches BUFFER_BYTES. */
		if (reuse) {
			t += commit_seconds(model);
			s.batch_bytes = 0;
		}
		s.batch_bytes += (double)mv->copy_blocks * s.bs;
		if (s.batch_bytes >= buffer_bytes) {
			t += commit_seconds(model);
			s.batch_bytes = 0;
			s.nreleased = 0;
		}
		pieces += dp;
		read += dr;
		t += move_seconds(model, s.bs, mv,
				  layout_stream_blocks(layout, &layout->files[mv->file]),
				  jf, jt) + s.seeks;
		/* A unit ends where the filesystem is no worse than at its
		 * start (a hair of rounding allowed), and at the plan's end. */
		if (i + 1 < plan->nmoves &&
		    (pieces > pieces_at || read > read_at + 1e-9))
			continue;
		if (i + 1 == plan->nmoves && s.batch_bytes > 0)
			t += commit_seconds(model);	/* the last */
		pieces_at = pieces;
		read_at = read;
		u->end[u->n] = i + 1;
		u->seconds[u->n] = t;
		u->total_seconds += t;
		if (t > u->longest_seconds) {
			u->longest_seconds = t;
			u->longest = u->n;
		}
		u->n++;
		t = 0;
	}
out:
	sim_free(&s, layout->nfiles);
	if (ret)
		units_free(u);
	return ret;
}

uint64_t units_of_move(const struct units *u, uint64_t i)
{
	uint64_t lo = 0, hi = u->n;

	/* The first unit whose end is past I. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (u->end[mid] > i)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void units_free(struct units *u)
{
	free(u->end);
	free(u->seconds);
	memset(u, 0, sizeof(*u));
}
