/*
 * plan.c --- the planner's frame: its state, the units it places, each
 * move it records, and the figures of the finished plan.
 *
 * The plan is a list of moves carried out in order.  Planning simulates
 * them on a space map (spacemap.c): a move's new blocks must be free when
 * it is planned, and its old blocks are free for the moves after it, as
 * they will be on disk once its switch is durable.  So executing the
 * moves in order never writes over a block in use.
 *
 * Units are placed largest first: big files get the best chance at the
 * large free runs, and the small ones fill the holes the big ones leave
 * (best fit keeps the large runs large).  The policies for one unit are
 * in place.c, making room in window.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

const struct layout_piece *planner_runs(const struct planner *p, uint32_t file,
					uint32_t *n)
{
	const struct pfile *f = &p->pf[file];

	*n = f->nruns;
	return f->runs ? f->runs :
		p->layout->pieces + p->layout->files[file].first_piece;
}

const struct layout_piece *planner_meta(const struct planner *p, uint32_t file,
					uint32_t *n)
{
	const struct pfile *f = &p->pf[file];

	*n = f->nmeta;
	return f->meta ? f->meta : p->etb + f->meta_off;
}

blk64_t planner_limit(const struct planner *p, uint32_t file)
{
	blk64_t end = ext2fs_blocks_count(p->fs->super);

	if (!(p->layout->files[file].flags & LAYOUT_F_EXTENTS) && end > (1ULL << 32))
		return 1ULL << 32;
	return end;
}

int64_t planner_zone_of(const struct planner *p, blk64_t blk)
{
	uint64_t lo = 0, hi = p->layout->nzones;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const struct layout_zone *z = &p->layout->zones[mid];

		if (blk < z->start)
			hi = mid;
		else if (blk >= z->start + z->len)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

errcode_t planner_fmap(struct planner *p, uint32_t file, struct fmap **ret)
{
	struct pfile *f = &p->pf[file];
	struct fmap *m;
	size_t n;
	errcode_t err;

	if (f->fmap) {
		*ret = f->fmap;
		return 0;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return ENOMEM;
	err = fmap_read(p->fs, p->layout->files[file].ino, m);
	if (!err && m->stream_blocks != p->layout->files[file].stream_blocks)
		err = E2D_ERR_CHANGED;
	if (!err && m->extents) {
		struct layout_piece one = { p->fs->super->s_first_data_block,
					    m->stream_blocks };
		struct target t = { &one, 1 };

		err = mapbuild_extents(m, &t, NULL, &n);
		if (!err) {
			f->extents_contig = n;
			f->etb_contig = mapbuild_tree_blocks(p->fs, n);
		}
	}
	if (err) {
		fmap_free(m);
		free(m);
		return err;
	}
	f->fmap = m;
	*ret = m;
	return 0;
}

uint32_t plan_pieces(const struct layout_piece *runs, size_t nruns)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < nruns; i++)
		if (!i || runs[i - 1].start + runs[i - 1].len != runs[i].start)
			n++;
	return n;
}

double plan_read_seconds(const struct layout *layout,
			 const struct layout_piece *runs, size_t nruns)
{
	double bs = layout->fs->blocksize, t = 0;
	blk64_t blocks = 0;
	size_t i;

	for (i = 0; i < nruns; i++) {
		blocks += runs[i].len;
		if (i)
			t += readmodel_jump_seconds(&layout->model,
				((double)runs[i].start -
				 (double)(runs[i - 1].start + runs[i - 1].len)) * bs);
	}
	return t + readmodel_transfer_seconds(&layout->model, blocks * bs);
}

static errcode_t grow(void *array, uint64_t *cap, uint64_t need, size_t size)
{
	void **a = array;
	uint64_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	q = realloc(*a, c * size);
	if (!q)
		return ENOMEM;
	*a = q;
	*cap = c;
	return 0;
}

static int cmp_sm_seg(const void *a, const void *b)
{
	const struct sm_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * What a move does to the space map: the stretches where OLD and NEW
 * differ are released and gained, all old tree blocks released and the
 * new ones gained.  Every gained block must be free now.
 */
static errcode_t move_changes(const struct planner *p, uint32_t file,
			      const struct layout_piece *old, size_t nold,
			      const struct layout_piece *new, size_t nnew,
			      const struct layout_piece *meta, size_t nmeta,
			      struct sm_seg **out, size_t *nout, blk64_t *copy)
{
	const struct layout_piece *om;
	struct sm_seg *ch = NULL;
	size_t n = 0, i = 0, j = 0;
	uint64_t cap = 0;
	blk64_t io = 0, jo = 0;
	uint32_t nom, k;
	errcode_t ret = 0;

	*copy = 0;
	om = planner_meta(p, file, &nom);
	while (i < nold && j < nnew && !ret) {
		blk64_t x = old[i].start + io, y = new[j].start + jo;
		blk64_t len = old[i].len - io < new[j].len - jo ?
			old[i].len - io : new[j].len - jo;

		if (x != y) {
			if (!spacemap_is(&p->sm, y, len, SM_FREE))
				ret = E2D_ERR_PLAN_CONFLICT;
			else
				ret = grow(&ch, &cap, n + 2, sizeof(*ch));
			if (!ret) {
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
	if (!ret && (i < nold || j < nnew))
		ret = E2D_ERR_PLAN_CONFLICT;	/* lengths differ */
	for (k = 0; k < nom && !ret; k++) {
		ret = grow(&ch, &cap, n + 1, sizeof(*ch));
		if (!ret)
			ch[n++] = (struct sm_seg){ om[k].start, om[k].len, SM_FREE };
	}
	for (k = 0; k < nmeta && !ret; k++) {
		if (!spacemap_is(&p->sm, meta[k].start, meta[k].len, SM_FREE))
			ret = E2D_ERR_PLAN_CONFLICT;
		else
			ret = grow(&ch, &cap, n + 1, sizeof(*ch));
		if (!ret) {
			ch[n++] = (struct sm_seg){ meta[k].start, meta[k].len,
						   SM_FILE0 + file };
			*copy += meta[k].len;
		}
	}
	if (ret) {
		free(ch);
		return ret;
	}
	qsort(ch, n, sizeof(*ch), cmp_sm_seg);
	for (i = 1; i < n; i++)
		if (ch[i - 1].start + ch[i - 1].len > ch[i].start) {
			free(ch);
			return E2D_ERR_PLAN_CONFLICT;	/* a block both left and taken */
		}
	*out = ch;
	*nout = n;
	return 0;
}

errcode_t planner_commit_changes(struct planner *p, uint32_t file,
				 enum plan_move_kind kind,
				 const struct plan_seg *segs, size_t nsegs,
				 const struct layout_piece *meta, size_t nmeta)
{
	struct plan *plan = p->plan;
	struct pfile *f = &p->pf[file];
	struct plan_file *pfr = &plan->files[file];
	const struct layout_piece *old;
	struct layout_piece *new = NULL, *newmeta = NULL;
	struct sm_seg *ch = NULL;
	struct plan_move *mv;
	size_t nnew = 0, nch = 0;
	blk64_t copy;
	uint32_t nold, i;
	errcode_t ret;

	old = planner_runs(p, file, &nold);
	ret = runs_apply(old, nold, segs, nsegs, &new, &nnew);
	if (ret)
		return ret;
	ret = move_changes(p, file, old, nold, new, nnew, meta, nmeta, &ch, &nch,
			   &copy);
	if (!ret && nmeta) {
		newmeta = malloc(nmeta * sizeof(*newmeta));
		if (!newmeta)
			ret = ENOMEM;
	}
	if (!ret)
		ret = grow(&plan->moves, &plan->moves_cap, plan->nmoves + 1,
			   sizeof(*plan->moves));
	if (!ret)
		ret = grow(&plan->segs, &plan->segs_cap, plan->nsegs + nsegs,
			   sizeof(*plan->segs));
	if (!ret)
		ret = grow(&plan->meta, &plan->meta_cap, plan->nmeta + nmeta,
			   sizeof(*plan->meta));
	if (!ret)
		ret = spacemap_apply(&p->sm, ch, nch);
	free(ch);
	if (ret) {
		free(new);
		free(newmeta);
		return ret;
	}
	free(f->runs);
	f->runs = new;
	f->nruns = nnew;
	free(f->meta);
	if (nmeta)
		memcpy(newmeta, meta, nmeta * sizeof(*meta));
	f->meta = newmeta;
	f->nmeta = nmeta;
	f->etb_now = 0;
	for (i = 0; i < nmeta; i++)
		f->etb_now += meta[i].len;
	if (!f->meta) {
		/* No tree now: an empty owned list, not the layout's. */
		f->meta = malloc(sizeof(*f->meta));
		if (!f->meta)
			return ENOMEM;
	}
	f->flags |= PF_PLACED;
	if (kind != MOVE_STAGE)
		f->flags &= ~PF_PENDING;

	mv = &plan->moves[plan->nmoves++];
	memset(mv, 0, sizeof(*mv));
	mv->file = file;
	mv->kind = kind;
	mv->first_seg = plan->nsegs;
	mv->nsegs = nsegs;
	memcpy(plan->segs + plan->nsegs, segs, nsegs * sizeof(*segs));
	plan->nsegs += nsegs;
	mv->first_meta = plan->nmeta;
	mv->nmeta = nmeta;
	memcpy(plan->meta + plan->nmeta, meta, nmeta * sizeof(*meta));
	plan->nmeta += nmeta;
	mv->copy_blocks = copy;
	plan->copy_blocks += copy;
	pfr->moves++;
	pfr->moved_blocks += copy;
	pfr->pieces_after = plan_pieces(new, nnew);
	pfr->read_after = plan_read_seconds(p->layout, new, nnew);
	return 0;
}

errcode_t planner_commit(struct planner *p, uint32_t file,
			 enum plan_move_kind kind,
			 const struct layout_piece *runs, size_t nruns,
			 const struct layout_piece *meta, size_t nmeta)
{
	struct plan_seg *segs;
	blk64_t off = 0;
	size_t i;
	errcode_t ret;

	segs = malloc((nruns ? nruns : 1) * sizeof(*segs));
	if (!segs)
		return ENOMEM;
	for (i = 0; i < nruns; i++) {
		segs[i].off = off;
		segs[i].len = runs[i].len;
		segs[i].pblk = runs[i].start;
		off += runs[i].len;
	}
	if (off != p->layout->files[file].stream_blocks)
		ret = E2D_ERR_PLAN_CONFLICT;
	else
		ret = planner_commit_changes(p, file, kind, segs, nruns, meta, nmeta);
	free(segs);
	return ret;
}

/* ------------------------------------------------------------------ setup */

static int cmp_seg_owner(const void *a, const void *b)
{
	const struct sm_seg *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->owner < y->owner ? -1 : x->owner > y->owner;
}

/* Sort RUNS and clip overlaps among unmovable owners (EA blocks shared by inodes). */
static errcode_t resolve_overlaps(struct sm_seg *runs, size_t *n)
{
	size_t i, o = 0;

	qsort(runs, *n, sizeof(*runs), cmp_seg_owner);
	for (i = 0; i < *n; i++) {
		struct sm_seg r = runs[i];

		if (o) {
			struct sm_seg *prev = &runs[o - 1];
			blk64_t pend = prev->start + prev->len;

			if (r.start < pend) {
				/* Only owners that never move may overlap. */
				if (r.owner >= SM_FILE0 || prev->owner >= SM_FILE0)
					return E2F_ERR_CORRUPT_INODE;
				if (r.start + r.len <= pend)
					continue;
				r.len -= pend - r.start;
				r.start = pend;
			}
		}
		runs[o++] = r;
	}
	*n = o;
	return 0;
}

static errcode_t add_seg(struct sm_seg **runs, size_t *n, size_t *cap,
			 blk64_t start, blk64_t len, uint32_t owner)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		struct sm_seg *r = realloc(*runs, c * sizeof(*r));

		if (!r)
			return ENOMEM;
		*runs = r;
		*cap = c;
	}
	(*runs)[*n].start = start;
	(*runs)[*n].len = len;
	(*runs)[(*n)++].owner = owner;
	return 0;
}

static int cmp_aux_ino(const void *a, const void *b)
{
	const struct layout_aux *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Extent tree blocks per file, and the space map. */
static errcode_t build_space(struct planner *p)
{
	struct layout *layout = p->layout;
	ext2_filsys fs = p->fs;
	struct layout_aux *aux;
	struct sm_seg *runs = NULL;
	size_t nruns = 0, cap = 0;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super), s, e;
	uint64_t i, a;
	errcode_t ret = 0;

	aux = malloc((layout->naux ? layout->naux : 1) * sizeof(*aux));
	p->etb = malloc((layout->naux ? layout->naux : 1) * sizeof(*p->etb));
	if (!aux || !p->etb) {
		ret = ENOMEM;
		goto out;
	}
	memcpy(aux, layout->aux, layout->naux * sizeof(*aux));
	qsort(aux, layout->naux, sizeof(*aux), cmp_aux_ino);
	for (i = 0, a = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		const struct layout_piece *pc = layout_file_pieces(layout, f);
		uint32_t owner = p->pf[i].flags & PF_UNMOVABLE ? SM_PINNED : SM_FILE0 + i;
		uint32_t k;

		p->pf[i].nruns = f->pieces;
		p->pf[i].meta_off = p->netb;
		while (a < layout->naux && aux[a].ino < f->ino)
			a++;
		for (; a < layout->naux && aux[a].ino == f->ino; a++) {
			if (aux[a].kind != LAYOUT_AUX_ETB)
				continue;
			p->etb[p->netb].start = aux[a].start;
			p->etb[p->netb++].len = aux[a].len;
			p->pf[i].nmeta++;
			p->pf[i].etb_now += aux[a].len;
			ret = add_seg(&runs, &nruns, &cap, aux[a].start, aux[a].len, owner);
			if (ret)
				goto out;
		}
		for (k = 0; k < f->pieces; k++) {
			ret = add_seg(&runs, &nruns, &cap, pc[k].start, pc[k].len, owner);
			if (ret)
				goto out;
		}
	}
	for (a = 0; a < layout->naux; a++) {
		if (aux[a].kind == LAYOUT_AUX_XATTR) {
			ret = add_seg(&runs, &nruns, &cap, aux[a].start, aux[a].len,
				      SM_PINNED);
			if (ret)
				goto out;
		}
	}
	for (s = first; s < end; s = e) {
		if (ext2fs_find_first_set_block_bitmap2(layout->fixed, s, end - 1, &s))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, s, end - 1, &e))
			e = end;
		ret = add_seg(&runs, &nruns, &cap, s, e - s, SM_META);
		if (ret)
			goto out;
	}
	ret = resolve_overlaps(runs, &nruns);
	if (!ret)
		ret = spacemap_build(&p->sm, first, end, runs, nruns, fs->block_map);
out:
	free(aux);
	free(runs);
	return ret;
}

/* Read each candidate's map; skip those e2defrag must not or cannot move. */
static errcode_t check_candidates(struct planner *p)
{
	uint64_t i;
	errcode_t ret;

	for (i = 0; i < p->layout->nfiles; i++) {
		struct pfile *f = &p->pf[i];
		struct plan_file *r = &p->plan->files[i];
		const struct ext2_inode *inode;
		struct fmap *m;

		if (!(f->flags & PF_PENDING))
			continue;
		ret = planner_fmap(p, i, &m);
		if (ret == E2F_ERR_CORRUPT_INODE || ret == E2D_ERR_CHANGED ||
		    ret == EXT2_ET_INLINE_DATA_NO_BLOCK) {
			r->reason = SKIP_CORRUPT;
		} else if (ret) {
			return ret;
		} else {
			inode = (const struct ext2_inode *)m->inode;
			if (inode->i_flags & (EXT2_COMPR_FL | EXT2_COMPRBLK_FL |
					      EXT4_SNAPFILE_FL))
				r->reason = SKIP_FLAGS;
			else if (p->quota && f->etb_contig != f->etb_now)
				r->reason = SKIP_QUOTA;
		}
		if (r->reason) {
			f->flags &= ~PF_PENDING;
			f->flags |= PF_UNMOVABLE;
			r->outcome = OUT_SKIPPED;
		}
	}
	return 0;
}

static int cmp_unit(const void *a, const void *b, void *arg)
{
	const struct unit *x = a, *y = b;
	const uint32_t *members = arg;

	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return members[x->first] < members[y->first] ? -1 :
	       members[x->first] > members[y->first];
}

static errcode_t build_units(struct planner *p)
{
	struct layout *layout = p->layout;
	uint64_t i, cap = layout->nfiles + 1;
	uint8_t *in_unit;
	uint32_t m;

	p->members = malloc(cap * sizeof(*p->members));
	p->units = malloc(cap * sizeof(*p->units));
	in_unit = calloc(cap, 1);
	if (!p->members || !p->units || !in_unit) {
		free(in_unit);
		return ENOMEM;
	}
	/* Interleave sets first: their pending members, in path order. */
	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];
		struct unit *u = &p->units[p->nunits];

		u->first = p->nmembers;
		u->n = 0;
		u->blocks = 0;
		for (m = 0; m < s->members; m++) {
			uint32_t fi = layout->set_members[s->first_member + m];

			if (!(p->pf[fi].flags & PF_PENDING) || in_unit[fi])
				continue;
			in_unit[fi] = 1;
			p->members[p->nmembers++] = fi;
			u->n++;
			u->blocks += layout->files[fi].stream_blocks;
		}
		if (u->n > 1)
			for (m = 0; m < u->n; m++)
				p->pf[p->members[u->first + m]].flags |= PF_IN_SET;
		if (u->n)
			p->nunits++;
	}
	for (i = 0; i < layout->nfiles; i++) {
		struct unit *u;

		if (!(p->pf[i].flags & PF_PENDING) || in_unit[i])
			continue;
		u = &p->units[p->nunits++];
		u->first = p->nmembers;
		u->n = 1;
		u->blocks = layout->files[i].stream_blocks;
		p->members[p->nmembers++] = i;
	}
	free(in_unit);
	qsort_r(p->units, p->nunits, sizeof(*p->units), cmp_unit, p->members);
	return 0;
}

/* ---------------------------------------------------------------- figures */

static void finish_figures(struct planner *p)
{
	struct plan *plan = p->plan;
	struct layout *layout = p->layout;
	uint64_t i;
	blk64_t fb;

	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		struct plan_file *r = &plan->files[i];
		int candidate = p->sel->flags[i] & SEL_CANDIDATE;

		r->file = i;
		r->pieces_before = f->pieces;
		r->best = f->best;
		r->read_before = f->read_seconds;
		r->ideal = f->ideal_seconds;
		if (!r->moves) {
			r->pieces_after = f->pieces;
			r->read_after = f->read_seconds;
		}
		if (!candidate) {
			if (r->moves)
				r->outcome = OUT_EVACUATED;
			continue;
		}
		if (p->sel->flags[i] & SEL_UNMOVABLE) {
			r->outcome = OUT_SKIPPED;
			r->reason = p->sel->reason[i];
		} else if (r->outcome != OUT_SKIPPED) {
			r->outcome = !r->moves ? OUT_NO_ROOM :
				r->pieces_after <= r->best ? OUT_BEST : OUT_PARTIAL;
		}
		plan->selected++;
		switch (r->outcome) {
		case OUT_BEST: plan->best++; break;
		case OUT_PARTIAL: plan->partial++; break;
		case OUT_NO_ROOM: plan->no_room++; break;
		default: plan->skipped++; break;
		}
		if (r->moves)
			plan->needed_blocks += f->stream_blocks;
		plan->pieces_before += r->pieces_before;
		plan->pieces_after += r->pieces_after;
		plan->read_before += r->read_before;
		plan->read_after += r->read_after;
		plan->ideal += r->ideal;
	}
	for (i = 0; i < layout->nfiles; i++)
		if (plan->files[i].outcome == OUT_EVACUATED)
			plan->evacuated++;
	spacemap_free_stats(&p->sm, &plan->free_extents_after, &fb,
			    &plan->largest_free_after);
}

/* Every unit in turn; what is left is packed; what is left then gets fewer pieces. */
static errcode_t place_all(struct planner *p)
{
	struct unit *left;
	uint64_t i, nleft = 0;
	uint32_t k;
	errcode_t err = 0;

	left = malloc((p->nunits + 1) * sizeof(*left));
	if (!left)
		return ENOMEM;
	for (i = 0; !err && i < p->nunits; i++) {
		const struct unit *u = &p->units[i];
		int placed, pending = 0;

		for (k = 0; k < u->n; k++)
			pending |= p->pf[p->members[u->first + k]].flags & PF_PENDING;
		/* Files moved out of another's way earlier are placed already. */
		if (!pending)
			continue;
		err = place_unit(p, u, &placed);
		for (k = 0, pending = 0; k < u->n; k++)
			pending |= p->pf[p->members[u->first + k]].flags & PF_PENDING;
		if (pending)
			left[nleft++] = *u;
	}
	if (!err)
		err = compact_place(p, left, nleft);
	for (i = 0; !err && i < p->layout->nfiles; i++)
		if (p->pf[i].flags & PF_PENDING)
			err = place_partial(p, i);
	free(left);
	return err;
}

errcode_t plan_build(struct layout *layout, const struct selection *sel,
		     const struct plan_opts *opts, struct plan **ret)
{
	struct planner p;
	struct plan *plan;
	uint64_t i;
	errcode_t err;

	(void)opts;
	*ret = NULL;
	memset(&p, 0, sizeof(p));
	plan = calloc(1, sizeof(*plan));
	if (!plan)
		return ENOMEM;
	p.layout = layout;
	p.fs = layout->fs;
	p.sel = sel;
	p.plan = plan;
	p.quota = ext2fs_has_feature_quota(p.fs->super);
	plan->nfiles = layout->nfiles;
	plan->files = calloc(layout->nfiles + 1, sizeof(*plan->files));
	p.pf = calloc(layout->nfiles + 1, sizeof(*p.pf));
	p.owner_count = calloc(layout->nfiles + SM_FILE0, sizeof(*p.owner_count));
	if (!plan->files || !p.pf || !p.owner_count) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < layout->nfiles; i++) {
		if (sel->flags[i] & SEL_UNMOVABLE)
			p.pf[i].flags |= PF_UNMOVABLE;
		else if (sel->flags[i] & SEL_CANDIDATE)
			p.pf[i].flags |= PF_PENDING;
	}
	for (i = 0; i < layout->nzones; i++)
		if (layout->zones[i].len > p.largest_zone)
			p.largest_zone = layout->zones[i].len;
	err = build_space(&p);
	if (err)
		goto out;
	spacemap_free_stats(&p.sm, &plan->free_extents_before, &plan->free_blocks,
			    &plan->largest_free_before);
	err = check_candidates(&p);
	if (!err)
		err = build_units(&p);
	if (!err)
		err = place_all(&p);
	if (!err)
		finish_figures(&p);
out:
	for (i = 0; p.pf && i < layout->nfiles; i++) {
		free(p.pf[i].runs);
		free(p.pf[i].meta);
		if (p.pf[i].fmap) {
			fmap_free(p.pf[i].fmap);
			free(p.pf[i].fmap);
		}
	}
	free(p.pf);
	free(p.etb);
	free(p.units);
	free(p.members);
	free(p.owner_count);
	spacemap_free(&p.sm);
	if (err) {
		plan_free(plan);
		return err;
	}
	*ret = plan;
	return 0;
}

void plan_free(struct plan *plan)
{
	if (!plan)
		return;
	free(plan->moves);
	free(plan->segs);
	free(plan->meta);
	free(plan->files);
	free(plan);
}
