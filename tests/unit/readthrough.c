/*
 * readthrough.c --- the mover's rule for reading through a gap between
 * two sources (defrag/readthrough.c), against a reference that counts the
 * gap block by block: short gaps always; longer ones when they hold data
 * a later move reads that the page cache does not hold yet, with at most
 * READ_THROUGH_OTHER_BYTES of other blocks (neither later data nor held)
 * for each run of it and one more.  And a small group's read-ahead
 * (read_ahead_runs, read_ahead_to) against references that go block by
 * block: the first blocks of later data not held, up to the budget, in
 * runs joined across gaps of READ_THROUGH_BYTES at most; each block of
 * them handed out once, before the first read that starts past it, and
 * never when a read covered it first.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readthrough.h"
#include "memory_fs.h"
#include "xorshift.h"
#include "../lib/tap.h"

#define NBLOCKS	65536
#define BS	4096

/* The rule, from its definition, one block at a time. */
static int reference(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
		     blk64_t start, blk64_t len)
{
	blk64_t b, other = 0, runs = 0;
	int prev = 0;

	if (len * BS <= READ_THROUGH_BYTES)
		return 1;
	if (!later)
		return 0;
	for (b = start; b < start + len; b++) {
		int h = held && ext2fs_test_block_bitmap2(held, b);
		int set = !h && ext2fs_test_block_bitmap2(later, b);

		if (set && !prev)
			runs++;
		if (!set && !h)
			other++;
		prev = set;
	}
	return runs > 0 && other * BS <= (runs + 1) * READ_THROUGH_OTHER_BYTES;
}

/*
 * LATER and HELD anew: stretches of up to MAXLEN blocks, each (of KINDS
 * equally likely kinds) later data, later data held, held, or neither.
 */
static void random_pattern(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
			   blk64_t maxlen, unsigned kinds)
{
	blk64_t b;

	ext2fs_clear_block_bitmap(later);
	ext2fs_clear_block_bitmap(held);
	for (b = 0; b < NBLOCKS; ) {
		blk64_t len = 1 + rnd() % maxlen;
		blk64_t n = b + len > NBLOCKS ? NBLOCKS - b : len;
		unsigned r = rnd() % kinds;

		if (r < 2)
			ext2fs_mark_block_bitmap_range2(later, b, n);
		if (r == 1 || r == 2)
			ext2fs_mark_block_bitmap_range2(held, b, n);
		b += len;
	}
}

/* read_ahead_runs by its definition: the blocks, then the runs. */
static size_t ahead_reference(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
			      blk64_t budget, struct layout_piece *runs)
{
	blk64_t b, join = READ_THROUGH_BYTES / BS;
	size_t n = 0;

	for (b = 0; b < NBLOCKS && budget; b++) {
		if (!ext2fs_test_block_bitmap2(later, b) ||
		    (held && ext2fs_test_block_bitmap2(held, b)))
			continue;
		budget--;
		if (n && runs[n - 1].start + runs[n - 1].len == b)
			runs[n - 1].len++;
		else if (n && b - (runs[n - 1].start + runs[n - 1].len) <= join)
			runs[n - 1].len = b + 1 - runs[n - 1].start;
		else
			runs[n++] = (struct layout_piece){ b, 1 };
	}
	return n;
}

/* What read_ahead_to hands out, logged. */
struct issued {
	struct layout_piece	run[NBLOCKS];
	size_t			n;
};

static errcode_t log_issue(void *priv, blk64_t start, blk64_t len)
{
	struct issued *l = priv;

	l->run[l->n++] = (struct layout_piece){ start, len };
	return 0;
}

static uint8_t pending[NBLOCKS];

/* read_ahead_to by its definition, block by block, for the reads READS. */
static void ahead_to_reference(const struct layout_piece *runs, size_t n,
			       const struct layout_piece *reads, size_t nreads,
			       struct issued *out)
{
	blk64_t b;
	size_t i, r;

	memset(pending, 0, sizeof(pending));
	for (i = 0; i < n; i++)
		memset(pending + runs[i].start, 1, runs[i].len);
	out->n = 0;
	for (r = 0; r <= nreads; r++) {
		blk64_t blk = r < nreads ? reads[r].start : NBLOCKS;
		blk64_t end = r < nreads ? reads[r].start + reads[r].len : NBLOCKS;
		size_t first = out->n;	/* this read's hand-outs */

		for (b = 0; b < blk; b++) {
			struct layout_piece *last = out->n > first ? &out->run[out->n - 1] : NULL;

			if (!pending[b])
				continue;
			if (last && last->start + last->len == b)
				last->len++;
			else
				out->run[out->n++] = (struct layout_piece){ b, 1 };
			pending[b] = 0;
		}
		for (b = blk; b < end; b++)
			pending[b] = 0;
	}
}

int main(void)
{
	ext2fs_block_bitmap later, held;
	ext2_filsys fs;
	long trials = 0, wrong = 0, through = 0, not_through = 0;
	blk64_t mib = (1 << 20) / BS;
	int i;

	fs = memory_fs(NBLOCKS, 2);	/* 4 KiB blocks */
	if (!fs || ext2fs_allocate_block_bitmap(fs, "later", &later) ||
	    ext2fs_allocate_block_bitmap(fs, "held", &held)) {
		tap_skip_all("no filesystem in memory (ext2fs_initialize)");
		return 0;
	}
	tap_plan(12);

	/* Two files interleaved in 1 MiB pieces: the other's piece is read through. */
	ext2fs_mark_block_bitmap_range2(later, 1000, mib);
	tap_ok(read_through(later, NULL, 1000, mib, BS), "a piece a later move reads, between two of this pass");
	tap_ok(!read_through(NULL, NULL, 1000, mib, BS), "not without the plan's sources");
	/* Free blocks or files that stay: only a short gap. */
	tap_ok(!read_through(later, NULL, 5000, 4 * mib, BS) &&
	       read_through(later, NULL, 5000, READ_THROUGH_BYTES / BS, BS),
	       "4 MiB of nothing later read is jumped over, 64 KiB read through");
	/* One run of later data between 3 MiB of other: two seeks' worth at most. */
	ext2fs_clear_block_bitmap(later);
	ext2fs_mark_block_bitmap_range2(later, 20000 + mib, 16);
	tap_ok(!read_through(later, NULL, 20000, 3 * mib + 16, BS) &&
	       read_through(later, NULL, 20000, 2 * mib + 16, BS),
	       "other blocks beside later data: two MiB for one run, not three");
	/* Three runs: four MiB of other blocks at most. */
	ext2fs_mark_block_bitmap_range2(later, 20000 + 2 * mib + 16, 8);
	ext2fs_mark_block_bitmap_range2(later, 20000 + 3 * mib + 32, 8);
	tap_ok(read_through(later, NULL, 20000, 4 * mib + 32, BS),
	       "three runs of later data in 4 MiB: read through");

	/* Held blocks (the page cache's) are neither: a gap of them and one
	 * later run is read through; of them alone, not. */
	ext2fs_clear_block_bitmap(later);
	ext2fs_mark_block_bitmap_range2(held, 30000, 4 * mib);
	ext2fs_mark_block_bitmap_range2(later, 30000, 4 * mib + 8);
	tap_ok(read_through(later, held, 30000, 4 * mib + 8, BS) &&
	       !read_through(later, held, 30000, 4 * mib, BS),
	       "4 MiB held and a run not yet read: read through; held alone: not");
	ext2fs_clear_block_bitmap(held);

	/* Random patterns against the reference. */
	for (i = 0; i < 200; i++) {
		int k;

		random_pattern(later, held, i % 2 ? 64 : 1024, 6);
		for (k = 0; k < 200; k++) {
			blk64_t len = 1 + rnd() % (6 * mib);
			blk64_t start = rnd() % (NBLOCKS - len);
			ext2fs_block_bitmap h = k % 2 ? held : NULL;
			int got = read_through(later, h, start, len, BS);

			trials++;
			wrong += got != reference(later, h, start, len);
			through += got;
			not_through += !got;
		}
	}
	tap_ok(!wrong, "%ld random gaps as the reference has them (%ld wrong)", trials, wrong);
	tap_ok(through > trials / 20 && not_through > trials / 20,
	       "both answers among them (%ld read through, %ld not)", through, not_through);

	/* The read-ahead: runs, then their hand-out around a pass's reads. */
	{
		static struct layout_piece got[NBLOCKS], want[NBLOCKS], reads[64];
		static struct issued a, b;
		struct layout_piece *runs = NULL;
		size_t n = 0, cap = 0, nwant, nreads, at;
		blk64_t from;
		long runs_wrong = 0, out_wrong = 0, handed = 0, cases = 0, cont_wrong = 0, cont = 0;
		int k;

		for (i = 0; i < 300; i++) {
			blk64_t bl, budget = i % 3 ? 1 + rnd() % (NBLOCKS / 4) : NBLOCKS;
			ext2fs_block_bitmap h = i % 2 ? held : NULL;

			random_pattern(later, held, i % 4 < 2 ? 24 : 400, 5);
			from = 0;
			if (read_ahead_runs(later, h, &from, 0, budget, BS, &runs, &n, &cap))
				return 99;
			nwant = ahead_reference(later, h, budget, want);
			runs_wrong += n != nwant || (n && memcmp(runs, want, n * sizeof(*runs)));
			memcpy(got, runs, n * sizeof(*runs));
			/* Ascending reads, apart, as a pass makes them. */
			for (nreads = 0, bl = rnd() % 2000; nreads < 64 && bl < NBLOCKS; nreads++) {
				blk64_t len = 1 + rnd() % 300;

				if (bl + len > NBLOCKS)
					len = NBLOCKS - bl;
				reads[nreads] = (struct layout_piece){ bl, len };
				bl += len + rnd() % 3000;
			}
			a.n = 0;
			at = 0;
			for (k = 0; k <= (int)nreads; k++) {
				blk64_t s = k < (int)nreads ? reads[k].start : NBLOCKS;
				blk64_t e = k < (int)nreads ? reads[k].start + reads[k].len : NBLOCKS;

				if (read_ahead_to(got, n, &at, s, e, log_issue, &a))
					return 99;
			}
			ahead_to_reference(want, nwant, reads, nreads, &b);
			out_wrong += a.n != b.n || (a.n && memcmp(a.run, b.run, a.n * sizeof(*a.run)));
			handed += a.n;
			cases++;
			/* Its runs read, the next pass goes on from where it
			 * stopped: as one from the start would. */
			if (h) {
				size_t r;

				for (r = 0; r < nwant; r++)
					ext2fs_mark_block_bitmap_range2(held, want[r].start, want[r].len);
				if (read_ahead_runs(later, held, &from, 0, budget, BS, &runs, &n, &cap))
					return 99;
				nwant = ahead_reference(later, held, budget, want);
				cont_wrong += n != nwant || (n && memcmp(runs, want, n * sizeof(*runs)));
				cont += n > 0;
			}
		}
		tap_ok(!runs_wrong, "%ld read-aheads' runs as the reference has them (%ld wrong)",
		       cases, runs_wrong);
		tap_ok(!out_wrong, "and handed out around a pass's reads as it has them (%ld wrong)",
		       out_wrong);
		tap_ok(handed > cases * 10, "%ld runs handed out in all", handed);
		tap_ok(!cont_wrong && cont > 20,
		       "the next pass goes on where one stopped as from the start (%ld of %ld wrong)",
		       cont_wrong, cont);
		free(runs);
	}
	ext2fs_free_block_bitmap(later);
	ext2fs_free_block_bitmap(held);
	ext2fs_free(fs);
	return tap_done();
}
