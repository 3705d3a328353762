/*
 * compact_split.c --- a file that a zone-by-zone packing leaves with no
 * place of its own gets one in pieces: the room the packing leaves at the
 * end of each gap, the largest first, as few as hold it.
 *
 * On a disk too full for every file's best (say the largest recordings
 * fit only the last zone, which holds all but one of them), packing zone
 * by zone gives the others their best and that one no place: the
 * frontier stages it out of the way bit by bit, into many more pieces,
 * the packing is taken back as leaving a file worse, and the run moves
 * nothing.  Given the ends of a few gaps as its final place, it ends in
 * a few pieces and the others at best (tests/cli/defrag-nearfull.sh's
 * nf-ext3-4k-95).
 *
 * Packed across zones (a file of best 2 or more: compact.c's must_span),
 * the same happens, and the room is every stretch of a zone no final place
 * takes, the ends the fill point skipped included
 * (tests/cli/defrag-nearfull.sh's nf-ext4-1k-95).
 *
 * A split file's final place is a list of runs (address order, each in
 * one gap, so in one zone) where every other file's is one zonewalk
 * stream from c->final[f]; compact_fin, compact_off and compact_segs
 * answer for both.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"

/* Pieces a split file may take at most (its tree grows with them). */
#define SPLIT_MAX_PIECES	8

const struct compact_split *compact_split_of(const struct compact *c, uint32_t f)
{
	size_t i;

	for (i = 0; i < c->nsplits; i++)
		if (c->splits[i].file == f)
			return &c->splits[i];
	return NULL;
}

blk64_t compact_split_blk(const struct compact_split *s, blk64_t off, blk64_t *left)
{
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		if (off < s->runs[i].len) {
			if (left)
				*left = s->runs[i].len - off;
			return s->runs[i].start + off;
		}
		off -= s->runs[i].len;
	}
	/* Past its place: plain addresses after the last run, nothing left. */
	if (left)
		*left = 0;
	return s->runs[s->n - 1].start + s->runs[s->n - 1].len + off;
}

blk64_t compact_off(const struct compact *c, uint32_t f, blk64_t blk)
{
	const struct compact_split *s = c->nsplits ? compact_split_of(c, f) : NULL;
	blk64_t off = 0;
	uint32_t i;

	if (!s)
		return zonewalk_off(c->p, c->final[f], blk);
	for (i = 0; i < s->n; i++) {
		if (blk < s->runs[i].start)
			return off;	/* between runs: where the next begins */
		if (blk < s->runs[i].start + s->runs[i].len)
			return off + (blk - s->runs[i].start);
		off += s->runs[i].len;
	}
	return off;
}

errcode_t compact_segs(const struct compact *c, uint32_t f, blk64_t s,
		       blk64_t e, struct change_vec *out)
{
	const struct compact_split *sp = c->nsplits ? compact_split_of(c, f) : NULL;

	while (s < e) {
		blk64_t left, b = sp ? compact_split_blk(sp, s, &left) :
			zonewalk_blk(c->p, c->final[f], s, &left);
		blk64_t n = left && left < e - s ? left : e - s;

		if (change_vec_add(out, s, n, b))
			return ENOMEM;
		s += n;
	}
	return 0;
}

/* Room indices by length, largest first. */
static int cmp_room_desc(const void *a, const void *b, void *arg)
{
	const struct hole *x = (const struct hole *)arg + *(const size_t *)a;
	const struct hole *y = (const struct hole *)arg + *(const size_t *)b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_size_t(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Pieces FILE is in now. */
static uint32_t pieces_now(const struct planner *p, uint32_t file)
{
	struct layout_piece sole;
	const struct layout_piece *r;
	uint32_t n;

	r = planner_runs(p, file, &n, &sole);
	return plan_pieces(r, n);
}

/*
 * Give FILE (no place in the packing) the fewest of the rooms R[0..N)
 * (each physically contiguous, in one gap) that hold it, largest first;
 * only in fewer pieces than it has now.  IDX: room for N indices.  The
 * rooms it takes shrink from their start; their gaps' packed parts grow
 * to cover them.  *DONE: it has its place.
 */
static errcode_t split_one(struct compact *c, uint32_t file, struct hole *r,
			   size_t *idx, size_t n, int *done)
{
	struct planner *p = c->p;
	struct compact_split *s;
	blk64_t need = 0, room = 0, left;
	size_t k, used[SPLIT_MAX_PIECES];
	uint32_t limit = pieces_now(p, file), i;
	errcode_t ret;

	*done = 0;
	if (limit > SPLIT_MAX_PIECES + 1)
		limit = SPLIT_MAX_PIECES + 1;
	for (k = 0; k < n; k++)
		idx[k] = k;
	sort_n_r(idx, n, sizeof(*idx), cmp_room_desc, r);
	for (k = 0; k < n && k + 1 < limit; k++) {
		room += r[idx[k]].len;
		ret = place_need(p, file, (int)k, &need);
		if (ret)
			return ret;
		if (room >= need)
			break;
	}
	if (k == n || k + 1 >= limit || room < need)
		return 0;
	/* In address order, each room in turn, the last taking the rest. */
	memcpy(used, idx, (k + 1) * sizeof(*idx));
	sort_n(used, k + 1, sizeof(*used), cmp_size_t);
	for (i = 0, left = need; i <= k; i++) {
		const struct hole *h = &r[used[i]];

		if (h->start + h->len > planner_limit(p, file) ||
		    (i < k && left <= h->len))
			return 0;	/* out of its reach; or one room fewer would do */
		left -= i < k ? h->len : left;
	}
	if (grow_n(&c->splits, &c->splits_cap, c->nsplits + 1, sizeof(*c->splits)))
		return ENOMEM;
	s = &c->splits[c->nsplits];
	s->file = file;
	s->n = 0;
	s->runs = malloc((k + 1) * sizeof(*s->runs));
	if (!s->runs)
		return ENOMEM;
	for (i = 0, left = need; i <= k; i++) {
		struct hole *h = &r[used[i]];
		struct gap *g = &c->gaps[h->gap];
		blk64_t take = h->len < left ? h->len : left, end;

		s->runs[s->n++] = (struct layout_piece){ h->start, take };
		end = zonewalk_off(p, g->start, h->start + take - 1) + 1;
		if (end > g->used)
			g->used = end;
		h->start += take;
		h->len -= take;
		left -= take;
	}
	c->nsplits++;
	c->final[file] = s->runs[0].start;
	c->need[file] = need;
	c->member[file] = 1;
	*done = 1;
	return 0;
}

static int cmp_need_desc(const void *a, const void *b, void *arg)
{
	const struct compact *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	blk64_t nx = layout_stream_blocks(c->p->layout, &c->p->layout->files[x]);
	blk64_t ny = layout_stream_blocks(c->p->layout, &c->p->layout->files[y]);

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The rooms leftover files may take: packed zone by zone, the room left
 * at each gap's end; across zones (the fill point skips the ends of
 * zones), every stretch of a zone no final place takes (compact_holes.c).
 */
static errcode_t split_rooms(struct compact *c, struct hole **out, size_t *nout)
{
	size_t i;

	if (c->span)
		return compact_holes_room(c, out, nout);
	*out = malloc((c->ngaps + 1) * sizeof(**out));
	if (!*out)
		return ENOMEM;
	for (i = 0; i < c->ngaps; i++)
		(*out)[i] = (struct hole){ c->gaps[i].start + c->gaps[i].used,
					   c->gaps[i].len - c->gaps[i].used, i };
	*nout = c->ngaps;
	return 0;
}

errcode_t compact_split_leftovers(struct compact *c)
{
	const struct planner *p = c->p;
	uint32_t *left = NULL;
	struct hole *r = NULL;
	size_t *idx = NULL, nleft = 0, nr = 0, i;
	errcode_t ret = 0;
	int done;

	for (i = 0; i < p->layout->nfiles; i++)
		nleft += c->member[i] == 2;
	if (!nleft || !c->ngaps)
		return 0;
	ret = split_rooms(c, &r, &nr);
	if (ret)
		return ret;
	left = malloc(nleft * sizeof(*left));
	idx = malloc((nr + 1) * sizeof(*idx));
	if (!left || !idx) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0, nleft = 0; i < p->layout->nfiles; i++)
		if (c->member[i] == 2)
			left[nleft++] = i;
	sort_n_r(left, nleft, sizeof(*left), cmp_need_desc, c);
	for (i = 0; !ret && i < nleft; i++)
		ret = split_one(c, left[i], r, idx, nr, &done);
out:
	free(left);
	free(idx);
	free(r);
	return ret;
}

void compact_split_free(struct compact *c)
{
	size_t i;

	for (i = 0; i < c->nsplits; i++)
		free(c->splits[i].runs);
	free(c->splits);
	c->splits = NULL;
	c->nsplits = c->splits_cap = 0;
}
