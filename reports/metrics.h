/*
 * reports/metrics.h --- node_exporter's textfile format (e2frag --metrics,
 * e2defrag --metrics): the layout's figures and e2defrag's last run, each
 * labelled with the device and, when known, the mount point.  The one
 * place the metrics' names and help are written (e2frag(8) lists them).
 */
#ifndef REPORTS_METRICS_H
#define REPORTS_METRICS_H

#include "e2frag.h"

/* What the metrics say of a filesystem, copied out of a layout. */
struct metrics_figures {
	int		have;		/* 0: the filesystem was not read */
	struct layout_summary summary;
	uint64_t	free_bytes, free_runs, largest_free_run_bytes;
	int		have_improvable;	/* e2frag: improvable below is set */
	uint64_t	improvable;	/* layout_count_improvable */
};

void metrics_figures_from(struct metrics_figures *f, const struct layout *layout);

/* e2defrag's last run. */
struct metrics_run {
	const char	*outcome;	/* one of metrics_outcomes */
	uint64_t	bytes_written;
	double		seconds;
	int		exit_status;
};

/* The outcomes, as e2defrag(8) describes them; NULL-terminated. */
extern const char *const metrics_outcomes[];

/*
 * Whether PATH may take the metrics: absent, or a regular file (not a
 * symbolic link).  The rename that writes them would replace anything
 * else (a device node, a FIFO, a link) with a regular file.  Else says
 * why on stderr (as PROG) and returns 0.
 */
int metrics_path_ok(const char *path, const char *prog);

/*
 * Write the metrics to PATH atomically: a temporary file in PATH's
 * directory, flushed to disk, then renamed over PATH, so a collector
 * never reads half a file.  MOUNTPOINT may be NULL or ""; RUN is NULL
 * for e2frag.  On failure says why on stderr (as PROG) and returns -1;
 * PATH is then as it was.
 */
int metrics_write(const char *path, const char *prog, const char *device,
		  const char *mountpoint, const struct metrics_figures *fig,
		  const struct metrics_run *run);

#endif /* REPORTS_METRICS_H */
