/*
 * tap.h --- a few lines of TAP for the C unit tests (automake's
 * tap-driver.sh reads it): plan, ok/not ok, and a final exit status.
 */
#ifndef TAP_H
#define TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int tap_count, tap_failed;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
}

static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	return cond;
}

/* |got - want| <= tol, with both numbers shown when it fails. */
static inline int tap_near(double got, double want, double tol, const char *what)
{
	int ok = fabs(got - want) <= tol;

	if (!ok)
		printf("# %s: got %.9g, want %.9g (tolerance %g)\n", what, got, want, tol);
	return tap_ok(ok, "%s", what);
}

static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
}

static inline int tap_done(void)
{
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
