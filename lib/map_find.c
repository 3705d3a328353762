/*
 * map_find.c --- the files whose name matches a pattern (see map.h).
 *
 * An index built once (e2fragmap builds it with the names, in their
 * thread) puts every named file in the order the matches are listed in:
 * grouped by directory, the directories in path order, each group by
 * name.  It holds each directory's path once, and every file's own name
 * again, in the index's order (a byte of length, then the name): a
 * search is one pass straight through that, and the hits come out in
 * the order they are listed in.  The scan's names lie in the order the
 * directories were read, so a pass over them in the index's order, or
 * the index over them in theirs, would be a cache miss per name.  A
 * pattern with a '/' matches the directories' paths first and looks only
 * into the groups of those that match.  Each name is matched by
 * name_match.h: fnmatch(3)'s answer, found fast.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"
#include "lower_bound.h"
#include "name_match.h"

#define PATH_MAX_LEN	4096
/* Deeper than this, a directory's path is put together by layout_path() (loops). */
#define MEMO_DEPTH	256

/* A directory that names files: its path, and its files' place in the index. */
struct find_dir {
	ext2_ino_t	ino;
	uint32_t	rank;		/* in path order */
	uint64_t	path;		/* offset into the path pool */
};

/* A named file: indexes into layout->files and layout->names. */
struct find_member {
	uint32_t	file;
	uint32_t	name;
};

struct map_find_index {
	const struct layout	*layout;
	struct find_dir		*dirs;		/* by path once built */
	uint64_t		ndirs, dirs_cap;
	uint64_t		*group;		/* dirs[r]'s members: [group[r], group[r + 1]) */
	struct find_member	*members;
	uint64_t		nmembers;
	unsigned char		*names;		/* members' own names in order: length, bytes */
	uint64_t		*names_at;	/* dirs[r]'s first name in names: [r], to [r + 1] */
	char			*pool;
	uint64_t		pool_len, pool_cap;
	/* While building: directory inodes to their place in dirs (index + 1; 0 empty). */
	uint32_t		*slots;
	uint64_t		nslots;		/* a power of two */
};

/* ---------------------------------------------------------- building */

static uint64_t slot_of(const struct map_find_index *x, ext2_ino_t ino)
{
	uint64_t mask = x->nslots - 1;
	uint64_t s = (((uint64_t)ino * 0x9e3779b97f4a7c15ULL) >> 32) & mask;

	while (x->slots[s] && x->dirs[x->slots[s] - 1].ino != ino)
		s = (s + 1) & mask;
	return s;
}

static errcode_t grow_slots(struct map_find_index *x)
{
	uint64_t i, n = x->nslots ? 2 * x->nslots : 1024;
	uint32_t *old = x->slots;

	x->slots = calloc(n, sizeof(*x->slots));
	if (!x->slots) {
		x->slots = old;
		return ENOMEM;
	}
	x->nslots = n;
	for (i = 0; i < x->ndirs; i++)
		x->slots[slot_of(x, x->dirs[i].ino)] = i + 1;
	free(old);
	return 0;
}

/* Index of INO in layout->names (sorted by inode), or -1. */
static int name_before(const void *names, uint64_t i, const void *ino)
{
	return ((const struct layout_name *)names)[i].ino < *(const ext2_ino_t *)ino;
}

static int64_t name_index(const struct layout *layout, ext2_ino_t ino)
{
	uint64_t i = lower_bound(0, layout->nnames, name_before, layout->names, &ino);

	return i < layout->nnames && layout->names[i].ino == ino ? (int64_t)i : -1;
}

/*
 * The directory INO, added with its path the first time it is asked
 * for: its parent's path (added the same way, once) and its name.
 */
static errcode_t dir_get(struct map_find_index *x, ext2_ino_t ino, int depth,
			 uint64_t *ret_index)
{
	const struct layout *layout = x->layout;
	char path[PATH_MAX_LEN];
	uint64_t s, parent;
	int64_t ni;
	size_t len;
	errcode_t err;

	if (2 * (x->ndirs + 1) > x->nslots && (err = grow_slots(x)))
		return err;
	s = slot_of(x, ino);
	if (x->slots[s]) {
		*ret_index = x->slots[s] - 1;
		return 0;
	}
	ni = ino == EXT2_ROOT_INO ? -1 : name_index(layout, ino);
	if (ni >= 0 && layout->names[ni].parent && layout->names[ni].parent != ino &&
	    depth < MEMO_DEPTH) {
		const struct layout_name *nm = &layout->names[ni];

		err = dir_get(x, nm->parent, depth + 1, &parent);
		if (err)
			return err;
		len = strlen(x->pool + x->dirs[parent].path);
		if (len == 1)
			len = 0;	/* the root: "/" + name */
		unsigned nlen = layout_name_len(layout, nm);

		if (len + 1 + nlen < sizeof(path)) {
			memcpy(path, x->pool + x->dirs[parent].path, len);
			path[len] = '/';
			memcpy(path + len + 1, layout_name_text(layout, nm), nlen);
			len += 1 + nlen;
			path[len] = 0;
		} else {
			len = layout_path(layout, ino, path, sizeof(path));
		}
		s = slot_of(x, ino);	/* the slots may have grown meanwhile */
	} else {
		len = layout_path(layout, ino, path, sizeof(path));
	}
	if (len >= sizeof(path))
		len = sizeof(path) - 1;
	err = util_grow(&x->dirs, &x->dirs_cap, x->ndirs + 1, sizeof(*x->dirs));
	if (!err)
		err = util_grow(&x->pool, &x->pool_cap, x->pool_len + len + 1, 1);
	if (err)
		return err;
	x->dirs[x->ndirs] = (struct find_dir){ ino, 0, x->pool_len };
	memcpy(x->pool + x->pool_len, path, len + 1);
	x->pool_len += len + 1;
	x->slots[s] = ++x->ndirs;
	*ret_index = x->ndirs - 1;
	return 0;
}

static int cmp_dir_path(const void *a, const void *b, void *arg)
{
	const struct map_find_index *x = arg;
	const struct find_dir *p = a, *q = b;

	return strcmp(x->pool + p->path, x->pool + q->path);
}

static int cmp_member_name(const void *a, const void *b, void *arg)
{
	const struct layout *layout = arg;
	const struct find_member *x = a, *y = b;
	const struct layout_name *nx = &layout->names[x->name], *ny = &layout->names[y->name];
	unsigned lx = layout_name_len(layout, nx), ly = layout_name_len(layout, ny);
	int c = memcmp(layout_name_text(layout, nx), layout_name_text(layout, ny),
		       lx < ly ? lx : ly);

	if (c)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/* Every named file with its directory (DIR_OF), then in groups by directory. */
static errcode_t index_members(struct map_find_index *x, uint32_t **dir_of)
{
	const struct layout *layout = x->layout;
	uint64_t i, j = 0, d;
	errcode_t err;

	x->members = malloc((layout->nfiles + 1) * sizeof(*x->members));
	*dir_of = malloc((layout->nfiles + 1) * sizeof(**dir_of));
	if (!x->members || !*dir_of)
		return ENOMEM;
	for (i = 0; i < layout->nnames; i++) {
		const struct layout_name *nm = &layout->names[i];

		if (!nm->parent)
			continue;
		/* Names and files are both in inode order; inline directories own no blocks. */
		while (j < layout->nfiles && layout->files[j].ino < nm->ino)
			j++;
		if (j == layout->nfiles)
			break;
		if (layout->files[j].ino != nm->ino)
			continue;
		err = dir_get(x, nm->parent, 0, &d);
		if (err)
			return err;
		(*dir_of)[x->nmembers] = d;
		x->members[x->nmembers++] = (struct find_member){ j, i };
	}
	return 0;
}

/* The members' own names, in the members' order, for the searches to read straight through. */
static errcode_t index_names(struct map_find_index *x)
{
	const struct layout *layout = x->layout;
	uint64_t i, r, len = 1;
	unsigned char *p;

	for (i = 0; i < x->nmembers; i++)
		len += 1 + layout_name_len(layout, &layout->names[x->members[i].name]);
	p = x->names = malloc(len);
	x->names_at = malloc((x->ndirs + 1) * sizeof(*x->names_at));
	if (!p || !x->names_at)
		return ENOMEM;
	/*
	 * Every search reads all of it: in 4 KiB pages that is a TLB miss
	 * every 4 KiB, thousands on a large filesystem, slow where page
	 * walks are cold (in a VM); in huge pages, where the kernel has
	 * them, a few.
	 */
	util_huge_pages(p, len);
	for (i = 0, r = 0; i < x->nmembers; i++) {
		const struct layout_name *nm = &layout->names[x->members[i].name];
		/* A directory entry's name is at most 255 bytes. */
		unsigned n = layout_name_len(layout, nm);

		while (r < x->ndirs && x->group[r] == i)	/* the groups starting here */
			x->names_at[r++] = p - x->names;
		*p++ = n;
		memcpy(p, layout_name_text(layout, nm), n);
		p += n;
	}
	while (r <= x->ndirs)
		x->names_at[r++] = p - x->names;
	return 0;
}

/* Rank the directories by path; group the members by directory (a counting sort), each by name. */
static errcode_t index_order(struct map_find_index *x, const uint32_t *dir_of)
{
	struct find_member *sorted;
	uint32_t *rank_of;
	uint64_t i;

	sorted = malloc((x->nmembers + 1) * sizeof(*sorted));
	rank_of = malloc((x->ndirs + 1) * sizeof(*rank_of));
	x->group = calloc(x->ndirs + 2, sizeof(*x->group));
	if (!sorted || !rank_of || !x->group) {
		free(sorted);
		free(rank_of);
		return ENOMEM;
	}
	/* dirs[i].rank keeps where it was found, for dir_of, until sorted. */
	for (i = 0; i < x->ndirs; i++)
		x->dirs[i].rank = i;
	if (x->ndirs)	/* no directory read: dirs may be NULL */
		qsort_r(x->dirs, x->ndirs, sizeof(*x->dirs), cmp_dir_path, x);
	for (i = 0; i < x->ndirs; i++) {
		rank_of[x->dirs[i].rank] = i;
		x->dirs[i].rank = i;
	}
	for (i = 0; i < x->nmembers; i++)
		x->group[rank_of[dir_of[i]] + 1]++;
	for (i = 1; i <= x->ndirs; i++)
		x->group[i] += x->group[i - 1];
	/* group[r] counts up to where r's members end while they are placed. */
	for (i = 0; i < x->nmembers; i++)
		sorted[x->group[rank_of[dir_of[i]]]++] = x->members[i];
	for (i = x->ndirs; i > 0; i--)
		x->group[i] = x->group[i - 1];
	x->group[0] = 0;
	for (i = 0; i < x->ndirs; i++)
		if (x->group[i + 1] - x->group[i] > 1)
			qsort_r(sorted + x->group[i], x->group[i + 1] - x->group[i],
				sizeof(*sorted), cmp_member_name, (void *)x->layout);
	free(x->members);
	x->members = sorted;
	free(rank_of);
	return index_names(x);
}

errcode_t map_find_index_build(const struct layout *layout, struct map_find_index **ret)
{
	struct map_find_index *x;
	uint32_t *dir_of = NULL;
	errcode_t err;

	*ret = NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return ENOMEM;
	x->layout = layout;
	err = index_members(x, &dir_of);
	if (!err)
		err = index_order(x, dir_of);
	free(dir_of);
	free(x->slots);
	x->slots = NULL;
	if (err) {
		map_find_index_free(x);
		return err;
	}
	*ret = x;
	return 0;
}

void map_find_index_free(struct map_find_index *x)
{
	if (!x)
		return;
	free(x->dirs);
	free(x->group);
	free(x->members);
	free(x->names);
	free(x->names_at);
	free(x->pool);
	free(x->slots);
	free(x);
}

/* ---------------------------------------------------------- searching */

/*
 * The matches of one search, as a bit for each member of the index, in
 * the index's order, and how many matches come before each word of
 * bits: a bit a file, where an array of the matched files would be 4
 * bytes a match, written in fresh pages, whose faults would cost a glob
 * that matches every name much of its time.  The K-th match is found by
 * a binary search over BEFORE.
 */
struct map_find_result {
	const struct map_find_index	*index;
	uint64_t			*bits;
	uint32_t			*before;
	uint64_t			nwords, n;
};

static uint64_t result_count(struct map_find_result *r)
{
	uint64_t w, n = 0;

	for (w = 0; w < r->nwords; w++) {
		r->before[w] = n;
		n += __builtin_popcountll(r->bits[w]);
	}
	return n;
}

errcode_t map_find(const struct map_find_index *x, const char *pattern,
		   struct map_find_result **ret)
{
	struct name_matcher m;
	struct map_find_result *r;
	uint64_t d, i, w, word;
	const unsigned char *p;
	char *dir_pattern, *slash;
	unsigned b;

	*ret = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return ENOMEM;
	r->index = x;
	r->nwords = (x->nmembers + 63) / 64;
	r->bits = calloc(r->nwords + 1, sizeof(*r->bits));
	r->before = malloc((r->nwords + 1) * sizeof(*r->before));
	if (!r->bits || !r->before) {
		map_find_result_free(r);
		return ENOMEM;
	}
	if (strchr(pattern, '/')) {
		/* A path from the root: the directories that match, then the names in them. */
		dir_pattern = malloc(strlen(pattern) + 2);
		if (!dir_pattern) {
			map_find_result_free(r);
			return ENOMEM;
		}
		strcpy(dir_pattern, pattern[0] == '/' ? "" : "/");
		strcat(dir_pattern, pattern);
		slash = strrchr(dir_pattern, '/');
		*slash = 0;
		name_match_compile(&m, slash + 1);
		for (d = 0; d < x->ndirs; d++) {
			if (fnmatch(slash == dir_pattern ? "/" : dir_pattern,
				    x->pool + x->dirs[d].path, FNM_PATHNAME))
				continue;
			p = x->names + x->names_at[d];
			for (i = x->group[d]; i < x->group[d + 1]; i++, p += 1 + *p)
				if (name_match(&m, (const char *)p + 1, *p))
					r->bits[i / 64] |= 1ULL << (i % 64);
		}
		free(dir_pattern);
	} else {
		/* A name: one pass over the members' names, in the order they are listed in. */
		name_match_compile(&m, pattern);
		for (w = 0, i = 0, p = x->names; w < r->nwords; w++) {
			word = 0;
			for (b = 0; b < 64 && i < x->nmembers; b++, i++, p += 1 + *p)
				word |= (uint64_t)name_match(&m, (const char *)p + 1, *p) << b;
			r->bits[w] = word;
		}
	}
	name_match_free(&m);
	r->n = result_count(r);
	*ret = r;
	return 0;
}

uint64_t map_find_count(const struct map_find_result *r)
{
	return r ? r->n : 0;
}

uint32_t map_find_file(const struct map_find_result *r, uint64_t k)
{
	uint64_t lo = 0, hi = r->nwords, mid, word;

	/* The last word with at most K matches before it holds match K. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (r->before[mid] <= k)
			lo = mid;
		else
			hi = mid;
	}
	word = r->bits[lo];
	for (k -= r->before[lo]; k; k--)
		word &= word - 1;	/* drop the lowest match */
	return r->index->members[lo * 64 + __builtin_ctzll(word)].file;
}

void map_find_result_free(struct map_find_result *r)
{
	if (!r)
		return;
	free(r->bits);
	free(r->before);
	free(r);
}

errcode_t map_find_files(const struct map_find_index *x, const char *pattern,
			 uint32_t **ret, uint64_t *nret)
{
	struct map_find_result *r;
	uint64_t w, n = 0, word;
	errcode_t err;

	*ret = NULL;
	*nret = 0;
	err = map_find(x, pattern, &r);
	if (err)
		return err;
	if (r->n && !(*ret = malloc(r->n * sizeof(**ret))))
		err = ENOMEM;
	for (w = 0; !err && w < r->nwords; w++)
		for (word = r->bits[w]; word; word &= word - 1)
			(*ret)[n++] = x->members[w * 64 + __builtin_ctzll(word)].file;
	if (!err)
		*nret = n;
	map_find_result_free(r);
	return err;
}
