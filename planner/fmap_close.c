/*
 * fmap_close.c --- which indirect blocks must move with a partial move of
 * a block-mapped file.
 *
 * An indirect block holds the addresses of the blocks below it.  When a
 * move gives any of those new addresses, its contents change, and a block
 * the live map uses must not be overwritten: the indirect block has to be
 * written to a new place too, which changes its parent, and so on up to
 * the inode.  The mover refuses a move that breaks this rule (fmap_build.c);
 * the planner uses this file to make moves that keep it.  Extent files
 * need nothing of the sort: their tree is rebuilt in new blocks anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "dutil.h"
#include "lower_bound.h"

/* Cumulative stream offsets of RUNS, for finding a position's block. */
static blk64_t *offsets(const struct layout_piece *runs, size_t n)
{
	blk64_t *o = malloc((n + 1) * sizeof(*o));
	size_t i;

	if (!o)
		return NULL;
	o[0] = 0;
	for (i = 0; i < n; i++)
		o[i + 1] = o[i] + runs[i].len;
	return o;
}

/* Index of the run holding stream position POS. */
static size_t run_index(const blk64_t *off, size_t n, blk64_t pos)
{
	return last_at_or_before(0, n, blk_at_or_before, off, &pos);
}

/* Whether any of positions [POS, POS+LEN) lies elsewhere in A than in B. */
static int range_moved(const struct layout_piece *a, const blk64_t *ao, size_t na,
		       const struct layout_piece *b, const blk64_t *bo, size_t nb,
		       blk64_t pos, blk64_t len)
{
	blk64_t end = pos + len;

	while (pos < end) {
		size_t i = run_index(ao, na, pos), j = run_index(bo, nb, pos);
		blk64_t step = ao[i + 1] < bo[j + 1] ? ao[i + 1] : bo[j + 1];

		if (a[i].start + (pos - ao[i]) != b[j].start + (pos - bo[j]))
			return 1;
		pos = step < end ? step : end;
	}
	return 0;
}

errcode_t mapclose_changes(struct planner *p, uint32_t file,
			   const struct plan_seg *ch, size_t nch,
			   mapclose_alloc_fn alloc, void *priv,
			   struct plan_seg **out, size_t *nout)
{
	const struct layout_piece *cur;
	struct layout_piece *new = NULL, sole;
	blk64_t *co = NULL, *no = NULL, *pos = NULL;
	uint8_t *moved = NULL, *dirty = NULL;
	struct plan_seg *res = NULL;
	struct fmap *m;
	size_t nnew = 0, nres = 0;
	uint32_t ncur, i;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	ret = planner_fmap(p, file, &m);
	if (ret)
		return ret;
	res = malloc((nch + m->nitems + 1) * sizeof(*res));
	if (!res)
		return ENOMEM;
	copy_n(res, ch, nch * sizeof(*ch));
	nres = nch;
	if (m->extents)
		goto done;
	cur = planner_runs(p, file, &ncur, &sole);
	ret = runs_apply(cur, ncur, ch, nch, &new, &nnew);
	if (ret)
		goto errout;
	co = offsets(cur, ncur);
	no = offsets(new, nnew);
	if (!co || !no || grow_n(&p->mc_pos, &p->mc_pos_cap, m->nitems + 1,
				 sizeof(*p->mc_pos)) ||
	    grow_n(&p->mc_flags, &p->mc_flags_cap, 2 * ((size_t)m->nitems + 1), 1)) {
		ret = ENOMEM;
		goto errout;
	}
	pos = p->mc_pos;
	moved = p->mc_flags;
	dirty = moved + m->nitems + 1;
	memset(moved, 0, 2 * ((size_t)m->nitems + 1));
	pos[0] = 0;
	for (i = 0; i + 1 < m->nitems; i++)
		pos[i + 1] = pos[i] + m->items[i].len;
	for (i = 0; i < m->nitems; i++) {
		moved[i] = range_moved(cur, co, ncur, new, no, nnew, pos[i],
				       m->items[i].len);
		if (moved[i] && m->items[i].parent != FMAP_ROOT)
			dirty[m->items[i].parent] = 1;
	}
	/* Bottom up: children come after their parent in the stream. */
	for (i = m->nitems; i-- > 0;) {
		blk64_t to;

		if (m->items[i].kind == FMAP_DATA || !dirty[i] || moved[i])
			continue;
		if (alloc(priv, file, pos[i], &to)) {
			ret = E2F_ERR_NO_SPACE;
			goto errout;
		}
		res[nres++] = (struct plan_seg){ pos[i], 1, to };
		moved[i] = 1;
		if (m->items[i].parent != FMAP_ROOT)
			dirty[m->items[i].parent] = 1;
	}
	sort_n(res, nres, sizeof(*res), plan_seg_cmp_off);
done:
	*out = res;
	*nout = nres;
	res = NULL;
errout:
	free(res);
	free(new);
	free(co);
	free(no);
	return ret;
}

void mapclose_scratch_free(struct planner *p)
{
	free(p->mc_pos);
	free(p->mc_flags);
	p->mc_pos = NULL;
	p->mc_flags = NULL;
	p->mc_pos_cap = p->mc_flags_cap = 0;
}

errcode_t mapclose_positions(struct planner *p, uint32_t file, blk64_t a,
			     blk64_t b, int incomplete, blk64_t **out, size_t *nout)
{
	blk64_t *res, *end, at = 0;
	struct fmap *m;
	size_t n = 0;
	uint32_t i;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	ret = planner_fmap(p, file, &m);
	if (ret || m->extents)
		return ret;
	res = malloc((m->nitems + 1) * sizeof(*res));
	if (!res || grow_n(&p->mc_pos, &p->mc_pos_cap, m->nitems + 1,
			   sizeof(*p->mc_pos))) {
		free(res);
		return ENOMEM;
	}
	end = p->mc_pos;
	/* End of each item's subtree, pushed up from the leaves. */
	for (i = 0; i < m->nitems; i++) {
		end[i] = at + m->items[i].len;
		at += m->items[i].len;
	}
	for (i = m->nitems; i-- > 0;)
		if (m->items[i].parent != FMAP_ROOT &&
		    end[i] > end[m->items[i].parent])
			end[m->items[i].parent] = end[i];
	for (i = 0, at = 0; i < m->nitems; at += m->items[i].len, i++)
		if (m->items[i].kind != FMAP_DATA && at >= a && at < b &&
		    (!incomplete || end[i] > b))
			res[n++] = at;
	*out = res;
	*nout = n;
	return 0;
}
