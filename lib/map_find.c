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
 * the index over them in theirs, was a cache miss per name: at 2,000,000
 * files a search of a name took 100 ms, where this takes some 10; a pattern with
 * a '/' matches the directories' paths first and looks only into the
 * groups of those that match.  Plain names and patterns with one '*'
 * between literal text ("*.ts", "rec*") are compared directly; other
 * globs are compiled to a bitmap of the bytes each position takes ('?',
 * brackets and classes as fnmatch reads them, asked of it a byte at a
 * time, literals) and matched by hand: ASCII names in place; in a UTF-8
 * locale other names decoded to characters (a bracket asked of fnmatch
 * once a character past ASCII), then as bytes, which is how fnmatch
 * reads them.  What the hand matcher does not know exactly ("[[=a=]]",
 * "[[.a.]]", a locale's own classes, names in Shift-JIS) goes through
 * fnmatch().
 */
#include <errno.h>
#include <fnmatch.h>
#include <langinfo.h>
#include <limits.h>
#include <wchar.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"
#include "lower_bound.h"

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

/* ---------------------------------------------------------- matching */

enum match_kind { MATCH_LITERAL, MATCH_AFFIX, MATCH_GLOB };

/* Longer globs go through fnmatch (a name is at most 255 bytes anyway). */
#define GLOB_TOKENS	256
/* fnmatch's answers for a bracket and a character past ASCII kept (a power of two). */
#define ASK_CACHE	4096

/*
 * What the hand matcher may take for one character, as fnmatch reads
 * them in this locale: BYTES, every byte (a single-byte locale: "C",
 * Latin-1); UTF8, an ASCII byte or a well-formed UTF-8 sequence, decoded
 * (fnmatch converts both strings to wide characters); OTHER, a multibyte
 * locale whose characters may end in an ASCII byte (Shift-JIS): only
 * ASCII patterns against ASCII names.
 */
enum charset { CHARSET_BYTES, CHARSET_UTF8, CHARSET_OTHER };

/* What a token does with a character past ASCII, in a UTF-8 locale. */
enum wide_kind { WIDE_NONE, WIDE_ANY, WIDE_CHAR, WIDE_ASK };

/*
 * One position of a compiled glob, one character of the name: the bytes
 * it matches as a bitmap (a literal sets one bit, '?' all of them, a
 * bracket expression what fnmatch itself says it matches), all 256 in
 * BYTES, the 128 ASCII ones in UTF8, where WIDE says what it matches
 * past them (WIDE_ASK: what fnmatch says its text, the bracket, matches,
 * asked once a character); or a '*'.
 */
struct glob_token {
	uint64_t	set[4];
	int		star;
	int		wide;		/* enum wide_kind */
	uint32_t	ch;		/* WIDE_CHAR: the character */
	uint32_t	at, len;	/* WIDE_ASK: its text in the pattern */
};

/* fnmatch's answer for token TOK and character CH. */
struct ask_entry {
	uint32_t	ch;
	uint16_t	tok;
	uint8_t		known, yes;
};

/* A glob compiled: its tokens, the first and last '*' (ntok: none), the tokens around them. */
struct glob_prog {
	struct glob_token tok[GLOB_TOKENS];
	size_t		ntok;
	size_t		first_star, last_star, head, tail;
	int		middle_stars;	/* nothing but '*' between them */
	int		never;		/* a token takes none of the bytes ("*é*" on ASCII) */
};

struct name_matcher {
	enum match_kind	kind;
	const char	*pattern;	/* NUL-terminated, for fnmatch */
	size_t		len;		/* of the literal, or of the part before '*' */
	const char	*suffix;	/* MATCH_AFFIX: the part after '*' */
	size_t		suffix_len;
	enum charset	charset;
	/*
	 * MATCH_GLOB: compiled by characters (BY_HAND) or not (fnmatch for
	 * every name).  In UTF8, glibc's fnmatch (2.36 here) matches a name
	 * when its characters match or, failing that (or when the name or
	 * the pattern does not convert), its bytes do: "??" matches "é" as
	 * well as "?".  Where a probe finds it so (EITHER), the glob is
	 * compiled by bytes too (BYTES_OK) and tried the same way.
	 */
	int		by_hand, either, bytes_ok;
	int		hand;		/* by_hand, and every token takes some byte */
	uint64_t	high_bits;	/* for ascii(): 0 in BYTES */
	struct glob_prog g, b;
	struct ask_entry *asked;	/* UTF8 with a bracket: ASK_CACHE answers (or NULL) */
};

static enum charset locale_charset(void)
{
	if (MB_CUR_MAX == 1)
		return CHARSET_BYTES;
	return !strcmp(nl_langinfo(CODESET), "UTF-8") ? CHARSET_UTF8 : CHARSET_OTHER;
}

/*
 * The character the UTF-8 at S (before END) begins with, into *CH, and
 * its length in bytes; 0 for bytes the locale does not read as one.
 * What RFC 3629 allows is decoded here; the rest (5- and 6-byte forms,
 * past U+10FFFF, which glibc takes; overlong forms, surrogates, stray
 * bytes, which it does not) is asked of mbrtowc, which fnmatch uses.
 */
static int utf8_char(const unsigned char *s, const unsigned char *end, uint32_t *ch)
{
	uint32_t c = s[0];
	mbstate_t state;
	wchar_t wc;
	size_t k;
	int n, i;

	if (c < 0x80) {
		*ch = c;
		return 1;
	}
	n = c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
	if (n && end - s >= n) {
		c &= 0x3f >> (n - 1);
		for (i = 1; i < n && (s[i] & 0xc0) == 0x80; i++)
			c = c << 6 | (s[i] & 0x3f);
		if (i == n && !(n == 3 && (c < 0x800 || (c >= 0xd800 && c < 0xe000))) &&
		    !(n == 4 && (c < 0x10000 || c > 0x10ffff))) {
			*ch = c;
			return n;
		}
	}
	memset(&state, 0, sizeof(state));
	k = mbrtowc(&wc, (const char *)s, end - s, &state);
	if (k == 0 || k > (size_t)(end - s))	/* NUL, invalid, cut short */
		return 0;
	*ch = (uint32_t)wc;
	return (int)k;
}

static void token_add(struct glob_token *t, unsigned char c)
{
	t->set[c >> 6] |= 1ULL << (c & 63);
}

/* The classes every locale has: their names are all the hand matcher reads in a bracket. */
static const char *const char_classes[] = {
	"alnum", "alpha", "blank", "cntrl", "digit", "graph",
	"lower", "print", "punct", "space", "upper", "xdigit",
};

/* The last ']' of the class "[:name:]" at P, or NULL when it is not one of those. */
static const char *class_end(const char *p)
{
	size_t i, n;

	for (i = 0; i < sizeof(char_classes) / sizeof(*char_classes); i++) {
		n = strlen(char_classes[i]);
		if (!strncmp(p + 2, char_classes[i], n) && p[2 + n] == ':' && p[3 + n] == ']')
			return p + 3 + n;
	}
	return NULL;
}

/*
 * The end of the bracket expression whose '[' is at P, as fnmatch(flags 0)
 * finds it: '!' (and '^' where fnmatch takes it so) negates, a ']' first
 * is a member, a backslash escapes, "[:digit:]" and the other classes
 * every locale has are one member.  NULL when there is no closing ']'
 * (the '[' is then a literal); BAD for what the hand matcher leaves to
 * fnmatch: other classes, a class right after a '-' (fnmatch's two
 * readings of a bracket disagree there), equivalence classes and
 * collating symbols ("[=", "[."), a backslash or a '-' at the end
 * ("[a-" and "[\\" match nothing, where "[a" is a literal '['), and
 * bytes past ASCII unless HIGH (a single-byte or UTF-8 locale, where
 * they are never one of these).
 */
static const char bad_bracket[1];
#define BAD	bad_bracket

static const char *bracket_end(const char *p, int caret_negates, int high)
{
	const char *first;

	p++;
	if (*p == '!' || (*p == '^' && caret_negates))
		p++;
	first = p;
	if (*p == ']')
		p++;
	for (; *p != ']'; p++) {
		if (!*p)	/* fnmatch matches nothing when a range is cut: "[a-" */
			return p[-1] == '-' ? BAD : NULL;
		if (*p & 0x80 && !high)
			return BAD;
		if (*p == '[' && p[1] == ':') {
			if ((p > first && p[-1] == '-') || !(p = class_end(p)))
				return BAD;
		} else if (*p == '[' && (p[1] == '=' || p[1] == '.')) {
			return BAD;
		} else if (*p == '\\' && (!*++p || (*p & 0x80 && !high))) {
			return BAD;
		}
	}
	return p;
}

/*
 * T matches one character as the pattern text [P, P + LEN) (a bracket
 * expression, a trailing backslash) does: the bytes below TOP asked of
 * fnmatch one at a time, so ranges, negation, classes and escapes mean
 * exactly what they mean to it, in this locale (with flags 0 that text
 * matches one character whatever is around it); in UTF8 the characters
 * past ASCII are asked when a name has them (token_wide).
 */
static int token_ask(struct name_matcher *m, struct glob_token *t, const char *p,
		     size_t len, int top)
{
	char text[PATH_MAX_LEN], s[2] = { 0, 0 };
	int c;

	if (len >= sizeof(text))
		return 0;
	memcpy(text, p, len);
	text[len] = 0;
	for (c = 1; c < top; c++) {
		s[0] = (char)c;
		if (!fnmatch(text, s, 0))
			token_add(t, c);
	}
	t->wide = WIDE_ASK;
	t->at = p - m->pattern;
	t->len = len;
	return 1;
}

/* T matches the literal character at P; its last byte, or NULL when the hand matcher cannot. */
static const char *token_literal(enum charset cs, struct glob_token *t, const char *p)
{
	const unsigned char *s = (const unsigned char *)p;
	int n;

	if (!(*s & 0x80) || cs == CHARSET_BYTES) {
		token_add(t, *s);
		return p;
	}
	if (cs != CHARSET_UTF8 || !(n = utf8_char(s, s + strlen(p), &t->ch)))
		return NULL;
	t->wide = WIDE_CHAR;
	return p + n - 1;
}

/*
 * PATTERN compiled, one token a character of the name ('*' aside), when
 * the hand matcher can match it exactly as fnmatch(flags 0) would; 0 when
 * fnmatch has to: a pattern that is not well-formed UTF-8 in a UTF-8
 * locale, bytes past ASCII in another multibyte one, the brackets
 * bracket_end calls BAD.
 */
static int glob_compile(struct name_matcher *m, struct glob_prog *g, enum charset cs)
{
	int caret_negates = !fnmatch("[^a]", "b", 0);
	int high = cs != CHARSET_OTHER, top = cs == CHARSET_BYTES ? 256 : 128;
	const char *pattern = m->pattern;
	const unsigned char *s, *pend = (const unsigned char *)pattern + strlen(pattern);
	const char *p, *end;
	struct glob_token *t;
	uint32_t ch;
	int c;

	if (cs == CHARSET_UTF8)
		for (s = (const unsigned char *)pattern; s < pend; s += c)
			if (!(c = utf8_char(s, pend, &ch)))
				return 0;
	g->ntok = 0;
	for (p = pattern; *p; p++) {
		if (*p == '*' && g->ntok && g->tok[g->ntok - 1].star)
			continue;	/* "**" is "*" */
		if (g->ntok == GLOB_TOKENS)
			return 0;
		t = &g->tok[g->ntok++];
		memset(t, 0, sizeof(*t));
		switch (*p) {
		case '*':
			t->star = 1;
			break;
		case '?':
			for (c = 1; c < top; c++)	/* every byte but NUL */
				token_add(t, c);
			t->wide = WIDE_ANY;
			break;
		case '\\':
			if (!p[1]) {	/* whatever fnmatch makes of it (nothing) */
				if (!token_ask(m, t, p, 1, top))
					return 0;
				break;
			}
			if (!(p = token_literal(cs, t, p + 1)))
				return 0;
			break;
		case '[':
			end = bracket_end(p, caret_negates, high);
			if (end == BAD)
				return 0;
			if (!end) {
				token_add(t, '[');	/* never closed: a literal */
				break;
			}
			if (!token_ask(m, t, p, end + 1 - p, top))
				return 0;
			p = end;
			break;
		default:
			if (!(p = token_literal(cs, t, p)))
				return 0;
		}
	}
	g->first_star = g->last_star = g->ntok;
	g->never = 0;
	for (c = 0; c < (int)g->ntok; c++) {
		t = &g->tok[c];
		if (!t->star && !(t->set[0] | t->set[1] | t->set[2] | t->set[3]))
			g->never = 1;
		if (t->star) {
			if (g->first_star == g->ntok)
				g->first_star = c;
			g->last_star = c;
		}
	}
	if (g->first_star < g->ntok) {
		g->head = g->first_star;
		g->tail = g->ntok - g->last_star - 1;
		g->middle_stars = 1;
		for (c = g->first_star; c <= (int)g->last_star; c++)
			if (!g->tok[c].star)
				g->middle_stars = 0;
	}
	return 1;
}

/*
 * A glob's literal text before its first special character and after its
 * last: a name must begin and end with them (and hold both) to match, so
 * the matcher (fnmatch, some 30 times slower than a comparison, or the
 * hand matcher) sees only the names that do.  ']' counts as special, in
 * case it closes a bracket.
 */
static void glob_affixes(struct name_matcher *m, const char *pattern)
{
	const char *special = "*?[]\\", *p;
	size_t i;

	m->kind = MATCH_GLOB;
	m->by_hand = glob_compile(m, &m->g, m->charset);
	m->hand = m->by_hand && !m->g.never;
	if (m->charset == CHARSET_UTF8) {
		m->either = !fnmatch("??", "\xc3\xa9", 0);	/* "é" as bytes */
		m->bytes_ok = m->either && glob_compile(m, &m->b, CHARSET_BYTES);
	}
	m->len = strcspn(pattern, special);
	m->suffix = pattern + strlen(pattern);
	for (p = m->suffix; p > pattern + m->len && !strchr(special, p[-1]); p--)
		;
	m->suffix_len = m->suffix - p;
	m->suffix = p;
	for (i = 0; m->by_hand && m->charset == CHARSET_UTF8 && i < m->g.ntok; i++)
		if (m->g.tok[i].wide == WIDE_ASK) {
			m->asked = calloc(ASK_CACHE, sizeof(*m->asked));	/* NULL: asked each time */
			break;
		}
}

static void matcher_init(struct name_matcher *m, const char *pattern)
{
	const char *star = NULL, *p;

	m->kind = MATCH_LITERAL;
	m->pattern = pattern;
	m->suffix = NULL;
	m->suffix_len = 0;
	m->by_hand = m->either = m->bytes_ok = m->hand = 0;
	m->charset = locale_charset();
	m->high_bits = m->charset == CHARSET_BYTES ? 0 : 0x8080808080808080ULL;
	m->asked = NULL;
	for (p = pattern; *p; p++) {
		if (*p == '?' || *p == '[' || *p == '\\' || (*p == '*' && star)) {
			glob_affixes(m, pattern);
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

static void matcher_free(struct name_matcher *m)
{
	free(m->asked);
}

static int token_match(const struct glob_token *t, unsigned char c)
{
	return (t->set[c >> 6] >> (c & 63)) & 1;
}

/* N tokens (no '*') against NAME's first N bytes, position by position. */
static int fixed_match(const struct glob_token *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!token_match(&t[i], name[i]))
			return 0;
	return 1;
}

/*
 * The tokens before the first '*' against NAME's first bytes and those
 * after the last against its last, without a branch that depends on the
 * name: a glob that matches every other name ("*[02468]") would
 * mispredict half of them.  NAME holds at least head + tail bytes.
 */
static inline __attribute__((always_inline)) int ends_match(const struct glob_prog *m,
							     const char *name, size_t len)
{
	const struct glob_token *t = m->tok, *tail = m->tok + m->last_star + 1;
	const char *end = name + len - m->tail;
	size_t i;
	int ok = 1;

	for (i = 0; i < m->head; i++)
		ok &= token_match(&t[i], name[i]);
	for (i = 0; i < m->tail; i++)
		ok &= token_match(&tail[i], end[i]);
	return ok;
}

/*
 * The middle of a compiled glob, from its first '*' to its last, against
 * NAME's bytes between the ends (matched already): the usual walk, going
 * back to the last '*' on a mismatch.  Out of line: most globs have
 * nothing there but '*'.
 */
static __attribute__((noinline)) int middle_match(const struct glob_prog *m,
						  const char *name, size_t len)
{
	const struct glob_token *t = m->tok;
	size_t last = m->last_star, p = m->first_star, star = 0, i = m->head;
	size_t end = len - m->tail, resume = 0;
	int starred = 0;

	while (i < end) {
		if (p <= last && t[p].star) {
			star = ++p;
			starred = 1;
			resume = i;
		} else if (p <= last && token_match(&t[p], name[i])) {
			p++;
			i++;
		} else if (starred) {
			p = star;
			i = ++resume;
		} else {
			return 0;
		}
	}
	while (p <= last && t[p].star)
		p++;
	return p > last;
}

/*
 * The compiled glob against a NAME of LEN bytes, as fnmatch(flags 0) has
 * it, when every byte is a character (an ASCII name, a single-byte locale,
 * the glob compiled by bytes): every token but '*' is one byte.  What
 * comes before the first '*' and after the last matches the ends of the
 * name position by position ("*[0-9]?" looks at two bytes), then the
 * middle.
 */
static inline __attribute__((always_inline)) int hand_match(const struct glob_prog *m,
							     const char *name, size_t len)
{
	if (m->first_star == m->ntok)
		return m->ntok == len && fixed_match(m->tok, len, name);
	if (len < m->head + m->tail)
		return 0;
	if (m->middle_stars)	/* "a*b", "*.?": the ends are all there is to it */
		return ends_match(m, name, len);
	return ends_match(m, name, len) && middle_match(m, name, len);
}

/*
 * Whether S holds no byte past ASCII: eight bytes at a time (names are
 * short).  HIGH is their top bits, or 0 where every byte is a character
 * (a single-byte locale): then every name is "ASCII" at no extra cost.
 */
static inline __attribute__((always_inline)) int ascii(const char *s, size_t len, uint64_t high_bits)
{
	uint64_t word, high = 0;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&word, s + i, 8);
		high |= word;
	}
	for (; i < len; i++)
		high |= (unsigned char)s[i];
	return !(high & high_bits);
}

/* Out of line: its buffer would keep name_matches from being inlined into the searches' loops. */
static __attribute__((noinline)) int fnmatch_name(const struct name_matcher *m,
						  const char *name, size_t len)
{
	char buf[PATH_MAX_LEN];

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, name, len);
	buf[len] = 0;
	return !fnmatch(m->pattern, buf, 0);
}

/* Whether the bracket of token T matches CH (past ASCII): fnmatch's answer, kept. */
static int token_asked(const struct name_matcher *m, const struct glob_token *t, uint32_t ch)
{
	char text[PATH_MAX_LEN], s[MB_LEN_MAX + 1];
	uint16_t tok = t - m->g.tok;
	struct ask_entry *e = NULL;
	mbstate_t state;
	size_t k;
	int yes;

	if (m->asked) {
		e = &m->asked[((ch ^ (uint32_t)tok << 21) * 0x9e3779b1u) >> 20 & (ASK_CACHE - 1)];
		if (e->known && e->ch == ch && e->tok == tok)
			return e->yes;
	}
	memcpy(text, m->pattern + t->at, t->len);
	text[t->len] = 0;
	memset(&state, 0, sizeof(state));
	k = wcrtomb(s, (wchar_t)ch, &state);
	s[k == (size_t)-1 ? 0 : k] = 0;	/* (utf8_char's characters all convert) */
	yes = !fnmatch(text, s, 0);
	if (e)
		*e = (struct ask_entry){ ch, tok, 1, (uint8_t)yes };
	return yes;
}

static inline __attribute__((always_inline)) int token_wide(const struct name_matcher *m,
							      const struct glob_token *t, uint32_t ch)
{
	if (ch < 128)
		return token_match(t, ch);
	switch (t->wide) {
	case WIDE_ANY:
		return 1;
	case WIDE_CHAR:
		return ch == t->ch;
	case WIDE_ASK:
		return token_asked(m, t, ch);
	}
	return 0;
}

/* The glob compiled by characters against the characters CH[0, N), as hand_match walks bytes. */
static int chars_match(const struct name_matcher *m, const uint32_t *ch, size_t n)
{
	const struct glob_prog *g = &m->g;
	const struct glob_token *t = g->tok;
	size_t i, p, last = g->last_star, star = 0, resume = 0;
	int starred = 0;

	if (g->first_star == g->ntok) {
		if (n != g->ntok)
			return 0;
		for (i = 0; i < n; i++)
			if (!token_wide(m, &t[i], ch[i]))
				return 0;
		return 1;
	}
	if (n < g->head + g->tail)
		return 0;
	for (i = 0; i < g->head; i++)
		if (!token_wide(m, &t[i], ch[i]))
			return 0;
	for (i = 0; i < g->tail; i++)
		if (!token_wide(m, &t[last + 1 + i], ch[n - g->tail + i]))
			return 0;
	/* The middle, as middle_match walks it. */
	for (p = g->first_star, i = g->head, n -= g->tail; i < n;) {
		if (p <= last && t[p].star) {
			star = ++p;
			starred = 1;
			resume = i;
		} else if (p <= last && token_wide(m, &t[p], ch[i])) {
			p++;
			i++;
		} else if (starred) {
			p = star;
			i = ++resume;
		} else {
			return 0;
		}
	}
	while (p <= last && t[p].star)
		p++;
	return p > last;
}

/*
 * A NAME with bytes past ASCII in a UTF-8 locale, or any name when only
 * the glob's bytes could be compiled: decoded to characters and matched
 * by them, then (EITHER) by its bytes, as fnmatch does; what neither
 * compiled glob can say goes to fnmatch.  Out of line: most names are
 * ASCII.
 */
static __attribute__((noinline)) int wide_match(const struct name_matcher *m,
						const char *name, size_t len)
{
	const unsigned char *s = (const unsigned char *)name, *end = s + len;
	uint32_t ch[256];
	size_t n = 0;
	int k;

	if (len >= sizeof(ch) / sizeof(*ch))
		return fnmatch_name(m, name, len);
	while (s < end) {
		if (*s < 0x80) {
			ch[n++] = *s++;
		} else if (s + 1 < end && *s >= 0xc2 && *s < 0xe0 && (s[1] & 0xc0) == 0x80) {
			ch[n++] = (uint32_t)(*s & 0x1f) << 6 | (s[1] & 0x3f);	/* "é" */
			s += 2;
		} else if ((k = utf8_char(s, end, &ch[n]))) {
			s += k;
			n++;
		} else {
			break;
		}
	}
	if (s == end && m->by_hand) {	/* well-formed: its characters first */
		if (chars_match(m, ch, n))
			return 1;
		if (!m->either)
			return 0;
	}
	if (m->bytes_ok)
		return hand_match(&m->b, name, len);
	return fnmatch_name(m, name, len);
}

/*
 * What the hand matcher does not take in place: an ASCII name (every
 * name in BYTES) when a token of the glob takes no such byte ("*é*"),
 * which matches nothing; a name past ASCII in UTF8; a glob it could not
 * compile, through fnmatch.  Out of line, to keep the search's loop small.
 */
static __attribute__((noinline)) int other_match(const struct name_matcher *m,
						 const char *name, size_t len)
{
	if (m->by_hand && ascii(name, len, m->high_bits))
		return 0;	/* g.never */
	if (m->charset == CHARSET_UTF8 && (m->by_hand || m->bytes_ok))
		return wide_match(m, name, len);
	return fnmatch_name(m, name, len);
}

static inline __attribute__((always_inline)) int name_matches(const struct name_matcher *m,
							       const char *name, size_t len)
{
	switch (m->kind) {
	case MATCH_LITERAL:
		return len == m->len && !memcmp(name, m->pattern, len);
	case MATCH_AFFIX:
		return len >= m->len + m->suffix_len && !memcmp(name, m->pattern, m->len) &&
		       !memcmp(name + len - m->suffix_len, m->suffix, m->suffix_len);
	default:
		/* Not the literal text it begins and ends with (often none: no call then). */
		if (len < m->len + m->suffix_len || (m->len && memcmp(name, m->pattern, m->len)) ||
		    (m->suffix_len && memcmp(name + len - m->suffix_len, m->suffix, m->suffix_len)))
			return 0;
		if (m->hand && ascii(name, len, m->high_bits))
			return hand_match(&m->g, name, len);
		return other_match(m, name, len);
	}
}

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
	 * every 4 KiB (4,600 at 2,000,000 files), slow in a VM whose page
	 * walks are cold; in huge pages, where the kernel has them, a few.
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
 * bits: at 2,000,000 files 375 kB, where an array of the matched files
 * was 8 MB written in fresh pages for a glob that matches every name
 * (a third of its time, more on a busy machine).  The K-th match is
 * found by a binary search over BEFORE.
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
		matcher_init(&m, slash + 1);
		for (d = 0; d < x->ndirs; d++) {
			if (fnmatch(slash == dir_pattern ? "/" : dir_pattern,
				    x->pool + x->dirs[d].path, FNM_PATHNAME))
				continue;
			p = x->names + x->names_at[d];
			for (i = x->group[d]; i < x->group[d + 1]; i++, p += 1 + *p)
				if (name_matches(&m, (const char *)p + 1, *p))
					r->bits[i / 64] |= 1ULL << (i % 64);
		}
		free(dir_pattern);
	} else {
		/* A name: one pass over the members' names, in the order they are listed in. */
		matcher_init(&m, pattern);
		for (w = 0, i = 0, p = x->names; w < r->nwords; w++) {
			word = 0;
			for (b = 0; b < 64 && i < x->nmembers; b++, i++, p += 1 + *p)
				word |= (uint64_t)name_matches(&m, (const char *)p + 1, *p) << b;
			r->bits[w] = word;
		}
	}
	matcher_free(&m);
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
