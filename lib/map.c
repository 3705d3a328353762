/*
 * map.c --- the block map model (see map.h).
 *
 * The map's one index is the list of runs inodes own (every file's
 * pieces and aux blocks), 4 bytes each (which of the layout's records
 * the run is), sorted by address with a bucket sort, with the largest end
 * seen every 64 runs so that a window finds its first run by binary
 * search.  Fixed metadata is read from the layout's bitmap, the journal
 * from a sorted copy of its (few) runs.  Blocks the block bitmap has in
 * use that nothing covers are MAP_UNKNOWN: found once, in the one pass
 * over the sorted runs that builds the map, and kept as a (normally
 * empty) list.
 *
 * A window of cells is painted by visiting the runs inside it and raising
 * each cell to the worst state over it, so overlapping runs (a damaged
 * filesystem, the journal inside the fixed metadata) need no flattening.
 * The finest level of at most MAP_CACHED_CELLS cells is painted once, in
 * that pass, and the coarser ones are folded from it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"
#include "compare.h"
#include "lower_bound.h"

/*
 * The runs inodes own are kept as 4-byte ids of the layout's own records,
 * which say where each lies and who owns it (a copy of the runs, 16 bytes
 * each, would be the map's largest part):
 *
 *   id < nfiles		the one piece of layout->files[id]
 *   id < aux_base		a piece of a file in several pieces (multi[])
 *   aux_base <= id		layout->aux[id - aux_base]
 *
 * The state a run shows is its file's: a file in one piece needs no
 * search for it, the others keep it in multi[] and aux_state[].
 */
struct multi_file {
	uint32_t	file;		/* index into layout->files */
	uint32_t	first;		/* id - nfiles of its first piece */
	uint8_t		state;
};

/* A run, as the layout has it, with the state it shows. */
struct run {
	blk64_t		start, len;
	ext2_ino_t	ino;
	uint8_t		state;
};

#define CHUNK_SHIFT	6	/* runs per entry of chunk_maxend: 64 */
#define HINT_SHIFT	6	/* pieces per entry of multi_hint: 64 */
#define MAP_MAX_LEVELS	64

struct map {
	const struct layout	*layout;
	blk64_t			nblocks;
	uint32_t		*owned;		/* run ids (above), sorted by start */
	uint64_t		nowned;
	struct multi_file	*multi;		/* by file index, and so by first */
	uint64_t		nmulti;
	uint32_t		*multi_hint;	/* [k]: multi[] holding piece k << HINT_SHIFT */
	uint64_t		nhints;
	uint64_t		aux_base;	/* nfiles + the pieces of multi[] */
	uint8_t			*aux_state;	/* by index into layout->aux */
	blk64_t			*chunk_maxend;	/* [j]: largest end in owned[0 .. (j + 1) * 64) */
	struct layout_piece	*journal;	/* the journal's runs, by address */
	uint64_t		njournal;
	struct layout_piece	*unknown;	/* in use, owned by nobody; by address */
	uint64_t		nunknown;
	unsigned		nlevels;
	unsigned		first_cached;	/* levels from here on are in cache[] */
	uint8_t			*cache[MAP_MAX_LEVELS];
	struct layout_partners	*partners;	/* a scan that kept no lists: asked per
						 * file (map_partners), NULL until then */
};

static const struct {
	const char *name, *description;
} state_info[MAP_NSTATES] = {
	[MAP_FREE]	  = { "free", "free blocks" },
	[MAP_FIXED]	  = { "metadata", "superblocks, descriptors, bitmaps, inode tables, reserved inodes" },
	[MAP_JOURNAL]	  = { "journal", "the journal" },
	[MAP_UNKNOWN]	  = { "unknown", "in use, but no inode owns it" },
	[MAP_DIR]	  = { "directory", "directories" },
	[MAP_FILE]	  = { "file", "files in as few pieces as they can have" },
	[MAP_FRAGMENTED]  = { "fragmented", "files in more pieces than they need" },
	[MAP_INTERLEAVED] = { "interleaved", "files interleaved with other files" },
};

const char *map_state_name(enum map_state state)
{
	return state < MAP_NSTATES ? state_info[state].name : "past end";
}

const char *map_state_description(enum map_state state)
{
	return state < MAP_NSTATES ? state_info[state].description : "beyond the filesystem";
}

errcode_t map_partners(const struct map *map, struct layout_partners **ret)
{
	/* Built once, when first asked for: the map's one lazy part. */
	struct map *m = (struct map *)map;
	errcode_t err = 0;

	if (!m->partners && !m->layout->partners && m->layout->ninterleaved)
		err = layout_partners_open(m->layout, &m->partners);
	*ret = m->partners;
	return err;
}

void map_partners_give(struct map *map, struct layout_partners *partners)
{
	if (map->partners)
		layout_partners_close(partners);
	else
		map->partners = partners;
}

const struct layout *map_layout(const struct map *map)
{
	return map->layout;
}

blk64_t map_blocks(const struct map *map)
{
	return map->nblocks;
}

unsigned map_levels(const struct map *map)
{
	return map->nlevels;
}

uint64_t map_cells(const struct map *map, unsigned level)
{
	blk64_t mask = ((blk64_t)1 << level) - 1;

	return (map->nblocks >> level) + !!(map->nblocks & mask);
}

unsigned map_level_fit(const struct map *map, uint64_t max_cells)
{
	unsigned level;

	for (level = 0; level + 1 < map->nlevels; level++)
		if (map_cells(map, level) <= max_cells)
			break;
	return level;
}

/* The state a file's blocks show. */
static uint8_t file_state(const struct layout *layout, const struct layout_file *f)
{
	if (f->type == LAYOUT_DIR)
		return MAP_DIR;
	if (layout_file_pieces(layout, f) < 2)
		return MAP_FILE;	/* the common case, without a search */
	if (layout_file_interleave(layout, f))
		return MAP_INTERLEAVED;
	if (layout_file_pieces(layout, f) > layout_file_best(layout, f))
		return MAP_FRAGMENTED;
	return MAP_FILE;
}

/* ------------------------------------------------------- owned runs */

/* lower_bound: multi[I] starts at or before piece *KEY (the last such holds it). */
static int multi_at_or_before(const void *array, uint64_t i, const void *key)
{
	return ((const struct multi_file *)array)[i].first <= *(const uint32_t *)key;
}

/* The file in several pieces that holds piece K of them all. */
static const struct multi_file *multi_of(const struct map *map, uint32_t k)
{
	uint64_t lo = map->multi_hint[k >> HINT_SHIFT];
	uint64_t hi = (k >> HINT_SHIFT) + 1 < map->nhints ?
		      map->multi_hint[(k >> HINT_SHIFT) + 1] + 1 : map->nmulti;

	return &map->multi[last_at_or_before(lo, hi, multi_at_or_before, map->multi, &k)];
}

/* The run with id ID. */
static struct run owned_run(const struct map *map, uint32_t id)
{
	const struct layout *layout = map->layout;
	const struct layout_file *f;
	struct layout_piece pc;
	struct run r;

	if (id < layout->nfiles) {
		f = &layout->files[id];
		pc = layout_file_piece(layout, f, 0);
		r.state = f->type == LAYOUT_DIR ? MAP_DIR : MAP_FILE;
	} else if (id < map->aux_base) {
		uint32_t k = id - layout->nfiles;
		const struct multi_file *m = multi_of(map, k);

		f = &layout->files[m->file];
		pc = layout_file_piece(layout, f, k - m->first);
		r.state = m->state;
	} else {
		const struct layout_aux *x = &layout->aux[id - map->aux_base];

		r.start = x->start;
		r.len = x->len;
		r.ino = x->ino;
		r.state = map->aux_state[id - map->aux_base];
		return r;
	}
	r.start = pc.start;
	r.len = pc.len;
	r.ino = f->ino;
	return r;
}

/* Index of the first owned run that can end after FROM. */
static uint64_t owned_from(const struct map *map, blk64_t from)
{
	uint64_t chunks = (map->nowned + (1 << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT;

	/* chunk_maxend rises: the first chunk reaching past FROM. */
	return lower_bound(0, chunks, blk_at_or_before, map->chunk_maxend, &from)
	       << CHUNK_SHIFT;
}

/*
 * The files in several pieces, with their states and the hints to find
 * them by piece; the aux runs' states; how many runs there are.
 */
static errcode_t index_runs(struct map *map)
{
	const struct layout *layout = map->layout;
	uint64_t i, nmulti = 0, pieces = 0;

	for (i = 0; i < layout->nfiles; i++) {
		if (layout_file_pieces(layout, &layout->files[i]) > 1) {
			nmulti++;
			pieces += layout_file_pieces(layout, &layout->files[i]);
		}
	}
	/* Ids are 32 bits: beyond that, no memory would hold the layout anyway. */
	if (layout->nfiles + pieces + layout->naux > UINT32_MAX)
		return EOVERFLOW;
	map->aux_base = layout->nfiles + pieces;
	map->nhints = (pieces + (1 << HINT_SHIFT) - 1) >> HINT_SHIFT;
	map->multi = malloc((nmulti ? nmulti : 1) * sizeof(*map->multi));
	map->multi_hint = malloc((map->nhints ? map->nhints : 1) * sizeof(*map->multi_hint));
	map->aux_state = malloc(layout->naux ? layout->naux : 1);
	if (!map->multi || !map->multi_hint || !map->aux_state)
		return ENOMEM;
	for (i = 0, pieces = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		uint64_t k;

		if (layout_file_pieces(layout, f) == 1)
			map->nowned++;
		if (layout_file_pieces(layout, f) < 2)
			continue;
		/* Its pieces that begin a block of hints point at it. */
		for (k = (pieces + (1 << HINT_SHIFT) - 1) >> HINT_SHIFT;
		     k << HINT_SHIFT < pieces + layout_file_pieces(layout, f); k++)
			map->multi_hint[k] = map->nmulti;
		map->multi[map->nmulti++] = (struct multi_file){ i, pieces,
								  file_state(layout, f) };
		pieces += layout_file_pieces(layout, f);
	}
	map->nowned += pieces + layout->naux;
	for (i = 0; i < layout->naux; i++) {
		int64_t fi = layout_find(layout, layout->aux[i].ino);

		/* An inode with nothing but an EA block is not a file in the layout. */
		map->aux_state[i] = fi < 0 ? MAP_FILE : file_state(layout, &layout->files[fi]);
	}
	return 0;
}

/* Call FN with every run's id and start, in the layout's order (no search). */
static void each_run(const struct map *map, void (*fn)(void *priv, uint32_t id, blk64_t start),
		     void *priv)
{
	const struct layout *layout = map->layout;
	uint64_t i, m;
	uint32_t p;

	for (i = 0; i < layout->nfiles; i++)
		if (layout_file_pieces(layout, &layout->files[i]) == 1)
			fn(priv, i, layout_file_piece(layout, &layout->files[i], 0).start);
	for (m = 0; m < map->nmulti; m++) {
		const struct layout_file *f = &layout->files[map->multi[m].file];

		for (p = 0; p < layout_file_pieces(layout, f); p++)
			fn(priv, layout->nfiles + map->multi[m].first + p,
			   layout_file_piece(layout, f, p).start);
	}
	for (i = 0; i < layout->naux; i++)
		fn(priv, map->aux_base + i, layout->aux[i].start);
}

/* Runs put in buckets by start (bucket_of), counted first, then placed. */
struct buckets {
	struct map	*map;
	uint32_t	*ends;		/* counts, then where each bucket's next run goes */
	uint64_t	nb;
	unsigned	shift;
};

static uint64_t bucket_of(const struct buckets *b, blk64_t start)
{
	uint64_t i = start >> b->shift;

	return i < b->nb ? i : b->nb - 1;	/* runs past the end: the last */
}

static void count_run(void *priv, uint32_t id, blk64_t start)
{
	struct buckets *b = priv;

	(void)id;
	b->ends[bucket_of(b, start)]++;
}

static void place_run(void *priv, uint32_t id, blk64_t start)
{
	struct buckets *b = priv;

	b->map->owned[b->ends[bucket_of(b, start)]++] = id;
}

/*
 * Every run's id, in buckets by start: about one bucket for every four
 * runs, counted and placed in the layout's order, reading it in order.
 * Its only memory beside the ids is the buckets' ends (a radix sort of
 * the runs themselves needed 16 bytes a run and its scratch).  Each
 * bucket is sorted by the pass that builds the rest (build_owned).
 * *B's ends are left where each bucket ends.
 */
static errcode_t place_runs(struct map *map, struct buckets *b)
{
	uint64_t i, lo = 0;

	map->owned = malloc((map->nowned ? map->nowned : 1) * sizeof(*map->owned));
	if (!map->owned)
		return ENOMEM;
	b->map = map;
	b->shift = 0;
	while (b->shift < 63 && ((map->nblocks - 1) >> b->shift) >= map->nowned / 4 + 1)
		b->shift++;
	b->nb = ((map->nblocks - 1) >> b->shift) + 1;
	b->ends = calloc(b->nb, sizeof(*b->ends));
	if (!b->ends)
		return ENOMEM;
	each_run(map, count_run, b);
	for (i = 0; i < b->nb; i++) {
		uint32_t c = b->ends[i];

		b->ends[i] = lo;
		lo += c;
	}
	each_run(map, place_run, b);
	return 0;
}

/* ---------------------------------------------------------- visiting */

/* lower_bound: piece I of ARRAY ends at or before *KEY. */
static int piece_ends_before(const void *array, uint64_t i, const void *key)
{
	const struct layout_piece *p = (const struct layout_piece *)array + i;

	return p->start + p->len <= *(const blk64_t *)key;
}

/* Index of the first unknown run ending after FROM (they are disjoint). */
static uint64_t unknown_from(const struct map *map, blk64_t from)
{
	return lower_bound(0, map->nunknown, piece_ends_before, map->unknown, &from);
}

/* Called for each run in a window, clipped to it, with its state. */
typedef void (*run_fn)(void *priv, blk64_t start, blk64_t len, uint8_t state);

/* Call FN for every run of known state that has blocks in [FROM, TO). */
static void visit_runs(const struct map *map, blk64_t from, blk64_t to,
		       run_fn fn, void *priv)
{
	const struct layout *layout = map->layout;
	blk64_t first = layout->fs->super->s_first_data_block;
	blk64_t a, b;
	uint64_t i;

	if (to > map->nblocks)
		to = map->nblocks;
	if (from >= to)
		return;
	/* The boot block(s) before the first data block: fixed, like the superblock. */
	if (from < first)
		fn(priv, from, (first < to ? first : to) - from, MAP_FIXED);
	if (layout->fixed) {
		blk64_t last = to - 1;

		for (a = from > first ? from : first; a <= last; a = b) {
			if (ext2fs_find_first_set_block_bitmap2(layout->fixed, a, last, &a))
				break;
			if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, a, last, &b))
				b = to;
			fn(priv, a, b - a, MAP_FIXED);
		}
	}
	for (i = 0; i < map->njournal; i++) {
		const struct layout_piece *r = &map->journal[i];

		if (r->start < to && r->start + r->len > from) {
			a = r->start > from ? r->start : from;
			b = r->start + r->len < to ? r->start + r->len : to;
			fn(priv, a, b - a, MAP_JOURNAL);
		}
	}
	for (i = unknown_from(map, from); i < map->nunknown; i++) {
		const struct layout_piece *r = &map->unknown[i];

		if (r->start >= to)
			break;
		a = r->start > from ? r->start : from;
		b = r->start + r->len < to ? r->start + r->len : to;
		fn(priv, a, b - a, MAP_UNKNOWN);
	}
	for (i = owned_from(map, from); i < map->nowned; i++) {
		struct run r = owned_run(map, map->owned[i]);

		if (r.start >= to)
			break;
		if (r.start + r.len <= from)
			continue;
		a = r.start > from ? r.start : from;
		b = r.start + r.len < to ? r.start + r.len : to;
		fn(priv, a, b - a, r.state);
	}
}

/* Cells FIRST .. of LEVEL, raised to the states of the runs over them. */
struct paint {
	unsigned	level;
	uint64_t	first;
	uint8_t		*cells;
};

static void paint_run(void *priv, blk64_t start, blk64_t len, uint8_t state)
{
	struct paint *p = priv;
	uint64_t c, last = (start + len - 1) >> p->level;

	for (c = start >> p->level; c <= last; c++)
		if (p->cells[c - p->first] < state)
			p->cells[c - p->first] = state;
}

static void paint_window(const struct map *map, unsigned level, uint64_t first,
			 uint64_t count, uint8_t *cells)
{
	struct paint p = { level, first, cells };

	memset(cells, MAP_FREE, count);
	visit_runs(map, first << level, (first + count) << level, paint_run, &p);
}

/* ------------------------------------------------------------ building */

static errcode_t add_run(struct layout_piece **v, uint64_t *n, uint64_t *cap,
			 blk64_t start, blk64_t len)
{
	errcode_t ret = util_grow(v, cap, *n + 1, sizeof(**v));

	if (ret)
		return ret;
	(*v)[(*n)++] = (struct layout_piece){ start, len };
	return 0;
}

/* The journal's runs by address (a block-mapped journal can be in many). */
static errcode_t build_journal(struct map *map)
{
	const struct layout_reserved *j = &map->layout->journal;

	if (!j->runs || !j->pieces)
		return 0;
	map->journal = malloc(j->pieces * sizeof(*map->journal));
	if (!map->journal)
		return ENOMEM;
	memcpy(map->journal, j->runs, j->pieces * sizeof(*map->journal));
	map->njournal = j->pieces;
	qsort(map->journal, map->njournal, sizeof(*map->journal), compare_piece_start);
	return 0;
}

struct run_list {
	struct layout_piece	*v;
	uint64_t		n, cap;
};

static void collect_fixed(void *priv, blk64_t start, blk64_t len, uint8_t state)
{
	struct run_list *l = priv;

	(void)state;
	/* A failure here shows as blocks in use by nobody: reported again below. */
	if (add_run(&l->v, &l->n, &l->cap, start, len))
		l->cap = UINT64_MAX;
}

/*
 * The blocks in use that no run covers: the fixed runs, the journal's and
 * the owned ones are handed to cover() in address order, and the block
 * bitmap is asked only about the gaps between them.
 */
struct coverage {
	struct run_list	fixed;
	uint64_t	f, j, cap;
	blk64_t		covered;
	errcode_t	err;
};

/* Blocks in [A, B) the block bitmap has in use: unknown, as nothing covers them. */
static errcode_t unknown_in(struct map *map, uint64_t *cap, blk64_t a, blk64_t b)
{
	ext2fs_block_bitmap bm = map->layout->fs->block_map;
	blk64_t end;
	errcode_t ret;

	while (a < b) {
		if (ext2fs_find_first_set_block_bitmap2(bm, a, b - 1, &a))
			return 0;
		if (ext2fs_find_first_zero_block_bitmap2(bm, a, b - 1, &end))
			end = b;
		ret = add_run(&map->unknown, &map->nunknown, cap, a, end - a);
		if (ret)
			return ret;
		a = end;
	}
	return 0;
}

static void cover_run(struct map *map, struct coverage *c, blk64_t start, blk64_t len)
{
	if (c->err || start >= map->nblocks)
		return;
	if (start > c->covered)
		c->err = unknown_in(map, &c->cap, c->covered, start);
	if (start + len > c->covered)
		c->covered = start + len;
}

/* The fixed and journal runs starting at or before UPTO, in address order. */
static void cover_upto(struct map *map, struct coverage *c, blk64_t upto)
{
	for (;;) {
		const struct layout_piece *f = c->f < c->fixed.n ? &c->fixed.v[c->f] : NULL;
		const struct layout_piece *j = c->j < map->njournal ? &map->journal[c->j] : NULL;

		if (f && f->start <= upto && (!j || f->start <= j->start)) {
			cover_run(map, c, f->start, f->len);
			c->f++;
		} else if (j && j->start <= upto) {
			cover_run(map, c, j->start, j->len);
			c->j++;
		} else {
			return;
		}
	}
}

static errcode_t cover_begin(struct map *map, struct coverage *c)
{
	memset(c, 0, sizeof(*c));
	c->covered = map->layout->fs->super->s_first_data_block;
	if (map->layout->fixed) {
		struct map bare = *map;

		/* Only the fixed metadata: visit a map with nothing else in it. */
		bare.njournal = bare.nunknown = bare.nowned = 0;
		visit_runs(&bare, 0, map->nblocks, collect_fixed, &c->fixed);
		if (c->fixed.cap == UINT64_MAX)
			return ENOMEM;
	}
	return 0;
}

static errcode_t cover_end(struct map *map, struct coverage *c)
{
	cover_upto(map, c, ~(blk64_t)0);
	if (!c->err && c->covered < map->nblocks)
		c->err = unknown_in(map, &c->cap, c->covered, map->nblocks);
	return c->err;
}

/* For sorting a bucket of runs by start (then id: the same order every time). */
struct keyed_run {
	struct run	r;
	uint32_t	id;
};

static int cmp_keyed_run(const void *a, const void *b)
{
	const struct keyed_run *x = a, *y = b;

	if (x->r.start != y->r.start)
		return x->r.start < y->r.start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sort the ids of OWNED[LO, HI) by start, their runs into TMP. */
static void sort_bucket(struct map *map, uint64_t lo, uint64_t hi, struct keyed_run *tmp)
{
	uint64_t i, j, n = hi - lo;

	for (i = 0; i < n; i++) {
		struct keyed_run k;

		k.r = owned_run(map, map->owned[lo + i]);
		k.id = map->owned[lo + i];

		/* Buckets hold a few runs: insertion, unless this one is large. */
		for (j = i; n <= 16 && j > 0 && cmp_keyed_run(&tmp[j - 1], &k) > 0; j--)
			tmp[j] = tmp[j - 1];
		tmp[j] = k;
	}
	if (n > 16)
		qsort(tmp, n, sizeof(*tmp), cmp_keyed_run);
	for (i = 0; i < n; i++)
		map->owned[lo + i] = tmp[i].id;
}

/* The levels to keep, the finest of them (painted next) all free. */
static errcode_t cache_begin(struct map *map, uint64_t cached_cells)
{
	unsigned k;

	map->first_cached = map_level_fit(map, cached_cells);
	/* map_level_fit() settles for the last level when nothing fits. */
	if (map_cells(map, map->first_cached) > cached_cells) {
		map->first_cached = map->nlevels;
		return 0;
	}
	for (k = map->first_cached; k < map->nlevels; k++) {
		map->cache[k] = malloc(map_cells(map, k));
		if (!map->cache[k])
			return ENOMEM;
	}
	memset(map->cache[map->first_cached], MAP_FREE, map_cells(map, map->first_cached));
	return 0;
}

/* The finest kept level has every run painted: the coarser ones, each from the one below. */
static void cache_fold(struct map *map)
{
	unsigned k;
	uint64_t c, n;

	for (k = map->first_cached + 1; k < map->nlevels; k++) {
		n = map_cells(map, k);
		/* A cell of level k is the worse of two cells of level k - 1. */
		for (c = 0; c < n; c++) {
			uint8_t a = map->cache[k - 1][2 * c];
			uint8_t b = 2 * c + 1 < map_cells(map, k - 1) ?
				map->cache[k - 1][2 * c + 1] : MAP_FREE;

			map->cache[k][c] = a > b ? a : b;
		}
	}
}

/*
 * The one pass over the runs in address order, each read from the layout
 * once: each bucket sorted (place_runs), the largest end of every chunk,
 * the blocks nobody owns, and the finest kept level painted.
 */
static errcode_t build_owned(struct map *map, struct buckets *b, struct coverage *cov)
{
	struct keyed_run *tmp;
	struct paint paint = { map->first_cached, 0,
			       map->first_cached < map->nlevels ? map->cache[map->first_cached] : NULL };
	uint64_t i, lo, big = 1, nchunks = (map->nowned + (1 << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT;
	blk64_t end = 0;

	for (i = 0, lo = 0; i < b->nb; lo = b->ends[i++])
		if (b->ends[i] - lo > big)
			big = b->ends[i] - lo;
	tmp = malloc(big * sizeof(*tmp));
	map->chunk_maxend = malloc((nchunks ? nchunks : 1) * sizeof(*map->chunk_maxend));
	if (!tmp || !map->chunk_maxend) {
		free(tmp);
		return ENOMEM;
	}
	for (i = 0, lo = 0; i < b->nb; lo = b->ends[i++]) {
		uint64_t o;

		sort_bucket(map, lo, b->ends[i], tmp);
		for (o = lo; o < b->ends[i]; o++) {
			const struct run *r = &tmp[o - lo].r;

			if (r->start + r->len > end)
				end = r->start + r->len;
			if ((o & ((1 << CHUNK_SHIFT) - 1)) == (1 << CHUNK_SHIFT) - 1 ||
			    o + 1 == map->nowned)
				map->chunk_maxend[o >> CHUNK_SHIFT] = end;
			if (map->layout->fs->block_map) {
				cover_upto(map, cov, r->start);
				cover_run(map, cov, r->start, r->len);
			}
			if (paint.cells && r->start < map->nblocks)
				paint_run(&paint, r->start, (r->start + r->len <= map->nblocks ?
					  r->start + r->len : map->nblocks) - r->start, r->state);
		}
	}
	free(tmp);
	return cov->err;
}

errcode_t map_build(const struct layout *layout, struct map **ret)
{
	return map_build_cached(layout, MAP_CACHED_CELLS, ret);
}

errcode_t map_build_cached(const struct layout *layout, uint64_t cached_cells,
			   struct map **ret)
{
	struct map *map;
	struct buckets b = { 0 };
	struct coverage cov = { 0 };
	errcode_t err;

	*ret = NULL;
	map = calloc(1, sizeof(*map));
	if (!map)
		return ENOMEM;
	map->layout = layout;
	map->nblocks = ext2fs_blocks_count(layout->fs->super);
	for (map->nlevels = 1; map_cells(map, map->nlevels - 1) > 1;)
		map->nlevels++;
	err = index_runs(map);
	if (!err)
		err = place_runs(map, &b);
	if (!err)
		err = build_journal(map);
	if (!err && layout->fs->block_map)
		err = cover_begin(map, &cov);
	if (!err)
		err = cache_begin(map, cached_cells);
	if (!err)
		err = build_owned(map, &b, &cov);
	free(b.ends);
	if (!err && layout->fs->block_map)
		err = cover_end(map, &cov);
	free(cov.fixed.v);
	if (!err && map->first_cached < map->nlevels) {
		struct map bare = *map;
		struct paint paint = { map->first_cached, 0, map->cache[map->first_cached] };

		/* The owned runs are painted: the rest, from a map without them. */
		bare.nowned = 0;
		visit_runs(&bare, 0, map->nblocks, paint_run, &paint);
		cache_fold(map);
	}
	if (err) {
		map_free(map);
		return err;
	}
	*ret = map;
	return 0;
}

void map_free(struct map *map)
{
	unsigned k;

	if (!map)
		return;
	for (k = 0; k < MAP_MAX_LEVELS; k++)
		free(map->cache[k]);
	free(map->owned);
	free(map->multi);
	free(map->multi_hint);
	free(map->aux_state);
	free(map->chunk_maxend);
	free(map->journal);
	free(map->unknown);
	layout_partners_close(map->partners);
	free(map);
}

/* ------------------------------------------------------------- queries */

void map_cell_states(const struct map *map, unsigned level, uint64_t first,
		     uint64_t count, uint8_t *states)
{
	uint64_t ncells, inside;

	if (level >= map->nlevels) {
		memset(states, MAP_PAST_END, count);
		return;
	}
	ncells = map_cells(map, level);
	inside = first >= ncells ? 0 : ncells - first < count ? ncells - first : count;
	memset(states + inside, MAP_PAST_END, count - inside);
	if (!inside)
		return;
	if (map->cache[level]) {
		memcpy(states, map->cache[level] + first, inside);
		return;
	}
	paint_window(map, level, first, inside, states);
}

enum map_state map_block_state(const struct map *map, blk64_t block)
{
	uint8_t s;

	map_cell_states(map, 0, block, 1, &s);
	return s;
}

/* A start (+1) or end (-1) of a run in STATE, for counting a range. */
struct event {
	blk64_t	at;
	int8_t	delta;
	uint8_t	state;
};

struct event_list {
	struct event	*v;
	uint64_t	n, cap;
	errcode_t	err;
};

static void collect_events(void *priv, blk64_t start, blk64_t len, uint8_t state)
{
	struct event_list *l = priv;

	if (l->err || (l->err = util_grow(&l->v, &l->cap, l->n + 2, sizeof(*l->v))))
		return;
	l->v[l->n++] = (struct event){ start, 1, state };
	l->v[l->n++] = (struct event){ start + len, -1, state };
}

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

void map_range_counts(const struct map *map, blk64_t start, blk64_t len,
		      blk64_t counts[MAP_NSTATES])
{
	struct event_list l = { 0 };
	uint64_t i, active[MAP_NSTATES] = { 0 };
	blk64_t end, used = 0;

	memset(counts, 0, MAP_NSTATES * sizeof(*counts));
	if (start >= map->nblocks)
		return;
	end = map->nblocks - start < len ? map->nblocks : start + len;
	visit_runs(map, start, end, collect_events, &l);
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_event);
	/* A sweep: between two events, the blocks are in the worst state active. */
	for (i = 0; i < l.n;) {
		blk64_t at = l.v[i].at;
		int s;

		for (; i < l.n && l.v[i].at == at; i++)
			active[l.v[i].state] += l.v[i].delta;
		if (i == l.n)
			break;
		for (s = MAP_NSTATES - 1; s > MAP_FREE && !active[s]; s--)
			;
		if (s != MAP_FREE) {
			counts[s] += l.v[i].at - at;
			used += l.v[i].at - at;
		}
	}
	counts[MAP_FREE] = end - start - used;
	free(l.v);
}

errcode_t map_range_owners(const struct map *map, blk64_t start, blk64_t len,
			   ext2_ino_t **ret, uint64_t *nret)
{
	blk64_t end = start + len < start ? ~(blk64_t)0 : start + len;
	uint64_t i, n = 0, cap = 0, u;
	ext2_ino_t *inos = NULL;
	errcode_t err;

	*ret = NULL;
	*nret = 0;
	for (i = owned_from(map, start); i < map->nowned; i++) {
		struct run o = owned_run(map, map->owned[i]);

		if (o.start >= end)
			break;
		if (o.start + o.len <= start)
			continue;
		err = util_grow(&inos, &cap, n + 1, sizeof(*inos));
		if (err) {
			free(inos);
			return err;
		}
		inos[n++] = o.ino;
	}
	if (!n)
		return 0;
	qsort(inos, n, sizeof(*inos), compare_u32);
	for (i = u = 1; i < n; i++)
		if (inos[i] != inos[u - 1])
			inos[u++] = inos[i];
	*ret = inos;
	*nret = u;
	return 0;
}

errcode_t map_cell_owner_ends(const struct map *map, unsigned level, uint64_t first,
			       uint64_t count, ext2_ino_t *first_ino, ext2_ino_t *last_ino)
{
	blk64_t from = first << level, to = (first + count) << level;
	blk64_t *lowest = NULL, *highest = NULL;
	uint64_t i, c;

	memset(first_ino, 0, count * sizeof(*first_ino));
	memset(last_ino, 0, count * sizeof(*last_ino));
	if (to > map->nblocks)
		to = map->nblocks;
	if (from >= to)
		return 0;
	lowest = malloc(count * sizeof(*lowest));
	highest = malloc(count * sizeof(*highest));
	if (!lowest || !highest) {
		free(lowest);
		free(highest);
		return ENOMEM;
	}
	for (i = owned_from(map, from); i < map->nowned; i++) {
		struct run o = owned_run(map, map->owned[i]);
		blk64_t a = o.start > from ? o.start : from;
		blk64_t b = o.start + o.len < to ? o.start + o.len : to;

		if (o.start >= to)
			break;
		if (a >= b)
			continue;
		/* Each cell the run reaches: where in it the run begins and ends. */
		for (c = (a >> level) - first; c <= ((b - 1) >> level) - first; c++) {
			blk64_t cell_a = (first + c) << level, cell_b = cell_a + ((blk64_t)1 << level);
			blk64_t lo = a > cell_a ? a : cell_a, hi = (b < cell_b ? b : cell_b) - 1;

			if (!first_ino[c] || lo < lowest[c]) {
				lowest[c] = lo;
				first_ino[c] = o.ino;
			}
			if (!last_ino[c] || hi > highest[c]) {
				highest[c] = hi;
				last_ino[c] = o.ino;
			}
		}
	}
	free(lowest);
	free(highest);
	return 0;
}
