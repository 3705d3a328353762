/*
 * interleave_sets.c --- the interleaving files grouped into sets (the
 * recordings that were written together), their order, and the outline
 * of a large set: where its members live and which pairs are worst.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "interleave_int.h"
#include "compare.h"

errcode_t interleave_fill_sets(struct layout *layout, struct interleave_work *w)
{
	uint64_t n = layout->ninterleaved, i, nsets = 0, nmembers;
	uint32_t *set_of = malloc((w->ndense + 1) * sizeof(*set_of));

	if (!set_of)
		return ENOMEM;
	for (i = 0; i < w->ndense; i++)
		set_of[i] = UINT32_MAX;
	/* Number the sets in order of their first member; set was the dense number. */
	for (i = 0; i < n; i++) {
		struct layout_interleave *il = &layout->interleaved[i];
		uint32_t root = interleave_root(w->parent, il->set);

		if (set_of[root] == UINT32_MAX)
			set_of[root] = nsets++;
		il->set = set_of[root] + 1;
	}
	free(set_of);
	layout->sets = calloc(nsets ? nsets : 1, sizeof(*layout->sets));
	layout->set_members = malloc((n ? n : 1) * sizeof(uint32_t));
	if (!layout->sets || !layout->set_members)
		return ENOMEM;
	layout->nsets = nsets;
	layout->nset_members = n;
	/* Count members, lay out the member array, then fill it. */
	for (i = 0; i < n; i++)
		layout->sets[layout->interleaved[i].set - 1].members++;
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
		s->blocks += layout_stream_blocks(layout, f);
		s->read_seconds += read;
		s->ideal_seconds += ideal;
	}
	for (i = 0; i < nsets; i++)
		layout->sets[i].alternations /= 2;	/* each pair counted from both ends */
	return 0;
}

/* A member and where its path is in the pool (path order, made once). */
struct member_path {
	uint32_t	file;
	uint32_t	path;	/* offset into the pool */
};

static int cmp_member_path(const void *p, const void *q, void *arg)
{
	const struct member_path *x = p, *y = q;
	const char *pool = arg;
	int c = strcmp(pool + x->path, pool + y->path);

	if (c)
		return c;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Put one set's members in path order: every path is made once, not per comparison. */
static errcode_t order_members(const struct layout *layout, const struct layout_set *s,
			       struct member_path **mp, uint64_t *mp_cap,
			       char **pool, uint64_t *pool_cap)
{
	uint32_t *members = layout->set_members + s->first_member;
	uint64_t used = 0;
	uint32_t m;
	char path[4096];
	errcode_t ret;

	ret = util_grow(mp, mp_cap, s->members, sizeof(**mp));
	if (ret)
		return ret;
	for (m = 0; m < s->members; m++) {
		size_t len = layout_path(layout, layout->files[members[m]].ino,
					 path, sizeof(path));

		if (len >= sizeof(path))
			len = sizeof(path) - 1;
		ret = util_grow(pool, pool_cap, used + len + 1, 1);
		if (ret)
			return ret;
		memcpy(*pool + used, path, len + 1);
		(*mp)[m] = (struct member_path){ members[m], used };
		used += len + 1;
	}
	qsort_r(*mp, s->members, sizeof(**mp), cmp_member_path, *pool);
	for (m = 0; m < s->members; m++)
		members[m] = (*mp)[m].file;
	return 0;
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

void interleave_order_sets(struct layout *layout)
{
	struct member_path *mp = NULL;
	char *pool = NULL;
	uint64_t mp_cap = 0, pool_cap = 0, i;
	uint32_t m;

	for (i = 0; i < layout->nsets; i++)
		if (order_members(layout, &layout->sets[i], &mp, &mp_cap,
				  &pool, &pool_cap))
			break;	/* out of memory: the rest stay in file order */
	free(mp);
	free(pool);
	qsort(layout->sets, layout->nsets, sizeof(*layout->sets), cmp_set_loss);
	/* The sets moved: tell each member its set's new number. */
	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];

		for (m = 0; m < s->members; m++) {
			const struct layout_interleave *il = layout_file_interleave(
				layout, &layout->files[layout->set_members[s->first_member + m]]);

			if (il)
				layout->interleaved[il - layout->interleaved].set = i + 1;
		}
	}
}

static int dir_better(const struct layout_set_dir *x, const struct layout_set_dir *y)
{
	if (x->members != y->members)
		return x->members > y->members;
	return x->ino < y->ino;
}

/* Keep the LAYOUT_OUTLINE_DIRS directories with most members, most first. */
static void keep_dir(struct layout_set_outline *o, struct layout_set_dir d)
{
	uint32_t k = o->ndirs < LAYOUT_OUTLINE_DIRS ? o->ndirs++ : LAYOUT_OUTLINE_DIRS;

	for (; k > 0 && dir_better(&d, &o->dirs[k - 1]); k--)
		if (k < LAYOUT_OUTLINE_DIRS)
			o->dirs[k] = o->dirs[k - 1];
	if (k < LAYOUT_OUTLINE_DIRS)
		o->dirs[k] = d;
}

void interleave_keep_pair(struct layout_pair *top, uint32_t *n, struct layout_pair p)
{
	uint32_t k = *n < LAYOUT_OUTLINE_PAIRS ? (*n)++ : LAYOUT_OUTLINE_PAIRS;

	for (; k > 0 && interleave_pair_better(&p, &top[k - 1]); k--)
		if (k < LAYOUT_OUTLINE_PAIRS)
			top[k] = top[k - 1];
	if (k < LAYOUT_OUTLINE_PAIRS)
		top[k] = p;
}

errcode_t layout_set_outline(const struct layout *layout, const struct layout_set *s,
			     struct layout_set_outline *o)
{
	const uint32_t *members = layout->set_members + s->first_member;
	ext2_ino_t *parents;
	uint32_t m, i, j;

	memset(o, 0, sizeof(*o));
	parents = malloc((s->members + 1) * sizeof(*parents));
	if (!parents)
		return ENOMEM;
	for (m = 0; m < s->members; m++)
		parents[m] = layout_parent(layout, layout->files[members[m]].ino);
	qsort(parents, s->members, sizeof(*parents), compare_u32);
	for (i = 0; i < s->members; i = j) {
		struct layout_set_dir d = { parents[i], 0 };

		for (j = i; j < s->members && parents[j] == parents[i]; j++)
			d.members++;
		o->directories++;
		keep_dir(o, d);
	}
	free(parents);
	/*
	 * A pair among the set's strongest is among each of its files'
	 * strongest (whatever beats it there beats it in the set too).
	 */
	if (!layout->interleave_top)
		return 0;	/* a layout not made by interleave_find */
	for (m = 0; m < s->members; m++) {
		const struct layout_interleave *il =
			layout_file_interleave(layout, &layout->files[members[m]]);
		const struct layout_pair *top;

		if (!il)
			continue;
		top = &layout->interleave_top[(il - layout->interleaved) * LAYOUT_OUTLINE_PAIRS];
		for (i = 0; i < LAYOUT_OUTLINE_PAIRS && top[i].alternations; i++)
			if (top[i].a == layout->files[members[m]].ino)	/* each pair once */
				interleave_keep_pair(o->pairs, &o->npairs, top[i]);
	}
	return 0;
}
