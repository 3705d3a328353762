/*
 * format_fixed.c --- util_format_fixed (lib/util.c) against snprintf's
 * "%.*f", its oracle: random doubles of every kind (exact halves and
 * thousandths, where rounding half to even shows, random bit patterns,
 * tiny and huge values) and a list of hard cases; and util_format_size
 * against the snprintf formula it replaced.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "e2frag.h"
#include "../lib/tap.h"
#include "xorshift.h"

/* Whether V with D decimals comes out as printf writes it; prints the first few misses. */
static int same(double v, unsigned d, long *shown)
{
	char want[512], got[512];

	snprintf(want, sizeof(want), "%.*f", (int)d, v);
	util_format_fixed(got, sizeof(got), v, d);
	if (!strcmp(want, got))
		return 1;
	if ((*shown)++ < 5)
		printf("# %.17g with %u decimals: printf %s, util_format_fixed %s\n",
		       v, d, want, got);
	return 0;
}

int main(void)
{
	static const double hard[] = {
		0.0, -0.0, 0.5, 1.5, 2.5, 0.05, 0.15, 0.25, 0.0005, 0.0015, 0.0025,
		0.9995, 9.9995, 999.9995, 1e15, 4503599627370495.5, 4503599627370496.0,
		1e300, 5e-324, 2.2250738585072014e-308, -1.5, INFINITY, -INFINITY, NAN,
	};
	long i, bad = 0, shown = 0, sizes_bad = 0;
	unsigned j, d;

	tap_plan(3);
	for (i = 0; i < 1000000; i++) {
		uint64_t bits = rnd();
		double v;

		switch (rnd() % 6) {
		case 0: v = (double)(rnd() % 100000000) / 1000.0; break;
		case 1: v = (double)(rnd() % 2000000) / 2000.0; break;
		case 2: memcpy(&v, &bits, sizeof(v)); break;
		case 3: v = ldexp((double)(rnd() >> 11), -(int)(rnd() % 80)); break;
		case 4: v = (double)(rnd() % 1000) + 0.0005 * (double)(rnd() % 3); break;
		default: v = (double)(rnd() % 100000) / 8000.0; break;
		}
		bad += !same(v, rnd() % 4, &shown);
	}
	tap_ok(!bad, "a million random doubles with 0-3 decimals as printf (%ld differ)", bad);
	bad = 0;
	for (j = 0; j < sizeof(hard) / sizeof(hard[0]); j++)
		for (d = 0; d < 5; d++)
			bad += !same(hard[j], d, &shown);
	tap_ok(!bad, "halves, -0, the 2^52 edge, subnormals, infinities, NaN (%ld differ)", bad);
	for (i = 0; i < 200000; i++) {
		uint64_t bytes = rnd() >> (rnd() % 64);
		double v = (double)bytes;
		char want[32], got[32];
		int u = -1;
		static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

		if (bytes < 1024) {
			snprintf(want, sizeof(want), "%llu B", (unsigned long long)bytes);
		} else {
			while (v >= 1024 && u < 5) {
				v /= 1024;
				u++;
			}
			snprintf(want, sizeof(want), v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
		}
		util_format_size(bytes, got, sizeof(got));
		if (strcmp(want, got) && sizes_bad++ < 5)
			printf("# %llu bytes: want %s, got %s\n", (unsigned long long)bytes, want, got);
	}
	tap_ok(!sizes_bad, "util_format_size as its printf formula on 200,000 sizes (%ld differ)",
	       sizes_bad);
	return tap_done();
}
