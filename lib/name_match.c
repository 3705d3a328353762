/*
 * name_match.c --- fnmatch's answers, fast (see name_match.h for the
 * promise and why).
 *
 * Plain names and patterns with one '*' between literal text ("*.ts",
 * "rec*") are compared directly; other globs are compiled to a bitmap of
 * the bytes each position takes ('?', brackets and classes as fnmatch
 * reads them, asked of it a byte at a time, literals) and matched by
 * hand: ASCII names in place; in a UTF-8 locale other names decoded to
 * characters (a bracket asked of fnmatch once a character past ASCII),
 * then as bytes, which is how fnmatch reads them.  What the hand matcher
 * does not know exactly ("[[=a=]]", "[[.a.]]", a locale's own classes,
 * names in Shift-JIS) goes through fnmatch().
 */
#include <fnmatch.h>
#include <langinfo.h>
#include <limits.h>
#include <wchar.h>
#include <stdlib.h>
#include <string.h>

#include "name_match.h"

/* Room for a name or a bracket's text, NUL-terminated, for fnmatch. */
#define PATH_MAX_LEN	4096
/* fnmatch's answers for a bracket and a character past ASCII kept (a power of two). */
#define ASK_CACHE	4096

/* fnmatch's answer for token TOK and character CH. */
struct ask_entry {
	uint32_t	ch;
	uint16_t	tok;
	uint8_t		known, yes;
};

/* ---------------------------------------------------------- compiling */

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

/*
 * What PATTERN is (a name, text around one '*', another glob) and, for a
 * glob, its literal ends and its compiled forms, for this locale: the
 * locale is read here, once, not for each name.
 */
void name_match_compile(struct name_matcher *m, const char *pattern)
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

void name_match_free(struct name_matcher *m)
{
	free(m->asked);
}

/* ---------------------------------------------------------- matching */

/*
 * The middle of compiled glob G, from its first '*' to its last, against
 * positions [I, END) of a name (its ends matched already): the usual
 * walk, going back to the last '*' on a mismatch.  AT(CTX, T, K): token
 * T takes the name's position K.  Inlined into its two callers with AT
 * known, so bytes and characters each get their own loop.
 */
typedef int (*glob_at_fn)(const void *ctx, const struct glob_token *t, size_t k);

static inline __attribute__((always_inline)) int glob_walk_middle(const struct glob_prog *g,
								   size_t i, size_t end,
								   glob_at_fn at, const void *ctx)
{
	const struct glob_token *t = g->tok;
	size_t last = g->last_star, p = g->first_star, star = 0, resume = 0;
	int starred = 0;

	while (i < end) {
		if (p <= last && t[p].star) {
			star = ++p;
			starred = 1;
			resume = i;
		} else if (p <= last && at(ctx, &t[p], i)) {
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

static inline __attribute__((always_inline)) int byte_at(const void *name,
							  const struct glob_token *t, size_t k)
{
	return glob_token_match(t, ((const char *)name)[k]);
}

/*
 * The middle against NAME's bytes.  Out of line: most globs have nothing
 * there but '*'.
 */
__attribute__((noinline)) int glob_middle_match(const struct glob_prog *m, const char *name,
						size_t len)
{
	return glob_walk_middle(m, m->head, len - m->tail, byte_at, name);
}

/* Out of line: its buffer would keep name_match from being inlined into the searches' loops. */
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
		return glob_token_match(t, ch);
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

/* A name decoded to characters, for glob_walk_middle. */
struct chars {
	const struct name_matcher	*m;
	const uint32_t			*ch;
};

static inline __attribute__((always_inline)) int char_at(const void *ctx,
							  const struct glob_token *t, size_t k)
{
	const struct chars *c = ctx;

	return token_wide(c->m, t, c->ch[k]);
}

/*
 * The glob compiled by characters against the characters CH[0, N), as
 * glob_hand_match walks bytes.
 */
static int chars_match(const struct name_matcher *m, const uint32_t *ch, size_t n)
{
	const struct glob_prog *g = &m->g;
	const struct glob_token *t = g->tok;
	size_t i, last = g->last_star;

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
	/* The middle, as glob_middle_match walks it. */
	return glob_walk_middle(g, g->head, n - g->tail, char_at, &(struct chars){ m, ch });
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
		return glob_hand_match(&m->b, name, len);
	return fnmatch_name(m, name, len);
}

/*
 * What the hand matcher does not take in place: an ASCII name (every
 * name in BYTES) when a token of the glob takes no such byte ("*é*"),
 * which matches nothing; a name past ASCII in UTF8; a glob it could not
 * compile, through fnmatch.  Out of line, to keep the search's loop small.
 */
__attribute__((noinline)) int name_match_other(const struct name_matcher *m, const char *name,
					       size_t len)
{
	if (m->by_hand && name_ascii(name, len, m->high_bits))
		return 0;	/* g.never */
	if (m->charset == CHARSET_UTF8 && (m->by_hand || m->bytes_ok))
		return wide_match(m, name, len);
	return fnmatch_name(m, name, len);
}
