/*
 * map.c --- the block map model (see map.h).
 *
 * The map's one index is the list of runs inodes own (every file's
 * pieces and aux blocks), 16 bytes each (start, inode, length and state),
 * sorted by address with a radix sort, with the largest end seen every 64
 * runs so that a window finds its first run by binary search.  Fixed metadata is read from the layout's
 * bitmap, the journal from a sorted copy of its (few) runs.  Blocks the
 * block bitmap has in use that nothing covers are MAP_UNKNOWN: found once,
 * in the same pass over the sorted runs, and kept as a (normally empty)
 * list.
 *
 * A window of cells is painted by visiting the runs inside it and raising
 * each cell to the worst state over it, so overlapping runs (a damaged
 * filesystem, the journal inside the fixed metadata) need no flattening.
 * The finest level of at most MAP_CACHED_CELLS cells is painted once, in
 * one pass over every run, and the coarser ones are folded from it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"
#include "compare.h"
#include "lower_bound.h"
#include "radix_sort.h"

/*
 * A run of blocks an inode owns, with the state it shows: all a query
 * needs, so that walking the sorted runs never jumps around the layout.
 * Runs longer than OWNED_MAX_LEN are kept as several.
 */
struct owned {
	blk64_t		start;
	ext2_ino_t	ino;
	uint32_t	len_state;	/* length, then the state in the top bits */
};

#define STATE_SHIFT	28
#define OWNED_MAX_LEN	((1U << STATE_SHIFT) - 1)
#define CHUNK_SHIFT	6	/* runs per entry of chunk_maxend: 64 */
#define MAP_MAX_LEVELS	64

struct map {
	const struct layout	*layout;
	blk64_t			nblocks;
	struct owned		*owned;		/* sorted by start */
	uint64_t		nowned;
	blk64_t			*chunk_maxend;	/* [j]: largest end in owned[0 .. (j + 1) * 64) */
	struct layout_piece	*journal;	/* the journal's runs, by address */
	uint64_t		njournal;
	struct layout_piece	*unknown;	/* in use, owned by nobody; by address */
	uint64_t		nunknown;
	unsigned		nlevels;
	unsigned		first_cached;	/* levels from here on are in cache[] */
	uint8_t			*cache[MAP_MAX_LEVELS];
	struct layout_partners	*partners;	/* a scan that kept no lists: asked per file */
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

struct layout_partners *map_partners(const struct map *map)
{
	return map->partners;
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

static blk64_t owned_len(const struct owned *o)
{
	return o->len_state & OWNED_MAX_LEN;
}

static uint8_t owned_state(const struct owned *o)
{
	return o->len_state >> STATE_SHIFT;
}

/* Index of the first owned run that can end after FROM. */
static uint64_t owned_from(const struct map *map, blk64_t from)
{
	uint64_t chunks = (map->nowned + (1 << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT;

	/* chunk_maxend rises: the first chunk reaching past FROM. */
	return lower_bound(0, chunks, blk_at_or_before, map->chunk_maxend, &from)
	       << CHUNK_SHIFT;
}

/* Room for one more run, and it (cut into runs of at most OWNED_MAX_LEN). */
static errcode_t add_owned(struct map *map, uint64_t *cap, blk64_t start, blk64_t len,
			   ext2_ino_t ino, uint8_t state)
{
	errcode_t ret;

	while (len) {
		blk64_t n = len < OWNED_MAX_LEN ? len : OWNED_MAX_LEN;

		ret = util_grow(&map->owned, cap, map->nowned + 1, sizeof(*map->owned));
		if (ret)
			return ret;
		map->owned[map->nowned++] = (struct owned){ start, ino,
			(uint32_t)n | ((uint32_t)state << STATE_SHIFT) };
		start += n;
		len -= n;
	}
	return 0;
}

/* Every file's pieces and every aux run, sorted, with the chunk ends. */
static errcode_t build_owned(struct map *map)
{
	const struct layout *layout = map->layout;
	uint64_t i, n = layout->naux, cap, nchunks;
	blk64_t max = 0, end = 0;
	uint32_t p;
	errcode_t ret;

	/* Reserved once: growing by copies would hold two arrays at the peak. */
	for (i = 0; i < layout->nfiles; i++)
		n += layout_file_pieces(layout, &layout->files[i]);
	cap = n + 1;
	map->owned = malloc(cap * sizeof(*map->owned));
	if (!map->owned)
		return ENOMEM;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		uint8_t state = file_state(layout, f);

		for (p = 0; p < layout_file_pieces(layout, f); p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			ret = add_owned(map, &cap, pc.start, pc.len, f->ino, state);
			if (ret)
				return ret;
		}
	}
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *x = &layout->aux[i];
		int64_t fi = layout_find(layout, x->ino);

		/* An inode with nothing but an EA block is not a file in the layout. */
		ret = add_owned(map, &cap, x->start, x->len, x->ino,
				fi < 0 ? MAP_FILE : file_state(layout, &layout->files[fi]));
		if (ret)
			return ret;
	}
	n = map->nowned;
	for (i = 0; i < n; i++)
		if (map->owned[i].start > max)
			max = map->owned[i].start;
	ret = radix_sort_by_start(map->owned, n, sizeof(*map->owned),
				  offsetof(struct owned, start), max);
	if (ret)
		return ret;
	nchunks = (n + (1 << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT;
	map->chunk_maxend = malloc((nchunks ? nchunks : 1) * sizeof(*map->chunk_maxend));
	if (!map->chunk_maxend)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		blk64_t e = map->owned[i].start + owned_len(&map->owned[i]);

		if (e > end)
			end = e;
		if ((i & ((1 << CHUNK_SHIFT) - 1)) == (1 << CHUNK_SHIFT) - 1 || i + 1 == n)
			map->chunk_maxend[i >> CHUNK_SHIFT] = end;
	}
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
	for (i = owned_from(map, from); i < map->nowned && map->owned[i].start < to; i++) {
		const struct owned *o = &map->owned[i];
		blk64_t end = o->start + owned_len(o);

		if (end <= from)
			continue;
		a = o->start > from ? o->start : from;
		b = end < to ? end : to;
		fn(priv, a, b - a, owned_state(o));
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

/*
 * The blocks in use that no run covers: merge the fixed runs, the
 * journal's and the owned ones, all in address order, and ask the block
 * bitmap only about the gaps between them.
 */
static errcode_t build_unknown(struct map *map)
{
	ext2_filsys fs = map->layout->fs;
	blk64_t covered = fs->super->s_first_data_block;
	struct run_list fixed = { 0 };
	uint64_t f = 0, j = 0, o = 0, cap = 0;
	errcode_t ret = 0;

	if (!fs->block_map)
		return 0;
	if (map->layout->fixed) {
		struct map bare = *map;

		/* Only the fixed metadata: visit a map with nothing else in it. */
		bare.njournal = bare.nunknown = bare.nowned = 0;
		visit_runs(&bare, 0, map->nblocks, collect_fixed, &fixed);
		if (fixed.cap == UINT64_MAX) {
			free(fixed.v);
			return ENOMEM;
		}
	}
	for (;;) {
		blk64_t start = ~(blk64_t)0, len = 0;

		/* The next run by address among the three lists. */
		if (f < fixed.n && fixed.v[f].start < start) {
			start = fixed.v[f].start;
			len = fixed.v[f].len;
		}
		if (j < map->njournal && map->journal[j].start < start) {
			start = map->journal[j].start;
			len = map->journal[j].len;
		}
		if (o < map->nowned && map->owned[o].start < start) {
			start = map->owned[o].start;
			len = owned_len(&map->owned[o]);
		}
		if (start == ~(blk64_t)0)
			break;
		if (f < fixed.n && fixed.v[f].start == start)
			f++;
		else if (j < map->njournal && map->journal[j].start == start)
			j++;
		else
			o++;
		if (start >= map->nblocks)
			continue;
		if (start > covered) {
			ret = unknown_in(map, &cap, covered, start);
			if (ret)
				break;
		}
		if (start + len > covered)
			covered = start + len;
	}
	if (!ret && covered < map->nblocks)
		ret = unknown_in(map, &cap, covered, map->nblocks);
	free(fixed.v);
	return ret;
}

/* Paint the finest level that may be cached in one pass, fold the rest from it. */
static errcode_t build_cache(struct map *map, uint64_t cached_cells)
{
	unsigned k;
	uint64_t c, n;

	map->first_cached = map_level_fit(map, cached_cells);
	/* map_level_fit() settles for the last level when nothing fits. */
	if (map_cells(map, map->first_cached) > cached_cells) {
		map->first_cached = map->nlevels;
		return 0;
	}
	for (k = map->first_cached; k < map->nlevels; k++) {
		n = map_cells(map, k);
		map->cache[k] = malloc(n);
		if (!map->cache[k])
			return ENOMEM;
		if (k == map->first_cached) {
			paint_window(map, k, 0, n, map->cache[k]);
			continue;
		}
		/* A cell of level k is the worse of two cells of level k - 1. */
		for (c = 0; c < n; c++) {
			uint8_t a = map->cache[k - 1][2 * c];
			uint8_t b = 2 * c + 1 < map_cells(map, k - 1) ?
				map->cache[k - 1][2 * c + 1] : MAP_FREE;

			map->cache[k][c] = a > b ? a : b;
		}
	}
	return 0;
}

errcode_t map_build(const struct layout *layout, struct map **ret)
{
	return map_build_cached(layout, MAP_CACHED_CELLS, ret);
}

errcode_t map_build_cached(const struct layout *layout, uint64_t cached_cells,
			   struct map **ret)
{
	struct map *map;
	errcode_t err;

	*ret = NULL;
	map = calloc(1, sizeof(*map));
	if (!map)
		return ENOMEM;
	map->layout = layout;
	map->nblocks = ext2fs_blocks_count(layout->fs->super);
	for (map->nlevels = 1; map_cells(map, map->nlevels - 1) > 1;)
		map->nlevels++;
	err = build_owned(map);
	if (!err)
		err = build_journal(map);
	if (!err)
		err = build_unknown(map);
	if (!err)
		err = build_cache(map, cached_cells);
	/* Highlighting marks one file's partners: a few, not every file's list. */
	if (!err && !layout->partners && layout->ninterleaved)
		err = layout_partners_open(layout, &map->partners);
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
	for (i = owned_from(map, start); i < map->nowned && map->owned[i].start < end; i++) {
		const struct owned *o = &map->owned[i];

		if (o->start + owned_len(o) <= start)
			continue;
		err = util_grow(&inos, &cap, n + 1, sizeof(*inos));
		if (err) {
			free(inos);
			return err;
		}
		inos[n++] = o->ino;
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
