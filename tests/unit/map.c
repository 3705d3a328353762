/*
 * map.c --- the block map model (lib/map.c, lib/map_highlight.c) against
 * a brute-force reference kept here: one state per block, worked out
 * block by block from the same synthetic layout, and a cell's state taken
 * as the worst of its blocks by a plain loop.  The model gets there by a
 * sweep, cached zoom levels and binary searches; the reference does not.
 *
 * The layout is made up (a fixed seed) on an in-memory 1 KiB-block
 * filesystem of 3000 blocks, so that block 0 is a boot block, the block
 * count is no power of two, and files overlap each other and the fixed
 * metadata the way a damaged filesystem can.  A few cases are also
 * worked out by hand.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2frag.h"
#include "map.h"
#include "../lib/tap.h"

#define NBLOCKS		3000
#define NFILES		40
#define MAX_PIECES	4
#define HAND_INO	500	/* the hand-made files come after the random ones */
#define NHAND		5

static uint32_t seed = 12345;

static uint32_t rnd(uint32_t n)
{
	seed = seed * 1103515245 + 12345;
	return (seed >> 8) % n;
}

/* What the test knows about each block, worked out one block at a time. */
struct reference {
	uint8_t	state[NBLOCKS];
};

static void raise_state(struct reference *r, blk64_t start, blk64_t len, uint8_t s)
{
	blk64_t b;

	for (b = start; b < start + len && b < NBLOCKS; b++)
		if (r->state[b] < s)
			r->state[b] = s;
}

/*
 * What the test itself records of each file, apart from the layout it
 * builds from it: its pieces, whether it interleaves and with whom.
 */
struct ref_file {
	ext2_ino_t	ino;
	uint8_t		type;
	uint32_t	n;
	blk64_t		start[MAX_PIECES], len[MAX_PIECES];
	blk64_t		etb;		/* an extent tree block, or 0 */
	ext2_ino_t	partner;	/* the file it interleaves with, or 0 */
};

/* Zone sizes: a file of up to 50 blocks can be in one piece, up to 80 in two. */
static const blk64_t zone_len[] = { 50, 30, 20 };
#define NZONES (sizeof(zone_len) / sizeof(zone_len[0]))

/* The fewest zones that hold N blocks (doc/design.md: best), by trying. */
static uint32_t ref_best(blk64_t n)
{
	blk64_t sum = 0;
	uint32_t k;

	for (k = 0; k < NZONES; k++) {
		if (sum >= n)
			return k;
		sum += zone_len[k];
	}
	return NZONES;
}

static uint8_t ref_state(const struct ref_file *r)
{
	blk64_t blocks = 0;
	uint32_t i;

	if (r->type == LAYOUT_DIR)
		return MAP_DIR;
	if (r->partner)
		return MAP_INTERLEAVED;
	for (i = 0; i < r->n; i++)
		blocks += r->len[i];
	return r->n > ref_best(blocks) ? MAP_FRAGMENTED : MAP_FILE;
}

struct world {
	ext2_filsys		fs;
	struct layout		layout;
	struct ref_file		ref_files[NFILES + NHAND];
	struct layout_file	files[NFILES + NHAND];
	struct layout_piece	pieces[(NFILES + NHAND) * MAX_PIECES];
	struct layout_interleave interleaved[NFILES + NHAND];
	struct layout_aux	aux[8];
	struct layout_file_etb	file_etb[8];
	ext2_ino_t		partners[NFILES + NHAND];
	struct layout_piece	journal[2];
	blk64_t			zones_prefix[NZONES + 1];
	struct layout_zone	zones[NZONES];
	struct reference	ref;
};

static struct ref_file *new_file(struct world *w, ext2_ino_t ino, uint8_t type)
{
	struct ref_file *r;

	if (w->layout.nfiles >= NFILES + NHAND)
		abort();	/* the arrays are sized for NFILES + NHAND */
	r = &w->ref_files[w->layout.nfiles++];

	memset(r, 0, sizeof(*r));
	r->ino = ino;
	r->type = type;
	return r;
}

static void add_piece(struct world *w, struct ref_file *r, blk64_t start, blk64_t len)
{
	r->start[r->n] = start;
	r->len[r->n++] = len;
	ext2fs_mark_block_bitmap_range2(w->fs->block_map, start, len);
}

static void add_aux(struct world *w, blk64_t blk, ext2_ino_t ino, uint8_t kind)
{
	w->aux[w->layout.naux++] = (struct layout_aux){ blk, 1, ino, kind };
	ext2fs_mark_block_bitmap2(w->fs->block_map, blk);
}

static int64_t ref_find(const struct world *w, ext2_ino_t ino)
{
	uint64_t i;

	for (i = 0; i < w->layout.nfiles; i++)
		if (w->ref_files[i].ino == ino)
			return i;
	return -1;
}

/*
 * The layout the model reads, from the records: a file in one piece keeps
 * it inline, the others in layout->pieces; interleaving in
 * layout->interleaved by file; best from the zones.
 */
static void build_layout(struct world *w)
{
	struct layout *L = &w->layout;
	uint64_t i;
	uint32_t p;
	blk64_t stream;

	for (i = 0; i < NZONES; i++) {
		w->zones[i] = (struct layout_zone){ 3000 + 100 * i, zone_len[i] };
		w->zones_prefix[i + 1] = w->zones_prefix[i] + zone_len[i];
	}
	L->zones = w->zones;
	L->nzones = NZONES;
	L->zone_prefix = w->zones_prefix;
	for (i = 0; i < L->nfiles; i++) {
		const struct ref_file *r = &w->ref_files[i];
		struct layout_file *f = &w->files[i];

		memset(f, 0, sizeof(*f));
		f->ino = r->ino;
		f->type = r->type;
		for (p = 0, stream = 0; p < r->n; p++)
			stream += r->len[p];
		if (r->etb) {
			f->flags |= LAYOUT_F_ETB;
			w->file_etb[L->nfile_etb++] =
				(struct layout_file_etb){ r->ino, 1 };
		}
		if (layout_file_set(L, f, 0, stream, r->n == 1 ? r->start[0] : L->npieces,
				    r->n, r->n))
			abort();
		if (r->n > 1) {
			for (p = 0; p < r->n; p++)
				w->pieces[L->npieces++] =
					(struct layout_piece){ r->start[p], r->len[p] };
		}
		if (r->partner) {
			struct layout_interleave *il = &w->interleaved[L->ninterleaved++];

			memset(il, 0, sizeof(*il));
			il->file = i;
			il->set = 1;
			il->first_partner = L->npartners;
			il->partners = 1;
			il->alternations = 2;
			w->partners[L->npartners++] = r->partner;
		}
		if (r->etb)
			add_aux(w, r->etb, r->ino, LAYOUT_AUX_ETB);
	}
}

static int make_world(struct world *w, const char *path)
{
	struct ext2_super_block param;
	struct layout *L = &w->layout;
	struct ref_file *r3, *r4;
	uint64_t i;
	uint32_t p;
	blk64_t b;

	memset(&param, 0, sizeof(param));
	ext2fs_blocks_count_set(&param, NBLOCKS);
	param.s_log_block_size = 0;
	if (ext2fs_initialize(path, EXT2_FLAG_64BITS, &param, unix_io_manager, &w->fs))
		return -1;
	ext2fs_clear_block_bitmap(w->fs->block_map);
	memset(L, 0, sizeof(*L));
	L->fs = w->fs;
	L->files = w->files;
	L->pieces = w->pieces;
	L->aux = w->aux;
	L->file_etb = w->file_etb;
	L->partners = w->partners;
	L->interleaved = w->interleaved;
	if (ext2fs_allocate_block_bitmap(w->fs, "fixed", &L->fixed))
		return -1;

	/* Fixed metadata, and the journal inside it as zones_build marks it. */
	ext2fs_mark_block_bitmap_range2(L->fixed, 1, 39);
	ext2fs_mark_block_bitmap_range2(L->fixed, 1000, 10);
	ext2fs_mark_block_bitmap_range2(L->fixed, 2001, 4);
	w->journal[0] = (struct layout_piece){ 40, 60 };
	w->journal[1] = (struct layout_piece){ 2100, 20 };
	for (i = 0; i < 2; i++)
		ext2fs_mark_block_bitmap_range2(L->fixed, w->journal[i].start,
						w->journal[i].len);
	L->journal.pieces = 2;
	L->journal.runs = w->journal;
	for (b = 1; b < NBLOCKS; b++)
		if (ext2fs_test_block_bitmap2(L->fixed, b))
			ext2fs_mark_block_bitmap2(w->fs->block_map, b);

	/*
	 * Random files in [100, 2000), up to 80 blocks (best 1 or 2):
	 * overlapping now and then, as on a damaged fs.
	 */
	for (i = 0; i < NFILES; i++) {
		struct ref_file *r = new_file(w, 12 + i, rnd(5) ? LAYOUT_FILE : LAYOUT_DIR);
		uint32_t n = 1 + rnd(MAX_PIECES);

		for (p = 0; p < n; p++)
			add_piece(w, r, 100 + rnd(1880), 1 + rnd(20));
	}
	/* Two of them interleave with each other (in two pieces at least). */
	r3 = &w->ref_files[3];
	r4 = &w->ref_files[4];
	r3->type = r4->type = LAYOUT_FILE;
	r3->partner = r4->ino;
	r4->partner = r3->ino;
	while (r3->n < 2)
		add_piece(w, r3, 100 + rnd(1880), 1 + rnd(20));
	while (r4->n < 2)
		add_piece(w, r4, 100 + rnd(1880), 1 + rnd(20));

	/*
	 * By hand, in [2200, 2400): an interleaved pair, one block each in
	 * otherwise free cells; a fragmented file whose second piece sits on
	 * fixed metadata (2003), with an extent tree block; a directory; a
	 * file of 60 blocks in two pieces, which is as few as it can have.
	 */
	{
		struct ref_file *a = new_file(w, HAND_INO, LAYOUT_FILE);
		struct ref_file *bf = new_file(w, HAND_INO + 1, LAYOUT_FILE);
		struct ref_file *c = new_file(w, HAND_INO + 2, LAYOUT_FILE);
		struct ref_file *d = new_file(w, HAND_INO + 3, LAYOUT_DIR);
		struct ref_file *e = new_file(w, HAND_INO + 4, LAYOUT_FILE);

		add_piece(w, a, 2203, 1);
		add_piece(w, a, 2205, 1);
		add_piece(w, bf, 2204, 1);
		add_piece(w, bf, 2206, 1);
		a->partner = bf->ino;
		bf->partner = a->ino;
		add_piece(w, c, 2300, 4);
		add_piece(w, c, 2003, 1);
		c->etb = 2320;
		add_piece(w, d, 2350, 3);
		add_piece(w, e, 2400, 40);
		add_piece(w, e, 2450, 20);
	}
	build_layout(w);
	/* An EA block of an inode that is no file. */
	add_aux(w, 2330, 999, LAYOUT_AUX_XATTR);
	/* In use, owned by nobody. */
	ext2fs_mark_block_bitmap_range2(w->fs->block_map, 2500, 10);
	ext2fs_mark_block_bitmap2(w->fs->block_map, NBLOCKS - 1);

	/* The reference, block by block, from the records. */
	memset(&w->ref, MAP_FREE, sizeof(w->ref));
	w->ref.state[0] = MAP_FIXED;	/* boot block */
	for (b = 1; b < NBLOCKS; b++) {
		if (ext2fs_test_block_bitmap2(L->fixed, b))
			raise_state(&w->ref, b, 1, MAP_FIXED);
	}
	for (i = 0; i < 2; i++)
		raise_state(&w->ref, w->journal[i].start, w->journal[i].len, MAP_JOURNAL);
	for (i = 0; i < L->nfiles; i++) {
		const struct ref_file *r = &w->ref_files[i];

		for (p = 0; p < r->n; p++)
			raise_state(&w->ref, r->start[p], r->len[p], ref_state(r));
		if (r->etb)
			raise_state(&w->ref, r->etb, 1, ref_state(r));
	}
	raise_state(&w->ref, 2330, 1, MAP_FILE);	/* the EA block: no file, a file's state */
	for (b = 1; b < NBLOCKS; b++)
		if (w->ref.state[b] == MAP_FREE &&
		    ext2fs_test_block_bitmap2(w->fs->block_map, b))
			w->ref.state[b] = MAP_UNKNOWN;
	return 0;
}

/* The worst state of the blocks of cell C at LEVEL, by the reference. */
static uint8_t ref_cell(const struct world *w, unsigned level, uint64_t c)
{
	blk64_t b, from = c << level, to = (c + 1) << level;
	uint8_t s = MAP_FREE;

	if (from >= NBLOCKS)
		return MAP_PAST_END;
	for (b = from; b < to && b < NBLOCKS; b++)
		if (w->ref.state[b] > s)
			s = w->ref.state[b];
	return s;
}

/* Whether inode INO owns a block of [START, END), by the records. */
static int owns_any(const struct world *w, ext2_ino_t ino, blk64_t start, blk64_t end)
{
	int64_t i = ref_find(w, ino);
	uint32_t p;

	if (ino == 999)
		return start <= 2330 && 2330 < end;	/* the lone EA block */
	if (i < 0)
		return 0;
	for (p = 0; p < w->ref_files[i].n; p++)
		if (w->ref_files[i].start[p] < end &&
		    w->ref_files[i].start[p] + w->ref_files[i].len[p] > start)
			return 1;
	return w->ref_files[i].etb && start <= w->ref_files[i].etb &&
	       w->ref_files[i].etb < end;
}

static int owns(const struct world *w, ext2_ino_t ino, blk64_t b)
{
	return owns_any(w, ino, b, b + 1);
}

/* Compare every cell of every level, whole and in windows, with the reference. */
static int check_levels(const struct world *w, const struct map *m)
{
	unsigned level;
	uint8_t got[NBLOCKS + 64];
	uint64_t c, n, first;

	for (level = 0; level < map_levels(m); level++) {
		n = map_cells(m, level);
		if (n != (NBLOCKS + ((uint64_t)1 << level) - 1) >> level) {
			printf("# level %u: %llu cells\n", level, (unsigned long long)n);
			return 0;
		}
		/* The whole level and 5 cells beyond its end. */
		map_cell_states(m, level, 0, n + 5, got);
		for (c = 0; c < n + 5; c++)
			if (got[c] != ref_cell(w, level, c)) {
				printf("# level %u cell %llu: got %d want %d\n", level,
				       (unsigned long long)c, got[c], ref_cell(w, level, c));
				return 0;
			}
		/* Odd windows, one of them across the end. */
		for (first = 1; first < n; first += 7 + level) {
			uint64_t count = 1 + (first % 23);

			map_cell_states(m, level, first, count, got);
			for (c = 0; c < count; c++)
				if (got[c] != ref_cell(w, level, first + c)) {
					printf("# level %u window %llu+%llu cell %llu\n", level,
					       (unsigned long long)first,
					       (unsigned long long)count,
					       (unsigned long long)c);
					return 0;
				}
		}
	}
	return 1;
}

static int check_highlight(const struct world *w, const struct map *m,
			   uint64_t fi, unsigned level)
{
	struct map_highlight *hl;
	const struct ref_file *r = &w->ref_files[fi];
	uint8_t got[NBLOCKS + 8];
	uint64_t c, n = map_cells(m, level);
	int ok = 1;

	if (map_highlight_new(m, fi, &hl))
		return 0;
	map_highlight_cells(hl, level, 0, n + 3, got);
	for (c = 0; c < n + 3 && ok; c++) {
		blk64_t b;
		uint8_t want = MAP_MARK_NONE;

		for (b = c << level; b < (c + 1) << level && b < NBLOCKS; b++) {
			if (owns(w, r->ino, b))
				want = MAP_MARK_FILE;
			else if (want == MAP_MARK_NONE && r->partner && owns(w, r->partner, b))
				want = MAP_MARK_PARTNER;
		}
		if (got[c] != want) {
			printf("# file %llu level %u cell %llu: got %d want %d\n",
			       (unsigned long long)fi, level, (unsigned long long)c,
			       got[c], want);
			ok = 0;
		}
	}
	ok = ok && map_highlight_file(hl) == fi;
	map_highlight_free(hl);
	return ok;
}

static int check_ranges(const struct world *w, const struct map *m)
{
	int i;

	for (i = 0; i < 300; i++) {
		blk64_t start = rnd(NBLOCKS + 20), len = 1 + rnd(i % 3 ? 40 : 900), b;
		blk64_t got[MAP_NSTATES], want[MAP_NSTATES] = { 0 };
		ext2_ino_t *inos, ino;
		uint64_t n, k = 0, j;
		int s;

		map_range_counts(m, start, len, got);
		for (b = start; b < start + len && b < NBLOCKS; b++)
			want[w->ref.state[b]]++;
		for (s = 0; s < MAP_NSTATES; s++)
			if (got[s] != want[s]) {
				printf("# counts [%llu,+%llu) state %d: got %llu want %llu\n",
				       (unsigned long long)start, (unsigned long long)len, s,
				       (unsigned long long)got[s], (unsigned long long)want[s]);
				return 0;
			}
		if (map_range_owners(m, start, len, &inos, &n))
			return 0;
		/* Every inode from 1 to 1000 either owns a block of the range or is not listed. */
		for (ino = 1; ino < 1000; ino++) {
			int want_owner = owns_any(w, ino, start, start + len);

			if (want_owner && (k >= n || inos[k] != ino)) {
				printf("# owners [%llu,+%llu): %u missing\n",
				       (unsigned long long)start, (unsigned long long)len, ino);
				free(inos);
				return 0;
			}
			if (want_owner)
				k++;
		}
		for (j = 1; j < n; j++)
			if (inos[j] <= inos[j - 1])
				k = n + 1;
		free(inos);
		if (k != n) {
			printf("# owners [%llu,+%llu): %llu listed, %llu expected\n",
			       (unsigned long long)start, (unsigned long long)len,
			       (unsigned long long)n, (unsigned long long)k);
			return 0;
		}
	}
	return 1;
}

int main(void)
{
	struct world *w = calloc(1, sizeof(*w));
	struct map *m = NULL, *m0 = NULL, *m64 = NULL;
	char path[4096];
	const char *tmp = getenv("TMPDIR");
	uint8_t cells[8];
	blk64_t b, counts[MAP_NSTATES];
	unsigned level;
	int fd, ok;

	snprintf(path, sizeof(path), "%s/e2frag-map-test.XXXXXX", tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0 || !w) {
		tap_skip_all("cannot make a temporary file");
		return 0;
	}
	close(fd);
	tap_plan(23);
	ok = !make_world(w, path);
	tap_ok(ok, "made a 3000-block 1 KiB filesystem in memory and a layout on it");
	if (!ok)
		return tap_done();
	ok = !map_build(&w->layout, &m) && !map_build_cached(&w->layout, 0, &m0) &&
	     !map_build_cached(&w->layout, 64, &m64);
	tap_ok(ok, "map built three ways: all levels cached, none, those of <= 64 cells");
	if (!ok)
		return tap_done();

	/* Worked out by hand. */
	tap_ok(map_blocks(m) == NBLOCKS && map_levels(m) == 13 &&
	       map_cells(m, 0) == 3000 && map_cells(m, 2) == 750 &&
	       map_cells(m, 5) == 94 && map_cells(m, 12) == 1,
	       "3000 blocks: 13 levels, 3000/750/94/1 cells at 1/4/32/4096 blocks a cell");
	tap_ok(map_level_fit(m, 100) == 5 && map_level_fit(m, 3000) == 0 &&
	       map_level_fit(m, 2999) == 1 && map_level_fit(m, 0) == 12,
	       "the finest level that fits 100, 3000, 2999 and 0 cells: 5, 0, 1, 12");
	tap_ok(map_block_state(m, 0) == MAP_FIXED,
	       "block 0, before the first data block of a 1 KiB filesystem, is metadata");
	tap_ok(map_block_state(m, 40) == MAP_JOURNAL && map_block_state(m, 39) == MAP_FIXED &&
	       map_block_state(m, 2119) == MAP_JOURNAL && map_block_state(m, 2120) == MAP_FREE,
	       "journal blocks, fixed metadata too, show as journal; its neighbours do not");
	tap_ok(map_block_state(m, 2500) == MAP_UNKNOWN && map_block_state(m, 2509) == MAP_UNKNOWN &&
	       map_block_state(m, 2510) == MAP_FREE && map_block_state(m, NBLOCKS - 1) == MAP_UNKNOWN,
	       "in use with no owner: unknown; the block after them is free");
	tap_ok(map_block_state(m, NBLOCKS) == MAP_PAST_END, "past the last block: past end");
	tap_ok(map_block_state(m, 2003) == MAP_FRAGMENTED && map_block_state(m, 2001) == MAP_FIXED,
	       "a fragmented file's piece on fixed metadata shows the file, the rest metadata");
	tap_ok(map_block_state(m, 2320) == MAP_FRAGMENTED && map_block_state(m, 2330) == MAP_FILE &&
	       map_block_state(m, 2350) == MAP_DIR,
	       "an ETB shows its file's state, a lone EA block a file's; a directory is a directory");
	tap_ok(map_block_state(m, 2400) == MAP_FILE && map_block_state(m, 2469) == MAP_FILE,
	       "60 blocks in two pieces where no zone holds more than 50: a file, not fragmented");
	map_cell_states(m, 2, 2200 / 4, 2, cells);
	tap_ok(cells[0] == MAP_INTERLEAVED && cells[1] == MAP_INTERLEAVED,
	       "4 blocks a cell: cells 2200-2203 (3 free, 1 interleaved) and 2204-2207 are interleaved");
	map_cell_states(m, 3, 2296 / 8, 1, cells);
	tap_ok(cells[0] == MAP_FRAGMENTED, "a cell of free blocks and a fragmented file's shows fragmented");
	map_cell_states(m, 0, NBLOCKS - 2, 4, cells);
	tap_ok(cells[0] == MAP_FREE && cells[1] == MAP_UNKNOWN && cells[2] == MAP_PAST_END &&
	       cells[3] == MAP_PAST_END, "the last cells, then past the end");
	map_range_counts(m, 2200, 10, counts);
	tap_ok(counts[MAP_FREE] == 6 && counts[MAP_INTERLEAVED] == 4,
	       "blocks 2200-2209: 6 free, 4 interleaved");

	/* Everything against the reference. */
	for (b = 0, ok = 1; b < NBLOCKS + 3; b++)
		if (map_block_state(m, b) != (b < NBLOCKS ? w->ref.state[b] : MAP_PAST_END))
			ok = 0;
	tap_ok(ok, "every block's state matches the reference");
	tap_ok(check_levels(w, m), "every cell of every level, all levels cached");
	tap_ok(check_levels(w, m0), "every cell of every level, computed on request");
	tap_ok(check_levels(w, m64), "every cell of every level, coarse ones cached");
	tap_ok(check_ranges(w, m), "block counts per state and owners of 300 random ranges");
	for (level = 0, ok = 1; level < map_levels(m); level++)
		ok = ok && check_highlight(w, m, 3, level) && check_highlight(w, m0, 3, level) &&
		     check_highlight(w, m, 4, level) && check_highlight(w, m, NFILES, level) &&
		     check_highlight(w, m, NFILES + 1, level);
	tap_ok(ok, "highlighting interleaved files marks their cells and their partners', all levels");
	for (level = 0, ok = 1; level < map_levels(m); level++)
		ok = ok && check_highlight(w, m, NFILES + 2, level) &&
		     check_highlight(w, m, 0, level);
	tap_ok(ok, "highlighting a file with an ETB on fixed metadata, and a random file");
	{
		struct map_highlight *hl;

		tap_ok(map_highlight_new(m, w->layout.nfiles, &hl) == EINVAL && !hl,
		       "highlighting a file index past the end: EINVAL");
	}

	map_free(m);
	map_free(m0);
	map_free(m64);
	ext2fs_free_block_bitmap(w->layout.fixed);
	ext2fs_free(w->fs);
	unlink(path);
	free(w);
	return tap_done();
}
