/*
 * snapshot.c --- taking back a series of planned moves.
 *
 * Compaction moves files part by part; if it gets stuck half-way, the
 * files it was working on would be left in more pieces than before, and
 * so would files it moved out of the way to make room.  The planner takes
 * a snapshot before such a series and, unless the series completes,
 * returns to it: the moves are dropped from the plan and the space map
 * and the files' places are as they were.  Nothing is ever half-planned.
 *
 * A file's state is saved the first time a move changes it (planner_commit
 * calls snapshot_touch), with its own copies of its runs and the plan's
 * figures for it (in its state), so that later moves can free and replace what they like;
 * nothing is copied for files no move touches.  The space map logs what
 * its changes replaced (spacemap_mark), so a snapshot costs what changes
 * after it, not the size of the filesystem.  Snapshots nest, and so do
 * the space map's marks.
 *
 * A light level (snapshot_take_light) is for the outermost one, taken
 * before any move, around all of placing: it keeps only which files
 * changed and their flags then, not their states nor the space map's
 * log (all of placing's changes, paged in for a plan kept nearly always).
 * It says whether placing gained anything; taking it back is the
 * caller's, by planning again from the start (plan.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"

struct snapshot_saved {
	struct file_state	st;		/* with what the plan says of it */
	struct layout_piece *meta;	/* its tree's runs then (own_meta: a copy) */
	uint64_t	meta_off;	/* ... or where in planner->tree_blocks */
	uint32_t	nmeta;
	uint32_t	file;
	uint8_t		flags;		/* PF_* */
	uint8_t		own_meta;
};

/*
 * Snapshots nest (a window tried inside a compaction that may be taken
 * back as a whole): each level saves a file the first time it changes
 * while that level is open, with its own copies of the runs.  A file's
 * snap_gen says up to which level (the newest, by generation) it is
 * saved; generations only grow, so a file saved at a newer level is
 * saved at every older one still open.
 */
struct psnap {
	struct psnap	*up;		/* the level this one is nested in */
	uint32_t	gen;
	int		light;		/* snapshot_take_light: only changed[] kept */
	struct snapshot_change *changed;
	size_t		nchanged, changed_cap;
	size_t		sm_mark;	/* the space map's undo log from here */
	uint64_t	nmoves, nsegs, nmeta;
	blk64_t		copy_blocks, consolidate_blocks;
	struct snapshot_saved	*saved;
	size_t		nsaved, cap;
};

static errcode_t take(struct planner *p, int light)
{
	struct psnap *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return ENOMEM;
	s->light = light;
	if (!light)
		s->sm_mark = spacemap_mark(&p->sm);
	s->nmoves = p->plan->nmoves;
	s->nsegs = p->plan->nsegs;
	s->nmeta = p->plan->nmeta;
	s->copy_blocks = p->plan->copy_blocks;
	s->consolidate_blocks = p->plan->consolidate_blocks;
	s->gen = ++p->snap_gen;
	s->up = p->snap;
	p->snap = s;
	return 0;
}

errcode_t snapshot_take(struct planner *p)
{
	return take(p, 0);
}

errcode_t snapshot_take_light(struct planner *p)
{
	return take(p, 1);
}

static struct layout_piece *dup_runs(const struct layout_piece *r, uint32_t n)
{
	struct layout_piece *d = malloc((n ? n : 1) * sizeof(*d));

	if (d)
		copy_n(d, r, n * sizeof(*r));
	return d;
}

/* Save FILE at level S: S keeps the arrays it has, the file gets copies. */
static errcode_t save_at(struct planner *p, struct psnap *s, uint32_t file)
{
	struct file_state *f;
	struct file_state_more *m;
	struct layout_piece *runs = NULL, *meta = NULL;
	struct snapshot_saved *sv;

	if (planner_state(p, file, &f))
		return ENOMEM;
	planner_run_offsets_forget(p);	/* its array goes to S, later freed */
	m = planner_more_if(p, f);
	if (grow_n(&s->saved, &s->cap, s->nsaved + 1, sizeof(*s->saved)))
		return ENOMEM;
	if ((f->own & FILE_STATE_OWN_RUNS) && !(runs = dup_runs(f->runs, f->nruns)))
		return ENOMEM;
	if (m && m->own_meta && !(meta = dup_runs(m->meta, m->nmeta))) {
		free(runs);
		return ENOMEM;
	}
	sv = &s->saved[s->nsaved++];
	memset(sv, 0, sizeof(*sv));
	sv->file = file;
	sv->flags = p->pf[file].flags;
	sv->st = *f;
	if (m) {
		/* (A file with a tree keeps its struct file_state_more: planner_more_release.) */
		sv->own_meta = m->own_meta;
		sv->nmeta = m->nmeta;
		if (m->own_meta)
			sv->meta = m->meta;
		else
			sv->meta_off = m->meta_off;
	}
	if (f->own & FILE_STATE_OWN_RUNS)
		f->runs = runs;
	if (m && m->own_meta)
		m->meta = meta;
	return 0;
}

/* Note FILE at light level S: its flags (its state needs no copy, below). */
static errcode_t note_at(struct planner *p, struct psnap *s, uint32_t file)
{
	struct file_state *f;

	if (planner_state(p, file, &f))	/* for snap_gen */
		return ENOMEM;
	if (grow_n(&s->changed, &s->changed_cap, s->nchanged + 1,
		   sizeof(*s->changed)))
		return ENOMEM;
	s->changed[s->nchanged].file = file;
	s->changed[s->nchanged++].flags = p->pf[file].flags;
	return 0;
}

errcode_t snapshot_touch(struct planner *p, uint32_t file)
{
	struct psnap *s;
	const struct file_state *st = planner_state_if(p, file);
	uint32_t seen = st ? st->snap_gen : 0;
	errcode_t ret;

	/* Oldest level first is not needed: each saves the state as it is now. */
	for (s = p->snap; s && seen < s->gen; s = s->up) {
		ret = s->light ? note_at(p, s, file) : save_at(p, s, file);
		if (ret)
			return ret;
	}
	if (p->snap)	/* saved now or before: it has a state */
		planner_state_if(p, file)->snap_gen = p->snap->gen;
	return 0;
}

static void free_snap(struct psnap *s)
{
	free(s->saved);
	free(s->changed);
	free(s);
}

/* Files level S saved or noted. */
static size_t level_files(const struct psnap *s)
{
	return !s ? 0 : s->light ? s->nchanged : s->nsaved;
}

/*
 * File I of level S: its index, its flags when saved, and its pieces
 * then (*BEFORE) and now (*NOW).  A light level is taken before any
 * move: a file's pieces then are those the scan found.
 */
static uint32_t level_file(const struct planner *p, const struct psnap *s,
			   size_t i, uint8_t *flags, uint32_t *before,
			   uint32_t *now)
{
	uint32_t file = s->light ? s->changed[i].file : s->saved[i].file, n;
	struct layout_piece sole;
	const struct layout_piece *runs = planner_runs(p, file, &n, &sole);

	if (s->light) {
		*flags = s->changed[i].flags;
		*before = layout_file_pieces(p->layout, &p->layout->files[file]);
	} else {
		const struct file_state *was = &s->saved[i].st;

		*flags = s->saved[i].flags;
		*before = was->own & FILE_STATE_OWN_RUNS ? plan_pieces(was->runs, was->nruns) :
			was->nruns == 1 ? 1 : layout_file_pieces(p->layout, &p->layout->files[file]);
	}
	*now = plan_pieces(runs, n);
	return file;
}

int snapshot_any_worse(const struct planner *p)
{
	const struct psnap *s = p->snap;
	uint32_t before, now;
	uint8_t flags;
	size_t i;

	for (i = 0; i < level_files(s); i++) {
		level_file(p, s, i, &flags, &before, &now);
		if (now > before)
			return 1;
	}
	return 0;
}

int snapshot_gain(const struct planner *p)
{
	const struct psnap *s = p->snap;
	uint32_t file, before, now;
	uint8_t flags;
	size_t i;

	for (i = 0; i < level_files(s); i++) {
		file = s->light ? s->changed[i].file : s->saved[i].file;
		if (!(p->sel->flags[file] & SEL_CANDIDATE))
			continue;
		level_file(p, s, i, &flags, &before, &now);
		if (now < before || ((flags & PF_PENDING) &&
				     !(p->pf[file].flags & PF_PENDING)))
			return 1;
	}
	return 0;
}

errcode_t snapshot_pending(const struct planner *p, uint32_t **out, size_t *n)
{
	const struct psnap *s = p->snap;
	size_t i;

	*n = 0;
	*out = malloc((level_files(s) + 1) * sizeof(**out));
	if (!*out)
		return ENOMEM;
	for (i = 0; i < level_files(s); i++) {
		uint32_t file = s->light ? s->changed[i].file : s->saved[i].file;

		if (p->pf[file].flags & PF_PENDING)
			(*out)[(*n)++] = file;
	}
	return 0;
}

errcode_t snapshot_changes(const struct planner *p, const struct snapshot_change **out,
			size_t *n)
{
	const struct psnap *s = p->snap;

	if (!s || !s->light)
		return EINVAL;
	*out = s->changed;
	*n = s->nchanged;
	return 0;
}

void snapshot_restore(struct planner *p)
{
	struct psnap *s = p->snap;
	size_t i;

	if (!s)
		return;
	if (s->light) {
		/* Nothing of it to take back (psnap.h: only a level with no change). */
		snapshot_forget(p);
		return;
	}
	planner_run_offsets_forget(p);	/* the files get their saved runs back */
	/* Newest save first: a file saved twice ends as it was first saved. */
	for (i = s->nsaved; i-- > 0;) {
		uint32_t file = s->saved[i].file;
		const struct snapshot_saved *sv = &s->saved[i];
		struct file_state *f = planner_state_if(p, file);	/* made when saved */
		struct file_state now = *f;
		struct file_state_more *m = planner_more_if(p, f);
		const uint8_t cached = FILE_STATE_MAP_OK | FILE_STATE_EXTENTS;

		if (f->own & FILE_STATE_OWN_RUNS)
			free(f->runs);
		if (m && m->own_meta)
			free(m->meta);
		*f = sv->st;
		p->pf[file].flags = sv->flags;
		/*
		 * What its map says is a cache, right either way: kept, and so
		 * its struct file_state_more (which a file with a tree then had
		 * still: planner_more_release keeps those).
		 */
		f->more = now.more;
		f->contig16 = now.contig16;
		f->own = (f->own & ~cached) | (now.own & (cached | FILE_STATE_KEEP_MAP));
		if (m) {
			m->own_meta = sv->own_meta;
			m->nmeta = sv->nmeta;
			if (sv->own_meta)
				m->meta = sv->meta;
			else
				m->meta_off = sv->meta_off;
		}
		/* Saved at the levels still open as it was; this one is gone. */
		f->snap_gen = now.snap_gen;
	}
	spacemap_rollback(&p->sm, s->sm_mark);
	p->plan->nmoves = s->nmoves;
	p->plan->nsegs = s->nsegs;
	p->plan->nmeta = s->nmeta;
	p->plan->copy_blocks = s->copy_blocks;
	p->plan->consolidate_blocks = s->consolidate_blocks;
	p->snap = s->up;
	free_snap(s);
}

void snapshot_forget(struct planner *p)
{
	struct psnap *s = p->snap;
	size_t i;

	if (!s)
		return;
	planner_run_offsets_forget(p);
	for (i = 0; i < s->nsaved; i++) {
		if (s->saved[i].st.own & FILE_STATE_OWN_RUNS)
			free(s->saved[i].st.runs);
		if (s->saved[i].own_meta)
			free(s->saved[i].meta);
	}
	if (!s->light)
		spacemap_release(&p->sm, s->sm_mark);
	p->snap = s->up;
	free_snap(s);
}
