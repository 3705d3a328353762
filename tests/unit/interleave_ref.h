/*
 * interleave_ref.h --- a brute-force reading of the interleaving
 * definition in e2frag(8), and a comparison of a layout's interleaving
 * with it (tests/unit/interleave.c on random layouts,
 * tests/unit/interleave_image.c on images).
 *
 * The reference does what the definition says and nothing clever: put
 * every piece of every file in more than one piece in physical order
 * (start, then file, then the file's own order); for each piece, if the
 * previous piece of its file is at most 1024 pieces and one block group
 * of blocks before it, every other file with a piece in between gets one
 * enclosure with it (once per gap); pairs with two enclosures or more
 * interleave, and sets are the connected groups of such pairs.
 */
#ifndef INTERLEAVE_REF_H
#define INTERLEAVE_REF_H

#include <stdlib.h>
#include <string.h>

#include "e2frag.h"

#define REF_WINDOW_RUNS	1024

struct ref_run {
	blk64_t		start, end;
	uint32_t	file, order;	/* layout index; order among all pieces */
};

/* A pair of files (layout indexes) and its enclosures; both ways round in a list. */
struct ref_edge {
	uint32_t	a, b, count;
};

static int cmp_ref_run(const void *p, const void *q)
{
	const struct ref_run *x = p, *y = q;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_ref_edge(const void *p, const void *q)
{
	const struct ref_edge *x = p, *y = q;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

/* The scan keeps a file's partners in the order found: compare them sorted. */
static int ref_cmp_ino(const void *p, const void *q)
{
	ext2_ino_t a = *(const ext2_ino_t *)p, b = *(const ext2_ino_t *)q;

	return a < b ? -1 : a > b;
}

static uint32_t ref_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x)
		x = parent[x] = parent[parent[x]];
	return x;
}

/* Enclosures per pair of files: open addressing on (lo + 1) << 32 | (hi + 1). */
struct ref_table {
	uint64_t	*keys;
	uint32_t	*counts;
	uint64_t	size, used;
};

static uint64_t ref_slot(const struct ref_table *t, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;

	for (h = (h ^ (h >> 29)) & (t->size - 1); t->keys[h] && t->keys[h] != key;
	     h = (h + 1) & (t->size - 1))
		;
	return h;
}

static void ref_count(struct ref_table *t, uint32_t x, uint32_t y)
{
	uint64_t key = x < y ? ((uint64_t)(x + 1) << 32) | (y + 1) :
			       ((uint64_t)(y + 1) << 32) | (x + 1), h, i;

	if ((t->used + 1) * 2 > t->size) {
		struct ref_table n = { 0 };

		n.size = t->size ? t->size * 2 : 1024;
		n.keys = calloc(n.size, sizeof(*n.keys));
		n.counts = calloc(n.size, sizeof(*n.counts));
		if (!n.keys || !n.counts)
			abort();
		for (i = 0; i < t->size; i++) {
			if (!t->keys[i])
				continue;
			h = ref_slot(&n, t->keys[i]);
			n.keys[h] = t->keys[i];
			n.counts[h] = t->counts[i];
		}
		n.used = t->used;
		free(t->keys);
		free(t->counts);
		*t = n;
	}
	h = ref_slot(t, key);
	if (!t->keys[h]) {
		t->keys[h] = key;
		t->used++;
	}
	t->counts[h]++;
}

/* The interleaving pairs of L, both ways round, sorted by (a, b). */
static struct ref_edge *ref_edges(const struct layout *L, uint64_t *ret_n)
{
	blk64_t bpg = L->fs->super->s_blocks_per_group;
	struct ref_run *runs = malloc((L->npieces + 1) * sizeof(*runs));
	struct ref_table pairs = { 0 };
	struct ref_edge *edges;
	uint64_t n = 0, i, j, ne = 0;
	uint64_t *stamp = calloc(L->nfiles + 1, sizeof(*stamp));
	int64_t *last = malloc((L->nfiles + 1) * sizeof(*last));
	uint32_t p;

	if (!runs || !stamp || !last)
		abort();
	for (i = 0; i < L->nfiles; i++) {
		const struct layout_file *f = &L->files[i];

		last[i] = -1;
		for (p = 0; layout_file_pieces(L, f) > 1 && p < layout_file_pieces(L, f); p++, n++) {
			struct layout_piece pc = layout_file_piece(L, f, p);

			runs[n] = (struct ref_run){ pc.start, pc.start + pc.len, i, n };
		}
	}
	qsort(runs, n, sizeof(*runs), cmp_ref_run);
	for (i = 0; i < n; i++) {
		uint32_t x = runs[i].file;
		int64_t prev = last[x];

		last[x] = i;
		if (prev < 0 || i - prev - 1 > REF_WINDOW_RUNS ||
		    runs[i].start - runs[prev].end > bpg)
			continue;
		for (j = prev + 1; j < i; j++) {
			uint32_t y = runs[j].file;

			if (y == x || stamp[y] == i + 1)
				continue;
			stamp[y] = i + 1;
			ref_count(&pairs, x, y);
		}
	}
	free(runs);
	free(stamp);
	free(last);
	edges = malloc((2 * pairs.used + 1) * sizeof(*edges));
	if (!edges)
		abort();
	for (i = 0; i < pairs.size; i++) {
		uint32_t a = (pairs.keys[i] >> 32) - 1, b = (pairs.keys[i] & 0xffffffff) - 1;

		if (!pairs.keys[i] || pairs.counts[i] < 2)
			continue;
		edges[ne++] = (struct ref_edge){ a, b, pairs.counts[i] };
		edges[ne++] = (struct ref_edge){ b, a, pairs.counts[i] };
	}
	free(pairs.keys);
	free(pairs.counts);
	qsort(edges, ne, sizeof(*edges), cmp_ref_edge);
	*ret_n = ne;
	return edges;
}

/*
 * Compare L's interleaving (partners when L has the lists, alternations,
 * strongest pairs, sets) with the reference, and each file's partners
 * as layout_partners_of gives them too; print the first few
 * differences as TAP comments headed WHAT.  The number of differences.
 */
static uint32_t ref_compare(const struct layout *L, const char *what,
			    uint64_t *ret_files, uint32_t *ret_largest)
{
	uint64_t ne, e = 0, i, files = 0;
	struct ref_edge *edges = ref_edges(L, &ne);
	uint32_t *parent = malloc((L->nfiles + 1) * sizeof(*parent));
	uint32_t *members = calloc(L->nfiles + 1, sizeof(*members));
	uint32_t *set_of = malloc((L->nfiles + 1) * sizeof(*set_of));
	uint64_t *alternations = calloc(L->nfiles + 1, sizeof(*alternations));
	uint32_t bad = 0, t, b;
	struct layout_partners *lp = NULL;	/* every file's partners asked of it too */

	if (layout_partners_open(L, &lp)) {
		printf("# %s: layout_partners_open failed\n", what);
		bad++;
	}

	if (!parent || !members || !set_of || !alternations)
		abort();
	for (i = 0; i < L->nfiles; i++) {
		parent[i] = i;
		set_of[i] = UINT32_MAX;
	}
	/* File by file: partners, alternations, the strongest pairs. */
	for (i = 0; i < L->nfiles; i++) {
		const struct layout_interleave *il = layout_file_interleave(L, &L->files[i]);
		const struct layout_pair *top = il ? &L->interleave_top[
			(il - L->interleaved) * LAYOUT_OUTLINE_PAIRS] : NULL;
		uint32_t want = 0, sum = 0, k = 0, best[LAYOUT_OUTLINE_PAIRS][2];
		ext2_ino_t *mine = NULL;	/* its partners, ascending as the edges */
		ext2_ino_t *asked = NULL;	/* the same asked of the index */
		uint32_t nasked = 0;

		memset(best, 0, sizeof(best));
		if (L->partners && il && il->partners) {
			mine = malloc(il->partners * sizeof(*mine));
			if (!mine)
				abort();
			memcpy(mine, L->partners + il->first_partner, il->partners * sizeof(*mine));
			qsort(mine, il->partners, sizeof(*mine), ref_cmp_ino);
		}
		/* Asked twice (the map asks again for a file chosen again): the same list. */
		if (lp && (layout_partners_of(lp, i, &asked, &nasked) ||
			   (free(asked), layout_partners_of(lp, i, &asked, &nasked)))) {
			if (bad++ < 3)
				printf("# %s: ino %u: layout_partners_of failed\n", what,
				       L->files[i].ino);
		}
		for (; e < ne && edges[e].a == i; e++) {
			uint32_t c = edges[e].count;

			want++;
			sum += c;
			parent[ref_root(parent, i)] = ref_root(parent, edges[e].b);
			if (edges[e].b > i)
				alternations[i] += c;	/* moved to the root below */
			/* Most alternations first, then the partner's inode (b ascends). */
			for (t = LAYOUT_OUTLINE_PAIRS; t > 0 && c > best[t - 1][0]; t--)
				if (t < LAYOUT_OUTLINE_PAIRS)
					memcpy(best[t], best[t - 1], sizeof(best[t]));
			if (t < LAYOUT_OUTLINE_PAIRS) {
				best[t][0] = c;
				best[t][1] = L->files[edges[e].b].ino;
			}
			if (lp && (k >= nasked || asked[k] != L->files[edges[e].b].ino)) {
				if (bad++ < 3)
					printf("# %s: ino %u: partner %u (%u alternations) is "
					       "not partner %u of layout_partners_of's list\n",
					       what, L->files[i].ino, L->files[edges[e].b].ino,
					       c, k);
			}
			if (L->partners && (!il || k >= il->partners ||
			    mine[k] != L->files[edges[e].b].ino)) {
				if (bad++ < 3)
					printf("# %s: ino %u: partner %u (%u alternations) is "
					       "not partner %u of its sorted list\n", what,
					       L->files[i].ino, L->files[edges[e].b].ino, c, k);
			}
			k++;
		}
		free(mine);
		free(asked);
		if (lp && nasked != want) {
			if (bad++ < 3)
				printf("# %s: ino %u: layout_partners_of gives %u partners; want %u\n",
				       what, L->files[i].ino, nasked, want);
		}
		if (want)
			files++;
		if ((il ? il->partners : 0) != want || (il ? il->alternations : 0) != sum) {
			if (bad++ < 3)
				printf("# %s: ino %u: %u partners, %u alternations; want %u, %u\n",
				       what, L->files[i].ino, il ? il->partners : 0,
				       il ? il->alternations : 0, want, sum);
		}
		for (t = 0; il && t < LAYOUT_OUTLINE_PAIRS; t++) {
			ext2_ino_t me = L->files[i].ino, other = best[t][1];

			if (top[t].alternations != best[t][0] || (best[t][0] &&
			    (top[t].a != (me < other ? me : other) ||
			     top[t].b != (me < other ? other : me)))) {
				if (bad++ < 3)
					printf("# %s: ino %u: strongest pair %u is %u-%u (%u), "
					       "want %u (%u)\n", what, me, t, top[t].a, top[t].b,
					       top[t].alternations, other, best[t][0]);
				break;
			}
		}
	}
	/* Sets: the same files in the same set, and the set's alternations. */
	for (i = 0; i < L->nfiles; i++) {
		uint32_t root = ref_root(parent, i);

		members[root]++;
		if (root != i) {
			alternations[root] += alternations[i];
			alternations[i] = 0;
		}
	}
	*ret_largest = 0;
	for (i = 0; i < L->nsets; i++) {
		const struct layout_set *s = &L->sets[i];
		uint32_t root = ref_root(parent, L->set_members[s->first_member]);

		if (s->members > *ret_largest)
			*ret_largest = s->members;
		for (b = 0; b < s->members; b++) {
			uint32_t file = L->set_members[s->first_member + b];
			const struct layout_interleave *il =
				layout_file_interleave(L, &L->files[file]);

			if (ref_root(parent, file) != root || !il || il->set != i + 1)
				bad++;
		}
		if (set_of[root] != UINT32_MAX || members[root] != s->members ||
		    alternations[root] != s->alternations) {
			if (bad++ < 3)
				printf("# %s: set %llu: %u members, %llu alternations; "
				       "want %u, %llu\n", what, (unsigned long long)i + 1,
				       s->members, (unsigned long long)s->alternations,
				       members[root], (unsigned long long)alternations[root]);
		}
		set_of[root] = i;
	}
	/* Every reference set was found (a set of one file is none). */
	for (i = 0; i < L->nfiles; i++)
		if (ref_root(parent, i) == i && members[i] > 1 && set_of[i] == UINT32_MAX)
			bad++;
	free(edges);
	free(parent);
	free(members);
	free(set_of);
	free(alternations);
	layout_partners_close(lp);
	*ret_files = files;
	return bad;
}

#endif
