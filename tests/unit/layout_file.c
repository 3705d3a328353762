/*
 * layout_file.c --- a file's record (lib/e2frag.h, lib/layout.c) keeps
 * every figure exact: size, stream, pieces and extents too large for their
 * field go to layout->file_big, where past 2^32 keeps its high bits.  The
 * oracle is what was set: each figure read back through the accessors,
 * and the sums and read time worked out from the figures themselves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "../lib/tap.h"
#include "fake_fs.h"
#include "xorshift.h"

#define NFILES 3000

struct want {
	uint64_t size;
	blk64_t stream;
	uint64_t where;
	uint32_t pieces, extents;
};

/* A figure near one of the edges its field has, or a small one. */
static uint64_t edgy(uint64_t small_max)
{
	static const uint64_t edges[] = {
		0, 1, UINT16_MAX - 1, UINT16_MAX, UINT16_MAX + 1ULL,
		UINT32_MAX - 1ULL, UINT32_MAX, UINT32_MAX + 1ULL,
		(1ULL << 40) + 5, UINT64_MAX,
	};
	uint64_t v = rnd() % 4 ? rnd() % small_max : edges[rnd() % 10];

	return v;
}

static int same(const struct layout *L, const struct layout_file *f,
		const struct want *w)
{
	return layout_file_size(L, f) == w->size &&
	       layout_stream_blocks(L, f) == w->stream &&
	       layout_file_where(f) == w->where &&
	       layout_file_pieces(L, f) == w->pieces &&
	       layout_file_extents(L, f) == w->extents;
}

int main(void)
{
	struct fake_fs ff;
	struct layout L;
	struct layout_file *files, one;
	struct layout_piece pc;
	struct readmodel m;
	struct want *want;
	uint64_t i, k, big = 0, *order, sum_extents = 0, sum_blocks = 0;
	double read, ideal;
	int ok, sorted;

	tap_plan(10);
	files = calloc(NFILES, sizeof(*files));
	want = calloc(NFILES, sizeof(*want));
	order = malloc(NFILES * sizeof(*order));
	if (!files || !want || !order)
		abort();
	tap_ok(sizeof(struct layout_file) <= 24, "a file's record takes %zu bytes",
	       sizeof(struct layout_file));

	fake_layout(&L, &ff, 1024);
	m = L.model;

	/* A single piece past block 2^32, of more than 2^32 blocks, 5 TiB big. */
	memset(&one, 0, sizeof(one));
	one.ino = 5000;
	tap_ok(!layout_file_set(&L, &one, 5ULL << 40, (1ULL << 32) + 3,
				(1ULL << 47) + 12345, 1, 1) &&
	       layout_file_size(&L, &one) == 5ULL << 40 &&
	       layout_stream_blocks(&L, &one) == (1ULL << 32) + 3 &&
	       layout_file_pieces(&L, &one) == 1 && layout_file_extents(&L, &one) == 1,
	       "5 TiB, 2^32 + 3 blocks: size and stream exact, one piece");
	pc = layout_file_piece(&L, &one, 0);
	tap_ok(pc.start == (1ULL << 47) + 12345 && pc.len == (1ULL << 32) + 3 &&
	       layout_file_blocks(&L, &one) == (1ULL << 32) + 3,
	       "its piece starts past 2^47 and is 2^32 + 3 blocks long");
	readmodel_file(&m, &L, &one, 1, &read, &ideal);
	tap_ok(read == ideal &&
	       ideal == readmodel_transfer_seconds(&m, ((1ULL << 32) + 3) * 1024.0),
	       "it reads in the transfer time of all its 2^32 + 3 blocks");
	tap_ok(layout_file_set(&L, &one, 0, 1, 1ULL << 48, 1, 1) == EOVERFLOW,
	       "a place past 48 bits is refused, not cut");
	free(L.file_big);
	L.file_big = NULL;
	L.nfile_big = L.file_big_cap = 0;

	/*
	 * Many files, set in a shuffled order as the scan's deferred files
	 * are (their maps come in the order of their indirect blocks).
	 */
	for (i = 0; i < NFILES; i++) {
		files[i].ino = 11 + 3 * i;
		want[i].size = edgy(1 << 20);
		want[i].stream = edgy(300);
		want[i].where = edgy(1ULL << 33) & ((1ULL << 48) - 1);
		want[i].pieces = (uint32_t)edgy(20);
		want[i].extents = (uint32_t)edgy(20);
		big += want[i].size >= UINT32_MAX || want[i].stream >= UINT32_MAX ||
		       want[i].pieces >= UINT16_MAX || want[i].extents >= UINT16_MAX;
		order[i] = i;
	}
	for (i = NFILES - 1; i > 0; i--) {
		uint64_t j = rnd() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	ok = 1;
	for (i = 0; i < NFILES; i++) {
		const struct want *w = &want[order[i]];

		ok &= !layout_file_set(&L, &files[order[i]], w->size, w->stream,
				       w->where, w->pieces, w->extents);
	}
	tap_ok(ok, "%d files set in a shuffled order", NFILES);
	L.files = files;
	L.nfiles = NFILES;
	for (i = 0, ok = 1; i < NFILES; i++)
		ok &= same(&L, &files[i], &want[i]);
	tap_ok(ok, "every figure of every file reads back exact");
	for (i = 1, sorted = 1; i < L.nfile_big; i++)
		sorted &= L.file_big[i - 1].ino < L.file_big[i].ino;
	tap_ok(L.nfile_big == big && big > 100 && sorted,
	       "the %llu files too big for their record, and only they, in file_big by inode",
	       (unsigned long long)big);

	/* Set again, big ones small and small ones big: still exact. */
	for (k = 0, ok = 1; k < NFILES; k += 7) {
		struct want w = want[k];

		want[k].size = w.size >= UINT32_MAX ? 4096 : (1ULL << 33) + k;
		want[k].pieces = w.pieces >= UINT16_MAX ? 2 : 70000;
		ok &= !layout_file_set(&L, &files[k], want[k].size, want[k].stream,
				       want[k].where, want[k].pieces, want[k].extents);
	}
	for (i = 0; i < NFILES; i++)
		ok &= same(&L, &files[i], &want[i]);
	tap_ok(ok, "figures set again, across the edges, read back exact");

	/*
	 * The summary's sums.  No zones: best is one piece a file; and one
	 * piece each, kept in the record, since readmodel_file walks them.
	 */
	for (i = 0; i < NFILES; i++) {
		ok &= !layout_file_set(&L, &files[i], want[i].size, want[i].stream,
				       want[i].where, 1, want[i].extents);
		sum_extents += want[i].extents;
		sum_blocks += want[i].stream;
	}
	layout_summarize(&L, 1);
	tap_ok(ok && L.summary.files == NFILES && L.summary.pieces == NFILES &&
	       L.summary.extents == sum_extents && L.summary.blocks == sum_blocks,
	       "the summary sums pieces, extents (%llu) and blocks (%llu) exactly",
	       (unsigned long long)sum_extents, (unsigned long long)sum_blocks);
	free(L.file_big);
	free(files);
	free(want);
	free(order);
	return tap_done();
}
