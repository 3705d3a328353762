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

#include "fmap.h"
#include "array.h"
#include "lower_bound.h"

/* Item flags in sc->flags, all clear between calls. */
enum { MC_MOVED = 1, MC_DIRTY = 2 };

/*
 * M's item positions and subtree ends (struct fmap: ipos, iend), made
 * once: the map's shape stays while the planner moves the file.
 */
static errcode_t item_positions(struct fmap *m)
{
	blk64_t at = 0;
	uint32_t i;

	if (m->ipos)
		return 0;
	m->ipos = malloc(((size_t)m->nitems + 1) * sizeof(*m->ipos));
	m->iend = malloc(((size_t)m->nitems + 1) * sizeof(*m->iend));
	if (!m->ipos || !m->iend) {
		free(m->ipos);
		free(m->iend);
		m->ipos = m->iend = NULL;
		return ENOMEM;
	}
	for (i = 0; i < m->nitems; i++) {
		m->ipos[i] = at;
		at += m->items[i].len;
		m->iend[i] = at;
	}
	m->ipos[m->nitems] = at;
	m->iend[m->nitems] = at;
	/* End of each item's subtree, pushed up from the leaves. */
	for (i = m->nitems; i-- > 0;)
		if (m->items[i].parent != FMAP_ROOT &&
		    m->iend[i] > m->iend[m->items[i].parent])
			m->iend[m->items[i].parent] = m->iend[i];
	return 0;
}

/* Room for the flags of M's items, clear (sc->flags stays clear between calls). */
static errcode_t flags_for(struct fmap_close *sc, const struct fmap *m)
{
	size_t had = sc->flags_cap;

	if (grow_n(&sc->flags, &sc->flags_cap, (size_t)m->nitems + 1, 1))
		return ENOMEM;
	if (sc->flags_cap > had)
		memset(sc->flags + had, 0, sc->flags_cap - had);
	return 0;
}

/* Note item K as FLAG; the first flag an item gets puts it on sc->list. */
static errcode_t flag_item(struct fmap_close *sc, size_t *nlist, uint32_t k,
			   uint8_t flag)
{
	if (!sc->flags[k]) {
		if (grow_n(&sc->list, &sc->list_cap, *nlist + 1,
			   sizeof(*sc->list)))
			return ENOMEM;
		sc->list[(*nlist)++] = k;
	}
	sc->flags[k] |= flag;
	return 0;
}

/* The heap of indirect blocks to place, largest index on top. */
static errcode_t heap_push(struct fmap_close *sc, size_t *n, uint32_t k)
{
	uint32_t *h;
	size_t i;

	if (grow_n(&sc->heap, &sc->heap_cap, *n + 1, sizeof(*sc->heap)))
		return ENOMEM;
	h = sc->heap;
	for (i = (*n)++; i && h[(i - 1) / 2] < k; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = k;
	return 0;
}

static uint32_t heap_pop(struct fmap_close *sc, size_t *n)
{
	uint32_t *h = sc->heap, top = h[0], last = h[--(*n)];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= last)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = last;
	return top;
}

/* Item K changes (it moves or its contents do): its parent's contents change. */
static errcode_t dirty_parent(struct fmap_close *sc, const struct fmap *m,
			      uint32_t k, size_t *nlist, size_t *nheap)
{
	uint32_t up = m->items[k].parent;
	errcode_t ret;

	if (up == FMAP_ROOT || (sc->flags[up] & MC_DIRTY))
		return 0;
	ret = flag_item(sc, nlist, up, MC_DIRTY);
	if (!ret)
		ret = heap_push(sc, nheap, up);
	return ret;
}

/* Flag the items holding stream positions [POS, END) as moved. */
static errcode_t mark_moved(struct fmap_close *sc, const struct fmap *m,
			    blk64_t pos, blk64_t end, size_t *nlist)
{
	uint64_t k = last_at_or_before(0, m->nitems, blk_at_or_before, m->ipos, &pos);
	errcode_t ret = 0;

	for (; k < m->nitems && m->ipos[k] < end && !ret; k++)
		if (!(sc->flags[k] & MC_MOVED))
			ret = flag_item(sc, nlist, (uint32_t)k, MC_MOVED);
	return ret;
}

static errcode_t push_seg(struct runs_change **res, size_t *n, size_t *cap,
			  struct runs_change s)
{
	if (grow_n(res, cap, *n + 1, sizeof(**res)))
		return ENOMEM;
	(*res)[(*n)++] = s;
	return 0;
}

/*
 * RES[0..NCH) (the move's changes, by offset) and RES[NCH..N) (indirect
 * blocks placed, as the heap gave them: deepest first, so by offset
 * backwards) put in order of offset, the move's first among equals: what
 * a stable sort of RES gives, in one pass, where a sort at every move
 * of a file in many pieces would cost a good part of planning.  Sorted
 * still when the second part is not strictly backwards (not seen: each
 * indirect block is a position).
 */
static errcode_t merge_by_off(struct runs_change *res, size_t nch, size_t n)
{
	struct runs_change *placed;
	size_t i, j, k, np = n - nch;

	for (k = nch + 1; k < n; k++)
		if (res[k].off >= res[k - 1].off) {
			sort_n(res, n, sizeof(*res), runs_change_cmp_off);
			return 0;
		}
	if (!np)
		return 0;
	placed = malloc(np * sizeof(*placed));
	if (!placed)
		return ENOMEM;
	for (k = 0; k < np; k++)
		placed[k] = res[n - 1 - k];	/* by offset now */
	/* From the end down: what is left of RES's first part stays put. */
	i = nch;
	j = np;
	k = n;
	while (j) {
		if (i && res[i - 1].off > placed[j - 1].off)
			res[--k] = res[--i];
		else
			res[--k] = placed[--j];
	}
	free(placed);
	return 0;
}

/*
 * The walk costs what the move touches: the runs and items its changes
 * cover, found by binary search in offsets the caller keeps from move to
 * move (the planner's runs_index.c, struct fmap's ipos), and the indirect
 * blocks above them; summing and searching the whole map at every move
 * would cost a file moved a chunk at a time its pieces times its moves.
 */
errcode_t fmap_close_changes(struct fmap_close *sc, struct fmap *m,
			     const struct layout_piece *cur, const blk64_t *co,
			     uint32_t ncur, const struct runs_change *ch, size_t nch,
			     fmap_close_alloc_fn alloc, void *priv,
			     struct runs_change **out, size_t *nout, int *fits)
{
	struct runs_change *res = NULL;
	size_t nres = 0, cap = 0, nlist = 0, nheap = 0, j;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	*fits = 1;
	if (grow_n(&res, &cap, nch + 1, sizeof(*res)))
		return ENOMEM;
	copy_n(res, ch, nch * sizeof(*ch));
	nres = nch;
	if (m->extents)
		goto done;
	ret = item_positions(m);
	if (!ret)
		ret = flags_for(sc, m);
	if (ret)
		goto errout;
	/* What runs_apply refuses. */
	*fits = runs_changes_fit(ch, nch, co[ncur]);
	if (!*fits)
		goto errout;
	/* The items some of whose blocks go elsewhere than they are. */
	for (j = 0; j < nch && !ret; j++) {
		blk64_t pos = ch[j].off, end = ch[j].off + ch[j].len;
		size_t i = runs_at(co, ncur, pos);

		for (; pos < end && !ret; i++) {
			blk64_t stop = co[i + 1] < end ? co[i + 1] : end;

			if (cur[i].start + (pos - co[i]) != ch[j].pblk + (pos - ch[j].off))
				ret = mark_moved(sc, m, pos, stop, &nlist);
			pos = stop;
		}
	}
	for (j = 0; j < nlist && !ret; j++)
		ret = dirty_parent(sc, m, sc->list[j], &nlist, &nheap);
	/*
	 * Bottom up (children come after their parent in the stream): the
	 * changed indirect blocks that do not move yet, largest index first.
	 */
	while (nheap && !ret) {
		uint32_t i = heap_pop(sc, &nheap);
		blk64_t to;

		if (m->items[i].kind == FMAP_DATA || (sc->flags[i] & MC_MOVED))
			continue;
		if (alloc(priv, m->ipos[i], &to)) {
			ret = E2F_ERR_NO_SPACE;
			break;
		}
		ret = push_seg(&res, &nres, &cap, (struct runs_change){ m->ipos[i], 1, to });
		sc->flags[i] |= MC_MOVED;
		if (!ret)
			ret = dirty_parent(sc, m, i, &nlist, &nheap);
	}
	for (j = 0; j < nlist; j++)
		sc->flags[sc->list[j]] = 0;
	if (ret)
		goto errout;
	ret = merge_by_off(res, nch, nres);
	if (ret)
		goto errout;
done:
	*out = res;
	*nout = nres;
	return 0;
errout:
	free(res);
	return ret;
}

void fmap_close_free(struct fmap_close *sc)
{
	free(sc->flags);
	free(sc->list);
	free(sc->heap);
	memset(sc, 0, sizeof(*sc));
}

errcode_t fmap_close_positions(struct fmap *m, blk64_t a, blk64_t b,
			       int incomplete, blk64_t **out, size_t *nout)
{
	blk64_t *res = NULL;
	size_t n = 0, cap = 0;
	uint64_t i;
	errcode_t ret;

	*out = NULL;
	*nout = 0;
	if (m->extents)
		return 0;
	ret = item_positions(m);
	if (ret)
		return ret;
	/* The items from A on: a search, not a walk of the map from its start. */
	for (i = lower_bound(0, m->nitems, blk_before, m->ipos, &a);
	     i < m->nitems && m->ipos[i] < b; i++) {
		if (m->items[i].kind == FMAP_DATA || (incomplete && m->iend[i] <= b))
			continue;
		if (grow_n(&res, &cap, n + 1, sizeof(*res))) {
			free(res);
			return ENOMEM;
		}
		res[n++] = m->ipos[i];
	}
	*out = res;
	*nout = n;
	return 0;
}
