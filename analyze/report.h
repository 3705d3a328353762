/*
 * analyze/report.h --- the pieces of the e2frag front end.
 *
 * main.c parses options, opens and scans; each report is its own file
 * reading the one layout model.
 */
#ifndef ANALYZE_REPORT_H
#define ANALYZE_REPORT_H

#include <stdio.h>

#include "e2frag.h"

/* How the file table is printed (libsmartcols' modes). */
enum table_format { TABLE_ALIGNED, TABLE_RAW, TABLE_PAIRS, TABLE_JSON };

struct report_opts {
	const char	*program;
	const char	*device;	/* as resolved, for the report */
	const char	*spec;		/* as given, for the suggested command */
	int		dump;		/* SPEC is a qcow2 dump: suggest no command on it */
	unsigned	top;		/* worst files listed; 0: all that lose time */
	int		top_set;	/* --top given (--list lists all otherwise) */
	int		show_groups, show_free, show_sets;
	int		list;		/* the file table alone (-l, -r, -P) */
	enum table_format format;
	int		noheadings;
	double		threshold;	/* score that recommends e2defrag */
	const char	*columns;	/* -o list, or NULL for the default */
	char		**paths;	/* PATHs the report is restricted to */
	int		npaths;
	int		verbose;
	int		color;		/* --color: escape codes in the text report */
	/* Of the avoidably fragmented files, those e2defrag could improve (room.c). */
	uint64_t	improvable;
};

/* text.c: the fsck-like summary. */
void text_report(FILE *out, const struct layout *layout,
		 const struct report_opts *o);

/* table.c: the per-file table, as columns (util-linux style). */
/*
 * Column numbers of the comma-separated LIST (at most MAX) into COLS;
 * "+LIST" adds LIST to the default columns.  Their count, or -1 for a
 * name that is no column (or none at all), -2 for more than MAX.  *BAD
 * and *BADLEN then say where in LIST.
 */
int table_parse_columns(const char *list, int *cols, int max, const char **bad,
			size_t *badlen);
/*
 * The file table, worst lost read time first, in O's format; aligned,
 * each line indented by INDENT.  -1 when out of memory.
 */
int table_print_files(FILE *out, const struct layout *layout,
		      const struct report_opts *o, int indent);
void table_list_columns(FILE *out);

/*
 * Indexes of the selected files, worst lost read time first (malloc'd);
 * with LOSSY_ONLY only those that lose any.
 */
uint32_t *table_worst_files(const struct layout *layout, int lossy_only,
			    uint64_t *n);

/* json.c: the doc/design.md report, files streamed one at a time. */
int json_report(FILE *out, const struct layout *layout,
		const struct report_opts *o);

#endif
