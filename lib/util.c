/*
 * util.c --- small helpers the front ends share: numbers and sizes in
 * and out, the clock.
 */
#include <ctype.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>	/* malloc_usable_size */
#endif
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#include "e2frag.h"

errcode_t util_parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return ERANGE;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	case 'P': shift = 50; break;
	default:
		return EINVAL;
	}
	if (*end) {
		end++;
		/* Accept "64k", "64K", "64KiB", "64KB". */
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
		if (*end)
			return EINVAL;
	}
	if (shift && n > (UINT64_MAX >> shift))
		return ERANGE;
	*bytes = (uint64_t)n << shift;
	return 0;
}

size_t util_format_fixed(char *buf, size_t len, double v, unsigned decimals)
{
	static const uint64_t scale[] = { 1, 10, 100, 1000 };
	char digits[24];
	uint64_t bits, k = 0;
	unsigned e, n = 0, i;
	int w;

	memcpy(&bits, &v, sizeof(bits));
	e = (bits >> 52) & 0x7ff;
	/* Negative (and -0), infinite, NaN, 2^52 and more: printf's. */
	if (decimals > 3 || bits >> 63 || e >= 1075 || len < sizeof(digits) + 2) {
		w = snprintf(buf, len, "%.*f", (int)decimals, v);
		return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
	}
	if (e) {
		/* V = M * 2^-SH exactly; M * 10^DECIMALS < 2^63, then rounded to
		 * the nearest integer, half to even, as printf rounds. */
		uint64_t m = ((bits & ((1ULL << 52) - 1)) | (1ULL << 52)) * scale[decimals];
		unsigned sh = 1075 - e;

		if (sh < 64) {	/* else below one half: 0 */
			uint64_t r = m & ((1ULL << sh) - 1), half = 1ULL << (sh - 1);

			k = m >> sh;
			if (r > half || (r == half && (k & 1)))
				k++;
		}
	}	/* else zero or subnormal: 0 */
	for (i = 0; i < decimals; i++, k /= 10)
		digits[n++] = '0' + k % 10;
	if (decimals)
		digits[n++] = '.';
	do {
		digits[n++] = '0' + k % 10;
		k /= 10;
	} while (k);
	for (i = 0; i < n; i++)
		buf[i] = digits[n - 1 - i];
	buf[n] = '\0';
	return n;
}

const char *util_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;
	size_t n;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (len < 32) {
		snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
		return buf;
	}
	/* The same, without printf's floating-point path: plans print one a file. */
	n = util_format_fixed(buf, len, v, v < 10 ? 1 : 0);
	buf[n] = ' ';
	memcpy(buf + n + 1, units[u], 4);
	return buf;
}

/* Length of the valid UTF-8 sequence at S (at most N bytes), or 0. */
static size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2; cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3; cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4; cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF are not text. */
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
	    (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

size_t util_printable(const char *in, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), i = 0, pos = 0;

	if (!outlen)
		return 0;
	while (i < n) {
		size_t len = utf8_seq_len(s + i, n - i);

		if (len == 1 && s[i] >= 0x20 && s[i] != 0x7f && s[i] != '\\') {
			if (pos + 1 >= outlen)
				break;
			out[pos++] = s[i++];
		} else if (len > 1) {
			if (pos + len >= outlen)
				break;
			memcpy(out + pos, s + i, len);
			pos += len;
			i += len;
		} else {
			if (pos + 4 >= outlen)
				break;
			pos += snprintf(out + pos, outlen - pos, "\\x%02x", s[i++]);
		}
	}
	out[pos] = 0;
	return pos;
}

const char *util_format_seconds(double s, char *buf, size_t len)
{
	snprintf(buf, len, "%.3f s", s > 0 ? s : 0);
	return buf;
}

errcode_t util_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* (NaN fails both comparisons.) */
	if (errno || end == s || *end || !(v >= min) || !(v <= max))
		return EINVAL;
	*out = v;
	return 0;
}

double util_now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *util_phase_name(enum e2f_phase phase)
{
	static const char *const names[] = {
		[E2F_PHASE_INODES] = "inodes", [E2F_PHASE_DIRS] = "directories",
		[E2F_PHASE_BITMAPS] = "bitmaps", [E2F_PHASE_MOVE] = "moving",
		[E2F_PHASE_PLAN] = "planning",
	};

	return (unsigned)phase < E2F_PHASE_COUNT ? names[phase] : "?";
}

void util_huge_pages(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
	const uintptr_t huge = (uintptr_t)2 << 20, page = 4096;
	uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t end = ((uintptr_t)p + len) & ~(huge - 1);

	if (end <= start)
		return;		/* no whole huge page in it */
	/*
	 * The whole block, to its pages' ends: a block this large has a
	 * mapping of its own, and advice on part of it splits the mapping,
	 * after which realloc can no longer move it with mremap and copies
	 * it (arrays of tens of megabytes at a million files).
	 */
	start = (uintptr_t)p & ~(page - 1);
#ifdef __GLIBC__
	end = ((uintptr_t)p + malloc_usable_size(p) + page - 1) & ~(page - 1);
#else
	end = ((uintptr_t)p + len + page - 1) & ~(page - 1);
#endif
	madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
	(void)p;
	(void)len;
#endif
}

errcode_t util_grow_room(void *array, uint64_t *cap, uint64_t need, size_t size)
{
	void **p = array;
	uint64_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need && n <= UINT64_MAX / 2)
		n *= 2;
	if (n < need || n > SIZE_MAX / size)
		return ENOMEM;
	q = realloc(*p, n * size);
	if (!q)
		return ENOMEM;
	util_huge_pages(q, n * size);
	*p = q;
	*cap = n;
	return 0;
}

void util_fit(void *array, uint64_t *cap, uint64_t n, size_t size)
{
	void **p = array;
	void *q;

	if (!n || n >= *cap)
		return;
	q = realloc(*p, n * size);
	if (q) {
		*p = q;
		*cap = n;
	}
}
