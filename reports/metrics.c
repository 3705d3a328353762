/*
 * metrics.c --- node_exporter's textfile collector format: "# HELP",
 * "# TYPE" and one sample per metric, label values escaped as the
 * exposition format says (backslash, double quote, newline).  Sizes are
 * in bytes and times in seconds, Prometheus' base units.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"

const char *const metrics_outcomes[] = {
	"done", "nothing_to_do", "planned", "skipped", "refused", "failed",
	"cancelled", NULL,
};

void metrics_figures_from(struct metrics_figures *f, const struct layout *layout)
{
	uint64_t bs = layout->fs->blocksize;

	memset(f, 0, sizeof(*f));
	f->have = 1;
	f->summary = layout->summary;
	f->free_bytes = layout->free.free_blocks * bs;
	f->free_runs = layout->free.free_extents;
	f->largest_free_run_bytes = layout->free.largest_free_extent * bs;
}

static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

struct out {
	FILE		*f;
	const char	*device, *mountpoint;
};

/* The labels every sample carries, and EXTRA="VALUE" when EXTRA. */
static void labels(const struct out *o, const char *extra, const char *value)
{
	fputs("{device=\"", o->f);
	put_escaped(o->f, o->device);
	fputc('"', o->f);
	if (o->mountpoint && *o->mountpoint) {
		fputs(",mountpoint=\"", o->f);
		put_escaped(o->f, o->mountpoint);
		fputc('"', o->f);
	}
	if (extra) {
		fprintf(o->f, ",%s=\"", extra);
		put_escaped(o->f, value);
		fputc('"', o->f);
	}
	fputc('}', o->f);
}

static void head(const struct out *o, const char *name, const char *help)
{
	fprintf(o->f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/*
 * A sample's value as the exposition format spells it.  Counts and times
 * whole print as integers, and ratios to nine digits; the cast to an
 * integer is only made where it is defined and exact (below 2^53), and
 * anything past that prints with every digit a double has.
 */
static void put_value(FILE *f, double value)
{
	if (isnan(value))
		fputs(" NaN\n", f);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", f);
	else if (fabs(value) >= 9e15)
		fprintf(f, " %.17g\n", value);
	else if (value == (double)(int64_t)value)
		fprintf(f, " %lld\n", (long long)value);
	else
		fprintf(f, " %.9g\n", value);
}

static void gauge(const struct out *o, const char *name, const char *help,
		  double value)
{
	head(o, name, help);
	fputs(name, o->f);
	labels(o, NULL, NULL);
	put_value(o->f, value);
}

static void write_all(const struct out *o, const struct metrics_figures *fig,
		      const struct metrics_run *run)
{
	const struct layout_summary *s = &fig->summary;
	int i;

	if (fig->have) {
		gauge(o, "e2frag_score", "Fragmentation score, 0 (the layout is fine) to 100; "
		      "e2frag recommends e2defrag from its threshold (default 10).", s->score);
		gauge(o, "e2frag_read_efficiency", "Modeled time to read every file in its "
		      "best layout over the time in its present one (1: nothing to gain).",
		      s->read_efficiency);
		gauge(o, "e2frag_files", "Files with blocks.", (double)s->files);
		gauge(o, "e2frag_fragmented_files", "Files in more than one piece.",
		      (double)s->fragmented_files);
		gauge(o, "e2frag_avoidably_fragmented_files", "Files in more pieces than "
		      "their best layout needs.", (double)s->avoidably_fragmented_files);
		if (fig->have_improvable)
			gauge(o, "e2frag_improvable_files", "Of the avoidably fragmented "
			      "files, those e2defrag could bring closer to their best on "
			      "the disk as it is (an estimate; 0: nothing more to do).",
			      (double)fig->improvable);
		gauge(o, "e2frag_interleaved_files", "Files written into each other's way "
		      "by concurrent writers.", (double)s->interleaved_files);
		gauge(o, "e2frag_interleave_sets", "Sets of files interleaved with each other.",
		      (double)s->interleave_sets);
		gauge(o, "e2frag_free_bytes", "Free space.", (double)fig->free_bytes);
		gauge(o, "e2frag_free_runs", "Runs of free blocks (free extents).",
		      (double)fig->free_runs);
		gauge(o, "e2frag_largest_free_run_bytes", "The largest run of free blocks.",
		      (double)fig->largest_free_run_bytes);
	}
	if (run) {
		head(o, "e2defrag_last_run_outcome", "What e2defrag's last run did: 1 for "
		     "its outcome, 0 for the others (see e2defrag(8)).");
		for (i = 0; metrics_outcomes[i]; i++) {
			fputs("e2defrag_last_run_outcome", o->f);
			labels(o, "outcome", metrics_outcomes[i]);
			fprintf(o->f, " %d\n", !strcmp(run->outcome, metrics_outcomes[i]));
		}
		gauge(o, "e2defrag_last_run_bytes_written", "Bytes the last run wrote "
		      "(file data and mapping blocks).", (double)run->bytes_written);
		gauge(o, "e2defrag_last_run_duration_seconds", "How long the last run took, "
		      "scanning and planning included.", run->seconds);
		gauge(o, "e2defrag_last_run_exit_status", "The last run's exit status "
		      "(e2defrag(8)).", run->exit_status);
	}
	gauge(o, run ? "e2defrag_last_run_timestamp_seconds" : "e2frag_last_scan_timestamp_seconds",
	      run ? "When the last run ended, in seconds since the epoch." :
	      "When the figures were taken, in seconds since the epoch.",
	      (double)time(NULL));
}

int metrics_path_ok(const char *path, const char *prog)
{
	struct stat st;

	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 1;	/* absent (or unreadable: the write will say) */
	fprintf(stderr, "%s: --metrics %s is not a regular file; not writing over it\n",
		prog, path);
	return 0;
}

int metrics_write(const char *path, const char *prog, const char *device,
		  const char *mountpoint, const struct metrics_figures *fig,
		  const struct metrics_run *run)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp = malloc(strlen(path) + 16);
	struct out o = { NULL, device, mountpoint };
	mode_t mask;
	int fd = -1, err = 0;

	if (!tmp) {
		fprintf(stderr, "%s: out of memory writing the metrics\n", prog);
		return -1;
	}
	if (!metrics_path_ok(path, prog)) {	/* checked at the start too */
		free(tmp);
		return -1;
	}
	/* .NAME.XXXXXX beside PATH: the collector reads only *.prom. */
	sprintf(tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write the metrics beside %s: %s\n", prog,
			path, strerror(errno));
		free(tmp);
		return -1;
	}
	/* mkstemp makes it 0600; node_exporter runs as another user. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0)
		err = errno;
	o.f = fdopen(fd, "w");
	if (!o.f) {
		err = errno;
		close(fd);
	} else {
		write_all(&o, fig, run);
		if (fflush(o.f) || ferror(o.f) || fsync(fd) < 0)
			err = err ? err : errno ? errno : EIO;
		if (fclose(o.f) && !err)
			err = errno;
	}
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err) {
		unlink(tmp);
		fprintf(stderr, "%s: cannot write the metrics to %s: %s\n", prog, path,
			strerror(err));
		free(tmp);
		return -1;
	}
	free(tmp);
	return 0;
}
