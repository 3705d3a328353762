/*
 * analyze/report.h --- the pieces of the e2frag front end.
 *
 * main.c parses options, opens and scans; each report is its own file
 * reading the one layout model.
 */
#ifndef ANALYZE_REPORT_H
#define ANALYZE_REPORT_H

#include <stdio.h>

#include "../lib/e2frag.h"

struct report_opts {
	const char	*program;
	const char	*device;	/* as resolved, for the report */
	const char	*spec;		/* as given, for the suggested command */
	unsigned	top;		/* worst files listed; 0 = all */
	int		top_set;	/* --top given (--raw lists all otherwise) */
	int		show_groups, show_free, show_sets, raw;
	double		threshold;	/* score that recommends e2defrag */
	const char	*columns;	/* -o list, or NULL for the default */
	int		verbose;
	int		color;		/* --color: escape codes in the text report */
};

/* text.c: the fsck-like summary. */
void text_report(FILE *out, const struct layout *layout,
		 const struct report_opts *o);

/* table.c: the per-file table, as columns (util-linux style). */
/*
 * Column numbers of the comma-separated LIST (at most MAX) into COLS;
 * their count, or -1 for a name that is no column (or none at all), -2
 * for more than MAX.  *BAD and *BADLEN then say where in LIST.
 */
int table_parse_columns(const char *list, int *cols, int max, const char **bad,
			size_t *badlen);
void table_print_files(FILE *out, const struct layout *layout,
		       const struct report_opts *o, int indent);
void table_list_columns(FILE *out);

/*
 * Indexes of the selected files, worst lost read time first (malloc'd);
 * with LOSSY_ONLY only those that lose any.
 */
uint32_t *table_worst_files(const struct layout *layout, int lossy_only,
			    uint64_t *n);

/* json.c: the DESIGN.md report, files streamed one at a time. */
int json_report(FILE *out, const struct layout *layout,
		const struct report_opts *o);

#endif
