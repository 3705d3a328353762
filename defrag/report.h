/*
 * report.h --- e2defrag's front end: what main.c hands to the text and
 * JSON reports and to the progress display.
 */
#ifndef DEFRAG_REPORT_H
#define DEFRAG_REPORT_H

#include <signal.h>
#include <stdio.h>

#include "defrag.h"

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
	struct run_state *run;		/* NULL for a dry run */
	uint8_t		*result;	/* enum file_result per layout file, or NULL */
	int		status;		/* the exit status */
};

/* text.c */
void text_plan(FILE *out, const struct report *r);
void text_result(FILE *out, const struct report *r);
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
	int		bar;		/* draw a bar on stderr */
	unsigned	blocksize;	/* to show blocks as bytes */
	int		fd;		/* -C: machine-readable lines, or -1 */
	volatile sig_atomic_t *cancel;
	double		start, last_draw;
	int		last_phase, last_pct;
	int		drawn;		/* a bar line is on the screen */
};

/* The e2f_progress_fn: draws and returns *cancel. */
int progress_update(void *priv, enum e2f_phase phase, uint64_t done,
		    uint64_t total);
/* End the bar's line, if one was drawn. */
void progress_end(struct progress *p);

#endif /* DEFRAG_REPORT_H */
