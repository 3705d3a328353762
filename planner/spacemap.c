/*
 * spacemap.c --- the planner's picture of who owns which blocks.
 *
 * The segments, in address order, are kept in chunks of at most chunk_max
 * of them: a change (a move's few segments replaced) shifts the rest of
 * one chunk and updates a Fenwick tree of where chunks start, never the
 * whole map, so a plan of many moves over a map of many files stays
 * near-linear.  The
 * free segments are also kept in a treap ordered by (length, start): best
 * fit walks up from the length asked for instead of scanning the map, and
 * the free-space figures are kept as segments change.  Taking moves back
 * (snapshot.c, window.c trying a window) replays an undo log of the
 * replaced segments rather than copying the map.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spacemap.h"
#include "array.h"
#include "radix_sort.h"
#include "lower_bound.h"

/* Segments a chunk holds at most, and fills when built. */
/*
 * Segments a chunk holds at most (sm->chunk_max): at least SM_CHUNK_MIN,
 * and more on a larger map.  A change shifts up to a chunk's segments;
 * a split (every chunk_max / 2 insertions in a chunk at most) rebuilds
 * the Fenwick tree over all the chunks: with chunks of about the cube
 * root of the segments, both cost that per change, instead of the rebuilds
 * growing with the square of the map.  Chunks are built 31/32 full: the
 * map is most of the planner's memory, and the planner's peak, at the end
 * of consolidation, has fewer segments than the map started with, so
 * room left for growth is mostly never used.
 */
#define SM_CHUNK_MIN	128

/* ---------------------------------------------------------- free treap */

static uint32_t fnode_new(struct spacemap *sm, blk64_t len, blk64_t start)
{
	struct sm_fnode *x;
	uint32_t i;

	if (sm->ffree) {
		i = sm->ffree;
		sm->ffree = sm->fnode[i].left;
	} else {
		size_t cap = sm->fnode_cap;

		if (grow_n(&sm->fnode, &cap, (size_t)sm->nfnodes + 1,
			   sizeof(*sm->fnode)))
			return 0;
		sm->fnode_cap = cap;
		if (!sm->nfnodes)
			sm->nfnodes = 1;	/* node 0 means none */
		i = sm->nfnodes++;
	}
	x = &sm->fnode[i];
	x->len = len;
	x->start = start;
	x->left = x->right = 0;
	/* xorshift: any fixed sequence balances; the answers depend only on keys */
	sm->fseed ^= sm->fseed << 13;
	sm->fseed ^= sm->fseed >> 17;
	sm->fseed ^= sm->fseed << 5;
	x->prio = sm->fseed;
	return i;
}

static int fkey_less(blk64_t l1, blk64_t s1, blk64_t l2, blk64_t s2)
{
	return l1 < l2 || (l1 == l2 && s1 < s2);
}

/* Split tree T into keys < (LEN, START) and the rest. */
static void fsplit(struct spacemap *sm, uint32_t t, blk64_t len, blk64_t start,
		   uint32_t *l, uint32_t *r)
{
	uint32_t *lp = l, *rp = r;

	while (t) {
		struct sm_fnode *x = &sm->fnode[t];

		if (fkey_less(x->len, x->start, len, start)) {
			*lp = t;
			lp = &x->right;
			t = x->right;
		} else {
			*rp = t;
			rp = &x->left;
			t = x->left;
		}
	}
	*lp = *rp = 0;
}

/* Join A and B, every key of A below every key of B. */
static uint32_t fmerge(struct spacemap *sm, uint32_t a, uint32_t b)
{
	uint32_t root = 0, *at = &root;

	while (a && b) {
		if (sm->fnode[a].prio > sm->fnode[b].prio) {
			*at = a;
			at = &sm->fnode[a].right;
			a = sm->fnode[a].right;
		} else {
			*at = b;
			at = &sm->fnode[b].left;
			b = sm->fnode[b].left;
		}
	}
	*at = a ? a : b;
	return root;
}

/*
 * Down to where the new node's priority puts it, and only the subtree
 * there split around it: one walk, where a split of the whole tree and
 * two merges walked its spines three times (a treap is a search tree
 * whatever its shape: best fit's answers depend on the keys alone).
 */
static errcode_t free_insert(struct spacemap *sm, blk64_t start, blk64_t len)
{
	uint32_t x = fnode_new(sm, len, start), *at = &sm->froot, l, r;

	if (!x)
		return ENOMEM;
	while (*at && sm->fnode[*at].prio > sm->fnode[x].prio)
		at = fkey_less(len, start, sm->fnode[*at].len, sm->fnode[*at].start) ?
			&sm->fnode[*at].left : &sm->fnode[*at].right;
	fsplit(sm, *at, len, start, &l, &r);
	sm->fnode[x].left = l;
	sm->fnode[x].right = r;
	*at = x;
	sm->free_extents++;
	sm->free_blocks += len;
	return 0;
}

static void free_erase(struct spacemap *sm, blk64_t start, blk64_t len)
{
	uint32_t *at = &sm->froot, x;

	while ((x = *at) && (sm->fnode[x].len != len || sm->fnode[x].start != start))
		at = fkey_less(len, start, sm->fnode[x].len, sm->fnode[x].start) ?
			&sm->fnode[x].left : &sm->fnode[x].right;
	if (!x)
		return;		/* cannot happen: every free segment is in it */
	*at = fmerge(sm, sm->fnode[x].left, sm->fnode[x].right);
	sm->fnode[x].left = sm->ffree;
	sm->ffree = x;
	sm->free_extents--;
	sm->free_blocks -= len;
}

/* The node with the least key >= (LEN, START), or 0. */
static uint32_t free_ceil(const struct spacemap *sm, blk64_t len, blk64_t start)
{
	uint32_t t = sm->froot, best = 0;

	while (t) {
		const struct sm_fnode *x = &sm->fnode[t];

		if (fkey_less(x->len, x->start, len, start)) {
			t = x->right;
		} else {
			best = t;
			t = x->left;
		}
	}
	return best;
}

/* ------------------------------------------------------------- chunks */

/*
 * The Fenwick tree: fen[x] (1-based) sums the counts of chunks
 * (x - lowbit(x), x].  Counts change by unsigned wrap-around, which
 * adds a negative change as well.
 */
static void fen_add(struct spacemap *sm, size_t k, size_t delta)
{
	size_t x;

	for (x = k + 1; x <= sm->nchunks; x += x & -x)
		sm->fen[x] += delta;
}

/* Segments in chunks [0, K). */
static size_t fen_prefix(const struct spacemap *sm, size_t k)
{
	size_t sum = 0;

	for (; k; k -= k & -k)
		sum += sm->fen[k];
	return sum;
}

/* After chunks came or went: rebuilt in one pass (room made by chunk_insert). */
static void fen_rebuild(struct spacemap *sm)
{
	size_t x;

	for (x = 1; x <= sm->nchunks; x++)
		sm->fen[x] = sm->chunk[x - 1].n;
	for (x = 1; x <= sm->nchunks; x++) {
		size_t up = x + (x & -x);

		if (up <= sm->nchunks)
			sm->fen[up] += sm->fen[x];
	}
}

/* Point the lookup cache at chunk K (clamped), after a change. */
static void set_hint(struct spacemap *sm, size_t k)
{
	if (k >= sm->nchunks)
		k = sm->nchunks - 1;
	sm->hint = k;
	sm->hint_first = fen_prefix(sm, k);
}

struct sm_cell *spacemap_cell_slow(const struct spacemap *sm, size_t i)
{
	struct spacemap *w = (struct spacemap *)sm;	/* the cache, not the map's state */
	size_t pos = 0, rem = i, step = 1;

	while (step * 2 <= sm->nchunks)
		step *= 2;
	/* The last chunk whose start is at most I. */
	for (; step; step /= 2)
		if (pos + step <= sm->nchunks && sm->fen[pos + step] <= rem) {
			pos += step;
			rem -= sm->fen[pos];
		}
	if (pos >= sm->nchunks)		/* I past the end: not asked by callers */
		pos = sm->nchunks - 1, rem = i - fen_prefix(sm, pos);
	w->hint = pos;
	w->hint_first = i - rem;
	return &sm->chunk[pos].seg[rem];
}

/* Whether SEG, a chunk's segments, lies in the slab. */
static int in_slab(const struct spacemap *sm, const struct sm_cell *seg)
{
	uintptr_t p = (uintptr_t)seg, s = (uintptr_t)sm->slab;

	return sm->slab && p >= s &&
	       p < s + sm->slab_chunks * sm->chunk_max * sizeof(*seg);
}

/*
 * A chunk's segments given back: a slab slot goes on the free list (its
 * first cell's start_lo the next slot + 1), for the next chunk made.
 */
static void chunk_seg_free(struct spacemap *sm, struct sm_cell *seg)
{
	if (!in_slab(sm, seg)) {
		free(seg);
		return;
	}
	seg[0].start_lo = (uint32_t)sm->slab_free;
	sm->slab_free = (size_t)(seg - sm->slab) / sm->chunk_max + 1;
}

/* Chunk K's first segment changed (or came): its start, for spacemap_find. */
static void sync_first(struct spacemap *sm, size_t k)
{
	struct sm_chunk *c = &sm->chunk[k];

	c->first = c->n ? sm_cell_start(&c->seg[0]) : 0;
}

/* A new empty chunk at index K (the Fenwick tree is left to rebuild). */
static errcode_t chunk_insert(struct spacemap *sm, size_t k)
{
	struct sm_cell *seg;

	if (sm->slab_free) {
		seg = sm->slab + (sm->slab_free - 1) * sm->chunk_max;
		sm->slab_free = seg[0].start_lo;
	} else if (sm->slab_used < sm->slab_chunks)
		seg = sm->slab + sm->slab_used++ * sm->chunk_max;
	else
		seg = malloc(sm->chunk_max * sizeof(*seg));
	if (!seg || grow_n(&sm->chunk, &sm->chunk_cap, sm->nchunks + 1,
			   sizeof(*sm->chunk)) ||
	    grow_n(&sm->fen, &sm->fen_cap, sm->nchunks + 2, sizeof(*sm->fen))) {
		if (seg)
			chunk_seg_free(sm, seg);
		return ENOMEM;
	}
	move_n(sm->chunk + k + 1, sm->chunk + k,
	       (sm->nchunks - k) * sizeof(*sm->chunk));
	sm->chunk[k].seg = seg;
	sm->chunk[k].n = 0;
	sm->chunk[k].first = 0;
	sm->nchunks++;
	return 0;
}

/* Chunk and offset of segment index I (I == sm->n: the end of the last). */
static void locate(const struct spacemap *sm, size_t i, size_t *k, size_t *o)
{
	if (i >= sm->n) {
		*k = sm->nchunks - 1;
		*o = sm->chunk[*k].n;
		return;
	}
	spacemap_cell(sm, i);
	*k = sm->hint;
	*o = i - sm->hint_first;
}

/* Remove segments [I, I+CNT) (no index upkeep but the chunks'). */
static void seg_erase(struct spacemap *sm, size_t i, size_t cnt)
{
	size_t k, o, from;
	int gone = 0;

	if (!cnt)
		return;
	locate(sm, i, &k, &o);
	from = k;
	sm->n -= cnt;
	while (cnt) {
		struct sm_chunk *c = &sm->chunk[k];
		size_t m = c->n - o < cnt ? c->n - o : cnt;

		move_n(c->seg + o, c->seg + o + m, (c->n - o - m) * sizeof(*c->seg));
		c->n -= m;
		cnt -= m;
		if (!o && c->n)
			sync_first(sm, k);
		if (!c->n && sm->nchunks > 1) {
			chunk_seg_free(sm, c->seg);
			move_n(sm->chunk + k, sm->chunk + k + 1,
			       (sm->nchunks - k - 1) * sizeof(*sm->chunk));
			sm->nchunks--;
			gone = 1;
		} else {
			if (!gone)
				fen_add(sm, k, -m);
			k++;
		}
		o = 0;
	}
	if (gone)
		fen_rebuild(sm);
	set_hint(sm, from);
}

/* Move the last M segments of chunk K to the front of chunk K + 1. */
static void shift_right(struct spacemap *sm, size_t k, size_t m)
{
	struct sm_chunk *a = &sm->chunk[k], *b = &sm->chunk[k + 1];

	move_n(b->seg + m, b->seg, b->n * sizeof(*b->seg));
	copy_n(b->seg, a->seg + a->n - m, m * sizeof(*a->seg));
	a->n -= m;
	b->n += m;
	sync_first(sm, k);
	sync_first(sm, k + 1);
}

/* Move the first M segments of chunk K + 1 to the end of chunk K. */
static void shift_left(struct spacemap *sm, size_t k, size_t m)
{
	struct sm_chunk *a = &sm->chunk[k], *b = &sm->chunk[k + 1];

	copy_n(a->seg + a->n, b->seg, m * sizeof(*b->seg));
	move_n(b->seg, b->seg + m, (b->n - m) * sizeof(*b->seg));
	a->n += m;
	b->n -= m;
	sync_first(sm, k);
	sync_first(sm, k + 1);
}

/*
 * Room in full chunk K, as a B*-tree makes it: half the difference to a
 * neighbour with an eighth of a chunk free; else K and a full neighbour
 * become three chunks two thirds full.  Splitting a full chunk in two
 * would leave half of every chunk a plan touched empty, the map larger
 * by a good part than its segments, in pages the heap keeps.
 */
static errcode_t make_room(struct spacemap *sm, size_t k)
{
	size_t cm = sm->chunk_max, ra = 0, rb = 0, a, t;
	errcode_t ret;

	if (k > 0)
		ra = cm - sm->chunk[k - 1].n;
	if (k + 1 < sm->nchunks)
		rb = cm - sm->chunk[k + 1].n;
	if ((ra > rb ? ra : rb) >= cm / 8) {
		if (rb >= ra) {
			t = (sm->chunk[k].n - sm->chunk[k + 1].n) / 2;
			shift_right(sm, k, t);
			fen_add(sm, k, -t);
			fen_add(sm, k + 1, t);
		} else {
			t = (sm->chunk[k].n - sm->chunk[k - 1].n) / 2;
			shift_left(sm, k - 1, t);
			fen_add(sm, k - 1, t);
			fen_add(sm, k, -t);
		}
		set_hint(sm, k);
		return 0;
	}
	if (sm->nchunks == 1) {
		/* Alone: its upper half to a new chunk after it. */
		ret = chunk_insert(sm, 1);
		if (ret)
			return ret;
		shift_right(sm, 0, cm - cm / 2);
	} else {
		/*
		 * Chunks A and A + 1 (K and a neighbour, each at least 7/8
		 * full) as three: the new one between takes A's last
		 * segments and the next one's first.
		 */
		size_t total, na, nb;

		a = k + 1 < sm->nchunks ? k : k - 1;
		ret = chunk_insert(sm, a + 1);
		if (ret)
			return ret;
		total = sm->chunk[a].n + sm->chunk[a + 2].n;
		na = total / 3;
		nb = total / 3;
		/* (na <= A's count <= na + nb: both neighbours are nearly full) */
		shift_right(sm, a, sm->chunk[a].n - na);
		shift_left(sm, a + 1, nb - sm->chunk[a + 1].n);
	}
	fen_rebuild(sm);
	set_hint(sm, k);
	return 0;
}

/* Insert SEGS[0..CNT) before segment index I. */
static errcode_t seg_insert(struct spacemap *sm, size_t i,
			    const struct sm_seg *segs, size_t cnt)
{
	size_t k, o, x;
	errcode_t ret;

	while (cnt) {
		struct sm_chunk *c;
		size_t m;

		locate(sm, i, &k, &o);
		c = &sm->chunk[k];
		if (c->n == sm->chunk_max) {
			ret = make_room(sm, k);
			if (ret)
				return ret;
			continue;
		}
		m = sm->chunk_max - c->n < cnt ? sm->chunk_max - c->n : cnt;
		move_n(c->seg + o + m, c->seg + o, (c->n - o) * sizeof(*c->seg));
		for (x = 0; x < m; x++)
			sm_cell_set(&c->seg[o + x], segs[x].start, segs[x].owner);
		c->n += m;
		if (!o)
			sync_first(sm, k);
		fen_add(sm, k, m);
		sm->n += m;
		set_hint(sm, k);
		i += m;
		segs += m;
		cnt -= m;
	}
	return 0;
}

/*
 * Replace segments [I, J) with REPL[0..NREPL): the one change every
 * update goes through, keeping the free index and (while marked) the
 * undo log.
 */
static errcode_t replace(struct spacemap *sm, size_t i, size_t j,
			 const struct sm_seg *repl, size_t nrepl, int log)
{
	size_t x;
	errcode_t ret;

	if (log && sm->marks) {
		struct sm_undo *u;
		uint64_t cells = 0;

		for (x = i; x < j; x++)
			cells += 1 + (SM_SEG(sm, x).len - 1) / UINT32_MAX;
		if (i > UINT32_MAX || nrepl > UINT32_MAX || cells > UINT32_MAX)
			return ENOMEM;	/* (more segments than memory holds) */
		if (grow_n(&sm->undo, &sm->undo_cap, sm->nundo + 1, sizeof(*sm->undo)) ||
		    grow_n(&sm->undo_seg, &sm->undo_seg_cap, sm->nundo_seg + cells,
			   sizeof(*sm->undo_seg)))
			return ENOMEM;
		u = &sm->undo[sm->nundo++];
		u->at = i;
		u->nnew = nrepl;
		u->nold = cells;
		for (x = i; x < j; x++) {
			struct sm_seg g = SM_SEG(sm, x);

			for (; g.len > UINT32_MAX; g.len -= UINT32_MAX)
				sm->undo_seg[sm->nundo_seg++] =
					(struct sm_undo_seg){ UINT32_MAX, g.owner };
			sm->undo_seg[sm->nundo_seg++] =
				(struct sm_undo_seg){ (uint32_t)g.len, g.owner };
		}
	}
	/* Room in the free index first, so that a failure changes nothing. */
	for (x = 0; x < nrepl; x++)
		if (repl[x].owner == SM_FREE) {
			size_t cap = sm->fnode_cap;

			if (grow_n(&sm->fnode, &cap, (size_t)sm->nfnodes + nrepl + 1,
				   sizeof(*sm->fnode)))
				return ENOMEM;
			sm->fnode_cap = cap;
			break;
		}
	for (x = i; x < j; x++) {
		struct sm_seg g = SM_SEG(sm, x);

		if (g.owner == SM_FREE)
			free_erase(sm, g.start, g.len);
	}
	/*
	 * Overwrite what both have, then only the difference moves segments
	 * (lengths, being where the next segment starts, agree again once
	 * the replacement is whole: it covers the blocks [I, J) covered).
	 */
	for (x = 0; x < j - i && x < nrepl; x++) {
		sm_cell_set(spacemap_cell(sm, i + x), repl[x].start, repl[x].owner);
		if (i + x == sm->hint_first)
			sync_first(sm, sm->hint);
	}
	if (j - i > nrepl) {
		seg_erase(sm, i + nrepl, j - i - nrepl);
		ret = 0;
	} else {
		ret = seg_insert(sm, j, repl + (j - i), nrepl - (j - i));
	}
	for (x = 0; !ret && x < nrepl; x++)
		if (repl[x].owner == SM_FREE)
			ret = free_insert(sm, repl[x].start, repl[x].len);
	return ret;
}

/* ---------------------------------------------------------- building */

/*
 * Append a segment while building: merged with the last when it has the
 * same owner (segments are pushed end to end, from the map's first block
 * on: the last one's length is where this starts), else put in the last
 * chunk (a new one when that holds FILL).  The map is written straight
 * into its chunks: no array of all the segments first (a copy of the
 * whole map, and its pages).
 */
static errcode_t push(struct spacemap *sm, size_t fill, blk64_t start,
		      blk64_t len, uint32_t owner)
{
	struct sm_chunk *c = sm->nchunks ? &sm->chunk[sm->nchunks - 1] : NULL;
	errcode_t ret;

	if (!len)
		return 0;
	if (sm->n && c->seg[c->n - 1].owner == owner)
		return 0;
	if (!c || c->n == fill) {
		ret = chunk_insert(sm, sm->nchunks);
		if (ret)
			return ret;
		c = &sm->chunk[sm->nchunks - 1];
	}
	sm_cell_set(&c->seg[c->n++], start, owner);
	sm->n++;
	return 0;
}

/* Blocks [START, END) that no run claims: free or pinned per the bitmap. */
static errcode_t push_gap(struct spacemap *sm, size_t fill, blk64_t start,
			  blk64_t end, ext2fs_block_bitmap used)
{
	blk64_t next;
	errcode_t ret;

	while (start < end) {
		if (ext2fs_find_first_set_block_bitmap2(used, start, end - 1, &next))
			next = end;
		ret = push(sm, fill, start, next - start, SM_FREE);
		if (ret || next >= end)
			return ret;
		if (ext2fs_find_first_zero_block_bitmap2(used, next, end - 1, &start))
			start = end;
		ret = push(sm, fill, next, start - next, SM_PINNED);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Sort V (N segments) by start, then owner, keeping the order of equal
 * ones: by start in linear time (lib/radix_sort.h; a comparison sort of
 * a segment for every file costs a good part of planning), then owners
 * put in order among equal starts (few, next to each other).
 */
errcode_t spacemap_sort(struct sm_run *v, size_t n)
{
	size_t i, j;
	blk64_t max = 0;

	if (n < 2)
		return 0;
	for (i = 1; i < n && v[i - 1].start <= v[i].start; i++)
		;
	if (i < n) {
		errcode_t ret;

		for (i = 0; i < n; i++)
			if (v[i].start > max)
				max = v[i].start;
		ret = radix_sort_by_start(v, n, sizeof(*v),
					  offsetof(struct sm_run, start), max);
		if (ret)
			return ret;
	}
	/* Equal starts by owner: an insertion sort, stable. */
	for (i = 1; i < n; i++) {
		struct sm_run x = v[i];

		for (j = i; j > 0 && v[j - 1].start == x.start &&
			    v[j - 1].owner > x.owner; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return 0;
}

/*
 * Give the pages of RUNS[0, N), already in the map, back to the system
 * (*DONE: where the last release ended).  The chunks grow as the runs are
 * read: both whole would be the planner's peak on a large filesystem.  Whole
 * pages inside the array only, a megabyte or more at a time; nothing
 * reads them again (the caller frees RUNS).
 */
static void release_runs(const struct sm_run *runs, size_t n, uintptr_t *done)
{
#ifdef MADV_DONTNEED
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = *done ? *done : ((uintptr_t)runs + page - 1) & ~(page - 1);
	uintptr_t hi = (uintptr_t)(runs + n) & ~(page - 1);

	if (hi >= lo + (1 << 20)) {
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
		*done = hi;
	}
#else
	(void)runs;
	(void)n;
	(void)done;
#endif
}

errcode_t spacemap_build(struct spacemap *sm, blk64_t first, blk64_t end,
			 struct sm_run *runs, size_t nruns,
			 ext2fs_block_bitmap used)
{
	uintptr_t released = 0;
	size_t i, k, fill;
	blk64_t pos = first;
	errcode_t ret;

	memset(sm, 0, sizeof(*sm));
	if (end > SM_BLOCKS_MAX)
		return EFBIG;	/* past what a cell's start holds */
	sm->first = first;
	sm->end = end;
	sm->fseed = 2463534242u;
	ret = spacemap_sort(runs, nruns);
	if (ret)
		return ret;
	/*
	 * Chunks filled part way, so that the first changes split none; their
	 * size from the segments there will be at most (a run and a gap before
	 * it each, the gaps cut by pinned blocks seldom): only speed hangs on it.
	 */
	for (sm->chunk_max = SM_CHUNK_MIN;
	     sm->chunk_max * sm->chunk_max * sm->chunk_max < 16 * (2 * (uint64_t)nruns + 1);)
		sm->chunk_max *= 2;
	fill = sm->chunk_max * 31 / 32;
	/*
	 * The slab: chunks for the runs and the gaps between them (more, the
	 * gaps cut by pinned blocks, come from malloc), and a sixteenth more
	 * for the chunks later changes split.  Sized for the gaps there are:
	 * files lie mostly end to end, and room for a gap before each run
	 * would be twice what is written, whose huge pages (on the last one
	 * written, or when khugepaged fills them in) are resident whole.
	 */
	for (i = 0, k = 1; i < nruns; pos = runs[i].start + runs[i].len, i++)
		k += 1 + (runs[i].start > pos);
	pos = first;
	sm->slab_chunks = k / fill + 1 + k / fill / 16;
	sm->slab = alloc_written(sm->slab_chunks * sm->chunk_max * sizeof(*sm->slab));
	if (!sm->slab)
		sm->slab_chunks = 0;	/* a malloc a chunk, as they come */
	for (i = 0; i < nruns; i++) {
		if (runs[i].start < pos || runs[i].start + runs[i].len > end) {
			ret = E2F_ERR_CORRUPT_INODE;
			goto errout;
		}
		ret = push_gap(sm, fill, pos, runs[i].start, used);
		if (!ret)
			ret = push(sm, fill, runs[i].start, runs[i].len, runs[i].owner);
		if (ret)
			goto errout;
		pos = runs[i].start + runs[i].len;
		if (!(i & 4095))
			release_runs(runs, i, &released);
	}
	ret = push_gap(sm, fill, pos, end, used);
	if (!ret && !sm->nchunks)
		ret = chunk_insert(sm, 0);	/* an empty map has one empty chunk */
	if (ret)
		goto errout;
	fen_rebuild(sm);
	set_hint(sm, 0);
	for (k = 0; k < sm->nchunks; k++)
		sync_first(sm, k);
	for (k = 0; k < sm->nchunks; k++)
		for (i = 0; i < sm->chunk[k].n; i++) {
			const struct sm_cell *g = &sm->chunk[k].seg[i];
			blk64_t s = sm_cell_start(g);

			if (g->owner == SM_FREE &&
			    (ret = free_insert(sm, s, spacemap_next_start(sm, k, i) - s)))
				goto errout;
		}
	return 0;
errout:
	spacemap_free(sm);
	return ret;
}

void spacemap_free(struct spacemap *sm)
{
	size_t k;

	for (k = 0; k < sm->nchunks; k++)
		chunk_seg_free(sm, sm->chunk[k].seg);
	free(sm->slab);
	free(sm->chunk);
	free(sm->fen);
	free(sm->fnode);
	free(sm->undo);
	free(sm->undo_seg);
	memset(sm, 0, sizeof(*sm));
}

/* ---------------------------------------------------------- undo log */

size_t spacemap_mark(struct spacemap *sm)
{
	sm->marks++;
	return sm->nundo;
}

/* Segments an undo puts back without a malloc. */
#define SM_UNDO_STACK	16

/* Put back what change U replaced; its segments end undo_seg. */
static errcode_t undo_one(struct spacemap *sm, const struct sm_undo *u)
{
	struct sm_seg stack[SM_UNDO_STACK] = { { 0 } }, *old = stack;
	const struct sm_undo_seg *c = sm->undo_seg + sm->nundo_seg - u->nold;
	blk64_t start = u->nnew ? SM_SEG(sm, u->at).start : 0;
	uint32_t k, n = 0;
	errcode_t ret;

	if (u->nold > SM_UNDO_STACK && !(old = malloc(u->nold * sizeof(*old))))
		return ENOMEM;
	for (k = 0; k < u->nold; start += c[k].len, k++) {
		if (n && old[n - 1].owner == c[k].owner) {
			old[n - 1].len += c[k].len;	/* one segment, logged in parts */
			continue;
		}
		old[n].start = start;
		old[n].len = c[k].len;
		old[n++].owner = c[k].owner;
	}
	ret = replace(sm, u->at, u->at + u->nnew, old, n, 0);
	if (old != stack)
		free(old);
	if (!ret)
		sm->nundo_seg -= u->nold;
	return ret;
}

void spacemap_rollback(struct spacemap *sm, size_t mark)
{
	while (sm->nundo > mark) {
		/*
		 * Putting back what was there needs no more room than the
		 * map had then, but a chunk may have to be split again: on
		 * the rare failure (no memory), every later change fails
		 * with it, and so does the plan.
		 */
		sm->err = undo_one(sm, &sm->undo[--sm->nundo]);
		if (sm->err)
			break;
	}
	sm->nundo = mark;
	spacemap_release(sm, mark);
}

void spacemap_release(struct spacemap *sm, size_t mark)
{
	(void)mark;
	/*
	 * The log's memory is kept for the next series: given back after
	 * each, it would be paged in again by the next, and packing a
	 * nearly full disk makes hundreds of series (tries taken back and
	 * made again).  spacemap_trim gives it back.
	 */
	if (sm->marks && !--sm->marks) {
		sm->nundo = 0;
		sm->nundo_seg = 0;
	}
}

void spacemap_trim(struct spacemap *sm)
{
	if (sm->marks)
		return;
	free(sm->undo);
	free(sm->undo_seg);
	sm->undo = NULL;
	sm->undo_seg = NULL;
	sm->undo_cap = sm->undo_seg_cap = 0;
}

/* ---------------------------------------------------------- queries */

static int chunk_starts_at_or_before(const void *chunks, uint64_t i,
				     const void *blk)
{
	return ((const struct sm_chunk *)chunks)[i].first <= *(const blk64_t *)blk;
}

static int seg_starts_at_or_before(const void *segs, uint64_t i, const void *blk)
{
	return sm_cell_start(&((const struct sm_cell *)segs)[i]) <= *(const blk64_t *)blk;
}

/*
 * Within chunk C (the right one for BLK), the last segment starting at or
 * before BLK, looked for first a few segments either side of GUESS: a
 * lookup near the last one (a join's two runs and the files between, a
 * move's old blocks and their neighbours) reads the cells it already
 * read, where the binary search's steps each missed the cache.  -1 when
 * not there.
 */
#define SM_NEAR	4

static size_t find_near(const struct sm_chunk *c, size_t guess, blk64_t blk)
{
	size_t o = guess, k;

	if (o >= c->n)
		return (size_t)-1;
	if (sm_cell_start(&c->seg[o]) > blk) {
		for (k = 0; k < SM_NEAR && o > 0; k++)
			if (sm_cell_start(&c->seg[--o]) <= blk)
				return o;
		return (size_t)-1;
	}
	for (k = 0; k < SM_NEAR && o + 1 < c->n; k++, o++)
		if (sm_cell_start(&c->seg[o + 1]) > blk)
			return o;
	return o + 1 == c->n ? o : (size_t)-1;
}

size_t spacemap_find(const struct spacemap *sm, blk64_t blk)
{
	struct spacemap *w = (struct spacemap *)sm;	/* caches, not the map's state */
	size_t lo = sm->hint, hi = sm->nchunks, o = (size_t)-1;
	const struct sm_chunk *c = &sm->chunk[lo];

	/* Lookups come in pairs and runs close together: the last chunk first. */
	if (!c->n || c->first > blk ||
	    (lo + 1 < hi && sm->chunk[lo + 1].first <= blk)) {
		lo = last_at_or_before(0, hi, chunk_starts_at_or_before,
				       sm->chunk, &blk);
		c = &sm->chunk[lo];
		set_hint(w, lo);
	} else {
		o = find_near(c, sm->hint_off, blk);
	}
	if (o == (size_t)-1)
		o = last_at_or_before(0, c->n, seg_starts_at_or_before, c->seg, &blk);
	w->hint_off = o;
	return sm->hint_first + o;
}

errcode_t spacemap_assign(struct spacemap *sm, blk64_t start, blk64_t len,
			  uint32_t owner)
{
	struct sm_seg repl[3], si, sj;
	size_t i, j, nrepl = 0, k;
	blk64_t end = start + len, mstart = start, mend = end;

	if (sm->err)
		return sm->err;
	if (!len)
		return 0;
	if (start < sm->first || end > sm->end || !sm->n)
		return EINVAL;
	i = spacemap_find(sm, start);
	/* Most changes cover a segment or two: the next ones before a search. */
	for (j = i, k = 0; k < 4 && j + 1 < sm->n && SM_SEG(sm, j + 1).start < end; k++)
		j++;
	if (j + 1 < sm->n && SM_SEG(sm, j + 1).start < end)
		j = spacemap_find(sm, end - 1);
	si = SM_SEG(sm, i);
	sj = SM_SEG(sm, j);
	/* What is left of the first and last segments, or absorbed when alike. */
	if (si.owner == owner)
		mstart = si.start;
	else if (si.start < start)
		repl[nrepl++] = (struct sm_seg){ si.start, start - si.start, si.owner };
	if (mstart == si.start && i > 0 && SM_SEG(sm, i - 1).owner == owner) {
		i--;
		mstart = SM_SEG(sm, i).start;
	}
	k = nrepl;
	repl[nrepl++] = (struct sm_seg){ 0, 0, owner };
	if (sj.owner == owner) {
		mend = sj.start + sj.len;
	} else if (sj.start + sj.len > end) {
		repl[nrepl++] = (struct sm_seg){ end, sj.start + sj.len - end, sj.owner };
	}
	if (mend == sj.start + sj.len && j + 1 < sm->n &&
	    SM_SEG(sm, j + 1).owner == owner) {
		j++;
		mend = SM_SEG(sm, j).start + SM_SEG(sm, j).len;
	}
	repl[k].start = mstart;
	repl[k].len = mend - mstart;
	return replace(sm, i, j + 1, repl, nrepl, 1);
}

errcode_t spacemap_apply(struct spacemap *sm, const struct sm_seg *ch, size_t n)
{
	size_t i;
	errcode_t ret = 0;

	/*
	 * Each change touches a chunk or two: no pass over the whole map.
	 * Changes that touch and go to one owner are one change: a move's
	 * new place comes as one change per old piece (a file in one-block
	 * pieces: thousands to a move), and each would replace the growing
	 * run and what is left of the free one, log both and take the rest
	 * out of the free index and put it back.  The map is the same either way: giving
	 * [a, b) then [b, c) to one owner is giving it [a, c).
	 */
	for (i = 0; i < n && !ret; i++) {
		blk64_t start = ch[i].start, len = ch[i].len;

		while (i + 1 < n && ch[i + 1].owner == ch[i].owner &&
		       ch[i + 1].start == start + len)
			len += ch[++i].len;
		ret = spacemap_assign(sm, start, len, ch[i].owner);
	}
	return ret;
}

int spacemap_is(const struct spacemap *sm, blk64_t start, blk64_t len,
		uint32_t owner)
{
	struct sm_seg g;

	if (!len)
		return 1;
	if (start < sm->first || start + len > sm->end)
		return 0;
	g = SM_SEG(sm, spacemap_find(sm, start));
	return g.owner == owner && g.start + g.len >= start + len;
}

/* Consider the stretch [S, E) for a best fit of LEN. */
static void consider(blk64_t s, blk64_t e, blk64_t len, int *found,
		     blk64_t *best_s, blk64_t *best_len)
{
	if (e <= s || e - s < len)
		return;
	if (!*found || e - s < *best_len ||
	    (e - s == *best_len && s < *best_s)) {
		*found = 1;
		*best_s = s;
		*best_len = e - s;
	}
}

/* Free segment G's stretches for LEN: clipped to LIMIT and the exclusion. */
static void consider_seg(blk64_t s, blk64_t e, blk64_t len, blk64_t limit,
			 blk64_t excl_start, blk64_t excl_end, int *found,
			 blk64_t *best_s, blk64_t *best_len)
{
	if (s >= limit)
		return;
	if (e > limit)
		e = limit;
	if (excl_end > excl_start && s < excl_end && e > excl_start) {
		consider(s, excl_start, len, found, best_s, best_len);
		consider(excl_end, e, len, found, best_s, best_len);
	} else {
		consider(s, e, len, found, best_s, best_len);
	}
}

/* Whether free segment [S, E) is cut by LIMIT or the exclusion. */
static int clipped(blk64_t s, blk64_t e, blk64_t limit, blk64_t excl_start,
		   blk64_t excl_end)
{
	return e > limit ||
	       (excl_end > excl_start && s < excl_end && e > excl_start);
}

/*
 * The answer is the least (stretch, start) over every free segment's
 * stretches.  Segments the limit or the exclusion cut are few (those
 * overlapping the exclusion, the one across the limit) and are weighed
 * one by one; of the rest, whose stretch is their length, the first in
 * (length, start) order at or above LEN is the best.
 */
int spacemap_best_fit(const struct spacemap *sm, blk64_t len, blk64_t limit,
		      blk64_t excl_start, blk64_t excl_end,
		      blk64_t *start, blk64_t *stretch)
{
	blk64_t best_s = 0, best_len = 0;
	int found = 0;
	uint32_t t;
	size_t i;

	if (!len)
		len = 1;	/* a free segment is never empty */
	/*
	 * Of the segments the exclusion overlaps, only the first and the last
	 * can reach out of it: what lies wholly inside leaves no stretch (a
	 * join's files, moving out one by one, asked about all of them each).
	 */
	if (excl_end > excl_start && excl_start < sm->end && excl_end > sm->first) {
		size_t last = spacemap_find(sm, (excl_end < sm->end ? excl_end : sm->end) - 1);
		struct sm_seg g;

		i = spacemap_find(sm, excl_start > sm->first ? excl_start : sm->first);
		g = SM_SEG(sm, i);
		if (g.owner == SM_FREE)
			consider_seg(g.start, g.start + g.len, len, limit,
				     excl_start, excl_end, &found, &best_s, &best_len);
		g = SM_SEG(sm, last);
		if (last != i && g.owner == SM_FREE)
			consider_seg(g.start, g.start + g.len, len, limit,
				     excl_start, excl_end, &found, &best_s, &best_len);
	}
	if (limit > sm->first && limit < sm->end) {
		struct sm_seg g = SM_SEG(sm, spacemap_find(sm, limit - 1));

		if (g.owner == SM_FREE && g.start + g.len > limit &&
		    !clipped(g.start, g.start + g.len, ~(blk64_t)0,
			     excl_start, excl_end))
			consider_seg(g.start, g.start + g.len, len, limit,
				     excl_start, excl_end, &found, &best_s, &best_len);
	}
	for (t = free_ceil(sm, len, 0); t;
	     t = free_ceil(sm, sm->fnode[t].len, sm->fnode[t].start + 1)) {
		const struct sm_fnode *x = &sm->fnode[t];

		if (found && fkey_less(best_len, best_s, x->len, x->start))
			break;
		if (x->start >= limit ||
		    clipped(x->start, x->start + x->len, limit, excl_start, excl_end))
			continue;	/* weighed above, or out of reach */
		consider(x->start, x->start + x->len, len, &found, &best_s, &best_len);
		break;
	}
	if (!found)
		return -1;
	*start = best_s;
	*stretch = best_len;
	return 0;
}

void spacemap_free_stats(const struct spacemap *sm, uint64_t *extents,
			 blk64_t *blocks, blk64_t *largest)
{
	uint32_t t = sm->froot;

	*extents = sm->free_extents;
	*blocks = sm->free_blocks;
	*largest = 0;
	while (t && sm->fnode[t].right)
		t = sm->fnode[t].right;
	if (t)
		*largest = sm->fnode[t].len;
}
