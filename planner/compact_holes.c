/*
 * compact_holes.c --- packing across zones, the room a single fill point
 * skips given to the files that fit a zone.
 *
 * Packing the whole disk across zones (compact.c's span) lays the files
 * out largest first from one fill point per gap: a file that does not fit
 * the rest of a zone moves the fill point on to the next zone, and the
 * blocks it skips are given to no one; and first fit opens the zones in
 * address order, so the small files fill the first zones they fit and
 * the last of them may find no zone with room (and be staged out of the
 * way, written several times its size) while the zones' skipped room,
 * taken together, holds it and the others (tests/cli/defrag-nearfull.sh's
 * nf-ext2-4k-95 is such a disk).
 *
 * So once packed, the files that fit a zone (best 1) are laid out again,
 * best fit, largest first, into what the files spanning zones (best 2 and
 * more, whose places stay) leave of every zone, the skipped ends
 * included: the bins the near-full promise counts (e2defrag(8)).  Kept
 * only when every file taking part then has a place at its best: a
 * partial gain moves the places of the files still left short, which the
 * later steps may then leave in more pieces, for no more files at best.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"

static int cmp_piece_start(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Gap holding BLK (its stream offset below the gap's length), or ngaps. */
static size_t gap_of(const struct compact *c, blk64_t blk)
{
	size_t i;

	for (i = 0; i < c->ngaps; i++)
		if (blk >= c->gaps[i].start &&
		    zonewalk_off(c->p, c->gaps[i].start, blk) < c->gaps[i].len)
			return i;
	return c->ngaps;
}

/*
 * The room of every gap, zone by zone, less the final places of the files
 * that stay (member 1, best 2 and more; with ALL, every one with member
 * 1): *OUT in address order.
 */
static errcode_t holes_left(struct compact *c, int all, struct hole **out,
			    size_t *nout)
{
	struct planner *p = c->p;
	struct piece_vec taken = { 0 };
	struct hole *h = NULL;
	size_t n = 0, hcap = 0, i, t = 0;
	uint64_t f;
	errcode_t ret = 0;

	for (f = 0; f < p->layout->nfiles && !ret; f++) {
		blk64_t off = 0, need, left, b;

		if (c->member[f] != 1 || (!all && planner_best(p, f) <= 1))
			continue;
		need = compact_need(c, f);
		while (off < need && !ret) {
			b = compact_fin(c, f, off, &left);
			if (!left || left > need - off)
				left = need - off;
			ret = piece_vec_add(&taken, b, b + left);
			off += left;
		}
	}
	sort_n(taken.v, taken.n, sizeof(*taken.v), cmp_piece_start);
	for (i = 0; i < c->ngaps && !ret; i++) {
		const struct gap *g = &c->gaps[i];
		blk64_t off = 0;

		while (off < g->len && !ret) {
			blk64_t left, s = zonewalk_blk(p, g->start, off, &left), e;

			if (!left || left > g->len - off)
				left = g->len - off;
			e = s + left;
			off += left;
			/* This zone's stretch of the gap less what stays taken. */
			while (t < taken.n && taken.v[t].start + taken.v[t].len <= s)
				t++;
			while (s < e && !ret) {
				blk64_t he = e;
				size_t k = t;

				while (k < taken.n && taken.v[k].start + taken.v[k].len <= s)
					k++;
				if (k < taken.n && taken.v[k].start <= s) {
					s = taken.v[k].start + taken.v[k].len;
					continue;
				}
				if (k < taken.n && taken.v[k].start < he)
					he = taken.v[k].start;
				if (grow_n(&h, &hcap, n + 1, sizeof(*h))) {
					ret = ENOMEM;
					break;
				}
				h[n++] = (struct hole){ s, he - s, i };
				s = he;
			}
		}
	}
	piece_vec_free(&taken);
	if (ret) {
		free(h);
		return ret;
	}
	*out = h;
	*nout = n;
	return 0;
}

/* What a packing decided for the files taking part, to go back to. */
struct compact_holes_pick {
	uint8_t		*member, *cross;
	blk64_t		*final, *used;
};

static void pick_save(const struct compact *c, const uint32_t *mem, uint32_t n,
		      struct compact_holes_pick *s)
{
	uint32_t k;
	size_t i;

	for (k = 0; k < n; k++) {
		s->member[k] = c->member[mem[k]];
		s->cross[k] = c->cross ? c->cross[mem[k]] : 0;
		s->final[k] = c->final[mem[k]];
	}
	for (i = 0; i < c->ngaps; i++)
		s->used[i] = c->gaps[i].used;
}

static void pick_load(struct compact *c, const uint32_t *mem, uint32_t n,
		      const struct compact_holes_pick *s)
{
	uint32_t k;
	size_t i;

	for (k = 0; k < n; k++) {
		c->member[mem[k]] = s->member[k];
		if (c->cross)
			c->cross[mem[k]] = s->cross[k];
		c->final[mem[k]] = s->final[k];
	}
	for (i = 0; i < c->ngaps; i++)
		c->gaps[i].used = s->used[i];
}

static int pick_alloc(struct compact_holes_pick *s, uint32_t n, size_t ngaps)
{
	s->member = malloc(n + 1);
	s->cross = malloc(n + 1);
	s->final = malloc((n + 1) * sizeof(*s->final));
	s->used = malloc((ngaps + 1) * sizeof(*s->used));
	return s->member && s->cross && s->final && s->used ? 0 : -1;
}

static void pick_free(struct compact_holes_pick *s)
{
	free(s->member);
	free(s->cross);
	free(s->final);
	free(s->used);
}

/* Files of MEM[0..N) with a place at their best (no more zones crossed than it needs). */
static uint32_t at_best(const struct compact *c, const uint32_t *mem, uint32_t n)
{
	uint32_t k, b = 0;

	for (k = 0; k < n; k++) {
		uint32_t f = mem[k], best = planner_best(c->p, f);

		b += c->member[f] == 1 &&
		     zonewalk_cross(c->p, c->final[f], compact_need(c, f)) + 1 <=
		     (best ? best : 1);
	}
	return b;
}

/*
 * The files of MEM[0..N) that fit a zone (best 1) laid out again, best
 * fit, largest first, in the holes the others' final places leave; each
 * gap's packed part then ends where its last final place does.
 */
static errcode_t fill_singles(struct compact *c, const uint32_t *mem, uint32_t n)
{
	struct planner *p = c->p;
	uint32_t *single, ns = 0, k;
	struct hole *h = NULL;
	size_t nh = 0, i;
	errcode_t ret;

	single = malloc((n + 1) * sizeof(*single));
	if (!single)
		return ENOMEM;
	for (k = 0; k < n; k++)
		if (planner_best(p, mem[k]) <= 1)
			single[ns++] = mem[k];
	ret = holes_left(c, 0, &h, &nh);
	if (ret)
		goto out;
	sort_n_r(single, ns, sizeof(*single), compact_cmp_need, c);
	for (k = 0; k < ns; k++) {
		uint32_t f = single[k];
		blk64_t need = compact_need(c, f);
		size_t pick = nh;

		for (i = 0; i < nh; i++)
			if (h[i].len >= need && (pick == nh || h[i].len < h[pick].len))
				pick = i;
		c->member[f] = pick == nh ? 2 : 1;
		c->final[f] = pick == nh ? 0 : h[pick].start;
		if (c->cross)
			c->cross[f] = 0;
		if (pick == nh)
			continue;
		h[pick].start += need;
		h[pick].len -= need;
	}
	for (i = 0; i < c->ngaps; i++)
		c->gaps[i].used = 0;
	for (k = 0; k < n; k++) {
		uint32_t f = mem[k];
		blk64_t end;
		size_t g;

		if (c->member[f] != 1 || !c->final[f])
			continue;
		g = gap_of(c, c->final[f]);
		if (g == c->ngaps)
			continue;
		end = zonewalk_off(p, c->gaps[g].start, c->final[f]) + compact_need(c, f);
		if (end > c->gaps[g].used)
			c->gaps[g].used = end;
	}
out:
	free(single);
	free(h);
	return ret;
}

/*
 * The files of MEM[0..N) spanning zones (best 2 and more) packed again,
 * largest first, without the others, each at its best from the gaps'
 * fill points: the small files no longer push them past a zone's start.
 */
static void relay_spanning(struct compact *c, const uint32_t *mem, uint32_t n)
{
	uint32_t *span, ns = 0, k;
	size_t i;

	span = malloc((n + 1) * sizeof(*span));
	if (!span)
		return;	/* the caller sees no gain */
	for (i = 0; i < c->ngaps; i++)
		c->gaps[i].used = 0;
	for (k = 0; k < n; k++) {
		if (planner_best(c->p, mem[k]) > 1)
			span[ns++] = mem[k];
		c->member[mem[k]] = 2;
		c->final[mem[k]] = 0;
		if (c->cross)
			c->cross[mem[k]] = 0;
	}
	sort_n_r(span, ns, sizeof(*span), compact_cmp_need, c);
	for (k = 0; k < ns; k++) {
		int64_t g = compact_first_fit(c, span[k]);

		if (g < 0)
			continue;
		c->member[span[k]] = 1;
		c->final[span[k]] = zonewalk_blk(c->p, c->gaps[g].start,
						 c->gaps[g].used - compact_need(c, span[k]),
						 NULL);
	}
	free(span);
}

errcode_t compact_holes_room(struct compact *c, struct hole **out, size_t *nout)
{
	return holes_left(c, 1, out, nout);
}

errcode_t compact_holes_refill(struct compact *c)
{
	uint64_t nfiles = c->p->layout->nfiles, f;
	struct compact_holes_pick orig = { 0 };
	uint32_t *mem = NULL, n = 0;
	errcode_t ret = 0;

	if (!c->span)
		return 0;
	mem = malloc((nfiles + 1) * sizeof(*mem));
	if (!mem)
		return ENOMEM;
	for (f = 0; f < nfiles; f++)
		if (c->member[f])
			mem[n++] = f;
	if (at_best(c, mem, n) == n)
		goto out;	/* every one at its best already */
	if (pick_alloc(&orig, n, c->ngaps)) {
		ret = ENOMEM;
		goto out;
	}
	pick_save(c, mem, n, &orig);
	/* The files spanning zones where they are, the others in what they leave. */
	ret = fill_singles(c, mem, n);
	if (!ret && at_best(c, mem, n) == n)
		goto out;
	/* Those spanning zones packed again alone first, then the others. */
	pick_load(c, mem, n, &orig);
	if (!ret) {
		relay_spanning(c, mem, n);
		ret = fill_singles(c, mem, n);
		if (!ret && at_best(c, mem, n) == n)
			goto out;
	}
	pick_load(c, mem, n, &orig);
out:
	pick_free(&orig);
	free(mem);
	return ret;
}
