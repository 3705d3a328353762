/*
 * reports/modelopt.h --- the read model's options (--rpm, --mbps,
 * --seek-ms, --track-seek-ms, --disk-size): one table that e2frag and
 * e2defrag both take their getopt entries, their bounds, their messages
 * and their --help lines from.
 *
 * Here and not in lib/: an option's name, its help and the message that
 * refuses a value are the command line's words, the programs' side;
 * reports/ is the programs' shared folder, which may print (one message,
 * the help lines) but never exits: the program exits 16.  lib/ keeps the
 * model itself (struct readmodel; readmodel.c's formulas and defaults)
 * and knows no option.
 */
#ifndef REPORTS_MODELOPT_H
#define REPORTS_MODELOPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "e2frag.h"

enum modelopt_kind {
	MODELOPT_NUMBER,	/* a decimal number (util_parse_double) */
	MODELOPT_SIZE,		/* bytes, or K, M, G, T, P: powers of 1024
				 * (util_parse_size) */
};

struct modelopt {
	const char	*name;	/* the long option, without "--" */
	const char	*arg;	/* its argument, as --help names it */
	size_t		field;	/* offsetof(struct readmodel, the double it sets) */
	enum modelopt_kind kind;
	double		min, max;	/* the bounds, both accepted */
	const char	*help;	/* --help's text; the default follows it,
				 * from readmodel_defaults() */
};

enum {
	MODELOPT_COUNT = 5,
	/* getopt_long's value for the table's entry I is MODELOPT_VAL + I:
	 * above the programs' own (256 and up). */
	MODELOPT_VAL = 0x1000,
};

/* MODELOPT_COUNT entries (modelopt.c asserts it). */
extern const struct modelopt modelopt_table[];

/*
 * Into OUT: a program's getopt_long options OWN (ending in a zero entry),
 * then the table's, then the zero entry.  OUT has room for every entry of
 * OWN, its zero entry included, and MODELOPT_COUNT more.
 */
void modelopt_long_options(const struct option *own, struct option *out);

/* 1 when VAL, from getopt_long, is one of the table's options. */
int modelopt_owns(int val);

/*
 * Set M's field for the option VAL (modelopt_owns) from its argument ARG.
 * A value that is not one, or out of the bounds: one line on stderr,
 * prefixed with PROG, naming the option and its bounds; M untouched; -1.
 */
int modelopt_parse(const char *prog, int val, const char *arg,
		   struct readmodel *m);

/*
 * After the options, what no one of them can say alone: the average seek
 * is not shorter than the track-to-track seek.  0, or -1 after one line
 * on stderr prefixed with PROG.
 */
int modelopt_check(const char *prog, const struct readmodel *m);

/* --help's paragraph: a heading, then one line an option with its default. */
void modelopt_usage(FILE *out);

#endif /* REPORTS_MODELOPT_H */
