/*
 * map_find.c --- the files whose name matches a pattern (see map.h).
 *
 * Names are matched where the scan keeps them: each inode's own name in
 * the name pool, without putting paths together, so a search costs one
 * pass over the names.  Patterns that are plain names, or one '*' between
 * literal text ("*.ts", "rec*"), are compared directly; only the rest go
 * through fnmatch().  Paths are built once per directory that holds a
 * candidate, to match the directory part of a pattern with a '/' and to
 * put the matches in order.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"

#define PATH_MAX_LEN	4096

/* How a basename pattern is compared. */
enum match_kind { MATCH_LITERAL, MATCH_AFFIX, MATCH_GLOB };

struct name_matcher {
	enum match_kind	kind;
	const char	*pattern;	/* NUL-terminated, for fnmatch */
	size_t		len;		/* of the literal, or of the part before '*' */
	const char	*suffix;	/* MATCH_AFFIX: the part after '*' */
	size_t		suffix_len;
};

static void matcher_init(struct name_matcher *m, const char *pattern)
{
	const char *star = NULL, *p;

	memset(m, 0, sizeof(*m));
	m->pattern = pattern;
	m->kind = MATCH_LITERAL;
	for (p = pattern; *p; p++) {
		if (*p == '?' || *p == '[' || *p == '\\' || (*p == '*' && star)) {
			m->kind = MATCH_GLOB;
			return;
		}
		if (*p == '*')
			star = p;
	}
	if (star) {
		m->kind = MATCH_AFFIX;
		m->len = star - pattern;
		m->suffix = star + 1;
		m->suffix_len = strlen(star + 1);
	} else {
		m->len = p - pattern;
	}
}

static int name_matches(const struct name_matcher *m, const char *name, size_t len)
{
	char buf[PATH_MAX_LEN];

	switch (m->kind) {
	case MATCH_LITERAL:
		return len == m->len && !memcmp(name, m->pattern, len);
	case MATCH_AFFIX:
		return len >= m->len + m->suffix_len && !memcmp(name, m->pattern, m->len) &&
		       !memcmp(name + len - m->suffix_len, m->suffix, m->suffix_len);
	default:
		if (len >= sizeof(buf))
			return 0;
		memcpy(buf, name, len);
		buf[len] = 0;
		return !fnmatch(m->pattern, buf, 0);
	}
}

/* A directory holding a candidate: its path, and whether it matches. */
struct dir_entry {
	ext2_ino_t	ino;
	int		match;
	uint64_t	path;		/* offset into the path pool */
	uint32_t	rank;		/* in path order */
};

struct finder {
	const struct layout	*layout;
	const char		*dir_pattern;	/* NULL: any directory */
	struct dir_entry	*dirs;
	uint64_t		ndirs, dirs_cap;
	uint32_t		*slots;		/* hash of dir inodes: index + 1, 0 empty */
	uint64_t		nslots;		/* a power of two */
	char			*pool;
	uint64_t		pool_len, pool_cap;
};

static uint64_t slot_of(const struct finder *f, ext2_ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL, mask = f->nslots - 1;
	uint64_t s = (h >> 32) & mask;

	while (f->slots[s] && f->dirs[f->slots[s] - 1].ino != ino)
		s = (s + 1) & mask;
	return s;
}

static errcode_t grow_slots(struct finder *f)
{
	uint64_t i, n = f->nslots ? 2 * f->nslots : 1024;
	uint32_t *old = f->slots;

	f->slots = calloc(n, sizeof(*f->slots));
	if (!f->slots) {
		f->slots = old;
		return ENOMEM;
	}
	f->nslots = n;
	for (i = 0; i < f->ndirs; i++)
		f->slots[slot_of(f, f->dirs[i].ino)] = i + 1;
	free(old);
	return 0;
}

/* Index of INO in layout->names (sorted by inode), or -1. */
static int64_t name_index(const struct layout *layout, ext2_ino_t ino)
{
	uint64_t lo = 0, hi = layout->nnames;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (layout->names[mid].ino == ino)
			return mid;
		if (layout->names[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Deeper than this, a directory's path is put together by layout_path() (loops). */
#define MEMO_DEPTH	256

/*
 * The directory INO, its path built and matched the first time it is
 * asked for: its parent's path (built the same way, once) and its name.
 */
static errcode_t dir_get(struct finder *f, ext2_ino_t ino, int depth, uint64_t *ret_index)
{
	const struct layout *layout = f->layout;
	char path[PATH_MAX_LEN];
	struct dir_entry *d;
	uint64_t s, parent;
	int64_t ni;
	size_t len;
	errcode_t err;

	if (2 * (f->ndirs + 1) > f->nslots && (err = grow_slots(f)))
		return err;
	s = slot_of(f, ino);
	if (f->slots[s]) {
		*ret_index = f->slots[s] - 1;
		return 0;
	}
	ni = ino == EXT2_ROOT_INO ? -1 : name_index(layout, ino);
	if (ni >= 0 && layout->names[ni].parent && depth < MEMO_DEPTH &&
	    layout->names[ni].parent != ino) {
		const struct layout_name *nm = &layout->names[ni];

		err = dir_get(f, nm->parent, depth + 1, &parent);
		if (err)
			return err;
		len = strlen(f->pool + f->dirs[parent].path);
		if (len == 1)
			len = 0;	/* the root: "/" + name */
		if (len + 1 + nm->name_len >= sizeof(path))
			len = layout_path(layout, ino, path, sizeof(path));
		else {
			memcpy(path, f->pool + f->dirs[parent].path, len);
			path[len] = '/';
			memcpy(path + len + 1, layout->name_pool + nm->name, nm->name_len);
			len += 1 + nm->name_len;
			path[len] = 0;
		}
		/* The slots may have grown meanwhile. */
		s = slot_of(f, ino);
	} else {
		len = layout_path(layout, ino, path, sizeof(path));
	}
	if (len >= sizeof(path))
		len = sizeof(path) - 1;
	err = vec_reserve(&f->dirs, &f->dirs_cap, f->ndirs + 1, sizeof(*f->dirs));
	if (!err)
		err = vec_reserve(&f->pool, &f->pool_cap, f->pool_len + len + 1, 1);
	if (err)
		return err;
	d = &f->dirs[f->ndirs];
	d->ino = ino;
	d->path = f->pool_len;
	d->match = !f->dir_pattern || !fnmatch(f->dir_pattern, path, FNM_PATHNAME);
	memcpy(f->pool + f->pool_len, path, len + 1);
	f->pool_len += len + 1;
	f->slots[s] = ++f->ndirs;
	*ret_index = f->ndirs - 1;
	return 0;
}

struct match {
	uint32_t	file;		/* index into layout->files */
	uint32_t	name;		/* index into layout->names */
	uint32_t	dir;		/* index into finder.dirs */
};

static int cmp_dir_path(const void *a, const void *b, void *arg)
{
	const struct finder *f = arg;
	const struct dir_entry *x = *(struct dir_entry *const *)a;
	const struct dir_entry *y = *(struct dir_entry *const *)b;

	return strcmp(f->pool + x->path, f->pool + y->path);
}

static int cmp_match(const void *a, const void *b, void *arg)
{
	const struct finder *sorting = arg;
	const struct match *x = a, *y = b;
	const struct layout *layout = sorting->layout;
	const struct layout_name *nx = &layout->names[x->name], *ny = &layout->names[y->name];
	uint32_t rx = sorting->dirs[x->dir].rank, ry = sorting->dirs[y->dir].rank;
	int c;

	if (rx != ry)
		return rx < ry ? -1 : 1;
	c = memcmp(layout->name_pool + nx->name, layout->name_pool + ny->name,
		   nx->name_len < ny->name_len ? nx->name_len : ny->name_len);
	if (c)
		return c;
	if (nx->name_len != ny->name_len)
		return nx->name_len < ny->name_len ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/*
 * Rank the directories by path, then put the matches in order: grouped
 * by directory with a counting sort, each group sorted by name.
 */
static errcode_t sort_matches(struct finder *f, struct match *v, uint64_t n)
{
	struct dir_entry **by_path;
	struct match *out;
	uint64_t *at, i;

	by_path = malloc((f->ndirs + 1) * sizeof(*by_path));
	at = calloc(f->ndirs + 1, sizeof(*at));
	out = malloc(n * sizeof(*out));
	if (!by_path || !at || !out) {
		free(by_path);
		free(at);
		free(out);
		return ENOMEM;
	}
	for (i = 0; i < f->ndirs; i++)
		by_path[i] = &f->dirs[i];
	qsort_r(by_path, f->ndirs, sizeof(*by_path), cmp_dir_path, f);
	for (i = 0; i < f->ndirs; i++)
		by_path[i]->rank = i;
	for (i = 0; i < n; i++)
		at[f->dirs[v[i].dir].rank + 1]++;
	for (i = 1; i <= f->ndirs; i++)
		at[i] += at[i - 1];
	for (i = 0; i < n; i++)
		out[at[f->dirs[v[i].dir].rank]++] = v[i];
	/* at[r] is now where group r ends, and the next begins. */
	for (i = 0; i < f->ndirs; i++) {
		uint64_t from = i ? at[i - 1] : 0;

		if (at[i] - from > 1)
			qsort_r(out + from, at[i] - from, sizeof(*out), cmp_match, f);
	}
	memcpy(v, out, n * sizeof(*v));
	free(by_path);
	free(at);
	free(out);
	return 0;
}

errcode_t map_find_files(const struct layout *layout, const char *pattern,
			 uint32_t **ret, uint64_t *nret)
{
	struct finder f;
	struct name_matcher m;
	struct match *v = NULL;
	char *pat = NULL, *slash;
	uint64_t i, j = 0, n = 0, cap = 0;
	uint32_t *files = NULL;
	errcode_t err = 0;

	*ret = NULL;
	*nret = 0;
	memset(&f, 0, sizeof(f));
	f.layout = layout;
	if (strchr(pattern, '/')) {
		/* A path from the root: its directory part, then the name. */
		pat = malloc(strlen(pattern) + 2);
		if (!pat)
			return ENOMEM;
		strcpy(pat, pattern[0] == '/' ? "" : "/");
		strcat(pat, pattern);
		slash = strrchr(pat, '/');
		*slash = 0;
		f.dir_pattern = slash == pat ? "/" : pat;
		matcher_init(&m, slash + 1);
	} else {
		matcher_init(&m, pattern);
	}
	for (i = 0; i < layout->nnames; i++) {
		const struct layout_name *nm = &layout->names[i];
		uint64_t d;

		if (!nm->parent)
			continue;
		/* Names and files are both in inode order; inline directories own no blocks. */
		while (j < layout->nfiles && layout->files[j].ino < nm->ino)
			j++;
		if (j == layout->nfiles)
			break;
		if (layout->files[j].ino != nm->ino ||
		    !name_matches(&m, layout->name_pool + nm->name, nm->name_len))
			continue;
		err = dir_get(&f, nm->parent, 0, &d);
		if (err)
			goto out;
		if (!f.dirs[d].match)
			continue;
		err = vec_reserve(&v, &cap, n + 1, sizeof(*v));
		if (err)
			goto out;
		v[n++] = (struct match){ j, i, d };
	}
	if (!n)
		goto out;
	err = sort_matches(&f, v, n);
	if (err)
		goto out;
	files = malloc(n * sizeof(*files));
	if (!files) {
		err = ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		files[i] = v[i].file;
	*ret = files;
	*nret = n;
out:
	free(v);
	free(f.dirs);
	free(f.slots);
	free(f.pool);
	free(pat);
	return err;
}
