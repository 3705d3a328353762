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
 * The modeled time of the moves is iomodel.c's: the mover's groups,
 * reads in the disk's order, flushes and commits, on the disk the read
 * model describes (e2defrag's disk-model options); a unit's is that of
 * its moves.  A run measures its own rate as it goes (execute.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "fmap.h"
#include "iomodel.h"
#include "units.h"

/* The files' runs as the plan leaves them move after move. */
struct sim {
	const struct layout *layout;
	const struct readmodel *model;
	unsigned bs;
	struct layout_piece **runs;	/* per file, NULL: as in the layout */
	size_t *nruns;
	struct io_move *moves;		/* each move's copies, for iomodel.c */
	struct io_copy *copies;
	uint64_t ncopies, copies_cap;
};

/*
 * The copies that take FROM (N runs) to TO (NTO runs), the same stream:
 * each block whose place changes, merged into runs, as move MV's.
 */
static errcode_t sim_copies(struct sim *s, struct io_move *mv,
			    const struct layout_piece *from, size_t n,
			    const struct layout_piece *to, size_t nto)
{
	size_t a = 0, b = 0;
	blk64_t ao = 0, bo = 0;

	mv->copy_at = s->ncopies;
	mv->ncopies = 0;
	while (a < n && b < nto) {
		blk64_t len = from[a].len - ao < to[b].len - bo ?
			      from[a].len - ao : to[b].len - bo;
		blk64_t src = from[a].start + ao, dst = to[b].start + bo;
		struct io_copy *last = mv->ncopies ? &s->copies[s->ncopies - 1] : NULL;

		if (src != dst) {
			if (last && last->src + last->len == src &&
			    last->dst + last->len == dst) {
				last->len += len;
			} else {
				if (util_grow(&s->copies, &s->copies_cap,
					      s->ncopies + 1, sizeof(*s->copies)))
					return ENOMEM;
				s->copies[s->ncopies].src = src;
				s->copies[s->ncopies].dst = dst;
				s->copies[s->ncopies].len = len;
				s->ncopies++;
				mv->ncopies++;
			}
		}
		ao += len;
		bo += len;
		if (ao == from[a].len) {
			a++;
			ao = 0;
		}
		if (bo == to[b].len) {
			b++;
			bo = 0;
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
 * Apply move MV (segments SEGS) to its file, its copies into IO:
 * *DPIECES and *DREAD, how the filesystem's pieces and modeled read
 * time change.
 */
static errcode_t sim_move(struct sim *s, const struct plan_move *mv,
			  const struct runs_change *segs, struct io_move *io,
			  int64_t *dpieces, double *dread)
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
	io->file = f;
	if (switch_inode_block(s->layout->fs, s->layout->files[f].ino, &io->itable))
		io->itable = 0;
	io->copy_at = s->ncopies;
	io->ncopies = 0;
	ret = sim_runs(s, f);
	if (ret)
		return ret;
	runs_cost(s, s->runs[f], s->nruns[f], &p0, &j0);
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
	ret = sim_copies(s, io, s->runs[f], s->nruns[f], to, nto);
	if (ret) {
		free(to);
		return ret;
	}
	free(s->runs[f]);
	s->runs[f] = to;
	s->nruns[f] = nto;
	*dpieces = (int64_t)p1 - (int64_t)p0;
	*dread = j1 - j0;
	return 0;
}

static void sim_free(struct sim *s, uint64_t nfiles)
{
	uint64_t i;

	for (i = 0; s->runs && i < nfiles; i++)
		free(s->runs[i]);
	free(s->runs);
	free(s->nruns);
	free(s->moves);
	free(s->copies);
}

errcode_t units_make(const struct layout *layout, const struct plan *plan,
		     const struct readmodel *model, size_t buffer_bytes,
		     const struct switch_log_limits *log, struct units *u)
{
	struct sim s;
	uint64_t i, k, seg = 0;
	int64_t pieces = 0, pieces_at = 0, dp;	/* relative to the start */
	double read = 0, read_at = 0, dr, *seconds = NULL, *plan_order = NULL;
	double waiting, ordered;
	errcode_t ret = 0;

	memset(u, 0, sizeof(*u));
	memset(&s, 0, sizeof(s));
	if (!plan->nmoves)
		return 0;
	s.layout = layout;
	s.model = model;
	s.bs = layout->fs->blocksize;
	s.runs = calloc(layout->nfiles + 1, sizeof(*s.runs));
	s.nruns = calloc(layout->nfiles + 1, sizeof(*s.nruns));
	s.moves = calloc(plan->nmoves, sizeof(*s.moves));
	seconds = calloc(plan->nmoves, sizeof(*seconds));
	plan_order = calloc(plan->nmoves, sizeof(*plan_order));
	u->end = calloc(plan->nmoves, sizeof(*u->end));
	u->seconds = calloc(plan->nmoves, sizeof(*u->seconds));
	u->gain = calloc(plan->nmoves, sizeof(*u->gain));
	if (!s.runs || !s.nruns || !s.moves || !seconds || !plan_order || !u->end ||
	    !u->seconds || !u->gain) {
		ret = ENOMEM;
		goto out;
	}
	/* The units: where the filesystem is no worse than at the start
	 * of each (a hair of rounding allowed), and the plan's end. */
	for (i = 0; i < plan->nmoves; seg += plan_move_nsegs(&plan->moves[i]), i++) {
		const struct plan_move *mv = &plan->moves[i];

		ret = sim_move(&s, mv, plan->segs ? plan->segs + seg : NULL,
			       &s.moves[i], &dp, &dr);
		if (ret)
			goto out;
		pieces += dp;
		read += dr;
		if (i + 1 < plan->nmoves &&
		    (pieces > pieces_at || read > read_at + 1e-9))
			continue;
		u->gain[u->n] = read_at - read;
		pieces_at = pieces;
		read_at = read;
		u->end[u->n++] = i + 1;
	}
	/*
	 * Their time: their moves' on the modeled disk, in the order the
	 * mover will take.  Units that wait for a commit while later ones go
	 * ahead save commits where files slide into blocks others left, but
	 * read the waiting ones in a pass of their own: the faster of the two
	 * orders on the model is the one taken.
	 */
	ret = ext2fs_allocate_block_bitmap(layout->fs, "blocks the plan reads", &u->sources);
	if (ret)
		goto out;
	for (i = 0; i < s.ncopies; i++)
		ext2fs_mark_block_bitmap_range2(u->sources, s.copies[i].src, s.copies[i].len);
	ret = iomodel_moves(layout->fs, model, buffer_bytes, log, s.moves,
			    plan->nmoves, s.copies, u->sources, u->end, u->n, 1, seconds);
	if (!ret)
		ret = iomodel_moves(layout->fs, model, buffer_bytes, log, s.moves,
				    plan->nmoves, s.copies, u->sources, u->end, u->n, 0,
				    plan_order);
	if (ret)
		goto out;
	/* Kept for units_fit: the copies and moves, in the moves' order. */
	u->copies = s.copies;
	s.copies = NULL;
	u->io = s.moves;
	s.moves = NULL;
	u->nio = plan->nmoves;
	u->horizon = u->n;
	for (i = 0, waiting = 0, ordered = 0; i < plan->nmoves; i++) {
		waiting += seconds[i];
		ordered += plan_order[i];
	}
	u->waiting = waiting < ordered;
	if (!u->waiting)
		memcpy(seconds, plan_order, plan->nmoves * sizeof(*seconds));
	for (k = 0, i = 0; k < u->n; k++) {
		for (; i < u->end[k]; i++)
			u->seconds[k] += seconds[i];
		u->total_seconds += u->seconds[k];
		if (u->seconds[k] > u->longest_seconds) {
			u->longest_seconds = u->seconds[k];
			u->longest = k;
		}
	}
out:
	sim_free(&s, layout->nfiles);
	free(seconds);
	free(plan_order);
	if (ret)
		units_free(u);
	return ret;
}

uint64_t units_within(const struct units *u, const struct units_limit *limit,
		      double *saved)
{
	double t = 0;
	uint64_t k;

	*saved = 0;
	for (k = 0; k < u->n; k++) {
		if ((limit->units && k >= limit->units) || k >= u->horizon)
			break;
		/* A unit starts only if its estimate fits (execute.c). */
		if (limit->seconds >= 0 && t + u->seconds[k] > limit->seconds)
			break;
		t += u->seconds[k];
		*saved += u->gain[k];
	}
	return k;
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
	free(u->gain);
	if (u->sources)
		ext2fs_free_block_bitmap(u->sources);
	free(u->copies);
	free(u->io);
	memset(u, 0, sizeof(*u));
}

/* Only the first K units' sources in U->sources (copies go in move order). */
static void sources_within(struct units *u, uint64_t k)
{
	const struct io_move *last = k ? &u->io[u->end[k - 1] - 1] : NULL;
	uint64_t i;

	ext2fs_clear_block_bitmap(u->sources);
	for (i = 0; last && i < last->copy_at + last->ncopies; i++)
		ext2fs_mark_block_bitmap_range2(u->sources, u->copies[i].src, u->copies[i].len);
}

/*
 * The run that stops after unit K, modeled into SECONDS (per move) and
 * U->seconds[0, K): its sources the only ones read ahead.  *TOTAL: its
 * seconds.
 */
static errcode_t model_cut(const struct units_model *m, struct units *u, uint64_t k,
			   double *seconds, double *total)
{
	uint64_t i, j;
	errcode_t ret;

	*total = 0;
	sources_within(u, k);
	if (!k)
		return 0;
	ret = iomodel_moves(m->layout->fs, m->model, m->buffer_bytes, &m->log, u->io,
			    u->end[k - 1], u->copies, u->sources, u->end, k, u->waiting,
			    seconds);
	if (ret)
		return ret;
	for (j = 0, i = 0; j < k; j++) {
		for (u->seconds[j] = 0; i < u->end[j]; i++)
			u->seconds[j] += seconds[i];
		*total += u->seconds[j];
	}
	return 0;
}

errcode_t units_fit(const struct units_model *m, struct units *u,
		    const struct units_limit *limit, double *saved)
{
	double dummy, total, next = 0, *seconds, *fit = NULL, *plan = NULL;
	uint64_t lo, hi, mid, k;
	errcode_t ret = 0;

	if (!saved)
		saved = &dummy;
	if (u->fitted) {
		units_within(u, limit, saved);
		return 0;
	}
	u->fitted = 1;
	hi = units_within(u, limit, saved);
	if (!u->sources || !u->io || hi >= u->n)
		return 0;
	seconds = calloc(u->nio, sizeof(*seconds));
	fit = calloc(u->n, sizeof(*fit));
	plan = malloc(u->n * sizeof(*plan));
	if (!seconds || !fit || !plan) {
		ret = ENOMEM;
		goto out;
	}
	memcpy(plan, u->seconds, u->n * sizeof(*plan));
	/*
	 * The most units whose cut run fits: no more than the whole plan's
	 * model lets fit (the cut run reads a sparser sweep and ends with
	 * the commit and checkpoint the plan's model charged later units),
	 * found by halving, each try modeled (a run over K units costs its
	 * K's: the tries cost some two whole models).  Without a time limit,
	 * the number of units is the cut.
	 */
	lo = limit->seconds < 0 ? hi : 0;
	if (lo) {
		ret = model_cut(m, u, lo, seconds, &total);
		if (ret)
			goto out;
		memcpy(fit, u->seconds, lo * sizeof(*fit));
	}
	while (lo < hi) {
		mid = hi - (hi - lo) / 2;
		ret = model_cut(m, u, mid, seconds, &total);
		if (ret)
			goto out;
		if (total <= limit->seconds) {
			lo = mid;
			memcpy(fit, u->seconds, mid * sizeof(*fit));
		} else {
			hi = mid - 1;
		}
	}
	k = lo;
	/*
	 * The unit after them as the last of a run that gets to it: what the
	 * mover weighs before it (a disk faster than the model may get
	 * there), and what a run stopped before it names.
	 */
	if (limit->seconds >= 0 && k < u->n) {
		ret = model_cut(m, u, k + 1, seconds, &total);
		if (ret)
			goto out;
		next = u->seconds[k];
	}
	/* The cut run's sources, and its units' seconds; those past the
	 * next keep the plan's (the mover gets to them only where the disk
	 * proves faster than the model). */
	sources_within(u, k);
	memcpy(u->seconds, plan, u->n * sizeof(*plan));
	memcpy(u->seconds, fit, k * sizeof(*fit));
	if (limit->seconds >= 0 && k < u->n)
		u->seconds[k] = next;
	u->horizon = k;
	units_within(u, limit, saved);
out:
	free(seconds);
	free(fit);
	free(plan);
	return ret;
}

double units_plan_seconds(const struct plan *plan, void *priv, double *longest)
{
	const struct units_model *m = priv;
	struct units u;
	double seconds;

	if (units_make(m->layout, plan, m->model, m->buffer_bytes, &m->log, &u))
		return -1;
	seconds = u.total_seconds;
	*longest = u.longest_seconds;
	units_free(&u);
	return seconds;
}
