/*
 * interleave.c --- which files were written into each other's way.
 *
 * The definition (doc/design.md, e2frag(8)): walk every piece of every file
 * in physical order.  The stretch between two consecutive pieces of a
 * file is one of its gaps; a gap counts when it is short (at most
 * WINDOW_RUNS pieces inside and one block group of blocks across).  Each
 * counting gap of A with a piece of B inside is one enclosure of the
 * pair; A and B interleave when they have at least MIN_ALTERNATIONS
 * enclosures between them, i.e. ownership runs A..B..A..B.  A small file
 * dropped into one hole of a big one (A..B..A) is fragmentation, not
 * interleaving.
 *
 * Counting every enclosure costs pieces x WINDOW_RUNS and a table of
 * every pair ever enclosed, most of them once.  What is counted here
 * instead: when all of B lies inside one gap of A, the pair has that one
 * enclosure and no other (A's other pieces are outside B's span, so no
 * gap of B holds a piece of A, and no other gap of A holds B).  Otherwise
 * a gap G of A that holds a piece of B also has B outside it, so one of
 * B's gaps crosses G: it has one end inside G and the other outside.
 * Hence the pairs with two enclosures or more are those whose gaps
 * cross, and their count is
 *
 *	counting gaps of A crossed by a gap of B
 *	+ counting gaps of B crossed by a gap of A.
 *
 * Both terms are found from A's side alone, by asking for each gap (u, v)
 * of A which gaps have exactly one end inside it: the pieces q inside
 * with their previous piece before u, or their next one after v.  Search
 * trees over "previous" and "next" answer that in O(log pieces) per gap
 * plus O(log pieces) per crossing found, and crossings of two gaps that
 * do not count are never looked at; each crossing found adds at most two
 * to the count of a pair whose gaps cross, so the work is
 * O((pieces + alternations) log pieces), alternations counting the pairs
 * that cross once as well.  Counts live in an array over the files while
 * one file is looked at and are reset after it: memory is O(files +
 * interleaving pairs), whatever the size of the sets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "layout_int.h"
#include "interleave_int.h"
#include "lower_bound.h"

#define WINDOW_RUNS		1024
#define MIN_ALTERNATIONS	2

/* Runs per leaf of the search trees: a leaf is scanned, not stored. */
#define LEAF_RUNS		32

#define NO_RUN		0x7fffffffU	/* no previous / next piece */
#define COUNTS		0x80000000U	/* in prev[q]: the gap ending at q counts;
					 * in next[q]: the gap starting at q counts */
#define KEY_NONE	UINT32_MAX	/* matches no search */

/* What a search asks of a piece q inside a gap (u, v). */
enum search {
	PREV_ANY,	/* its gap to the previous piece starts before u */
	PREV_COUNTING,	/* ... and that gap counts */
	NEXT_ANY,	/* its gap to the next piece ends after v */
	NEXT_COUNTING,	/* ... and that gap counts */
	SEARCHES
};

/*
 * The pieces of every file in more than one piece, in physical order
 * (position q).  A file in one piece has no gap: it encloses nothing and
 * lies in at most one gap of another file, so it never interleaves.  Those
 * files are numbered densely (files[dense] = index into layout->files) so
 * that the per-file arrays are as small as the fragmented part of the
 * filesystem, not the whole of it.
 */
struct runs {
	uint32_t	n;		/* pieces */
	uint32_t	nfiles;		/* dense files */
	uint32_t	*files;		/* dense -> layout index */
	ext2_ino_t	*inos;		/* dense -> inode number (a cache-sized copy) */
	uint32_t	*first;		/* dense -> position of its first piece */
	uint32_t	*file;		/* position -> dense file */
	uint32_t	*prev;		/* position -> previous piece of its file | COUNTS */
	uint32_t	*next;		/* position -> next piece of its file | COUNTS */
	uint32_t	*last;		/* dense -> position of its last piece */
	uint32_t	leaves, size;	/* leaves in use; leaves in the tree (a power of 2) */
	uint32_t	*tree[SEARCHES];/* min of the keys below each node */
};

static void runs_free(struct runs *r)
{
	int s;

	free(r->files);
	free(r->inos);
	free(r->first);
	free(r->file);
	free(r->prev);
	free(r->next);
	free(r->last);
	for (s = 0; s < SEARCHES; s++)
		free(r->tree[s]);
}

/*
 * The key a search compares; a piece is found when its key is below the
 * threshold (u for PREV_*, ~v for NEXT_*: later pieces have smaller
 * complements, so one "minimum below" search serves both directions).
 */
static inline uint32_t run_key(const struct runs *r, enum search s, uint32_t q)
{
	uint32_t p = r->prev[q], n = r->next[q] & ~COUNTS;

	switch (s) {
	case PREV_ANY:
		return p & ~COUNTS;	/* NO_RUN is above every threshold */
	case PREV_COUNTING:
		return p & COUNTS ? p & ~COUNTS : KEY_NONE;
	case NEXT_ANY:
		return n == NO_RUN ? KEY_NONE : ~n;
	default:
		return r->next[q] & COUNTS ? ~n : KEY_NONE;
	}
}

/* Sort order of the pieces: start, then file, then logical order. */
static int cmp_piece_start(const void *a, const void *b, void *arg)
{
	const struct layout_piece *pc = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (pc[x].start != pc[y].start)
		return pc[x].start < pc[y].start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * The fragmented files and their pieces, numbered in file order (piece
 * number k of all of them).  A scan stores exactly these pieces in
 * layout->pieces in that order; a layout put together otherwise gets a
 * packed copy in *COPY.
 */
static errcode_t runs_pieces(const struct layout *layout, struct runs *r,
			     const struct layout_piece **ret_pc,
			     struct layout_piece **copy)
{
	uint64_t i, n = 0;
	uint32_t d = 0, p;
	int packed = 1;

	*copy = NULL;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if (layout_file_pieces(layout, f) < 2)
			continue;
		if (layout_file_where(f) != n)
			packed = 0;
		n += layout_file_pieces(layout, f);
		d++;
	}
	if (n >= NO_RUN)
		return EOVERFLOW;
	r->n = n;
	r->nfiles = d;
	r->files = malloc((d + 1) * sizeof(*r->files));
	r->first = malloc((d + 1) * sizeof(*r->first));
	r->inos = malloc((d + 1) * sizeof(*r->inos));
	if (!r->files || !r->first || !r->inos)
		return ENOMEM;
	if (!packed) {
		*copy = malloc((n + 1) * sizeof(**copy));
		if (!*copy)
			return ENOMEM;
	}
	for (i = 0, d = 0, n = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if (layout_file_pieces(layout, f) < 2)
			continue;
		r->files[d] = i;
		r->inos[d] = f->ino;
		r->first[d++] = n;	/* its first piece number, for now */
		for (p = 0; p < layout_file_pieces(layout, f); p++, n++)
			if (!packed)
				(*copy)[n] = layout_file_piece(layout, f, p);
	}
	*ret_pc = packed ? layout->pieces : *copy;
	return 0;
}

/* The dense file piece number PIECE belongs to: BASE holds each one's first. */
static int u32_at_or_before(const void *array, uint64_t i, const void *key)
{
	return ((const uint32_t *)array)[i] <= *(const uint32_t *)key;
}

static uint32_t file_of_piece(const uint32_t *base, uint32_t nfiles, uint32_t piece)
{
	return (uint32_t)last_at_or_before(0, nfiles, u32_at_or_before, base, &piece);
}

/*
 * Put the pieces in physical order and link each file's pieces to their
 * neighbours there, in one walk of that order; mark the gaps that count.
 * Three numbers per piece stay (file, previous, next): with the pieces
 * themselves that is what a recording of 4 streams block by block, with
 * more pieces than anything else, can afford.
 */
static errcode_t runs_build(const struct layout *layout, struct runs *r)
{
	blk64_t window = layout->fs->super->s_blocks_per_group;
	const struct layout_piece *pc;
	struct layout_piece *copy = NULL;
	uint32_t *order = NULL, *base = NULL, *last = NULL;
	blk64_t *last_end = NULL;
	uint32_t d, q;
	errcode_t ret;

	ret = runs_pieces(layout, r, &pc, &copy);
	if (ret)
		goto out;
	order = malloc((r->n + 1) * sizeof(*order));	/* position -> piece number */
	r->prev = malloc((r->n + 1) * sizeof(*r->prev));
	r->next = malloc((r->n + 1) * sizeof(*r->next));
	base = malloc((r->nfiles + 1) * sizeof(*base));
	last = malloc((r->nfiles + 1) * sizeof(*last));
	last_end = malloc((r->nfiles + 1) * sizeof(*last_end));
	if (!order || !r->prev || !r->next || !base || !last || !last_end) {
		ret = ENOMEM;
		goto out;
	}
	for (q = 0; q < r->n; q++)
		order[q] = q;
	qsort_r(order, r->n, sizeof(*order), cmp_piece_start, (void *)pc);
	memcpy(base, r->first, r->nfiles * sizeof(*base));
	for (d = 0; d < r->nfiles; d++)
		last[d] = NO_RUN;
	for (q = 0; q < r->n; q++) {
		const struct layout_piece *p = &pc[order[q]];
		uint32_t a;

		d = file_of_piece(base, r->nfiles, order[q]);
		a = last[d];
		if (a == NO_RUN) {
			r->first[d] = q;
			r->prev[q] = NO_RUN;
		} else {
			r->prev[q] = a;
			r->next[a] = q;
			/* Unsigned, as always: overlapping pieces (a corrupt map) do not count. */
			if (q - a - 1 <= WINDOW_RUNS && p->start - last_end[d] <= window) {
				r->prev[q] |= COUNTS;
				r->next[a] |= COUNTS;	/* no lookup of prev[next] in the searches */
			}
		}
		last[d] = q;
		last_end[d] = p->start + p->len;
		order[q] = d;	/* the piece number is used up: the file takes its place */
	}
	for (d = 0; d < r->nfiles; d++)
		r->next[last[d]] = NO_RUN;
	r->file = order;
	r->last = last;		/* tally_file wants each file's last piece */
	order = NULL;
	last = NULL;
out:
	free(order);
	free(base);
	free(last);
	free(last_end);
	free(copy);
	return ret;
}

/* The search trees: over leaves of LEAF_RUNS positions, the least key. */
static errcode_t runs_index(struct runs *r)
{
	uint32_t leaf, q, i;
	int s;

	r->leaves = (r->n + LEAF_RUNS - 1) / LEAF_RUNS;
	for (r->size = 1; r->size < r->leaves; r->size *= 2)
		;
	for (s = 0; s < SEARCHES; s++) {
		uint32_t *t = malloc(2 * r->size * sizeof(*t));

		if (!t)
			return ENOMEM;
		r->tree[s] = t;
		for (leaf = 0; leaf < r->size; leaf++) {
			uint32_t least = KEY_NONE;

			for (q = leaf * LEAF_RUNS; leaf < r->leaves &&
			     q < r->n && q < (leaf + 1) * LEAF_RUNS; q++) {
				uint32_t key = run_key(r, s, q);

				if (key < least)
					least = key;
			}
			t[r->size + leaf] = least;
		}
		for (i = r->size - 1; i >= 1; i--)
			t[i] = t[2 * i] < t[2 * i + 1] ? t[2 * i] : t[2 * i + 1];
	}
	return 0;
}

/*
 * The first leaf in [LO, HI] with a key below THR, in the tree T over
 * SIZE leaves: up from leaf LO to the first subtree to its right whose
 * least key is below THR, then down to that subtree's first such leaf.
 * Iterative and O(log distance): the searches make millions of calls.
 */
static uint32_t first_leaf_below(const uint32_t *t, uint32_t size, uint32_t lo,
				 uint32_t hi, uint32_t thr)
{
	uint32_t node = size + lo;

	if (lo > hi)
		return NO_RUN;
	while (t[node] >= thr) {
		while (node & 1)	/* a right child (or the root): up */
			node >>= 1;
		if (!node)
			return NO_RUN;	/* nothing to the right */
		node++;			/* the subtree right of the ones passed */
	}
	while (node < size)
		node = t[2 * node] < thr ? 2 * node : 2 * node + 1;
	return node - size <= hi ? node - size : NO_RUN;
}

/* What one file's gaps have found so far: its count per other file. */
struct tally {
	const struct runs *r;
	uint32_t	x;		/* the file looked at */
	uint32_t	last;		/* position of its last piece */
	uint32_t	u, v;		/* the gap looked at */
	int		counts;		/* whether that gap counts */
	uint32_t	*count;		/* dense -> enclosures with x (0 outside the list) */
	uint32_t	*seen_in;	/* dense -> last gap of x (by v) that credited it */
	uint32_t	*touched;	/* files with count > 0 */
	uint32_t	ntouched;
};

/*
 * Gap (u, v) of x is crossed by gap H of y.  Credit the pair with (u, v)
 * once if it counts, and with H once if it counts.  H holds pieces of x,
 * and is crossed by x's gaps where x enters it and where x leaves it;
 * it is credited where x leaves it (H ends inside (u, v)) or, when x
 * never leaves it (x's last piece is inside H), where x enters it.
 * Inlined: it is called for millions of crossings on a tree the kernel
 * interleaved, where a call each would cost a good part of the scan.
 */
static inline __attribute__((always_inline)) void
tally_crossing(struct tally *t, uint32_t y, int h_counts, int x_leaves,
	       uint32_t h_end)
{
	uint32_t add = 0;

	if (t->counts && t->seen_in[y] != t->v) {
		t->seen_in[y] = t->v;
		add++;
	}
	if (h_counts && (x_leaves || t->last < h_end))
		add++;
	if (!add)
		return;
	if (!t->count[y])
		t->touched[t->ntouched++] = y;
	t->count[y] += add;
}

/* A piece q inside the gap, found by search S: its gap crosses the gap. */
static inline __attribute__((always_inline)) void
tally_found(struct tally *t, enum search s, uint32_t q)
{
	const struct runs *r = t->r;

	if (s == PREV_ANY || s == PREV_COUNTING)
		tally_crossing(t, r->file[q], !!(r->prev[q] & COUNTS), 1, q);
	else
		tally_crossing(t, r->file[q], !!(r->next[q] & COUNTS), 0,
			       r->next[q] & ~COUNTS);
}

/*
 * Every position in [LO, HI] whose key for S is below THR.  Inlined with
 * S a constant at each call, so that run_key's switch leaves the loop.
 */
static inline __attribute__((always_inline)) void search(struct tally *t, enum search s, uint32_t lo, uint32_t hi,
		   uint32_t thr)
{
	const struct runs *r = t->r;
	uint32_t leaf, end, q;

	leaf = lo / LEAF_RUNS;
	while (leaf != NO_RUN && leaf * LEAF_RUNS <= hi) {
		leaf = first_leaf_below(r->tree[s], r->size, leaf, hi / LEAF_RUNS, thr);
		if (leaf == NO_RUN)
			break;
		q = leaf * LEAF_RUNS > lo ? leaf * LEAF_RUNS : lo;
		end = (leaf + 1) * LEAF_RUNS - 1 < hi ? (leaf + 1) * LEAF_RUNS - 1 : hi;
		for (; q <= end; q++)
			if (run_key(r, s, q) < thr)
				tally_found(t, s, q);
		leaf++;
	}
}

/* Gaps with at most this many pieces inside are read straight, not searched. */
#define SHORT_GAP	(2 * LEAF_RUNS)

/*
 * What crosses a short gap (u, v) of x: the same finds as the four
 * searches, in one pass over the pieces inside and with no tree.
 */
static void tally_short_gap(struct tally *t)
{
	const struct runs *r = t->r;
	uint32_t q, need = t->counts ? 0 : COUNTS;

	for (q = t->u + 1; q < t->v; q++) {
		uint32_t p = r->prev[q], n = r->next[q];

		if ((p & need) == need && (p & ~COUNTS) < t->u)
			tally_crossing(t, r->file[q], !!(p & COUNTS), 1, q);
		if ((n & need) == need && (n & ~COUNTS) != NO_RUN &&
		    (n & ~COUNTS) > t->v)
			tally_crossing(t, r->file[q], !!(n & COUNTS), 0, n & ~COUNTS);
	}
}

/* Every gap of x: what crosses it, tallied per other file. */
static void tally_file(struct tally *t, uint32_t x)
{
	const struct runs *r = t->r;
	uint32_t q;

	t->x = x;
	t->ntouched = 0;
	t->last = r->last[x];
	for (q = r->first[x]; q != t->last; q = t->v) {
		t->u = q;
		t->v = r->next[q] & ~COUNTS;
		if (t->v - t->u < 2)
			continue;	/* nothing inside */
		t->counts = !!(r->next[q] & COUNTS);
		if (t->v - t->u - 1 <= SHORT_GAP) {
			tally_short_gap(t);
			continue;
		}
		/* A gap that does not count only credits the gaps crossing it that do. */
		if (t->counts) {
			search(t, PREV_ANY, t->u + 1, t->v - 1, t->u);
			search(t, NEXT_ANY, t->u + 1, t->v - 1, ~t->v);
		} else {
			search(t, PREV_COUNTING, t->u + 1, t->v - 1, t->u);
			search(t, NEXT_COUNTING, t->u + 1, t->v - 1, ~t->v);
		}
	}
}

/* Append x's partners (files with MIN_ALTERNATIONS or more) to the layout. */
static errcode_t emit_partners(struct layout *layout, const struct runs *r,
			       struct tally *t, struct interleave_work *w)
{
	struct layout_interleave *il;
	struct layout_pair *top;
	uint32_t i, y, kept = 0, ntop = 0, root = NO_RUN, ry;
	errcode_t ret;

	for (i = 0; i < t->ntouched; i++) {
		y = t->touched[i];
		if (t->count[y] >= MIN_ALTERNATIONS)
			t->touched[kept++] = y;
		else
			t->count[y] = 0;
	}
	if (!kept)
		return 0;
	ret = util_grow(&layout->interleaved, &w->interleaved_cap,
			  layout->ninterleaved + 1, sizeof(*layout->interleaved));
	if (!ret && !layout->partner_counts_only)
		ret = util_grow(&layout->partners, &w->partners_cap,
				  layout->npartners + kept, sizeof(*layout->partners));
	if (!ret && !layout->no_outlines)
		ret = util_grow(&layout->interleave_top, &w->top_cap,
				  (layout->ninterleaved + 1) * LAYOUT_OUTLINE_PAIRS,
				  sizeof(*layout->interleave_top));
	if (ret)
		return ret;
	top = NULL;
	if (!layout->no_outlines) {
		top = &layout->interleave_top[layout->ninterleaved * LAYOUT_OUTLINE_PAIRS];
		memset(top, 0, LAYOUT_OUTLINE_PAIRS * sizeof(*top));
	}
	il = &layout->interleaved[layout->ninterleaved];
	memset(il, 0, sizeof(*il));
	il->file = r->files[t->x];
	il->first_partner = layout->npartners;
	il->set = t->x;		/* dense number, until the sets are known */
	for (i = 0; i < kept; i++) {
		ext2_ino_t a = r->inos[t->x], b;
		uint32_t c;

		y = t->touched[i];
		b = r->inos[y];
		c = t->count[y];
		if (!layout->partner_counts_only)
			layout->partners[layout->npartners++] = b;
		/* Most partners are weaker than the five kept: no call for them. */
		if (top && (ntop < LAYOUT_OUTLINE_PAIRS ||
			    c >= top[LAYOUT_OUTLINE_PAIRS - 1].alternations)) {
			struct layout_pair p;

			p.a = a < b ? a : b;
			p.b = a < b ? b : a;
			p.alternations = c;
			if (ntop < LAYOUT_OUTLINE_PAIRS ||
			    interleave_pair_better(&p, &top[LAYOUT_OUTLINE_PAIRS - 1]))
				interleave_keep_pair(top, &ntop, p);
		}
		il->partners++;
		il->alternations += c;
		t->count[y] = 0;
		/*
		 * Partners are mutual (y lists x too): join each pair once,
		 * y's root under x's, which stays a root for all of x's
		 * partners (the sets are numbered by their first member,
		 * whichever root they have).
		 */
		if (y > t->x) {
			if (root == NO_RUN)
				root = interleave_root(w->parent, t->x);
			ry = interleave_root(w->parent, y);
			if (ry != root)
				w->parent[ry] = root;
		}
	}
	layout->ninterleaved++;
	return 0;
}

/* Give back what doubling left unused: the partner lists stay for the run. */
static void trim(void *array, uint64_t n, size_t size)
{
	void **p = array;
	void *q = realloc(*p, (n ? n : 1) * size);

	if (q)
		*p = q;
}

errcode_t interleave_find(struct layout *layout)
{
	struct runs r;
	struct tally t;
	struct interleave_work w;
	uint32_t x;
	errcode_t ret;

	memset(&r, 0, sizeof(r));
	memset(&t, 0, sizeof(t));
	memset(&w, 0, sizeof(w));
	ret = runs_build(layout, &r);
	if (!ret)
		ret = runs_index(&r);
	if (ret)
		goto out;
	t.r = &r;
	t.count = calloc(r.nfiles + 1, sizeof(*t.count));
	t.seen_in = malloc((r.nfiles + 1) * sizeof(*t.seen_in));
	t.touched = malloc((r.nfiles + 1) * sizeof(*t.touched));
	w.parent = malloc((r.nfiles + 1) * sizeof(*w.parent));
	if (!t.count || !t.seen_in || !t.touched || !w.parent) {
		ret = ENOMEM;
		goto out;
	}
	w.ndense = r.nfiles;
	for (x = 0; x < r.nfiles; x++) {
		t.seen_in[x] = NO_RUN;
		w.parent[x] = x;
	}
	for (x = 0; x < r.nfiles; x++) {
		tally_file(&t, x);
		ret = emit_partners(layout, &r, &t, &w);
		if (ret)
			goto out;
	}
	trim(&layout->interleaved, layout->ninterleaved, sizeof(*layout->interleaved));
	if (layout->partners)
		trim(&layout->partners, layout->npartners, sizeof(*layout->partners));
	if (layout->interleave_top)
		trim(&layout->interleave_top, layout->ninterleaved * LAYOUT_OUTLINE_PAIRS,
		     sizeof(*layout->interleave_top));
	/* The scratch goes before the sets are made, so that peaks do not add up. */
	free(t.count);
	free(t.seen_in);
	free(t.touched);
	t.count = t.seen_in = t.touched = NULL;
	runs_free(&r);
	memset(&r, 0, sizeof(r));
	ret = interleave_fill_sets(layout, &w);
out:
	free(t.count);
	free(t.seen_in);
	free(t.touched);
	free(w.parent);
	runs_free(&r);
	return ret;
}

/* ------------------------------------------------- one file's, when asked */

struct layout_partners {
	struct runs	r;
	struct tally	t;
};

static int u32_before(const void *array, uint64_t i, const void *key)
{
	return ((const uint32_t *)array)[i] < *(const uint32_t *)key;
}

errcode_t layout_partners_open(const struct layout *layout,
			       struct layout_partners **ret)
{
	struct layout_partners *lp = calloc(1, sizeof(*lp));
	errcode_t err;
	uint32_t x;

	*ret = NULL;
	if (!lp)
		return ENOMEM;
	err = runs_build(layout, &lp->r);
	if (!err)
		err = runs_index(&lp->r);
	lp->t.r = &lp->r;
	lp->t.count = calloc(lp->r.nfiles + 1, sizeof(*lp->t.count));
	lp->t.seen_in = malloc((lp->r.nfiles + 1) * sizeof(*lp->t.seen_in));
	lp->t.touched = malloc((lp->r.nfiles + 1) * sizeof(*lp->t.touched));
	if (!err && (!lp->t.count || !lp->t.seen_in || !lp->t.touched))
		err = ENOMEM;
	if (err) {
		layout_partners_close(lp);
		return err;
	}
	for (x = 0; x < lp->r.nfiles; x++)
		lp->t.seen_in[x] = NO_RUN;
	*ret = lp;
	return 0;
}

errcode_t layout_partners_of(struct layout_partners *lp, uint64_t file,
			     ext2_ino_t **inos, uint32_t *n)
{
	struct tally *t = &lp->t;
	uint32_t key = (uint32_t)file, d, i, y, kept = 0;
	ext2_ino_t *v;

	*inos = NULL;
	*n = 0;
	/* Dense numbers follow layout order: a file in one piece has none, and no partner. */
	d = (uint32_t)lower_bound(0, lp->r.nfiles, u32_before, lp->r.files, &key);
	if (file > UINT32_MAX || d >= lp->r.nfiles || lp->r.files[d] != key)
		return 0;
	tally_file(t, d);
	v = malloc((t->ntouched + 1) * sizeof(*v));
	for (i = 0; i < t->ntouched; i++) {
		y = t->touched[i];
		if (v && t->count[y] >= MIN_ALTERNATIONS)
			v[kept++] = lp->r.inos[y];
		/* Ready for the next question: the whole scan asks each file once. */
		t->count[y] = 0;
		t->seen_in[y] = NO_RUN;
	}
	if (!v)
		return ENOMEM;
	qsort(v, kept, sizeof(*v), compare_u32);
	*inos = v;
	*n = kept;
	return 0;
}

void layout_partners_close(struct layout_partners *lp)
{
	if (!lp)
		return;
	runs_free(&lp->r);
	free(lp->t.count);
	free(lp->t.seen_in);
	free(lp->t.touched);
	free(lp);
}
