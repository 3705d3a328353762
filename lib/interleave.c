/*
 * interleave.c --- which files were written into each other's way.
 *
 * Walk every piece of every file in physical order.  Whenever a file's
 * next piece comes after pieces of other files (close by: within
 * WINDOW_RUNS runs and one block group), each of those files sat between
 * two of its pieces: one enclosure.  Two files interleave when they
 * enclose each other at least twice between them, i.e. ownership runs
 * A..B..A..B.  A small file dropped into one hole of a big one (A..B..A)
 * is fragmentation, not interleaving.  Interleaving files are grouped
 * into sets with a union-find: the recordings that were written together.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"

#define WINDOW_RUNS		1024
#define MIN_ALTERNATIONS	2

struct run {
	blk64_t		start;
	blk64_t		end;
	uint32_t	file;	/* index into layout->files */
};

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Counts per unordered pair of files: open addressing, keyed (lo << 32 | hi). */
struct pair_table {
	uint64_t	*keys;	/* 0: empty (a file never pairs with itself at index 0,0) */
	uint32_t	*counts;
	uint64_t	size, used;
};

static uint64_t hash64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

static errcode_t pairs_grow(struct pair_table *t)
{
	struct pair_table n;
	uint64_t i;

	n.size = t->size ? t->size * 2 : 1024;
	n.used = 0;
	n.keys = calloc(n.size, sizeof(*n.keys));
	n.counts = calloc(n.size, sizeof(*n.counts));
	if (!n.keys || !n.counts) {
		free(n.keys);
		free(n.counts);
		return ENOMEM;
	}
	for (i = 0; i < t->size; i++) {
		uint64_t h;

		if (!t->keys[i])
			continue;
		for (h = hash64(t->keys[i]) & (n.size - 1); n.keys[h];
		     h = (h + 1) & (n.size - 1))
			;
		n.keys[h] = t->keys[i];
		n.counts[h] = t->counts[i];
		n.used++;
	}
	free(t->keys);
	free(t->counts);
	*t = n;
	return 0;
}

/* Key of a pair; +1 on each index so that no real key is 0. */
static uint64_t pair_key(uint32_t a, uint32_t b)
{
	if (a > b) {
		uint32_t t = a;
		a = b;
		b = t;
	}
	return ((uint64_t)(a + 1) << 32) | (b + 1);
}

static errcode_t pairs_add(struct pair_table *t, uint32_t a, uint32_t b)
{
	uint64_t key = pair_key(a, b), h;
	errcode_t ret;

	if ((t->used + 1) * 2 > t->size) {
		ret = pairs_grow(t);
		if (ret)
			return ret;
	}
	for (h = hash64(key) & (t->size - 1); t->keys[h] && t->keys[h] != key;
	     h = (h + 1) & (t->size - 1))
		;
	if (!t->keys[h]) {
		t->keys[h] = key;
		t->used++;
	}
	if (t->counts[h] < UINT32_MAX)
		t->counts[h]++;
	return 0;
}

static errcode_t collect_runs(const struct layout *layout, struct run **ret,
			      uint64_t *nruns)
{
	struct run *runs;
	uint64_t i, n = 0;
	uint32_t p;

	runs = malloc((layout->npieces ? layout->npieces : 1) * sizeof(*runs));
	if (!runs)
		return ENOMEM;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		const struct layout_piece *pc = layout_file_pieces(layout, f);

		for (p = 0; p < f->pieces; p++) {
			runs[n].start = pc[p].start;
			runs[n].end = pc[p].start + pc[p].len;
			runs[n++].file = i;
		}
	}
	qsort(runs, n, sizeof(*runs), cmp_run);
	*ret = runs;
	*nruns = n;
	return 0;
}

/* Count, for every file, which other files lie between its consecutive runs. */
static errcode_t count_enclosures(const struct layout *layout,
				  const struct run *runs, uint64_t nruns,
				  struct pair_table *pairs)
{
	blk64_t window = layout->fs->super->s_blocks_per_group;
	int64_t *last = malloc((layout->nfiles + 1) * sizeof(*last));
	uint64_t *stamp = calloc(layout->nfiles + 1, sizeof(*stamp));
	uint64_t i, j;
	errcode_t ret = 0;

	if (!last || !stamp) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < layout->nfiles; i++)
		last[i] = -1;
	for (i = 0; i < nruns; i++) {
		uint32_t x = runs[i].file;
		int64_t prev = last[x];

		last[x] = i;
		if (prev < 0 || i - prev < 2 || i - prev - 1 > WINDOW_RUNS ||
		    runs[i].start - runs[prev].end > window)
			continue;
		for (j = prev + 1; j < i; j++) {
			uint32_t y = runs[j].file;

			if (y == x || stamp[y] == i + 1)
				continue;
			stamp[y] = i + 1;
			ret = pairs_add(pairs, x, y);
			if (ret)
				goto out;
		}
	}
out:
	free(last);
	free(stamp);
	return ret;
}

struct edge {
	uint32_t a, b;		/* file indexes, a != b */
	uint32_t count;
};

static int cmp_edge(const void *p, const void *q)
{
	const struct edge *x = p, *y = q;

	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Files of one set in path order (qsort_r: the layout is the argument). */
static int cmp_member_path(const void *p, const void *q, void *arg)
{
	const struct layout *layout = arg;
	char a[4096], b[4096];
	uint32_t x = *(const uint32_t *)p, y = *(const uint32_t *)q;

	layout_path(layout, layout->files[x].ino, a, sizeof(a));
	layout_path(layout, layout->files[y].ino, b, sizeof(b));
	return strcmp(a, b);
}

static int cmp_set_loss(const void *p, const void *q)
{
	const struct layout_set *x = p, *y = q;
	double lx = x->read_seconds - x->ideal_seconds;
	double ly = y->read_seconds - y->ideal_seconds;

	if (lx != ly)
		return lx > ly ? -1 : 1;
	return x->first_member < y->first_member ? -1 : x->first_member > y->first_member;
}

/* Partners per file, from the edges listed both ways and sorted. */
static errcode_t fill_partners(struct layout *layout, struct edge *e, uint64_t ne)
{
	uint64_t i;

	qsort(e, ne, sizeof(*e), cmp_edge);
	layout->partners = malloc((ne ? ne : 1) * sizeof(*layout->partners));
	if (!layout->partners)
		return ENOMEM;
	for (i = 0; i < ne; i++) {
		struct layout_file *f = &layout->files[e[i].a];

		if (!f->partners)
			f->first_partner = i;
		f->partners++;
		f->alternations += e[i].count;
		layout->partners[i] = layout->files[e[i].b].ino;
	}
	layout->npartners = ne;
	return 0;
}

/* Union-find over the edges, then one layout_set per component. */
static errcode_t fill_sets(struct layout *layout, const struct edge *e, uint64_t ne)
{
	uint32_t *parent = NULL, *set_of = NULL;
	uint64_t i, nsets = 0, nmembers = 0;
	errcode_t ret = ENOMEM;

	parent = malloc((layout->nfiles + 1) * sizeof(*parent));
	set_of = malloc((layout->nfiles + 1) * sizeof(*set_of));
	if (!parent || !set_of)
		goto out;
	for (i = 0; i < layout->nfiles; i++) {
		parent[i] = i;
		set_of[i] = UINT32_MAX;
	}
	for (i = 0; i < ne; i++)
		parent[uf_find(parent, e[i].a)] = uf_find(parent, e[i].b);
	/* Number the roots of files that have partners. */
	for (i = 0; i < layout->nfiles; i++) {
		uint32_t r;

		if (!layout->files[i].partners)
			continue;
		r = uf_find(parent, i);
		if (set_of[r] == UINT32_MAX)
			set_of[r] = nsets++;
		nmembers++;
	}
	layout->sets = calloc(nsets ? nsets : 1, sizeof(*layout->sets));
	layout->set_members = malloc((nmembers ? nmembers : 1) * sizeof(uint32_t));
	if (!layout->sets || !layout->set_members)
		goto out;
	layout->nsets = nsets;
	/* Count members, lay out the member array, then fill it. */
	for (i = 0; i < layout->nfiles; i++)
		if (layout->files[i].partners)
			layout->sets[set_of[uf_find(parent, i)]].members++;
	for (i = 0, nmembers = 0; i < nsets; i++) {
		layout->sets[i].first_member = nmembers;
		nmembers += layout->sets[i].members;
		layout->sets[i].members = 0;
	}
	for (i = 0; i < layout->nfiles; i++) {
		struct layout_file *f = &layout->files[i];
		struct layout_set *s;

		if (!f->partners)
			continue;
		s = &layout->sets[set_of[uf_find(parent, i)]];
		layout->set_members[s->first_member + s->members++] = i;
		s->alternations += f->alternations;
		s->blocks += f->stream_blocks;
		s->read_seconds += f->read_seconds;
		s->ideal_seconds += f->ideal_seconds;
	}
	layout->nset_members = nmembers;
	for (i = 0; i < nsets; i++) {
		struct layout_set *s = &layout->sets[i];

		s->alternations /= 2;	/* each pair was summed from both ends */
		qsort_r(layout->set_members + s->first_member, s->members,
			sizeof(uint32_t), cmp_member_path, layout);
	}
	qsort(layout->sets, nsets, sizeof(*layout->sets), cmp_set_loss);
	for (i = 0; i < nsets; i++) {
		const struct layout_set *s = &layout->sets[i];
		uint32_t m;

		for (m = 0; m < s->members; m++)
			layout->files[layout->set_members[s->first_member + m]]
				.interleave_set = i + 1;
	}
	ret = 0;
out:
	free(parent);
	free(set_of);
	return ret;
}

errcode_t interleave_find(struct layout *layout)
{
	struct pair_table pairs = { 0 };
	struct run *runs = NULL;
	struct edge *e = NULL;
	uint64_t nruns, i, ne = 0;
	errcode_t ret;

	ret = collect_runs(layout, &runs, &nruns);
	if (ret)
		return ret;
	ret = count_enclosures(layout, runs, nruns, &pairs);
	free(runs);
	if (ret)
		goto out;
	e = malloc((2 * pairs.used + 1) * sizeof(*e));
	if (!e) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < pairs.size; i++) {
		uint32_t a, b;

		if (!pairs.keys[i] || pairs.counts[i] < MIN_ALTERNATIONS)
			continue;
		a = (pairs.keys[i] >> 32) - 1;
		b = (pairs.keys[i] & 0xffffffff) - 1;
		e[ne++] = (struct edge){ a, b, pairs.counts[i] };
		e[ne++] = (struct edge){ b, a, pairs.counts[i] };
	}
	ret = fill_partners(layout, e, ne);
	if (!ret)
		ret = fill_sets(layout, e, ne);
out:
	free(e);
	free(pairs.keys);
	free(pairs.counts);
	return ret;
}
