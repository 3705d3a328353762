/*
 * name_match.h --- whether a file's own name matches a pattern: the answer
 * of fnmatch(pattern, name, 0) in the program's locale, found fast.
 *
 * The promise: for every pattern and every name, name_match() says what
 * fnmatch(3) with flags 0 says in the program's locale (LC_CTYPE and
 * LC_COLLATE, which must not change while a matcher lives), names and
 * patterns that are not well-formed in it included.
 * tests/unit/map_find.test holds it to that, in C.UTF-8 and in C.
 *
 * Why it exists: e2fragmap's '/' matches the name of every file on each
 * search, and every key is to be answered within a tenth of a second on a
 * filesystem of millions of files (bench/map.sh).  fnmatch costs many
 * times a plain comparison a name (in a multibyte locale it converts both
 * strings to wide characters on every call): through it alone a search
 * of millions of names takes most of a second.  What the fast paths do
 * not know exactly still goes to fnmatch (name_match.c).
 *
 * Use: name_match_compile() once a search, name_match() for each name,
 * name_match_free() after.  The matcher borrows PATTERN (NUL-terminated;
 * it must outlive the matcher) and never fails: what it cannot compile,
 * or a table it gets no memory for, costs time, never a different
 * answer.  A search keeps fnmatch's answers in the matcher as it goes,
 * so one matcher is for one thread.  The structs are here only so that
 * name_match() and what it calls inline into a search's loop: their
 * fields are name_match.c's.
 */
#ifndef E2FRAG_NAME_MATCH_H
#define E2FRAG_NAME_MATCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What the pattern is: a name, text around one '*', or any other glob. */
enum match_kind { MATCH_LITERAL, MATCH_AFFIX, MATCH_GLOB };

/* Longer globs go through fnmatch (a name is at most 255 bytes anyway). */
#define GLOB_TOKENS	256

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

/* A glob compiled: its tokens, the first and last '*' (ntok: none), the tokens around them. */
struct glob_prog {
	struct glob_token tok[GLOB_TOKENS];
	size_t		ntok;
	size_t		first_star, last_star, head, tail;
	int		middle_stars;	/* nothing but '*' between them */
	int		never;		/* a token takes none of the bytes ("*é*" on ASCII) */
};

struct ask_entry;

/* A pattern compiled (name_match_compile). */
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
	uint64_t	high_bits;	/* for name_ascii(): 0 in BYTES */
	struct glob_prog g, b;
	struct ask_entry *asked;	/* UTF8 with a bracket: ASK_CACHE answers (or NULL) */
};

/* PATTERN compiled into M (it borrows PATTERN); never fails. */
void name_match_compile(struct name_matcher *m, const char *pattern);
void name_match_free(struct name_matcher *m);

/* The parts of name_match() kept out of the search's loop (name_match.c). */
int glob_middle_match(const struct glob_prog *m, const char *name, size_t len);
int name_match_other(const struct name_matcher *m, const char *name, size_t len);

static inline int glob_token_match(const struct glob_token *t, unsigned char c)
{
	return (t->set[c >> 6] >> (c & 63)) & 1;
}

/* N tokens (no '*') against NAME's first N bytes, position by position. */
static inline int glob_fixed_match(const struct glob_token *t, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!glob_token_match(&t[i], name[i]))
			return 0;
	return 1;
}

/*
 * The tokens before the first '*' against NAME's first bytes and those
 * after the last against its last, without a branch that depends on the
 * name: a glob that matches every other name ("*[02468]") would
 * mispredict half of them.  NAME holds at least head + tail bytes.
 */
static inline __attribute__((always_inline)) int glob_ends_match(const struct glob_prog *m,
								  const char *name, size_t len)
{
	const struct glob_token *t = m->tok, *tail = m->tok + m->last_star + 1;
	const char *end = name + len - m->tail;
	size_t i;
	int ok = 1;

	for (i = 0; i < m->head; i++)
		ok &= glob_token_match(&t[i], name[i]);
	for (i = 0; i < m->tail; i++)
		ok &= glob_token_match(&tail[i], end[i]);
	return ok;
}

/*
 * The compiled glob against a NAME of LEN bytes, as fnmatch(flags 0) has
 * it, when every byte is a character (an ASCII name, a single-byte locale,
 * the glob compiled by bytes): every token but '*' is one byte.  What
 * comes before the first '*' and after the last matches the ends of the
 * name position by position ("*[0-9]?" looks at two bytes), then the
 * middle.
 */
static inline __attribute__((always_inline)) int glob_hand_match(const struct glob_prog *m,
								  const char *name, size_t len)
{
	if (m->first_star == m->ntok)
		return m->ntok == len && glob_fixed_match(m->tok, len, name);
	if (len < m->head + m->tail)
		return 0;
	if (m->middle_stars)	/* "a*b", "*.?": the ends are all there is to it */
		return glob_ends_match(m, name, len);
	return glob_ends_match(m, name, len) && glob_middle_match(m, name, len);
}

/*
 * Whether S holds no byte past ASCII: eight bytes at a time (names are
 * short).  HIGH is their top bits, or 0 where every byte is a character
 * (a single-byte locale): then every name is "ASCII" at no extra cost.
 */
static inline __attribute__((always_inline)) int name_ascii(const char *s, size_t len,
							     uint64_t high_bits)
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

/*
 * Whether the NAME of LEN bytes (not NUL-terminated) matches M: what
 * fnmatch(pattern, name, 0) says.  Always inline, so that a search's
 * loop over millions of names makes no call for the names that fail on
 * the pattern's literal ends or are matched by hand.
 */
static inline __attribute__((always_inline)) int name_match(const struct name_matcher *m,
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
		if (m->hand && name_ascii(name, len, m->high_bits))
			return glob_hand_match(&m->g, name, len);
		return name_match_other(m, name, len);
	}
}

#endif
