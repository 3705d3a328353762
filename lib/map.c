/*
 * map.c --- the block map model (see map.h).
 *
 * Building it: every run of blocks whose state is known (the boot block,
 * the fixed metadata bitmap, the journal, every file's pieces and aux
 * blocks) goes into one list; a sweep over its start and end points turns
 * that into disjoint spans, each in the worst state of the runs covering
 * it (runs overlap only on a damaged filesystem, or where the journal is
 * also fixed metadata).  Blocks the block bitmap has in use that no span
 * covers are MAP_UNKNOWN; the rest is free.  The coarse zoom levels are
 * then filled from the spans once; finer ones are filled per request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"

/* A run of blocks in one state.  Disjoint and sorted in map->spans. */
struct span {
	blk64_t	start;
	blk64_t	len;
	uint8_t	state;
};

/* A run of blocks an inode owns, for the owner queries. */
struct owned {
	blk64_t		start;
	blk64_t		len;
	ext2_ino_t	ino;
};

#define MAP_MAX_LEVELS	64

struct map {
	const struct layout	*layout;
	blk64_t			nblocks;
	struct span		*spans;		/* disjoint, address order; gaps are free */
	uint64_t		nspans;
	struct owned		*owned;		/* sorted by start */
	blk64_t			*owned_maxend;	/* max end of owned[0 .. i]: for range queries */
	uint64_t		nowned;
	unsigned		nlevels;
	unsigned		first_cached;	/* levels from here on are in cache[] */
	uint8_t			*cache[MAP_MAX_LEVELS];
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
	if (layout_file_interleave(layout, f))
		return MAP_INTERLEAVED;
	if (f->pieces > layout_file_best(layout, f))
		return MAP_FRAGMENTED;
	return MAP_FILE;
}

/* ------------------------------------------------------------ building */

/* A growable list of spans, overlapping until flattened. */
struct span_list {
	struct span	*v;
	uint64_t	n, cap;
};

static errcode_t span_add(struct span_list *l, blk64_t start, blk64_t len,
			  uint8_t state)
{
	errcode_t ret;

	if (!len)
		return 0;
	ret = vec_reserve(&l->v, &l->cap, l->n + 1, sizeof(*l->v));
	if (ret)
		return ret;
	l->v[l->n++] = (struct span){ start, len, state };
	return 0;
}

/* Runs of set bits of BM in [FIRST, LAST] as spans of STATE. */
static errcode_t add_bitmap_runs(struct span_list *l, ext2fs_generic_bitmap bm,
				 blk64_t first, blk64_t last, uint8_t state)
{
	blk64_t start, end;
	errcode_t ret;

	for (start = first; start <= last; start = end) {
		if (ext2fs_find_first_set_block_bitmap2(bm, start, last, &start))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(bm, start, last, &end))
			end = last + 1;
		ret = span_add(l, start, end - start, state);
		if (ret)
			return ret;
	}
	return 0;
}

/* A start (+1) or end (-1) of a run in STATE, for the sweep. */
struct event {
	blk64_t	at;
	int8_t	delta;
	uint8_t	state;
};

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * Turn the overlapping runs of L into disjoint spans in map->spans, each
 * in the highest state active over it, merging neighbours in one state.
 */
static errcode_t flatten(struct map *map, const struct span_list *l)
{
	struct event *ev;
	uint64_t i, active[MAP_NSTATES] = { 0 }, cap = 0;
	errcode_t ret = 0;

	ev = malloc((2 * l->n + 1) * sizeof(*ev));
	if (!ev)
		return ENOMEM;
	for (i = 0; i < l->n; i++) {
		ev[2 * i] = (struct event){ l->v[i].start, 1, l->v[i].state };
		ev[2 * i + 1] = (struct event){ l->v[i].start + l->v[i].len, -1,
						l->v[i].state };
	}
	qsort(ev, 2 * l->n, sizeof(*ev), cmp_event);
	for (i = 0; i < 2 * l->n;) {
		blk64_t at = ev[i].at, next;
		int s;

		/* Apply every event at this point, then see what is on top. */
		for (; i < 2 * l->n && ev[i].at == at; i++)
			active[ev[i].state] += ev[i].delta;
		if (i == 2 * l->n)
			break;
		next = ev[i].at;
		for (s = MAP_NSTATES - 1; s > MAP_FREE && !active[s]; s--)
			;
		if (s == MAP_FREE)
			continue;
		if (map->nspans && map->spans[map->nspans - 1].state == s &&
		    map->spans[map->nspans - 1].start +
		    map->spans[map->nspans - 1].len == at) {
			map->spans[map->nspans - 1].len += next - at;
			continue;
		}
		ret = vec_reserve(&map->spans, &cap, map->nspans + 1,
				  sizeof(*map->spans));
		if (ret)
			break;
		map->spans[map->nspans++] = (struct span){ at, next - at, s };
	}
	free(ev);
	return ret;
}

/*
 * Blocks in use in the block bitmap that no span covers: MAP_UNKNOWN
 * spans, merged into map->spans in address order.
 */
static errcode_t add_unknown(struct map *map)
{
	ext2_filsys fs = map->layout->fs;
	blk64_t first = fs->super->s_first_data_block, last = map->nblocks - 1;
	blk64_t start, end, at;
	struct span_list u = { 0 };
	struct span *merged;
	uint64_t j = 0, a, b, n;
	errcode_t ret = 0;

	if (!fs->block_map)
		return 0;
	for (start = first; start <= last; start = end) {
		if (ext2fs_find_first_set_block_bitmap2(fs->block_map, start,
							last, &start))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, start,
							 last, &end))
			end = last + 1;
		/* The parts of [start, end) between spans. */
		for (at = start; at < end;) {
			while (j < map->nspans &&
			       map->spans[j].start + map->spans[j].len <= at)
				j++;
			if (j < map->nspans && map->spans[j].start <= at) {
				at = map->spans[j].start + map->spans[j].len;
				continue;
			}
			b = j < map->nspans && map->spans[j].start < end ?
				map->spans[j].start : end;
			ret = span_add(&u, at, b - at, MAP_UNKNOWN);
			if (ret)
				goto out;
			at = b;
		}
	}
	if (!u.n)
		goto out;
	merged = malloc((map->nspans + u.n) * sizeof(*merged));
	if (!merged) {
		ret = ENOMEM;
		goto out;
	}
	for (a = b = n = 0; a < map->nspans || b < u.n;) {
		if (b == u.n || (a < map->nspans &&
				 map->spans[a].start < u.v[b].start))
			merged[n++] = map->spans[a++];
		else
			merged[n++] = u.v[b++];
	}
	free(map->spans);
	map->spans = merged;
	map->nspans = n;
out:
	free(u.v);
	return ret;
}

static int cmp_owned(const void *a, const void *b)
{
	const struct owned *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The state runs of every file and aux block, and who owns them. */
static errcode_t add_files(struct map *map, struct span_list *l)
{
	const struct layout *layout = map->layout;
	uint64_t i, n = 0, nruns = layout->naux + 1;
	uint32_t p;
	errcode_t ret;

	/* Files in one piece keep it inline, outside layout->pieces. */
	for (i = 0; i < layout->nfiles; i++)
		nruns += layout->files[i].pieces;
	map->owned = malloc(nruns * sizeof(*map->owned));
	map->owned_maxend = malloc(nruns * sizeof(*map->owned_maxend));
	if (!map->owned || !map->owned_maxend)
		return ENOMEM;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		uint8_t state = file_state(layout, f);

		for (p = 0; p < f->pieces; p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			ret = span_add(l, pc.start, pc.len, state);
			if (ret)
				return ret;
			map->owned[n++] = (struct owned){ pc.start, pc.len, f->ino };
		}
	}
	for (i = 0; i < layout->naux; i++) {
		const struct layout_aux *x = &layout->aux[i];
		int64_t fi = layout_find(layout, x->ino);

		/* An inode with nothing but an EA block is not a file in the layout. */
		ret = span_add(l, x->start, x->len,
			       fi < 0 ? MAP_FILE : file_state(layout, &layout->files[fi]));
		if (ret)
			return ret;
		map->owned[n++] = (struct owned){ x->start, x->len, x->ino };
	}
	qsort(map->owned, n, sizeof(*map->owned), cmp_owned);
	for (i = 0; i < n; i++) {
		blk64_t end = map->owned[i].start + map->owned[i].len;

		map->owned_maxend[i] = i && map->owned_maxend[i - 1] > end ?
			map->owned_maxend[i - 1] : end;
	}
	map->nowned = n;
	return 0;
}

/* Spans clipped to the filesystem (a damaged map can point past it). */
static void clip_spans(struct map *map)
{
	while (map->nspans && map->spans[map->nspans - 1].start >= map->nblocks)
		map->nspans--;
	if (map->nspans) {
		struct span *s = &map->spans[map->nspans - 1];

		if (s->start + s->len > map->nblocks)
			s->len = map->nblocks - s->start;
	}
}

/* Raise cells [FIRST, FIRST + COUNT) of LEVEL to the states of the spans over them. */
static void paint_spans(const struct map *map, unsigned level, uint64_t first,
			uint64_t count, uint8_t *cells);

static errcode_t build_cache(struct map *map, uint64_t cached_cells)
{
	unsigned k;
	uint64_t c, n;

	map->first_cached = map_level_fit(map, cached_cells);
	/* map_level_fit() settles for the last level when nothing fits. */
	if (map_cells(map, map->first_cached) > cached_cells)
		return 0;
	for (k = map->first_cached; k < map->nlevels; k++) {
		n = map_cells(map, k);
		map->cache[k] = malloc(n);
		if (!map->cache[k])
			return ENOMEM;
		if (k == map->first_cached) {
			memset(map->cache[k], MAP_FREE, n);
			paint_spans(map, k, 0, n, map->cache[k]);
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
	ext2_filsys fs = layout->fs;
	struct span_list l = { 0 };
	struct map *map;
	blk64_t first = fs->super->s_first_data_block;
	uint64_t i;
	errcode_t err;

	*ret = NULL;
	map = calloc(1, sizeof(*map));
	if (!map)
		return ENOMEM;
	map->layout = layout;
	map->nblocks = ext2fs_blocks_count(fs->super);
	for (map->nlevels = 1; map_cells(map, map->nlevels - 1) > 1;)
		map->nlevels++;

	/* The boot block(s) before the first data block: fixed, like the superblock. */
	err = span_add(&l, 0, first < map->nblocks ? first : map->nblocks, MAP_FIXED);
	if (!err && layout->fixed)
		err = add_bitmap_runs(&l, layout->fixed, first, map->nblocks - 1,
				      MAP_FIXED);
	for (i = 0; !err && i < layout->journal.pieces && layout->journal.runs; i++)
		err = span_add(&l, layout->journal.runs[i].start,
			       layout->journal.runs[i].len, MAP_JOURNAL);
	if (!err)
		err = add_files(map, &l);
	if (!err)
		err = flatten(map, &l);
	free(l.v);
	if (!err) {
		clip_spans(map);
		err = add_unknown(map);
	}
	if (!err)
		err = build_cache(map, cached_cells);
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
	free(map->spans);
	free(map->owned);
	free(map->owned_maxend);
	free(map);
}

/* ------------------------------------------------------------- queries */

/* Index of the first span ending after BLOCK (nspans if none). */
static uint64_t span_after(const struct map *map, blk64_t block)
{
	uint64_t lo = 0, hi = map->nspans;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (map->spans[mid].start + map->spans[mid].len <= block)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void paint_spans(const struct map *map, unsigned level, uint64_t first,
			uint64_t count, uint8_t *cells)
{
	blk64_t from = first << level, to = (first + count) << level;
	uint64_t i;

	for (i = span_after(map, from); i < map->nspans; i++) {
		const struct span *s = &map->spans[i];
		blk64_t a = s->start > from ? s->start : from;
		blk64_t b = s->start + s->len < to ? s->start + s->len : to;
		uint64_t c;

		if (s->start >= to)
			break;
		for (c = a >> level; c <= (b - 1) >> level; c++)
			if (cells[c - first] < s->state)
				cells[c - first] = s->state;
	}
}

enum map_state map_block_state(const struct map *map, blk64_t block)
{
	uint64_t i;

	if (block >= map->nblocks)
		return MAP_PAST_END;
	i = span_after(map, block);
	return i < map->nspans && map->spans[i].start <= block ?
		map->spans[i].state : MAP_FREE;
}

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
	memset(states, MAP_FREE, inside);
	paint_spans(map, level, first, inside, states);
}

void map_range_counts(const struct map *map, blk64_t start, blk64_t len,
		      blk64_t counts[MAP_NSTATES])
{
	blk64_t end, used = 0;
	uint64_t i;

	memset(counts, 0, MAP_NSTATES * sizeof(*counts));
	if (start >= map->nblocks)
		return;
	end = map->nblocks - start < len ? map->nblocks : start + len;
	for (i = span_after(map, start); i < map->nspans; i++) {
		const struct span *s = &map->spans[i];
		blk64_t a = s->start > start ? s->start : start;
		blk64_t b = s->start + s->len < end ? s->start + s->len : end;

		if (s->start >= end)
			break;
		counts[s->state] += b - a;
		used += b - a;
	}
	counts[MAP_FREE] = end - start - used;
}

static int cmp_ino(const void *a, const void *b)
{
	ext2_ino_t x = *(const ext2_ino_t *)a, y = *(const ext2_ino_t *)b;

	return x < y ? -1 : x > y;
}

errcode_t map_range_owners(const struct map *map, blk64_t start, blk64_t len,
			   ext2_ino_t **ret, uint64_t *nret)
{
	blk64_t end = start + len < start ? ~(blk64_t)0 : start + len;
	uint64_t lo = 0, hi = map->nowned, i, n = 0, cap = 0, u;
	ext2_ino_t *inos = NULL;
	errcode_t err;

	*ret = NULL;
	*nret = 0;
	/* owned_maxend rises: the first run that could reach START. */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (map->owned_maxend[mid] <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < map->nowned && map->owned[i].start < end; i++) {
		if (map->owned[i].start + map->owned[i].len <= start)
			continue;
		err = vec_reserve(&inos, &cap, n + 1, sizeof(*inos));
		if (err) {
			free(inos);
			return err;
		}
		inos[n++] = map->owned[i].ino;
	}
	if (!n)
		return 0;
	qsort(inos, n, sizeof(*inos), cmp_ino);
	for (i = u = 1; i < n; i++)
		if (inos[i] != inos[u - 1])
			inos[u++] = inos[i];
	*ret = inos;
	*nret = u;
	return 0;
}
