/*
 * interleave.c --- interleave_find() against a brute-force reading of the
 * definition in e2frag(8), on random layouts: many small sets written
 * together, one huge set whose gaps straddle the 1024-piece window,
 * pieces far apart (more than a block group), and corrupt maps (pieces
 * overlapping, starting on the same block).
 *
 * The reference does what the definition says and nothing clever: put
 * every piece of every file in more than one piece in physical order
 * (start, then file, then the file's own order); for each piece, if the
 * previous piece of its file is at most 1024 pieces and one block group
 * of blocks before it, every other file with a piece in between gets one
 * enclosure with it (once per gap); pairs with two enclosures or more
 * interleave, and sets are the connected groups of such pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "../lib/tap.h"

#define WINDOW_RUNS	1024

/* A random layout in the making. */
struct gen {
	struct layout_file	*files;
	struct layout_piece	*pieces;	/* of the files in more than one piece */
	uint32_t		nfiles, npieces, cap_files, cap_pieces;
	struct layout_piece	*tmp;		/* the current file's pieces */
	uint32_t		ntmp, cap_tmp;
	uint64_t		rng;
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
	uint32_t i;

	if (!g->ntmp)
		return;
	g->files = grow(g->files, &g->cap_files, g->nfiles + 1, sizeof(*g->files));
	f = &g->files[g->nfiles];
	memset(f, 0, sizeof(*f));
	f->ino = 12 + g->nfiles++;
	f->pieces = g->ntmp;
	f->extents = g->ntmp;
	f->type = LAYOUT_FILE;
	for (i = 0; i < g->ntmp; i++)
		f->blocks += g->tmp[i].len;
	f->size = f->blocks * 4096;
	if (g->ntmp == 1) {
		f->where = g->tmp[0].start;
	} else {
		f->where = g->npieces;
		g->pieces = grow(g->pieces, &g->cap_pieces, g->npieces + g->ntmp,
				 sizeof(*g->pieces));
		memcpy(g->pieces + g->npieces, g->tmp, g->ntmp * sizeof(*g->tmp));
		g->npieces += g->ntmp;
	}
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

/* ------------------------------------------------------------ reference */

struct ref_run {
	blk64_t		start, end;
	uint32_t	file, order;	/* dense file; order among all pieces, file by file */
};

static int cmp_ref_run(const void *a, const void *b)
{
	const struct ref_run *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static uint32_t ref_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/*
 * The reference: COUNT[a * nd + b] enclosures of dense files a and b;
 * DENSE[i] the dense number of layout file i or -1.
 */
static uint32_t *reference(const struct layout *L, blk64_t bpg, int64_t *dense,
			   uint32_t *ret_nd)
{
	struct ref_run *runs = malloc((L->npieces + 1) * sizeof(*runs));
	uint32_t nd = 0, n = 0, *count, *stamp;
	int64_t *last;
	uint64_t i, j, p;

	for (i = 0; i < L->nfiles; i++) {
		const struct layout_file *f = &L->files[i];

		dense[i] = -1;
		if (f->pieces < 2)
			continue;
		dense[i] = nd;
		for (p = 0; p < f->pieces; p++, n++) {
			struct layout_piece pc = layout_file_piece(L, f, p);

			runs[n] = (struct ref_run){ pc.start, pc.start + pc.len, nd, n };
		}
		nd++;
	}
	qsort(runs, n, sizeof(*runs), cmp_ref_run);
	count = calloc((size_t)nd * nd + 1, sizeof(*count));
	stamp = calloc(nd + 1, sizeof(*stamp));
	last = malloc((nd + 1) * sizeof(*last));
	for (i = 0; i < nd; i++)
		last[i] = -1;
	for (i = 0; i < n; i++) {
		uint32_t x = runs[i].file;
		int64_t prev = last[x];

		last[x] = i;
		if (prev < 0 || i - prev - 1 > WINDOW_RUNS ||
		    runs[i].start - runs[prev].end > bpg)
			continue;
		for (j = prev + 1; j < i; j++) {
			uint32_t y = runs[j].file;

			if (y == x || stamp[y] == i + 1)
				continue;
			stamp[y] = i + 1;
			count[(size_t)x * nd + y]++;
			count[(size_t)y * nd + x]++;
		}
	}
	free(runs);
	free(stamp);
	free(last);
	*ret_nd = nd;
	return count;
}

/* Compare L's interleaving with the reference; print the first difference. */
static int check(const char *what, struct gen *g, int packed, uint32_t *ret_files,
		 uint32_t *ret_largest)
{
	struct struct_ext2_filsys fs;
	struct ext2_super_block sb;
	struct layout L;
	int64_t *dense;
	uint32_t nd, *count, *parent, *set_of, *members, a, b, i, bad = 0;
	uint64_t *alternations;
	struct layout_piece *pieces = g->pieces;
	errcode_t ret;

	memset(&fs, 0, sizeof(fs));
	memset(&sb, 0, sizeof(sb));
	memset(&L, 0, sizeof(L));
	sb.s_blocks_per_group = 8192;
	fs.super = &sb;
	fs.blocksize = 4096;
	L.fs = &fs;
	readmodel_defaults(&L.model);
	L.files = g->files;
	L.nfiles = g->nfiles;
	if (!packed) {
		/* A piece in front that belongs to nobody: the pieces are not packed. */
		pieces = malloc((g->npieces + 1) * sizeof(*pieces));
		pieces[0] = (struct layout_piece){ 1, 1 };
		memcpy(pieces + 1, g->pieces, g->npieces * sizeof(*pieces));
		for (i = 0; i < g->nfiles; i++)
			if (g->files[i].pieces > 1)
				g->files[i].where++;
	}
	L.pieces = pieces;
	L.npieces = g->npieces + !packed;

	dense = malloc((g->nfiles + 1) * sizeof(*dense));
	count = reference(&L, sb.s_blocks_per_group, dense, &nd);
	ret = interleave_find(&L);
	if (ret) {
		tap_ok(0, "%s: interleave_find failed (%ld)", what, (long)ret);
		goto out;
	}
	/* Partners and alternations, file by file, and the strongest pairs. */
	*ret_files = 0;
	for (i = 0; i < L.nfiles && bad < 3; i++) {
		const struct layout_interleave *il = layout_file_interleave(&L, &L.files[i]);
		const struct layout_pair *top = il ? &L.interleave_top[
			(il - L.interleaved) * LAYOUT_OUTLINE_PAIRS] : NULL;
		uint32_t want = 0, sum = 0, k = 0, t, best[LAYOUT_OUTLINE_PAIRS][2];

		memset(best, 0, sizeof(best));
		for (b = 0; dense[i] >= 0 && b < L.nfiles; b++) {
			uint32_t c;

			if (dense[b] < 0)
				continue;
			c = count[(size_t)dense[i] * nd + dense[b]];
			if (c < 2)
				continue;
			want++;
			sum += c;
			/* Most alternations first, then the partner's inode (b ascends). */
			for (t = LAYOUT_OUTLINE_PAIRS; t > 0 && c > best[t - 1][0]; t--)
				if (t < LAYOUT_OUTLINE_PAIRS)
					memcpy(best[t], best[t - 1], sizeof(best[t]));
			if (t < LAYOUT_OUTLINE_PAIRS) {
				best[t][0] = c;
				best[t][1] = L.files[b].ino;
			}
			if (!il || k >= il->partners ||
			    L.partners[il->first_partner + k] != L.files[b].ino) {
				printf("# %s: ino %u: partner %u (%u alternations) is not "
				       "partner %u of its list\n", what, L.files[i].ino,
				       L.files[b].ino, c, k);
				bad++;
				break;
			}
			k++;
		}
		if (want)
			++*ret_files;
		if ((il ? il->partners : 0) != want ||
		    (il ? il->alternations : 0) != sum) {
			printf("# %s: ino %u: %u partners, %u alternations; want %u, %u\n",
			       what, L.files[i].ino, il ? il->partners : 0,
			       il ? il->alternations : 0, want, sum);
			bad++;
		}
		for (t = 0; il && t < LAYOUT_OUTLINE_PAIRS; t++) {
			ext2_ino_t me = L.files[i].ino, other = best[t][1];

			if (top[t].alternations != best[t][0] || (best[t][0] &&
			    (top[t].a != (me < other ? me : other) ||
			     top[t].b != (me < other ? other : me)))) {
				printf("# %s: ino %u: strongest pair %u is %u-%u (%u), want %u (%u)\n",
				       what, me, t, top[t].a, top[t].b, top[t].alternations,
				       other, best[t][0]);
				bad++;
				break;
			}
		}
	}
	/* Sets: the same files in the same set, and the set's alternations. */
	parent = malloc((nd + 1) * sizeof(*parent));
	set_of = malloc((nd + 1) * sizeof(*set_of));
	members = calloc(nd + 1, sizeof(*members));
	alternations = calloc(nd + 1, sizeof(*alternations));
	for (a = 0; a < nd; a++)
		parent[a] = a;
	for (a = 0; a < nd; a++)
		for (b = 0; b < nd; b++)
			if (count[(size_t)a * nd + b] >= 2)
				parent[ref_root(parent, a)] = ref_root(parent, b);
	for (a = 0; a < nd; a++) {
		uint32_t root = ref_root(parent, a);

		set_of[a] = UINT32_MAX;
		members[root]++;
		for (b = a + 1; b < nd; b++)
			if (count[(size_t)a * nd + b] >= 2)
				alternations[root] += count[(size_t)a * nd + b];
	}
	*ret_largest = 0;
	for (i = 0; i < L.nsets && !bad; i++) {
		const struct layout_set *s = &L.sets[i];
		uint32_t root = ref_root(parent, dense[L.set_members[s->first_member]]);

		if (s->members > *ret_largest)
			*ret_largest = s->members;
		for (b = 0; b < s->members; b++) {
			uint32_t file = L.set_members[s->first_member + b];
			const struct layout_interleave *il =
				layout_file_interleave(&L, &L.files[file]);

			if (ref_root(parent, dense[file]) != root || !il || il->set != i + 1)
				bad++;
		}
		if (set_of[root] != UINT32_MAX || members[root] != s->members ||
		    alternations[root] != s->alternations) {
			printf("# %s: set %u: %u members, %llu alternations; want %llu, %llu\n",
			       what, i + 1, s->members,
			       (unsigned long long)s->alternations,
			       (unsigned long long)members[root],
			       (unsigned long long)alternations[root]);
			bad++;
		}
		set_of[root] = i;
	}
	/* Every reference set was found (a set of one file is none). */
	for (a = 0; a < nd && !bad; a++)
		if (members[ref_root(parent, a)] > 1 && set_of[ref_root(parent, a)] == UINT32_MAX)
			bad++;
	tap_ok(!bad, "%s: %u files in %llu sets, as the reference has them", what,
	       *ret_files, (unsigned long long)L.nsets);
	free(parent);
	free(set_of);
	free(members);
	free(alternations);
out:
	free(L.interleaved);
	free(L.partners);
	free(L.interleave_top);
	free(L.file_interleave);
	free(L.sets);
	free(L.set_members);
	free(count);
	free(dense);
	if (!packed) {
		free(pieces);
		for (i = 0; i < g->nfiles; i++)
			if (g->files[i].pieces > 1)
				g->files[i].where--;
	}
	return !bad;
}

static void gen_reset(struct gen *g, uint64_t seed)
{
	free(g->files);
	free(g->pieces);
	free(g->tmp);
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
