/*
 * runs_splice.c --- a move applied in place (filemap/runs.c:
 * runs_apply_span, runs_spliced_count, runs_splice; the planner's commit)
 * against runs_apply, which copies the whole stream, its oracle.  Random
 * merged streams and sorted changes, made to land where they join the
 * runs either side (a change to where a block is already, or to just past
 * the run before), must give the same runs, the same count, and offsets
 * that are the new runs' own.  A change past the stream's end is refused
 * by both.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "../lib/tap.h"
#include "xorshift.h"

#define MAXRUNS	300

/* A merged stream of N runs over a small block space (so that runs meet). */
static blk64_t make_runs(struct layout_piece *r, size_t n)
{
	blk64_t total = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		r[i].len = 1 + rnd() % 4;
		do
			r[i].start = rnd() % 400;
		while (i && r[i].start == r[i - 1].start + r[i - 1].len);
		total += r[i].len;
	}
	return total;
}

/* Where stream position POS of R lies. */
static blk64_t phys(const struct layout_piece *r, size_t n, blk64_t pos)
{
	size_t i;

	for (i = 0; i < n && pos >= r[i].len; i++)
		pos -= r[i].len;
	return r[i].start + pos;
}

/* Sorted changes inside [0, TOTAL): some to where blocks are or next to them. */
static size_t make_changes(const struct layout_piece *r, size_t n, blk64_t total,
			   struct runs_change *ch)
{
	size_t k = 0, want = 1 + rnd() % 5;
	blk64_t at = rnd() % total;

	while (k < want && at < total) {
		blk64_t len = 1 + rnd() % (total - at < 6 ? total - at : 6);

		ch[k].off = at;
		ch[k].len = len;
		switch (rnd() % 4) {
		case 0: ch[k].pblk = phys(r, n, at); break;	/* no change */
		case 1: ch[k].pblk = at ? phys(r, n, at - 1) + 1 : 7; break;
		case 2: ch[k].pblk = at + len < total ? phys(r, n, at + len) - len : 9; break;
		default: ch[k].pblk = 1000 + rnd() % 50; break;
		}
		if (ch[k].pblk > ((blk64_t)1 << 40))
			ch[k].pblk = 3;	/* (a run at block 0 minus LEN) */
		k++;
		at += len + rnd() % 8;
	}
	return k;
}

int main(void)
{
	struct layout_piece cur[MAXRUNS], work[2 * MAXRUNS], *full;
	struct piece_vec span = { 0 };
	struct runs_change ch[8];
	blk64_t off[2 * MAXRUNS + 1], want[2 * MAXRUNS + 1];
	long bad = 0, badoff = 0, cases = 0, refused = 0;
	int t;

	tap_plan(3);
	for (t = 0; t < 200000; t++) {
		size_t n = 1 + rnd() % (t % 10 ? 12 : MAXRUNS), nch, nfull, first, last,
		       count;
		blk64_t total = make_runs(cur, n);
		errcode_t a, b;
		int fa, fb;

		nch = make_changes(cur, n, total, ch);
		a = runs_apply(cur, n, ch, nch, &full, &nfull, &fa);
		runs_offsets(cur, n, off);
		b = runs_apply_span(cur, off, n, ch, nch, &first, &last, &span, &fb);
		if (a || b || !fa || !fb) {
			bad += a != b || fa != fb;
			if (!a && fa)
				free(full);
			continue;
		}
		cases++;
		count = runs_spliced_count(cur, n, first, last, span.v, span.n);
		memcpy(work, cur, n * sizeof(*cur));
		runs_splice(work, n, first, last, span.v, span.n, off);
		if (count != nfull || memcmp(work, full, nfull * sizeof(*full))) {
			if (!bad)
				fprintf(stderr, "# case %d: %zu runs, %zu changes: %zu runs, want %zu\n",
					t, n, nch, count, nfull);
			bad++;
		} else {
			runs_offsets(full, nfull, want);
			badoff += memcmp(off, want, (nfull + 1) * sizeof(*off)) != 0;
		}
		free(full);
	}
	/* Past the end: both refuse. */
	{
		blk64_t total = make_runs(cur, 10);
		struct runs_change past = { total - 1, 2, 5 };
		size_t first, last, nfull;
		int fa = 1, fb = 1;

		runs_offsets(cur, 10, off);
		refused = !runs_apply(cur, 10, &past, 1, &full, &nfull, &fa) && !fa &&
			  !runs_apply_span(cur, off, 10, &past, 1, &first, &last, &span,
					   &fb) && !fb;
	}
	tap_ok(!bad, "runs spliced in place are runs_apply's (%ld cases, %ld wrong)",
	       cases, bad);
	tap_ok(!badoff, "offsets shifted in place are the new runs' (%ld wrong)", badoff);
	tap_ok(refused, "a change past the end is refused by both");
	piece_vec_free(&span);
	return tap_done();
}
