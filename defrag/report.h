/*
 * report.h --- e2defrag's front end: what main.c hands to the text and
 * JSON reports and to the progress display.
 */
#ifndef DEFRAG_REPORT_H
#define DEFRAG_REPORT_H

#include <signal.h>
#include <stdio.h>

#include "defrag.h"
#include "units.h"

/* doc/design.md's exit codes. */
enum {
	EXIT_OK = 0,		/* done, nothing to do, or all that is possible done */
	EXIT_MORE = 1,		/* another run could still do more (--max-time) */
	EXIT_FAILED = 4,	/* some files failed to move */
	EXIT_OPERATIONAL = 8,	/* refused, or an operational error */
	EXIT_USAGE = 16,
	EXIT_CANCELLED = 32,	/* SIGINT, SIGTERM */
};

/* What became of a file in a real run (per layout file). */
enum file_result {
	FR_PLANNED = 0,		/* dry run, or not touched */
	FR_DONE,		/* all its moves done */
	FR_FAILED,		/* a move failed: the file kept its last good layout */
	FR_NOT_REACHED,		/* the run stopped before its moves */
};

struct report {
	const char	*prog;
	const char	*device;
	int		verbose;
	int		dry_run;
	struct layout	*layout;	/* before the run */
	struct layout	*after;		/* rescanned after a real run, or NULL */
	struct selection *sel;
	struct plan	*plan;
	const struct units *units;	/* the plan's units and their estimate, or NULL */
	const struct units_limit *limit;	/* what will cut the run, or NULL */
	struct run_state *run;		/* NULL for a dry run */
	uint8_t		*result;	/* enum file_result per layout file, or NULL */
	int		status;		/* the exit status */
};

/*
 * status.c: the exit status of a run from its plan, ST (NULL: a dry run)
 * and RESULT (enum file_result per layout file, or NULL).
 */
int run_exit_status(const struct plan *plan, const struct run_state *st,
		    const uint8_t *result);

/* text.c */
void text_plan(FILE *out, const struct report *r);
void text_result(FILE *out, const struct report *r);
/*
 * The closing line: whether another run could do more (exit 1: what this
 * one did not reach), or else which selected files stay short of best
 * and why, when any do (exit 0: no run can change that here).
 */
void text_closing(FILE *out, const struct report *r);
/* Name the files that failed, on stderr. */
void text_failures(FILE *out, const struct report *r);
/*
 * Pieces and modeled read time, in the rescanned layout (r->after), of
 * the files the plan was for (selected ones; not those only moved out of
 * the way).  The text and the JSON result both report them.
 */
void report_after_figures(const struct report *r, uint64_t *pieces,
			  double *read);

/* json.c */
int json_output(FILE *out, const struct report *r);

/* progress.c */
struct progress {
	const char	*prog;
	const char	*device;
	FILE		*bar;		/* where the bar is drawn, or NULL: none */
	int		own_bar;	/* BAR is ours to close (-C naming a terminal) */
	unsigned	blocksize;	/* to show blocks as bytes */
	int		fd;		/* -C: machine-readable lines, or -1 */
	volatile sig_atomic_t *cancel;	/* signals received */
	int		cancel_at;	/* cancel when *cancel reaches it (0: 1) */
	double		start, last_draw;
	int		last_phase, last_pct;	/* the -C number of the phase at hand */
	uint64_t	last_done, last_total;	/* its last report */
	uint64_t	drawn_done;		/* DONE of the frame on the screen */
	int		reported_total;		/* its last line said DONE = TOTAL */
	int		finished;		/* its end drawn and written */
	int		drawn;		/* a bar line is on the screen */
};

/*
 * Set P up for -C FD (-1: none) and a bar on stderr when BAR: -C 0 draws
 * the bar, as e2fsck -C 0 does, and -C naming a terminal draws it there,
 * not lines.  The caller fills in the rest first (prog, device, ...).
 */
void progress_open(struct progress *p, int fd, int bar);
/* The e2f_progress_fn: draws and returns whether *cancel reached cancel_at. */
int progress_update(void *priv, enum e2f_phase phase, uint64_t done,
		    uint64_t total);
/*
 * The phase at hand has run to its end: its last frame and its last -C
 * line at its total (the engine reports every so often, not at the end).
 */
void progress_finish(struct progress *p);
/* End the bar's line, if one was drawn (the phase stopped short). */
void progress_end(struct progress *p);
/* progress_end, and close what progress_open opened. */
void progress_close(struct progress *p);

#endif /* DEFRAG_REPORT_H */
