/*
 * metrics_values.c --- the values metrics_write (reports/metrics.c) puts
 * in the textfile: NaN and the infinities spelt as the exposition format
 * spells them, whole numbers as integers, and numbers past 2^53 with
 * every digit, read back here with strtod and compared with what went in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"
#include "../lib/tap.h"

/* The value text of metric NAME's first sample in the file at PATH. */
static int sample(const char *path, const char *name, char *value, size_t size)
{
	char line[1024];
	size_t n = strlen(name);
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sp;

		if (strncmp(line, name, n) || (line[n] != '{' && line[n] != ' '))
			continue;
		sp = strrchr(line, ' ');
		line[strcspn(line, "\n")] = 0;
		snprintf(value, size, "%s", sp + 1);
		found = 1;
	}
	fclose(f);
	return found;
}

/* Whether NAME's value is spelt WANT (exactly) in the file at PATH. */
static void spelt(const char *path, const char *name, const char *want)
{
	char got[128] = "";

	tap_ok(sample(path, name, got, sizeof(got)) && !strcmp(got, want),
	       "%s is %s (got %s)", name, want, got);
}

/* Whether NAME's value reads back as exactly WANT and, when INTEGER, is
 * spelt as an integer (as whole numbers below 9e15 are). */
static void exact(const char *path, const char *name, double want, int integer)
{
	char got[128] = "", *end;
	int ok = sample(path, name, got, sizeof(got));

	ok = ok && strtod(got, &end) == want && !*end;
	if (integer)
		ok = ok && strspn(got, "-0123456789") == strlen(got);
	tap_ok(ok, "%s reads back as %.17g (got %s)", name, want, got);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], path[4096 + 16];
	struct metrics_figures fig;
	struct metrics_run run = { "done", 0, 0, 0 };

	snprintf(dir, sizeof(dir), "%s/e2frag-metrics.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/e2frag.prom", dir);
	memset(&fig, 0, sizeof(fig));
	fig.have = 1;
	fig.summary.score = NAN;
	fig.summary.read_efficiency = INFINITY;
	fig.summary.files = 9007199254740993ULL;	/* 2^53 + 1: a double's 2^53 */
	fig.summary.fragmented_files = 42;
	fig.free_bytes = 1ULL << 60;
	fig.free_runs = 8999999999999999ULL;		/* just below 9e15 */
	fig.largest_free_run_bytes = 0;
	run.seconds = -INFINITY;
	run.bytes_written = 18446744073709551615ULL;	/* 2^64 - 1: 2^64 as a double */

	tap_plan(10);
	if (!tap_ok(!metrics_write(path, "metrics_values", "/dev/x", "/mnt", &fig, &run),
		    "metrics written")) {
		rmdir(dir);
		return tap_done();
	}
	spelt(path, "e2frag_score", "NaN");
	spelt(path, "e2frag_read_efficiency", "+Inf");
	spelt(path, "e2defrag_last_run_duration_seconds", "-Inf");
	exact(path, "e2frag_fragmented_files", 42, 1);
	exact(path, "e2frag_largest_free_run_bytes", 0, 1);
	exact(path, "e2frag_free_runs", 8999999999999999.0, 1);
	exact(path, "e2frag_files", 9007199254740992.0, 0);
	exact(path, "e2frag_free_bytes", 1152921504606846976.0, 0);
	exact(path, "e2defrag_last_run_bytes_written", 18446744073709551616.0, 0);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
