/*
 * map_find.c --- e2fragmap's search (lib/map_find.c) and its matcher
 * (lib/name_match.c) against their oracle, fnmatch(3) over every file's
 * name and directory path: a made-up tree of random names (ASCII and
 * UTF-8, in random directories) and random patterns of literals, '*', '?'
 * and brackets, with and without a '/'.  Each search must give exactly
 * the files fnmatch names, in the listing order (directories by path,
 * then names, then files), and map_find's kept matches the same files
 * when asked for one at a time; the matcher alone must say what fnmatch
 * says of every name, and names the first it does not.  A second tree of
 * ASCII names made of the characters brackets care about ('[', ']', '!',
 * '^', '-', '\\', ':') takes bracket expressions: edge cases one by one
 * ("[]a]", "[!]]", "[^]]", "[a-]", "[z-a]", "[\\]]", "[[:digit:]]", an
 * unclosed '[', a trailing backslash) and 1,000 random patterns, some
 * 420,000 names compared with fnmatch.  A third tree, in C.UTF-8 and
 * again in C, mixes ASCII with two-, three- and four-byte characters and
 * bytes that are not UTF-8 (a stray continuation byte, a cut sequence,
 * an overlong form, a surrogate, 0xff), under patterns that hold the
 * same, classes ("[[:alpha:]]", "[![:digit:]é]"), brackets of multibyte
 * characters and ranges between them: the search matches all of these
 * by hand, characters and bytes as fnmatch reads them (glibc tries a
 * name's characters, then its bytes).
 */
#include <fnmatch.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "map.h"
#include "name_match.h"
#include "../lib/tap.h"
#include "xorshift.h"

#define NDIRS	12
#define NFILES	3000
#define NFILES2	400			/* the bracket round's names */
#define NPATS2	1000			/* and its random patterns */
#define DIR0	11			/* first directory's inode */
#define FILE0	100			/* first file's inode */

/* A random string of LEN pieces from ALPHA (pieces split by '|'). */
static void random_text(char *out, const char *const *alpha, unsigned nalpha,
			unsigned len)
{
	unsigned i;

	out[0] = 0;
	for (i = 0; i < len; i++)
		strcat(out, alpha[rnd() % nalpha]);
}

static struct layout L;
static unsigned nfiles;
static char dir_path[NDIRS][32];
static unsigned file_dir[NFILES];

static void add_name(ext2_ino_t ino, ext2_ino_t parent, const char *name)
{
	struct layout_name *n = &L.names[L.nnames++];
	size_t len = strlen(name);

	n->ino = ino;
	n->parent = parent;
	n->name = L.name_pool_len;
	L.name_pool[L.name_pool_len] = (char)len;
	memcpy(L.name_pool + L.name_pool_len + 1, name, len);
	L.name_pool_len += 1 + len;
}

static const char *file_name(uint32_t f)
{
	static char buf[256];
	const struct layout_name *n = &L.names[NDIRS + f];

	memcpy(buf, layout_name_text(&L, n), layout_name_len(&L, n));
	buf[layout_name_len(&L, n)] = 0;
	return buf;
}

/* Listing order: directory path, then name, then file. */
static int cmp_listed(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	char nx[256];
	int c = strcmp(dir_path[file_dir[x]], dir_path[file_dir[y]]);

	if (c)
		return c;
	strcpy(nx, file_name(x));
	c = strcmp(nx, file_name(y));
	if (c)
		return c;
	return x < y ? -1 : x > y;
}

/* What fnmatch says PATTERN finds, in the listing order. */
static uint64_t oracle(const char *pattern, uint32_t *out)
{
	const char *slash = strrchr(pattern, '/');
	char dirpat[256];
	uint64_t n = 0;
	uint32_t f;

	if (slash) {
		snprintf(dirpat, sizeof(dirpat), "%s%.*s", pattern[0] == '/' ? "" : "/",
			 (int)(slash - pattern), pattern);
		if (!dirpat[0])
			strcpy(dirpat, "/");
	}
	for (f = 0; f < nfiles; f++) {
		if (slash && fnmatch(dirpat, dir_path[file_dir[f]], FNM_PATHNAME))
			continue;
		if (!fnmatch(slash ? slash + 1 : pattern, file_name(f), 0))
			out[n++] = f;
	}
	qsort(out, n, sizeof(*out), cmp_listed);
	return n;
}

/*
 * The matcher alone against fnmatch, name by name, for the part of
 * PATTERN after its last '/': the number of names they differ on (the
 * first shown while BAD < 5), where a search's difference says only how
 * many files.
 */
static unsigned check_names(const char *pattern, unsigned bad)
{
	const char *slash = strrchr(pattern, '/'), *own = slash ? slash + 1 : pattern;
	struct name_matcher m;
	unsigned f, n = 0;
	int got, want;

	name_match_compile(&m, own);
	for (f = 0; f < nfiles; f++) {
		const char *name = file_name(f);

		got = name_match(&m, name, strlen(name));
		want = !fnmatch(own, name, 0);
		if (got != want && !n++ && bad < 5)
			printf("# '%s' against '%s': name_match says %d, fnmatch %d\n", own, name,
			       got, want);
	}
	name_match_free(&m);
	return n;
}

/* One search against the oracle; a difference counts in *BAD. */
static void check(const struct map_find_index *x, const char *pattern, uint32_t *want,
		  unsigned *tries, unsigned *hits, unsigned *bad)
{
	uint64_t nwant = oracle(pattern, want), ngot, k;
	struct map_find_result *r;
	uint32_t *got;

	if (map_find_files(x, pattern, &got, &ngot) || map_find(x, pattern, &r)) {
		++*bad;
		return;
	}
	++*tries;
	*hits += nwant;
	if (ngot != nwant || (nwant && memcmp(got, want, nwant * sizeof(*got)))) {
		if ((*bad)++ < 5)
			printf("# '%s': %llu found, fnmatch says %llu\n", pattern,
			       (unsigned long long)ngot, (unsigned long long)nwant);
	}
	/* The matches kept as found: the same count, and the K-th is the same file. */
	for (k = 0; k < nwant && map_find_count(r) == nwant; k++)
		if (map_find_file(r, k) != want[k])
			break;
	if (map_find_count(r) != nwant || k < nwant) {
		if ((*bad)++ < 5)
			printf("# '%s': map_find has %llu matches, match %llu differs\n", pattern,
			       (unsigned long long)map_find_count(r), (unsigned long long)k);
	}
	map_find_result_free(r);
	free(got);
	if (check_names(pattern, *bad))
		++*bad;
}

/* A made-up tree of NFILES_ random names from ALPHA in NDIRS directories, indexed. */
static void make_tree(unsigned nfiles_, const char *const *alpha, unsigned nalpha,
		      unsigned maxlen, struct map_find_index **x)
{
	char name[128];
	unsigned i;

	L.nnames = L.nfiles = L.name_pool_len = 0;
	nfiles = nfiles_;
	for (i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%u", i);
		snprintf(dir_path[i], sizeof(dir_path[i]), "/d%u", i);
		add_name(DIR0 + i, EXT2_ROOT_INO, name);
	}
	for (i = 0; i < nfiles; i++) {
		file_dir[i] = rnd() % NDIRS;
		random_text(name, alpha, nalpha, 1 + rnd() % maxlen);
		add_name(FILE0 + i, DIR0 + file_dir[i], name);
		L.files[L.nfiles++].ino = FILE0 + i;
	}
	tap_ok(!map_find_index_build(&L, x), "the index of %u files in %u directories",
	       nfiles, NDIRS);
}

#define COUNT(a)	(sizeof(a) / sizeof(*(a)))

/*
 * One round: an index of NFILES2 names of NAMES' pieces, the patterns
 * FIXED, then NPATS2 random ones of 1 to MAXLEN of PIECES, each checked
 * against fnmatch (check), the counts added to *TRIES, *HITS and *BAD.
 */
static void patterns_round(const char *const *names, unsigned nnames,
			   const char *const *fixed, unsigned nfixed,
			   const char *const *pieces, unsigned npieces, unsigned maxlen,
			   uint32_t *want, unsigned *tries, unsigned *hits, unsigned *bad)
{
	struct map_find_index *x = NULL;
	char pattern[128];
	unsigned i;

	make_tree(NFILES2, names, nnames, 5, &x);
	for (i = 0; i < nfixed; i++)
		check(x, fixed[i], want, tries, hits, bad);
	for (i = 0; i < NPATS2; i++) {
		random_text(pattern, pieces, npieces, 1 + rnd() % maxlen);
		check(x, pattern, want, tries, hits, bad);
	}
	map_find_index_free(x);
}

/*
 * Bracket expressions, which the search matches by hand on ASCII names:
 * their edge cases one by one, then random patterns made mostly of the
 * characters that mean something in a bracket, over names made of them.
 */
static void bracket_round(uint32_t *want)
{
	static const char *const name_alpha[] = {
		"a", "b", "c", "z", "A", "0", "1", "9", "-", "]", "[", "!", "^", "\\",
		".", "*", "?", ":", " ", "\x7f", "\x01",
	};
	static const char *const pat_alpha[] = {
		"*", "*", "?", "a", "b", "0", "9", "-", "[", "[", "]", "]", "!", "^",
		"\\", "\\]", ":", "[a-c]", "[!0-9]", "[^a]", "[]a]", "[!]]", "[[:digit:]]",
		"[z-a]", "[\\]-a]",
	};
	static const char *const fixed[] = {
		"*[0-9]?", "[abc]", "[a-z]*", "*[!a]", "[^a]*", "[]]", "[]a]*", "[!]]*",
		"[^]]", "[^]a]*", "[a-]*", "[-a]*", "*[\\]]", "[\\!]*", "[a\\-c]",
		"*[z-a]*", "[[:digit:]]*", "*[[:alpha:]]?", "[[.a.]]*", "[[=a=]]*", "[[:foo:]]",
		"[", "a[", "[a", "*[", "[!", "[]", "[\\", "*[\\", "a\\", "*[a-c]*[!0]*",
		"*[]-]*", "[--0]*", "*[*?]*", "[[]*", "*[a-c", "[.]", "\\[a]", "*[\xc3\xa9]*",
		"[!\xc3\xa9]*", "[!a-c]?[0-9]*", "*[!-]", "[a-c-z]*", "[!\\]]*", "?[]-a]*",
		"[ -/]*", "*[^^]", "*\\?*", "[*]*[?]", "[*-", "[a-", "[-", "a[!]-", "[a-b",
	};
	unsigned bad = 0, tries = 0, hits = 0;

	patterns_round(name_alpha, COUNT(name_alpha), fixed, COUNT(fixed), pat_alpha,
		       COUNT(pat_alpha), 6, want, &tries, &hits, &bad);
	tap_ok(!bad, "%u bracket patterns over %u ASCII names (%u hits in all) find what "
	       "fnmatch finds, in list order, and match each name as it does", tries, NFILES2,
	       hits);
}

/*
 * Names and patterns past ASCII, in LOCALE: the fixed ones, then random
 * ones made of the pieces below.
 */
static void wide_round(const char *locale, uint32_t *want)
{
	static const char *const name_alpha[] = {
		"a", "b", "Z", "0", "7", ".", "-", "]", "[", "!", " ", "\xc3\xa9", "\xc3\x89",
		"\xc3\xa0", "\xe2\x82\xac", "\xe4\xb8\xad", "\xf0\x9f\x98\x80", "\xce\xb1", "\xc3",
		"\xa9", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc2\xa0",
	};
	static const char *const pat_alpha[] = {
		"*", "*", "?", "?", "a", "0", ".", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
		"[[:alpha:]]", "[[:digit:]]", "[![:alnum:]]", "[[:upper:]]", "[[:space:]]",
		"[[:punct:]]", "[[:print:]]", "[[:lower:]0]", "[\xc3\xa9\xc3\xa0]", "[!\xc3\xa9]",
		"[a-\xc3\xa9]", "[\xc3\xa0-\xe4\xb8\xad]", "[!a-z]", "[]\xc3\xa9]", "[!]]",
		"\\\xc3\xa9", "\\?", "[\\\xc3\xa9]", "\xc3", "\xa9", "\xff", "[\xff]", "[!\xc3]",
		"[[:alpha:]\xe2\x82\xac-]", "\\",
	};
	static const char *const fixed[] = {
		"*\xc3\xa9*", "*[[:digit:]]", "[[:alpha:]]*", "*[[:alpha:]]?", "[![:alnum:]]*",
		"?", "??", "???", "????", "*?\xc3\xa9", "[!\xc3\xa9]*", "*[\xc3\xa9\xc3\xa0]*",
		"[a-\xc3\xa9]*", "*[\xc3\xa0-\xe4\xb8\xad]", "\xe2\x82\xac*", "*\xf0\x9f\x98\x80",
		"[]]*", "[!]]*", "[]", "[!]", "[", "*\\", "\\", "a\\", "[[:alpha:]", "[[:alpha:]*",
		"[[:foo:]]*", "[a-[:digit:]]*", "[[=a=]]*", "[[.a.]]*", "*\xc3", "\xa9*", "*\xff*",
		"[\xff]*", "*[!\xc3]", "\xc3?", "?\xa9", "[[:alpha:]][[:alpha:]]",
		"*[![:print:]]*", "[[:upper:][:digit:]]*", "[![:lower:]]?*", "*[[:alpha:]-]",
	};
	unsigned bad = 0, tries = 0, hits = 0;

	if (!setlocale(LC_ALL, locale)) {
		tap_ok(1, "the index of names past ASCII # SKIP no locale %s", locale);
		tap_ok(1, "names past ASCII # SKIP no locale %s", locale);
		return;
	}
	patterns_round(name_alpha, COUNT(name_alpha), fixed, COUNT(fixed), pat_alpha,
		       COUNT(pat_alpha), 5, want, &tries, &hits, &bad);
	tap_ok(!bad, "%s: %u patterns over %u names past ASCII (%u hits in all) find what "
	       "fnmatch finds, in list order, and match each name as it does", locale, tries,
	       NFILES2, hits);
}

int main(void)
{
	static const char *const name_alpha[] = {
		"a", "b", "c", ".", "0", "1", "-", "\xc3\xa9", "ab", ".c", "]",
	};
	static const char *const pat_alpha[] = {
		"a", "b", "c", ".", "0", "1", "*", "*", "?", "?", "[a-c]", "[!0]",
		"\xc3\xa9", ".c", "\\*",
	};
	static const char *const fixed[] = {
		"*", "?", "*.c", "a*", "*a*b*", "?*?", "*[0-9]?", "a\\b", "/d0*/*",
		"/*/a*", "d1/?", "/*", "nowhere", "\xc3\xa9*",
	};
	struct map_find_index *x = NULL;
	uint32_t *want = malloc(NFILES * sizeof(*want));
	unsigned i, bad = 0, tries = 0, hits = 0;
	char pattern[128];

	setlocale(LC_ALL, "C.UTF-8");
	L.files = calloc(NFILES, sizeof(*L.files));
	L.names = calloc(NDIRS + NFILES, sizeof(*L.names));
	L.name_pool = malloc((NDIRS + NFILES) * 64);
	tap_plan(8);
	make_tree(NFILES, name_alpha, sizeof(name_alpha) / sizeof(*name_alpha), 6, &x);
	for (i = 0; i < 2000 + sizeof(fixed) / sizeof(*fixed); i++) {
		if (i < sizeof(fixed) / sizeof(*fixed)) {
			strcpy(pattern, fixed[i]);
		} else {
			random_text(pattern, pat_alpha, sizeof(pat_alpha) / sizeof(*pat_alpha),
				    1 + rnd() % 5);
			if (rnd() % 8 == 0) {	/* a path */
				memmove(pattern + 4, pattern, strlen(pattern) + 1);
				memcpy(pattern, rnd() % 2 ? "/d1*" : "/*/", 4);
				if (pattern[3] != '/')
					pattern[3] = '/';
			}
		}
		check(x, pattern, want, &tries, &hits, &bad);
	}
	tap_ok(!bad, "%u patterns (%u hits in all) find what fnmatch finds, in list order, "
	       "and match each name as it does", tries, hits);
	map_find_index_free(x);
	bracket_round(want);
	wide_round("C.UTF-8", want);
	wide_round("C", want);
	free(L.files);
	free(L.names);
	free(L.name_pool);
	free(want);
	return 0;
}
