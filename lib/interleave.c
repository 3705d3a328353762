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
	uint32_t	file;	/* dense number of its file: see collect_runs */
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

/*
 * The pieces of every file in more than one piece, in physical order.
 * A file in one piece cannot interleave: it sits in at most one gap of
 * another file and encloses nothing, so it never reaches two alternations.
 */
/*
 * Those files are numbered densely (FILES[dense] = index into
 * layout->files) so that the per-file arrays below are as small as the
 * fragmented part of the filesystem, not the whole of it.
 */
static errcode_t collect_runs(const struct layout *layout, struct run **ret,
			      uint64_t *nruns, uint32_t **ret_files,
			      uint32_t *nfiles)
{
	struct run *runs;
	uint32_t *files;
	uint64_t i, n = 0;
	uint32_t p, dense = 0;

	runs = malloc((layout->npieces ? layout->npieces : 1) * sizeof(*runs));
	files = malloc((layout->npieces / 2 + 1) * sizeof(*files));
	if (!runs || !files) {
		free(runs);
		free(files);
		return ENOMEM;
	}
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if (f->pieces < 2)
			continue;
		for (p = 0; p < f->pieces; p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			runs[n].start = pc.start;
			runs[n].end = pc.start + pc.len;
			runs[n++].file = dense;
		}
		files[dense++] = i;
	}
	qsort(runs, n, sizeof(*runs), cmp_run);
	*ret = runs;
	*nruns = n;
	*ret_files = files;
	*nfiles = dense;
	return 0;
}

/* Count, for every file, which other files lie between its consecutive runs. */
static errcode_t count_enclosures(const struct layout *layout,
				  const struct run *runs, uint64_t nruns,
				  uint32_t nfiles, struct pair_table *pairs)
{
	blk64_t window = layout->fs->super->s_blocks_per_group;
	int64_t *last = malloc((nfiles + 1) * sizeof(*last));
	uint64_t *stamp = calloc(nfiles + 1, sizeof(*stamp));
	uint64_t i, j;
	errcode_t ret = 0;

	if (!last || !stamp) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < nfiles; i++)
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
	uint32_t a, b;		/* indexes into layout->files, a != b */
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
	struct layout_interleave *il = NULL;
	uint64_t i;

	qsort(e, ne, sizeof(*e), cmp_edge);
	layout->partners = malloc((ne ? ne : 1) * sizeof(*layout->partners));
	layout->interleaved = malloc((ne ? ne : 1) * sizeof(*layout->interleaved));
	if (!layout->partners || !layout->interleaved)
		return ENOMEM;
	for (i = 0; i < ne; i++) {
		if (!il || il->file != e[i].a) {
			il = &layout->interleaved[layout->ninterleaved++];
			memset(il, 0, sizeof(*il));
			il->file = e[i].a;
			il->first_partner = i;
		}
		il->partners++;
		il->alternations += e[i].count;
		layout->partners[i] = layout->files[e[i].b].ino;
	}
	layout->npartners = ne;
	return 0;
}

/* Position of FILE in layout->interleaved (it is there: it has an edge). */
static uint32_t interleaved_index(const struct layout *layout, uint32_t file)
{
	return layout_file_interleave(layout, &layout->files[file]) -
	       layout->interleaved;
}

/* Union-find over the edges, then one layout_set per component. */
static errcode_t fill_sets(struct layout *layout, const struct edge *e, uint64_t ne)
{
	uint64_t n = layout->ninterleaved, i, nsets = 0, nmembers;
	uint32_t *parent = malloc((n + 1) * sizeof(*parent));
	uint32_t *set_of = malloc((n + 1) * sizeof(*set_of));
	errcode_t ret = ENOMEM;

	if (!parent || !set_of)
		goto out;
	for (i = 0; i < n; i++) {
		parent[i] = i;
		set_of[i] = UINT32_MAX;
	}
	for (i = 0; i < ne; i++)
		parent[uf_find(parent, interleaved_index(layout, e[i].a))] =
			uf_find(parent, interleaved_index(layout, e[i].b));
	/* Number the components in order of their first member. */
	for (i = 0; i < n; i++) {
		uint32_t r = uf_find(parent, i);

		if (set_of[r] == UINT32_MAX)
			set_of[r] = nsets++;
	}
	layout->sets = calloc(nsets ? nsets : 1, sizeof(*layout->sets));
	layout->set_members = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!layout->sets || !layout->set_members)
		goto out;
	layout->nsets = nsets;
	layout->nset_members = n;
	/* Count members, lay out the member array, then fill it. */
	for (i = 0; i < n; i++) {
		struct layout_interleave *il = &layout->interleaved[i];

		il->set = set_of[uf_find(parent, i)] + 1;
		layout->sets[il->set - 1].members++;
	}
	for (i = 0, nmembers = 0; i < nsets; i++) {
		layout->sets[i].first_member = nmembers;
		nmembers += layout->sets[i].members;
		layout->sets[i].members = 0;
	}
	for (i = 0; i < n; i++) {
		const struct layout_interleave *il = &layout->interleaved[i];
		const struct layout_file *f = &layout->files[il->file];
		struct layout_set *s = &layout->sets[il->set - 1];
		double read, ideal;

		layout_file_times(layout, f, &read, &ideal);
		layout->set_members[s->first_member + s->members++] = il->file;
		s->alternations += il->alternations;
		s->blocks += layout_stream_blocks(f);
		s->read_seconds += read;
		s->ideal_seconds += ideal;
	}
	for (i = 0; i < nsets; i++)
		layout->sets[i].alternations /= 2;	/* each pair counted from both ends */
	ret = 0;
out:
	free(parent);
	free(set_of);
	return ret;
}

void interleave_order_sets(struct layout *layout)
{
	uint32_t *rank;
	uint64_t i;
	uint32_t m;

	for (i = 0; i < layout->nsets; i++) {
		struct layout_set *s = &layout->sets[i];

		qsort_r(layout->set_members + s->first_member, s->members,
			sizeof(uint32_t), cmp_member_path, layout);
	}
	rank = malloc((layout->nfiles + 1) * sizeof(*rank));
	if (!rank)
		return;		/* the sets stay in the order they were found */
	qsort(layout->sets, layout->nsets, sizeof(*layout->sets), cmp_set_loss);
	/* The sets moved: tell each member its set's new number. */
	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];

		for (m = 0; m < s->members; m++)
			rank[layout->set_members[s->first_member + m]] = i + 1;
	}
	for (i = 0; i < layout->ninterleaved; i++)
		layout->interleaved[i].set = rank[layout->interleaved[i].file];
	free(rank);
}

errcode_t interleave_find(struct layout *layout)
{
	struct pair_table pairs = { 0 };
	struct run *runs = NULL;
	struct edge *e = NULL;
	uint32_t *files = NULL, nfiles;
	uint64_t nruns, i, ne = 0;
	errcode_t ret;

	ret = collect_runs(layout, &runs, &nruns, &files, &nfiles);
	if (ret)
		return ret;
	ret = count_enclosures(layout, runs, nruns, nfiles, &pairs);
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
		a = files[(pairs.keys[i] >> 32) - 1];
		b = files[(pairs.keys[i] & 0xffffffff) - 1];
		e[ne++] = (struct edge){ a, b, pairs.counts[i] };
		e[ne++] = (struct edge){ b, a, pairs.counts[i] };
	}
	ret = fill_partners(layout, e, ne);
	if (!ret)
		ret = fill_sets(layout, e, ne);
out:
	free(e);
	free(files);
	free(pairs.keys);
	free(pairs.counts);
	return ret;
}
