/*
 * interleave.c --- interleave_find() against a brute-force reading of the
 * definition in e2frag(8), on random layouts: many small sets written
 * together, one huge set whose gaps straddle the 1024-piece window,
 * pieces far apart (more than a block group), and corrupt maps (pieces
 * overlapping, starting on the same block).
 * The reference is in interleave_ref.h.
 */
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "../lib/tap.h"
#include "fake_fs.h"
#include "interleave_ref.h"

/* A random layout in the making. */
struct gen {
	struct layout_file	*files;
	struct layout_piece	*pieces;	/* of the files in more than one piece */
	uint32_t		nfiles, npieces, cap_files, cap_pieces;
	struct layout_piece	*tmp;		/* the current file's pieces */
	uint32_t		ntmp, cap_tmp;
	uint64_t		rng;
	struct layout		big;	/* file_big of the files made */
};

static uint32_t rnd(struct gen *g, uint32_t n)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return n ? (uint32_t)(g->rng % n) : 0;
}

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
	if (need <= *cap)
		return p;
	while (*cap < need)
		*cap = *cap ? *cap * 2 : 64;
	p = realloc(p, *cap * (size_t)size);
	if (!p)
		abort();
	return p;
}

/* Files are made one after another; each one's pieces are added, then it is closed. */
static void piece(struct gen *g, blk64_t start, blk64_t len)
{
	g->tmp = grow(g->tmp, &g->cap_tmp, g->ntmp + 1, sizeof(*g->tmp));
	g->tmp[g->ntmp++] = (struct layout_piece){ start, len };
}

static void close_file(struct gen *g)
{
	struct layout_file *f;
	blk64_t stream = 0;
	uint64_t where;
	uint32_t i;

	if (!g->ntmp)
		return;
	g->files = grow(g->files, &g->cap_files, g->nfiles + 1, sizeof(*g->files));
	f = &g->files[g->nfiles];
	memset(f, 0, sizeof(*f));
	f->ino = 12 + g->nfiles++;
	f->type = LAYOUT_FILE;
	for (i = 0; i < g->ntmp; i++)
		stream += g->tmp[i].len;
	if (g->ntmp == 1) {
		where = g->tmp[0].start;
	} else {
		where = g->npieces;
		g->pieces = grow(g->pieces, &g->cap_pieces, g->npieces + g->ntmp,
				 sizeof(*g->pieces));
		memcpy(g->pieces + g->npieces, g->tmp, g->ntmp * sizeof(*g->tmp));
		g->npieces += g->ntmp;
	}
	if (layout_file_set(&g->big, f, stream * 4096, stream, where, g->ntmp, g->ntmp))
		abort();
	g->ntmp = 0;
}

/*
 * STREAMS files written round robin, CHUNKS chunks each, from block
 * START on; a turn is skipped now and then, and some chunks land far away.
 * The files are stored one after another, as a scan would.
 */
static blk64_t write_streams(struct gen *g, blk64_t start, uint32_t streams,
			     uint32_t chunks, uint32_t far_percent)
{
	struct layout_piece *all = calloc((size_t)streams * chunks, sizeof(*all));
	uint32_t *done = calloc(streams, sizeof(*done));
	uint32_t left = streams * chunks, s, c;
	blk64_t at = start;

	if (!all || !done)
		abort();
	while (left) {
		for (s = 0; s < streams; s++) {
			blk64_t len = 1 + rnd(g, 3);

			if (done[s] == chunks || rnd(g, 8) == 0)
				continue;
			if (rnd(g, 100) < far_percent)
				all[s * chunks + done[s]] = (struct layout_piece){
					at + 20000 + rnd(g, 40000) * 4, len };
			else
				all[s * chunks + done[s]] = (struct layout_piece){ at, len };
			at += len + rnd(g, 2);
			done[s]++;
			left--;
		}
	}
	for (s = 0; s < streams; s++) {
		for (c = 0; c < chunks; c++) {
			/* Consecutive chunks of one stream that touch are one piece. */
			if (g->ntmp && g->tmp[g->ntmp - 1].start + g->tmp[g->ntmp - 1].len ==
			    all[s * chunks + c].start)
				g->tmp[g->ntmp - 1].len += all[s * chunks + c].len;
			else
				piece(g, all[s * chunks + c].start, all[s * chunks + c].len);
		}
		close_file(g);
	}
	free(all);
	free(done);
	return at;
}

/* Files with pieces anywhere in [0, SPAN), overlapping at times (corrupt maps). */
static void write_chaos(struct gen *g, uint32_t files, uint32_t most_pieces, blk64_t span)
{
	uint32_t i, p, n;

	for (i = 0; i < files; i++) {
		n = 1 + rnd(g, most_pieces);
		for (p = 0; p < n; p++)
			piece(g, rnd(g, span), 1 + rnd(g, 8));
		close_file(g);
	}
}

/* Find the interleaving of the layout G made and compare it with the reference. */
static int check(const char *what, struct gen *g, int packed, uint32_t *ret_files,
		 uint32_t *ret_largest)
{
	struct fake_fs ff;
	struct layout L;
	struct layout_piece *pieces = g->pieces;
	uint64_t files = 0;
	uint32_t i, bad = 1;
	errcode_t ret;

	fake_layout(&L, &ff, 4096);
	L.files = g->files;
	L.nfiles = g->nfiles;
	L.file_big = g->big.file_big;
	L.nfile_big = g->big.nfile_big;
	if (!packed) {
		/* A piece in front that belongs to nobody: the pieces are not packed. */
		pieces = malloc((g->npieces + 1) * sizeof(*pieces));
		pieces[0] = (struct layout_piece){ 1, 1 };
		memcpy(pieces + 1, g->pieces, g->npieces * sizeof(*pieces));
		for (i = 0; i < g->nfiles; i++)
			if (layout_file_pieces(&L, &g->files[i]) > 1)
				layout_file_set_where(&g->files[i],
						      layout_file_where(&g->files[i]) + 1);
	}
	L.pieces = pieces;
	L.npieces = g->npieces + !packed;

	ret = interleave_find(&L);
	if (ret)
		printf("# %s: interleave_find failed (%ld)\n", what, (long)ret);
	else
		bad = ref_compare(&L, what, &files, ret_largest);
	*ret_files = files;
	tap_ok(!bad, "%s: %llu files in %llu sets, as the reference has them", what,
	       (unsigned long long)files, (unsigned long long)L.nsets);
	free(L.interleaved);
	free(L.partners);
	free(L.interleave_top);
	free(L.sets);
	free(L.set_members);
	if (!packed) {
		free(pieces);
		for (i = 0; i < g->nfiles; i++)
			if (layout_file_pieces(&L, &g->files[i]) > 1)
				layout_file_set_where(&g->files[i],
						      layout_file_where(&g->files[i]) - 1);
	}
	return !bad;
}

static void gen_reset(struct gen *g, uint64_t seed)
{
	free(g->files);
	free(g->pieces);
	free(g->tmp);
	free(g->big.file_big);
	memset(g, 0, sizeof(*g));
	g->rng = seed * 0x9e3779b97f4a7c15ULL + 1;
}

int main(void)
{
	struct gen g;
	uint32_t files, largest, round, s;
	blk64_t at;
	char what[128];

	memset(&g, 0, sizeof(g));
	tap_plan(24);

	/* Many small sets: a few streams at a time, here and there, with noise between. */
	for (round = 0; round < 8; round++) {
		gen_reset(&g, 100 + round);
		for (s = 0, at = 1000; s < 150; s++) {
			at = write_streams(&g, at, 2 + rnd(&g, 5), 2 + rnd(&g, 6),
					   round % 2 ? 10 : 0);
			write_chaos(&g, rnd(&g, 4), 3, at + 1);
			at += rnd(&g, 3) ? rnd(&g, 50) : 9000;	/* now and then a group away */
		}
		snprintf(what, sizeof(what), "small sets, seed %u (%u files)", 100 + round,
			 g.nfiles);
		check(what, &g, round % 2, &files, &largest);
	}
	tap_ok(files > 100 && largest < 20, "the small sets were many and small "
	       "(%u files interleaved, largest set %u)", files, largest);

	/* One huge set: about as many streams as the window holds, and more. */
	for (round = 0; round < 4; round++) {
		gen_reset(&g, 200 + round);
		at = write_streams(&g, 1000, 990 + round * 20, 6, round * 3);
		write_chaos(&g, 100, 6, at);
		snprintf(what, sizeof(what), "huge set, %u streams, seed %u",
			 990 + round * 20, 200 + round);
		check(what, &g, 1, &files, &largest);
	}
	tap_ok(largest > 900, "the last huge set was huge (%u files)", largest);

	/* Sets of every size, one after another. */
	for (round = 0; round < 4; round++) {
		gen_reset(&g, 300 + round);
		for (s = 0, at = 0; s < 12; s++)
			at = write_streams(&g, at, 1 + rnd(&g, 300), 1 + rnd(&g, 12), 5) +
			     rnd(&g, 10000);
		snprintf(what, sizeof(what), "sets of every size, seed %u", 300 + round);
		check(what, &g, round % 2, &files, &largest);
	}

	/* Chaos: pieces anywhere, overlapping, sharing start blocks. */
	for (round = 0; round < 6; round++) {
		gen_reset(&g, 400 + round);
		write_chaos(&g, 300 + round * 100, 2 + round * 3, 2000 + round * 20000);
		snprintf(what, sizeof(what), "chaos, seed %u (%u files)", 400 + round, g.nfiles);
		check(what, &g, round % 2, &files, &largest);
	}
	gen_reset(&g, 0);
	free(g.files);
	return tap_done();
}
