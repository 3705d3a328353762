/*
 * filestate.c --- the planner's picture of where each file is: its stream
 * and tree blocks now, its map, and recording a move (the changes to its
 * stream, checked against the space map and applied to it).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"
#include "lower_bound.h"
#include "radix_sort.h"

errcode_t planner_state(struct planner *p, uint32_t file, struct file_state **ret)
{
	const struct layout_file *lf = &p->layout->files[file];
	struct file_state *st = planner_state_if(p, file);
	uint32_t i = p->nstates;

	if (!st) {
		if (i % PSTATE_CHUNK == 0) {
			if (grow_n(&p->states, &p->states_cap, i / PSTATE_CHUNK + 1,
				   sizeof(*p->states)))
				return ENOMEM;
			p->states[i / PSTATE_CHUNK] =
				malloc(PSTATE_CHUNK * sizeof(**p->states));
			if (!p->states[i / PSTATE_CHUNK])
				return ENOMEM;
		}
		st = &p->states[i / PSTATE_CHUNK][i % PSTATE_CHUNK];
		memset(st, 0, sizeof(*st));
		st->nruns = layout_file_pieces(p->layout, lf);
		if (layout_file_pieces(p->layout, lf) == 1)
			st->one_start = layout_file_piece(p->layout, lf, 0).start;
		p->pf[file].st = ++p->nstates;
	}
	*ret = st;
	return 0;
}

errcode_t planner_more(struct planner *p, struct file_state *st,
		       struct file_state_more **ret)
{
	uint32_t i;

	if (!st->more) {
		if (p->more_free) {
			i = p->more_free - 1;
			p->more_free = p->more[i].contig;
		} else {
			if (grow_n(&p->more, &p->more_cap, (size_t)p->nmore + 1,
				   sizeof(*p->more)))
				return ENOMEM;
			i = p->nmore++;
		}
		memset(&p->more[i], 0, sizeof(p->more[i]));
		st->more = i + 1;
	}
	*ret = &p->more[st->more - 1];
	return 0;
}

void planner_more_release(struct planner *p, struct file_state *st)
{
	struct file_state_more *m = planner_more_if(p, st);

	if (!m || m->had_tree || m->fmap || st->contig16 == PSTATE_BIG16)
		return;
	m->contig = p->more_free;
	p->more_free = st->more;
	st->more = 0;
}

/* ST's extents figure when contiguous: in contig16, or its more when large. */
static errcode_t set_contig(struct planner *p, struct file_state *st, uint64_t n)
{
	struct file_state_more *m;

	if (n < PSTATE_BIG16) {
		st->contig16 = (uint16_t)n;
		planner_more_release(p, st);
		return 0;
	}
	if (planner_more(p, st, &m))
		return ENOMEM;
	m->contig = (uint32_t)n;
	st->contig16 = PSTATE_BIG16;
	return 0;
}

void planner_free_states(struct planner *p)
{
	uint32_t i;

	planner_run_offsets_forget(p);
	for (i = 0; i < p->nstates; i++) {
		struct file_state *st = &p->states[i / PSTATE_CHUNK][i % PSTATE_CHUNK];
		struct file_state_more *m = planner_more_if(p, st);

		if (st->own & FILE_STATE_OWN_RUNS)
			free(st->runs);
		if (m && m->own_meta)
			free(m->meta);
		if (m && m->fmap) {
			fmap_free(m->fmap);
			free(m->fmap);
		}
	}
	for (i = 0; p->states && i < (p->nstates + PSTATE_CHUNK - 1) / PSTATE_CHUNK; i++)
		free(p->states[i]);
	free(p->states);
	p->states = NULL;
	p->nstates = 0;
	free(p->more);
	p->more = NULL;
	p->nmore = p->more_free = 0;
	p->more_cap = 0;
}

const struct layout_piece *planner_runs(const struct planner *p, uint32_t file,
					uint32_t *n, struct layout_piece *sole)
{
	const struct file_state *st = planner_state_if(p, file);
	const struct layout_file *lf = &p->layout->files[file];

	if (!st) {
		*n = layout_file_pieces(p->layout, lf);
		if (layout_file_pieces(p->layout, lf) != 1)
			return p->layout->pieces + layout_file_where(lf);
		*sole = layout_file_piece(p->layout, lf, 0);
		return sole;
	}
	*n = st->nruns;
	if (st->own & FILE_STATE_OWN_RUNS)
		return st->runs;
	if (st->nruns != 1)
		return p->layout->pieces + layout_file_where(lf);
	/* One run is the whole stream. */
	sole->start = st->one_start;
	sole->len = layout_stream_blocks(p->layout, lf);
	return sole;
}

uint32_t planner_pieces_now(const struct planner *p, uint32_t file)
{
	struct layout_piece sole;
	uint32_t n;
	const struct layout_piece *runs = planner_runs(p, file, &n, &sole);

	return plan_pieces(runs, n);
}

double planner_read_now(const struct planner *p, uint32_t file)
{
	struct layout_piece sole;
	uint32_t n;
	const struct layout_piece *runs = planner_runs(p, file, &n, &sole);

	return plan_read_seconds(p->layout, runs, n);
}

const struct layout_piece *planner_meta(const struct planner *p, uint32_t file,
					uint32_t *n)
{
	const struct file_state_more *m = planner_more_if(p, planner_state_if(p, file));

	if (!m) {
		*n = 0;
		return p->tree_blocks;
	}
	*n = m->nmeta;
	return m->own_meta ? m->meta : p->tree_blocks + m->meta_off;
}

blk64_t planner_limit(const struct planner *p, uint32_t file)
{
	blk64_t end = ext2fs_blocks_count(p->fs->super);

	if (!(p->layout->files[file].flags & LAYOUT_F_EXTENTS) && end > (1ULL << 32))
		return 1ULL << 32;
	return end;
}

static int zone_starts_at_or_before(const void *zones, uint64_t i, const void *blk)
{
	return ((const struct layout_zone *)zones)[i].start <= *(const blk64_t *)blk;
}

int64_t planner_zone_of(const struct planner *p, blk64_t blk)
{
	const struct layout_zone *z = p->layout->zones;
	uint64_t i = lower_bound(0, p->layout->nzones, zone_starts_at_or_before,
				 z, &blk);

	/* The last zone starting at or before BLK, if BLK is inside it. */
	return i && blk < z[i - 1].start + z[i - 1].len ? (int64_t)i - 1 : -1;
}

/* Segments an edge looks past, at most: a bound on the work, not a policy. */
#define EDGE_LOOK	256

/* Whether OWNER's blocks are free or will be: GOING's, or a pending file's. */
static int will_be_free(const struct planner *p, uint32_t owner,
			const uint32_t *going, uint32_t ngoing)
{
	uint32_t f, k;

	if (owner == SM_FREE)
		return 1;
	if (owner < SM_FILE0)
		return 0;
	f = owner - SM_FILE0;
	for (k = 0; k < ngoing; k++)
		if (going[k] == f)
			return 1;
	return (p->pf[f].flags & (PF_PENDING | PF_UNMOVABLE)) == PF_PENDING;
}

/* Blocks free or to be freed that lie next to [START, END), before and after it. */
static void edge_reach(const struct planner *p, const struct spacemap *sm,
		       blk64_t start, blk64_t end, const uint32_t *going,
		       uint32_t ngoing, blk64_t *before, blk64_t *after)
{
	size_t i, k;

	*before = *after = 0;
	if (start > sm->first) {
		i = spacemap_find(sm, start - 1);
		for (k = 0; k < EDGE_LOOK; k++, i--) {
			const struct sm_seg gv = SM_SEG(sm, i), *g = &gv;

			if (!will_be_free(p, g->owner, going, ngoing))
				break;
			*before += (g->start + g->len < start ? g->start + g->len : start) -
				g->start;
			if (!i)
				break;
		}
	}
	if (end < sm->end) {
		i = spacemap_find(sm, end);
		for (k = 0; k < EDGE_LOOK && i < sm->n; k++, i++) {
			const struct sm_seg gv = SM_SEG(sm, i), *g = &gv;

			if (!will_be_free(p, g->owner, going, ngoing))
				break;
			*after += g->start + g->len - (g->start > end ? g->start : end);
		}
	}
}

blk64_t planner_edge(const struct planner *p, const struct spacemap *sm,
		     blk64_t start, blk64_t len, blk64_t need,
		     const uint32_t *going, uint32_t ngoing)
{
	blk64_t before, after;

	if (len <= need)
		return start;
	edge_reach(p, sm, start, start + len, going, ngoing, &before, &after);
	return before > after ? start + len - need : start;
}

/* LF's stream as the scan found it (SOLE holds it when in one piece). */
static const struct layout_piece *scanned_runs(const struct planner *p,
					       const struct layout_file *lf,
					       struct layout_piece *sole)
{
	if (layout_file_pieces(p->layout, lf) != 1)
		return p->layout->pieces + layout_file_where(lf);
	*sole = layout_file_piece(p->layout, lf, 0);
	return sole;
}

/*
 * FILE's map as it is on the disk.  A plain map (most small files) is its
 * stream as the scan found it: no inode and indirect blocks read again,
 * one by one, for the tens of thousands of files a plan looks at; other
 * maps are read (fmap_read).
 */
static errcode_t read_map(struct planner *p, uint32_t file, struct fmap *m)
{
	const struct layout_file *lf = &p->layout->files[file];

	if (lf->flags & LAYOUT_F_PLAIN_MAP) {
		struct layout_piece sole;
		const struct layout_piece *runs = scanned_runs(p, lf, &sole);

		if (!fmap_from_stream(p->fs, lf->ino, !!(lf->flags & LAYOUT_F_EXTENTS),
				      runs, layout_file_pieces(p->layout, lf), m))
			return 0;
	}
	return fmap_read(p->fs, lf->ino, m);
}

errcode_t planner_fmap(struct planner *p, uint32_t file, struct fmap **ret)
{
	struct file_state *f;
	struct file_state_more *more;
	struct fmap *m;
	size_t n;
	int fits;
	errcode_t err;

	err = planner_state(p, file, &f);
	if (err)
		return err;
	more = planner_more_if(p, f);
	if (more && more->fmap) {
		*ret = more->fmap;
		return 0;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	err = read_map(p, file, m);
	if (!err && m->stream_blocks != layout_stream_blocks(p->layout, &p->layout->files[file]))
		err = PLAN_ERR_CHANGED;
	if (!err && m->extents) {
		struct layout_piece one = { p->fs->super->s_first_data_block,
					    m->stream_blocks };
		struct fmap_target t = { &one, 1 };

		err = fmap_build_extents(m, &t, NULL, &n, &fits);
		if (!err && !fits)
			err = PLAN_ERR_BUG;	/* one run as long as its stream */
		if (!err)
			err = set_contig(p, f, n);
	}
	if (!err)
		err = planner_more(p, f, &more);
	if (err) {
		fmap_free(m);
		free(m);
		return err;
	}
	/* The planner keeps many maps and needs only the flags of the inode. */
	free(m->inode);
	m->inode = NULL;
	more->fmap = m;
	f->own |= FILE_STATE_MAP_OK;
	if (m->extents)
		f->own |= FILE_STATE_EXTENTS;
	else
		f->own &= ~FILE_STATE_EXTENTS;
	*ret = m;
	return 0;
}

errcode_t planner_map_figures(struct planner *p, uint32_t file, struct fmap **m)
{
	const struct layout_file *lf = &p->layout->files[file];
	struct file_state *st = planner_state_if(p, file);
	struct layout_piece sole;
	const struct layout_piece *runs;
	struct fmap *mine;
	blk64_t total;
	errcode_t err;

	if (!m)
		m = &mine;
	*m = NULL;
	if (st && (st->own & FILE_STATE_MAP_OK)) {
		const struct file_state_more *more = planner_more_if(p, st);

		if (m == &mine || (more && more->fmap)) {
			*m = more ? more->fmap : NULL;
			return 0;
		}
	}
	if ((lf->flags & (LAYOUT_F_PLAIN_MAP | LAYOUT_F_EXTENTS)) != LAYOUT_F_PLAIN_MAP)
		return planner_fmap(p, file, m);
	runs = scanned_runs(p, lf, &sole);
	/* What read_map and planner_fmap would find and check, short of the map. */
	if (!fmap_stream_plain(p->fs, runs, layout_file_pieces(p->layout, lf), &total) ||
	    total != layout_stream_blocks(p->layout, lf))
		return planner_fmap(p, file, m);
	err = planner_state(p, file, &st);
	if (err)
		return err;
	st->own |= FILE_STATE_MAP_OK;
	st->own &= ~FILE_STATE_EXTENTS;
	return 0;
}

static int cmp_sm_seg(const void *a, const void *b)
{
	const struct sm_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * A move's space-map changes by start, equal starts kept in order: a
 * move of a large part of a fragmented file makes thousands, where
 * glibc's merge sort maps and unmaps a scratch array for each and calls
 * through a pointer per comparison; lib/radix_sort.h is as stable.
 */
static void sort_changes(struct sm_seg *v, size_t n)
{
	blk64_t max = 0;
	size_t i;

	if (n > 256) {
		for (i = 0; i < n; i++)
			if (v[i].start > max)
				max = v[i].start;
		if (!radix_sort_by_start(v, n, sizeof(*v), offsetof(struct sm_seg, start),
					 max))
			return;
	}
	sort_n(v, n, sizeof(*v), cmp_sm_seg);
}

/*
 * What a move does to the space map: the stretches where OLD and NEW
 * differ are released and gained, all old tree blocks released and the
 * new ones gained.  Every gained block must be free now: *FITS 0 when
 * one is not, or OLD and NEW differ in length, or a block is both left
 * and taken.  *OUT is the planner's scratch (p->commit.changes, where each move
 * made and freed an array of its own), good until the next move.
 */
static errcode_t move_changes(struct planner *p, uint32_t file,
			      const struct layout_piece *old, size_t nold,
			      const struct layout_piece *new, size_t nnew,
			      const struct layout_piece *meta, size_t nmeta,
			      struct sm_seg **out, size_t *nout, blk64_t *copy,
			      int *fits)
{
	const struct layout_piece *om;
	size_t n = 0, i = 0, j = 0;
	blk64_t io = 0, jo = 0;
	uint32_t nom, k;
	errcode_t ret = 0;

	*copy = 0;
	*fits = 1;
	om = planner_meta(p, file, &nom);
	while (i < nold && j < nnew && !ret && *fits) {
		blk64_t x = old[i].start + io, y = new[j].start + jo;
		blk64_t len = old[i].len - io < new[j].len - jo ?
			old[i].len - io : new[j].len - jo;

		if (x != y) {
			if (!spacemap_is(&p->sm, y, len, SM_FREE))
				*fits = 0;
			else
				ret = grow_n(&p->commit.changes, &p->commit.changes_cap, n + 2,
					     sizeof(*p->commit.changes));
			if (!ret && *fits) {
				struct sm_seg *ch = p->commit.changes;

				ch[n++] = (struct sm_seg){ x, len, SM_FREE };
				ch[n++] = (struct sm_seg){ y, len, SM_FILE0 + file };
				*copy += len;
			}
		}
		io += len;
		jo += len;
		if (io == old[i].len) {
			i++;
			io = 0;
		}
		if (jo == new[j].len) {
			j++;
			jo = 0;
		}
	}
	if (!ret && *fits && (i < nold || j < nnew))
		*fits = 0;	/* lengths differ */
	for (k = 0; k < nom && !ret && *fits; k++) {
		ret = grow_n(&p->commit.changes, &p->commit.changes_cap, n + 1, sizeof(*p->commit.changes));
		if (!ret)
			p->commit.changes[n++] = (struct sm_seg){ om[k].start, om[k].len, SM_FREE };
	}
	for (k = 0; k < nmeta && !ret && *fits; k++) {
		if (!spacemap_is(&p->sm, meta[k].start, meta[k].len, SM_FREE))
			*fits = 0;
		else
			ret = grow_n(&p->commit.changes, &p->commit.changes_cap, n + 1,
				     sizeof(*p->commit.changes));
		if (!ret && *fits) {
			p->commit.changes[n++] = (struct sm_seg){ meta[k].start, meta[k].len,
							   SM_FILE0 + file };
			*copy += meta[k].len;
		}
	}
	if (ret || !*fits)
		return ret;
	sort_changes(p->commit.changes, n);
	for (i = 1; i < n; i++)
		if (p->commit.changes[i - 1].start + p->commit.changes[i - 1].len > p->commit.changes[i].start) {
			*fits = 0;	/* a block both left and taken */
			return 0;
		}
	*out = p->commit.changes;
	*nout = n;
	return 0;
}

/*
 * A file in this many runs or more that has runs of its own takes a move
 * in place (splice_prepare, splice_finish): what the move touches is
 * worked out and written over, the rest of its runs shifted.  Copied
 * whole into a new array at every move, then compared run by run with
 * the old one, a file in many pieces moved a chunk at a time would cost
 * its pieces times its moves.
 */
#define SPLICE_MIN	64

/*
 * Room kept for N runs in a spliced array: N rounded up by at most an
 * eighth, so that a move adding or taking a run or two does not resize
 * it each time (each resize of an array this large is an mremap, a TLB
 * flush and its pages faulted in again).
 */
static size_t splice_room(size_t n)
{
	size_t step = 64;

	while (step * 8 < n)
		step *= 2;
	return (n + step - 1) / step * step;
}

struct splice {
	size_t		first, last;	/* the runs the move touches */
	size_t		count;		/* the file's runs after the move */
	int		offsets;	/* the runs index's offsets are kept for the file */
};

/*
 * The runs SEGS make of F's (FILE's, own, at least SPLICE_MIN) runs where
 * they touch them, into p->commit.span, and room for the result in F's array
 * (and in the offsets kept): nothing fails after this but what the
 * caller checks.  The runs themselves stay as they are.  *FITS 0
 * (nothing done) when SEGS do not fit F's stream.
 */
static errcode_t splice_prepare(struct planner *p, uint32_t file,
				struct file_state *f, const struct runs_change *segs,
				size_t nsegs, struct splice *sp, int *fits)
{
	const blk64_t *off;
	errcode_t ret;

	memset(sp, 0, sizeof(*sp));
	*fits = 0;
	ret = planner_run_offsets(p, file, f->runs, f->nruns, &off);
	if (!ret)
		ret = runs_apply_span(f->runs, off, f->nruns, segs, nsegs, &sp->first,
				      &sp->last, &p->commit.span, fits);
	if (ret || !*fits)
		return ret;
	sp->count = f->nruns;
	if (p->commit.span.n)
		sp->count = runs_spliced_count(f->runs, f->nruns, sp->first, sp->last,
					       p->commit.span.v, p->commit.span.n);
	if (sp->count > f->nruns) {
		struct layout_piece *more = realloc(f->runs, splice_room(sp->count) *
						    sizeof(*more));

		if (!more)
			return ENOMEM;
		if (p->runs_index.runs == f->runs)
			p->runs_index.runs = more;	/* the same runs, moved */
		f->runs = more;
	}
	/* planner_run_offsets kept them: at SPLICE_MIN runs it keeps them all. */
	sp->offsets = runs_index_holds(&p->runs_index, file, f->runs, f->nruns) &&
		      !grow_n(&p->runs_index.off, &p->runs_index.cap, sp->count + 1,
			      sizeof(*p->runs_index.off));
	return 0;
}

/* Put the move splice_prepare worked out in place: F's runs become SP->count. */
static void splice_finish(struct planner *p, uint32_t file, struct file_state *f,
			  const struct splice *sp)
{
	if (!sp->offsets)
		planner_run_offsets_forget(p);
	if (p->commit.span.n)
		runs_splice(f->runs, f->nruns, sp->first, sp->last, p->commit.span.v,
			    p->commit.span.n, sp->offsets ? p->runs_index.off : NULL);
	if (sp->count == 1) {
		blk64_t start = f->runs[0].start;

		/* In one piece: no array of its own (as planner_commit_changes). */
		free(f->runs);
		planner_run_offsets_forget(p);
		f->own &= ~FILE_STATE_OWN_RUNS;
		f->one_start = start;
		return;
	}
	if (splice_room(sp->count) < splice_room(f->nruns)) {
		struct layout_piece *fit = realloc(f->runs, splice_room(sp->count) *
						   sizeof(*fit));

		if (fit)
			f->runs = fit;
	}
	if (sp->offsets) {
		p->runs_index.file = file;
		p->runs_index.runs = f->runs;
		p->runs_index.n = (uint32_t)sp->count;
	}
}

errcode_t planner_commit_changes(struct planner *p, uint32_t file,
				 enum plan_move_kind kind,
				 const struct runs_change *changes, size_t nchanges,
				 const struct layout_piece *meta, size_t nmeta,
				 int *done)
{
	struct plan *plan = p->plan;
	struct file_state *f;
	struct file_state_more *more = NULL;
	const struct layout_piece *old;
	struct layout_piece *new = NULL, *newmeta = NULL, sole;
	struct sm_seg *ch = NULL;
	struct plan_move *mv;
	struct splice sp;
	size_t nnew = 0, nch = 0, nkeep = nchanges;
	blk64_t copy;
	uint32_t nold;
	int whole, splice, fits;
	errcode_t ret;

	*done = 0;
	ret = snapshot_touch(p, file);
	if (ret)
		return ret;
	ret = planner_state(p, file, &f);	/* made by snapshot_touch when saved */
	if (ret)
		return ret;
	old = planner_runs(p, file, &nold, &sole);
	splice = (f->own & FILE_STATE_OWN_RUNS) && nold >= SPLICE_MIN;
	if (splice) {
		ret = splice_prepare(p, file, f, changes, nchanges, &sp, &fits);
		if (ret || !fits)
			return ret;
		nnew = sp.count;
		/* (F's runs, perhaps moved to more room: not OLD any more) */
		ret = move_changes(p, file, f->runs + sp.first, sp.last - sp.first,
				   p->commit.span.v, p->commit.span.n, meta, nmeta, &ch, &nch, &copy,
				   &fits);
	} else {
		ret = runs_apply(old, nold, changes, nchanges, &new, &nnew, &fits);
		if (ret || !fits)
			return ret;
		if (nnew > 1) {
			/* Kept for every file moved: no room to spare (one run is not kept). */
			struct layout_piece *fit = realloc(new, nnew * sizeof(*new));

			if (fit)
				new = fit;
		}
		ret = move_changes(p, file, old, nold, new, nnew, meta, nmeta, &ch,
				   &nch, &copy, &fits);
	}
	if (!ret && !fits) {
		free(new);	/* it does not fit: nothing changed */
		planner_more_release(p, f);
		return 0;
	}
	if (!ret && nmeta) {
		newmeta = malloc(nmeta * sizeof(*newmeta));
		if (!newmeta)
			ret = ENOMEM;
		else
			ret = planner_more(p, f, &more);
	}
	if (!ret)
		ret = grow_n(&plan->moves, &plan->moves_cap, plan->nmoves + 1,
			   sizeof(*plan->moves));
	/* The whole stream to one run: no segment kept (struct plan_move). */
	whole = nchanges == 1 && changes[0].off == 0 &&
		changes[0].len == layout_stream_blocks(p->layout, &p->layout->files[file]);
	if (whole)
		nkeep = 0;
	if (!ret && nkeep)
		ret = grow_n(&plan->segs, &plan->segs_cap, plan->nsegs + nkeep,
			   sizeof(*plan->segs));
	if (!ret)
		ret = grow_n(&plan->meta, &plan->meta_cap, plan->nmeta + nmeta,
			   sizeof(*plan->meta));
	if (!ret)
		ret = spacemap_apply(&p->sm, ch, nch);
	if (ret) {
		free(new);
		free(newmeta);
		planner_more_release(p, f);	/* one made above, if still empty */
		return ret;
	}
	if (splice) {
		splice_finish(p, file, f, &sp);
	} else {
		if (f->own & FILE_STATE_OWN_RUNS) {
			free(f->runs);
			planner_run_offsets_forget(p);
		}
		f->own &= ~FILE_STATE_OWN_RUNS;
	}
	f->nruns = nnew;
	if (splice) {
		/* (splice_finish made the runs and kept their offsets) */
	} else if (nnew == 1) {
		/* In one piece, as most moved files end: no array of its own. */
		f->one_start = new[0].start;	/* new[0].len: the whole stream */
		free(new);
	} else if (new) {
		f->runs = new;
		f->own |= FILE_STATE_OWN_RUNS;
	}
	more = planner_more_if(p, f);	/* (made above when NMETA) */
	if (more) {
		if (more->own_meta)
			free(more->meta);
		more->own_meta = 0;
		more->meta_off = 0;
		more->nmeta = nmeta;	/* 0: no tree now (planner_meta: none) */
		if (nmeta) {
			copy_n(newmeta, meta, nmeta * sizeof(*meta));
			more->meta = newmeta;
			more->own_meta = 1;
			more->had_tree = 1;
		}
	}
	p->pf[file].flags |= PF_PLACED;
	if (kind != MOVE_STAGE)
		p->pf[file].flags &= ~PF_PENDING;
	/*
	 * Most files move once: the map is let go, and read again if this one
	 * moves again, then kept.  Packing a nearly full disk moves some files
	 * many times (tries taken back and made again): reading a large block
	 * map at each move would cost more than the rest of such a run.
	 */
	if (more && more->fmap && !(f->own & FILE_STATE_KEEP_MAP)) {
		fmap_free(more->fmap);
		free(more->fmap);
		more->fmap = NULL;
	}
	f->own |= FILE_STATE_KEEP_MAP;
	planner_more_release(p, f);

	mv = &plan->moves[plan->nmoves++];
	memset(mv, 0, sizeof(*mv));
	mv->file = file;
	mv->kind = kind;
	if (whole) {
		mv->whole = 1;
		mv->whole_lo = (uint32_t)changes[0].pblk;
		mv->whole_hi = (uint16_t)(changes[0].pblk >> 32);	/* < SM_BLOCKS_MAX */
	} else {
		mv->nsegs = nkeep;
	}
	/* The arrays stay NULL until something goes in: no arithmetic on them
	 * before (NULL + 0 is undefined; clang's UBSan says so). */
	if (nkeep)
		copy_n(plan->segs + plan->nsegs, changes, nkeep * sizeof(*changes));
	plan->nsegs += nkeep;
	mv->nmeta = nmeta;
	if (nmeta)
		copy_n(plan->meta + plan->nmeta, meta, nmeta * sizeof(*meta));
	plan->nmeta += nmeta;
	mv->copy_blocks = copy;
	plan->copy_blocks += copy;
	if (p->consolidating) {
		mv->joining = 1;
		plan->consolidate_blocks += copy;
	}
	*done = 1;
	return 0;
}

errcode_t planner_commit(struct planner *p, uint32_t file,
			 enum plan_move_kind kind,
			 const struct layout_piece *runs, size_t nruns,
			 const struct layout_piece *meta, size_t nmeta, int *done)
{
	struct runs_change few[4], *segs = few;	/* most moves are a run or two */
	blk64_t off = 0;
	size_t i;
	errcode_t ret;

	*done = 0;
	if (nruns > 4 && !(segs = malloc(nruns * sizeof(*segs))))
		return ENOMEM;
	for (i = 0; i < nruns; i++) {
		segs[i].off = off;
		segs[i].len = runs[i].len;
		segs[i].pblk = runs[i].start;
		off += runs[i].len;
	}
	if (off != layout_stream_blocks(p->layout, &p->layout->files[file]))
		ret = 0;	/* not its whole stream: does not fit */
	else
		ret = planner_commit_changes(p, file, kind, segs, nruns, meta, nmeta,
					     done);
	if (segs != few)
		free(segs);
	return ret;
}

