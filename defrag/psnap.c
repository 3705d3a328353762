/*
 * psnap.c --- taking back a series of planned moves.
 *
 * Compaction moves files part by part; if it gets stuck half-way, the
 * files it was working on would be left in more pieces than before, and
 * so would files it moved out of the way to make room.  The planner takes
 * a snapshot before such a series and, unless the series completes,
 * returns to it: the moves are dropped from the plan and the space map
 * and the files' places are as they were.  Nothing is ever half-planned.
 *
 * A file's state (its place and its line of the plan) is saved the first
 * time a move changes it (planner_commit calls psnap_touch), with its own
 * copies of its runs, so that later moves can free and replace what they
 * like; the space map logs what its changes replaced (spacemap_mark).  So
 * a snapshot costs what changes after it, not the size of the filesystem:
 * consolidation takes one per join.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"
#include "dutil.h"

struct psave {
	uint32_t	file;
	struct pfile	pf;
	struct plan_file result;
};

struct psnap {
	size_t		sm_mark;
	uint64_t	nmoves, nsegs, nmeta;
	blk64_t		copy_blocks, consolidate_blocks;
	struct psave	*saved;
	size_t		nsaved, cap;
};

errcode_t psnap_take(struct planner *p)
{
	struct psnap *s;

	if (p->snap)
		return EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ENOMEM;
	s->sm_mark = spacemap_mark(&p->sm);
	s->nmoves = p->plan->nmoves;
	s->nsegs = p->plan->nsegs;
	s->nmeta = p->plan->nmeta;
	s->copy_blocks = p->plan->copy_blocks;
	s->consolidate_blocks = p->plan->consolidate_blocks;
	p->snap = s;
	return 0;
}

static struct layout_piece *dup_runs(const struct layout_piece *r, uint32_t n)
{
	struct layout_piece *d = malloc((n ? n : 1) * sizeof(*d));

	if (d)
		copy_n(d, r, n * sizeof(*r));
	return d;
}

errcode_t psnap_touch(struct planner *p, uint32_t file)
{
	struct psnap *s = p->snap;
	struct pfile *f = &p->pf[file];
	struct psave *sv;
	struct layout_piece *runs = NULL, *meta = NULL;

	if (!s || (f->flags & PF_SAVED))
		return 0;
	if (grow_n(&s->saved, &s->cap, s->nsaved + 1, sizeof(*s->saved)))
		return ENOMEM;
	/* The saved state keeps the arrays it had; the file gets copies. */
	if (f->runs && !(runs = dup_runs(f->runs, f->nruns)))
		return ENOMEM;
	if (f->meta && !(meta = dup_runs(f->meta, f->nmeta))) {
		free(runs);
		return ENOMEM;
	}
	sv = &s->saved[s->nsaved++];
	sv->file = file;
	sv->pf = *f;
	sv->result = p->plan->files[file];
	if (f->runs)
		f->runs = runs;
	if (f->meta)
		f->meta = meta;
	f->flags |= PF_SAVED;
	return 0;
}

static void free_snap(struct psnap *s)
{
	free(s->saved);
	free(s);
}

int psnap_any_worse(const struct planner *p)
{
	const struct psnap *s = p->snap;
	size_t i;

	for (i = 0; s && i < s->nsaved; i++) {
		const struct pfile *was = &s->saved[i].pf;
		uint32_t file = s->saved[i].file, n;
		const struct layout_piece *now = planner_runs(p, file, &n);
		uint32_t before = was->runs ? plan_pieces(was->runs, was->nruns) :
			p->layout->files[file].pieces;

		if (plan_pieces(now, n) > before)
			return 1;
	}
	return 0;
}

errcode_t psnap_pending(const struct planner *p, uint32_t **out, size_t *n)
{
	const struct psnap *s = p->snap;
	size_t i;

	*n = 0;
	*out = malloc(((s ? s->nsaved : 0) + 1) * sizeof(**out));
	if (!*out)
		return ENOMEM;
	for (i = 0; s && i < s->nsaved; i++)
		if (p->pf[s->saved[i].file].flags & PF_PENDING)
			(*out)[(*n)++] = s->saved[i].file;
	return 0;
}

void psnap_restore(struct planner *p)
{
	struct psnap *s = p->snap;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nsaved; i++) {
		struct pfile *f = &p->pf[s->saved[i].file];
		struct fmap *m = f->fmap;	/* a cache, right either way */

		free(f->runs);
		free(f->meta);
		*f = s->saved[i].pf;
		f->fmap = m;
		p->plan->files[s->saved[i].file] = s->saved[i].result;
	}
	spacemap_rollback(&p->sm, s->sm_mark);
	p->plan->nmoves = s->nmoves;
	p->plan->nsegs = s->nsegs;
	p->plan->nmeta = s->nmeta;
	p->plan->copy_blocks = s->copy_blocks;
	p->plan->consolidate_blocks = s->consolidate_blocks;
	p->snap = NULL;
	free_snap(s);
}

void psnap_forget(struct planner *p)
{
	struct psnap *s = p->snap;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nsaved; i++) {
		free(s->saved[i].pf.runs);
		free(s->saved[i].pf.meta);
		p->pf[s->saved[i].file].flags &= ~PF_SAVED;
	}
	spacemap_release(&p->sm, s->sm_mark);
	p->snap = NULL;
	free_snap(s);
}
