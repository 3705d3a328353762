/*
 * compact_stage.c --- where compaction puts what must leave the chunk at
 * hand: free runs outside it, where free space will stay first; final
 * places taken directly when they are free; and final places of indirect
 * blocks kept free (reserved) until their file is complete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"
#include "compare.h"
#include "lower_bound.h"

static int gap_ends_at_or_before(const void *gaps, uint64_t i, const void *blk)
{
	const struct gap *g = &((const struct gap *)gaps)[i];

	return g->start + g->len <= *(const blk64_t *)blk;
}

/* Index of the first gap ending after BLK. */
static size_t gap_at(const struct compact *c, blk64_t blk)
{
	return lower_bound(0, c->ngaps, gap_ends_at_or_before, c->gaps, &blk);
}

/* Sort [A, B) into where free space stays (*OUT) and packed areas (*IN). */
static errcode_t split_packed(struct compact *c, blk64_t a, blk64_t b,
			      struct piece_vec *in)
{
	size_t g = gap_at(c, a);
	errcode_t ret = 0;

	while (a < b && !ret) {
		blk64_t ps, pe;

		if (g >= c->ngaps || c->gaps[g].start >= b)
			return piece_vec_add(&c->cand, a, b);
		ps = c->gaps[g].start;
		pe = ps + c->gaps[g].used;
		if (a < ps) {
			ret = piece_vec_add(&c->cand, a, ps < b ? ps : b);
			a = ps;
			continue;
		}
		if (a < pe) {
			ret = piece_vec_add(in, a, pe < b ? pe : b);
			a = pe;
		}
		if (a < b) {
			blk64_t ge = c->gaps[g].start + c->gaps[g].len;

			ret = piece_vec_add(&c->cand, a, ge < b ? ge : b);
			a = ge;
		}
		g++;
	}
	return ret;
}

/*
 * Free runs outside [LO, HI) to stage into: first those where free space
 * will stay (outside every packed area), then the rest, highest first
 * (the frontier reaches them last).
 */
errcode_t stage_gather(struct compact *c, blk64_t lo, blk64_t hi)
{
	const struct spacemap *sm = &c->p->sm;
	struct piece_vec in = { 0 };
	size_t i, k, o;
	errcode_t ret = 0;

	c->cand.n = 0;
	c->cand_next = 0;
	c->cand_off = 0;
	/*
	 * Chunk by chunk, each cell read once: by index (SM_SEG) every
	 * segment would be three lookups, and this walk is made at every step.
	 */
	for (k = 0; k < sm->nchunks && !ret; k++) {
		const struct sm_chunk *ck = &sm->chunk[k];

		for (o = 0; o < ck->n && !ret; o++) {
			blk64_t s, e;

			if (ck->seg[o].owner != SM_FREE)
				continue;
			s = sm_cell_start(&ck->seg[o]);
			e = spacemap_next_start(sm, k, o);
			ret = split_packed(c, s, e < lo ? e : (s < lo ? lo : s), &in);
			if (!ret)
				ret = split_packed(c, s > hi ? s : hi, e, &in);
		}
	}
	/*
	 * IN came in the map's order: by start, each piece past the last
	 * (free segments in order, cut in order, none empty).  Highest first
	 * is that order backwards: no sort, and this is made at every step.
	 */
	c->cand_out = c->cand.n;
	for (i = in.n; i-- > 0 && !ret;)
		ret = piece_vec_add(&c->cand, in.v[i].start, in.v[i].start + in.v[i].len);
	piece_vec_free(&in);
	return ret;
}

int stage_whole(struct compact *c, blk64_t len, blk64_t *at)
{
	const struct spacemap *sm = &c->p->sm;
	blk64_t best_len = 0;
	size_t i;
	int found = 0;

	for (i = 0; i < c->cand_out; i++) {
		const struct layout_piece *r = &c->cand.v[i];
		size_t g = spacemap_find(sm, r->start);
		blk64_t s = r->start, l;

		/* What is still free of it (moves since it was listed took some). */
		if (SM_SEG(sm, g).owner != SM_FREE)
			continue;
		l = SM_SEG(sm, g).start + SM_SEG(sm, g).len - s;
		if (l > r->len)
			l = r->len;
		if (l >= len && (!found || l < best_len)) {
			found = 1;
			best_len = l;
			*at = s;
		}
	}
	return found ? 0 : -1;
}

errcode_t stage_fewest(struct compact *c, blk64_t len, uint32_t max_runs,
		       struct layout_piece **out, size_t *nout)
{
	const struct spacemap *sm = &c->p->sm;
	struct layout_piece *f, *o;
	size_t nf = 0, i, k;
	blk64_t left = len;

	*out = NULL;
	*nout = 0;
	f = malloc((c->cand_out + 1) * sizeof(*f));
	o = malloc(((size_t)max_runs + 1) * sizeof(*o));
	if (!f || !o) {
		free(f);
		free(o);
		return ENOMEM;
	}
	/* What is still free of the runs where free space stays. */
	for (i = 0; i < c->cand_out; i++) {
		const struct layout_piece *r = &c->cand.v[i];
		size_t g = spacemap_find(sm, r->start);
		blk64_t l;

		if (SM_SEG(sm, g).owner != SM_FREE)
			continue;
		l = SM_SEG(sm, g).start + SM_SEG(sm, g).len - r->start;
		f[nf].start = r->start;
		f[nf++].len = l < r->len ? l : r->len;
	}
	sort_n(f, nf, sizeof(*f), runs_cmp_len_desc);
	for (i = 0, k = 0; left && i < nf && k < max_runs; i++) {
		size_t j, pick = i;

		/* The last one: the smallest that still holds the rest. */
		for (j = i; j < nf && f[j].len >= left; j++)
			pick = j;
		o[k].start = f[pick].start;
		o[k].len = f[pick].len < left ? f[pick].len : left;
		left -= o[k++].len;
		if (pick != i)
			break;
	}
	free(f);
	if (left) {
		free(o);
		return 0;
	}
	sort_n(o, k, sizeof(*o), compare_piece_start);
	*out = o;
	*nout = k;
	return 0;
}

/*
 * Take LEN staging blocks, appended to *OUT as runs.  -1 when there are
 * too few.  The candidates were listed when the chunk began; blocks taken
 * since by a direct move to a final place are skipped.
 */
int stage_take(struct compact *c, blk64_t len, struct piece_vec *out)
{
	const struct spacemap *sm = &c->p->sm;

	while (len) {
		struct layout_piece *r;
		struct sm_seg gv;
		const struct sm_seg *g = &gv;
		blk64_t n, at;

		if (c->cand_next >= c->cand.n)
			return -1;
		r = &c->cand.v[c->cand_next];
		at = r->start + c->cand_off;
		n = r->len - c->cand_off < len ? r->len - c->cand_off : len;
		gv = SM_SEG(sm, spacemap_find(sm, at));
		if (g->start + g->len - at < n)
			n = g->start + g->len - at;
		if (g->owner == SM_FREE) {
			if (out->n && out->v[out->n - 1].start + out->v[out->n - 1].len == at)
				out->v[out->n - 1].len += n;
			else if (piece_vec_add(out, at, at + n))
				return -1;
			len -= n;
		}
		c->cand_off += n;
		if (c->cand_off == r->len) {
			c->cand_next++;
			c->cand_off = 0;
		}
	}
	return 0;
}


/* Mark the held final places (c->held) as taken, or give them back. */
errcode_t stage_hold(struct compact *c, uint32_t owner)
{
	struct sm_seg *ch;
	size_t i;
	errcode_t ret;

	if (!c->held.n)
		return 0;
	ch = malloc(c->held.n * sizeof(*ch));
	if (!ch)
		return ENOMEM;
	sort_n(c->held.v, c->held.n, sizeof(*c->held.v), compare_piece_start);
	for (i = 0; i < c->held.n; i++)
		ch[i] = (struct sm_seg){ c->held.v[i].start, c->held.v[i].len, owner };
	ret = spacemap_apply(&c->p->sm, ch, c->held.n);
	free(ch);
	return ret;
}

/* Give the final places held for the move at hand back to the free space. */
errcode_t stage_release(struct compact *c)
{
	errcode_t ret = stage_hold(c, SM_FREE);

	c->held.n = 0;
	return ret;
}

/*
 * Where LEN stream positions of F from SO on go when they leave [LO, HI):
 * their final places where those are free (they never move again), to
 * MOVES, held; what remains, to REST for staging.
 */
errcode_t stage_split_direct(struct compact *c, uint32_t f, blk64_t so,
			     blk64_t len, blk64_t lo, blk64_t hi,
			     struct change_vec *moves, struct change_vec *rest)
{
	const struct spacemap *sm = &c->p->sm;
	errcode_t ret = 0;

	while (len && !ret) {
		blk64_t n = len, fin = 0, left;
		int direct = 0;

		if (c->member[f] == 1) {
			struct sm_seg gv;
			const struct sm_seg *g = &gv;

			fin = compact_fin(c, f, so, &left);
			gv = SM_SEG(sm, spacemap_find(sm, fin));
			if (left && left < n)
				n = left;	/* the rest goes to the next zone */

			if (g->start + g->len - fin < n)
				n = g->start + g->len - fin;
			if (fin < hi && fin + n > lo) {
				/* Final place inside the chunk: up to its edge. */
				if (fin < lo)
					n = lo - fin;
				else
					n = (hi - fin < n ? hi - fin : n);
			} else {
				direct = g->owner == SM_FREE;
			}
		}
		if (direct) {
			ret = change_vec_add(moves, so, n, fin);
			if (!ret)
				ret = piece_vec_add(&c->held, fin, fin + n);
		} else {
			ret = change_vec_add(rest, so, n, 0);
		}
		so += n;
		len -= n;
	}
	return ret;
}

errcode_t stage_want_slot(struct compact *c, blk64_t blk)
{
	return blk_vec_add(&c->want, blk);
}

/*
 * A new place for F's indirect block at POS, whose contents change (the
 * work of compact_move.c's fmap_close_alloc_fn): it goes to staging; if
 * its final place is behind the chunk, that place is reserved for it.
 */
int stage_mapping(struct compact *c, uint32_t f, blk64_t pos, blk64_t *pblk)
{
	struct piece_vec one = { 0 };
	int ret;

	ret = stage_take(c, 1, &one);
	if (!ret)
		*pblk = one.v[0].start;
	piece_vec_free(&one);
	/*
	 * A final place behind the chunk would be taken as free space; one
	 * inside it is the fill's to deal with.
	 */
	if (!ret && c->member[f] == 1 && compact_fin(c, f, pos, NULL) < c->chunk_start)
		ret = stage_want_slot(c, compact_fin(c, f, pos, NULL)) ? -1 : 0;
	return ret;
}

/* After a move of F: reserve the slots it asked for. */
errcode_t stage_reserve_wanted(struct compact *c, uint32_t f)
{
	size_t i;
	errcode_t ret = 0;

	for (i = 0; i < c->want.n && !ret; i++) {
		if (!spacemap_is(&c->p->sm, c->want.v[i], 1, SM_FREE))
			continue;	/* taken by its own block: nothing to keep */
		if (grow_n(&c->res, &c->res_cap, c->nres + 1, sizeof(*c->res)))
			return ENOMEM;
		c->res[c->nres++] = (struct reserved){ f, c->want.v[i] };
		ret = spacemap_assign(&c->p->sm, c->want.v[i], 1, SM_RESERVED);
	}
	c->want.n = 0;
	return ret;
}

/* Give back F's reserved slots (all files' when F is UINT32_MAX). */
errcode_t stage_unreserve(struct compact *c, uint32_t f)
{
	size_t i, o = 0;
	errcode_t ret = 0;

	for (i = 0; i < c->nres; i++) {
		if (f != UINT32_MAX && c->res[i].file != f) {
			c->res[o++] = c->res[i];
			continue;
		}
		if (!ret)
			ret = spacemap_assign(&c->p->sm, c->res[i].blk, 1, SM_FREE);
	}
	c->nres = o;
	return ret;
}

