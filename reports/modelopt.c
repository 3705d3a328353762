/*
 * modelopt.c --- the read model's options, parsed and listed alike by
 * every program that takes them (e2frag, e2defrag).
 *
 * The bounds are one set for all (e2frag(8) and e2defrag(8) state them in
 * the same words; tests/cli/model-options.sh tries their edges in both
 * programs):
 *
 * - --rpm and --mbps from 0.001, --seek-ms and --track-seek-ms from 0:
 *   the rotation and the rate are divided by, the seeks are not.
 * - All four at most 1e9, far beyond any disk, so that every sum of
 *   read times stays finite.  These are the bounds both programs took
 *   before they shared this table (e2frag took up to 1e15).
 * - --disk-size from 1 byte (the model raises it to the filesystem's
 *   size anyway) to 1024P, 2^60 bytes: the largest ext4 with 4 KiB
 *   blocks, and past any single disk.  Only e2frag took it before, up
 *   to what 64 bits hold.
 */
#include <math.h>
#include <string.h>

#include "modelopt.h"

const struct modelopt modelopt_table[] = {
	{ "rpm", "N", offsetof(struct readmodel, rpm), MODELOPT_NUMBER,
	  1e-3, 1e9, "spindle speed" },
	{ "mbps", "N", offsetof(struct readmodel, mbps), MODELOPT_NUMBER,
	  1e-3, 1e9, "sustained transfer rate, MB/s" },
	{ "seek-ms", "MS", offsetof(struct readmodel, seek_ms), MODELOPT_NUMBER,
	  0, 1e9, "average seek time" },
	{ "track-seek-ms", "MS", offsetof(struct readmodel, track_seek_ms),
	  MODELOPT_NUMBER, 0, 1e9, "track-to-track seek time" },
	{ "disk-size", "SIZE", offsetof(struct readmodel, disk_bytes), MODELOPT_SIZE,
	  1, 0x1p60, "capacity the seeks span, at least the filesystem" },
};
_Static_assert(sizeof(modelopt_table) / sizeof(*modelopt_table) == MODELOPT_COUNT,
	       "modelopt_table has MODELOPT_COUNT entries");

void modelopt_long_options(const struct option *own, struct option *out)
{
	int i;

	for (; own->name; own++)
		*out++ = *own;
	for (i = 0; i < MODELOPT_COUNT; i++) {
		out->name = modelopt_table[i].name;
		out->has_arg = required_argument;
		out->flag = NULL;
		out->val = MODELOPT_VAL + i;
		out++;
	}
	memset(out, 0, sizeof(*out));
}

int modelopt_owns(int val)
{
	return val >= MODELOPT_VAL && val < MODELOPT_VAL + MODELOPT_COUNT;
}

/*
 * V as the option's values are written: a number as printf's %g would
 * write it, all digits kept; a size in the shortest exact way, bytes or a
 * suffix of util_parse_size (1024P) or, for a default a disk maker would
 * name, decimal units (1 TB, 10^12 bytes).
 */
static void format_value(const struct modelopt *o, double v, char *buf,
			 size_t len)
{
	static const struct {
		double		unit;
		const char	*suffix;
	} units[] = {
		{ 0x1p50, "P" }, { 0x1p40, "T" }, { 0x1p30, "G" }, { 0x1p20, "M" },
		{ 0x1p10, "K" }, { 1e15, " PB" }, { 1e12, " TB" }, { 1e9, " GB" },
		{ 1e6, " MB" }, { 1e3, " kB" },
	};
	char alt[48];
	size_t i;

	snprintf(buf, len, "%.15g", v);
	if (o->kind != MODELOPT_SIZE)
		return;
	for (i = 0; i < sizeof(units) / sizeof(*units); i++) {
		if (v < units[i].unit || fmod(v, units[i].unit) != 0)
			continue;
		snprintf(alt, sizeof(alt), "%.15g%s", v / units[i].unit,
			 units[i].suffix);
		if (strlen(alt) < strlen(buf))
			snprintf(buf, len, "%s", alt);
	}
}

/* ARG as the option's kind reads it, within its bounds: 0, or -1. */
static int parse_value(const struct modelopt *o, const char *arg, double *v)
{
	uint64_t bytes;

	if (o->kind == MODELOPT_NUMBER)
		return util_parse_double(arg, o->min, o->max, v) ? -1 : 0;
	/* In bytes: a double would round 2^60 + 1 down to the bound. */
	if (util_parse_size(arg, &bytes) || bytes < (uint64_t)o->min ||
	    bytes > (uint64_t)o->max)
		return -1;
	*v = (double)bytes;
	return 0;
}

int modelopt_parse(const char *prog, int val, const char *arg,
		   struct readmodel *m)
{
	const struct modelopt *o = &modelopt_table[val - MODELOPT_VAL];
	char lo[48], hi[48];
	double v;

	if (!parse_value(o, arg, &v)) {
		*(double *)((char *)m + o->field) = v;
		return 0;
	}
	format_value(o, o->min, lo, sizeof(lo));
	format_value(o, o->max, hi, sizeof(hi));
	fprintf(stderr, "%s: --%s wants %s from %s to %s%s, not '%s'\n", prog,
		o->name, o->kind == MODELOPT_SIZE ? "a size" : "a number", lo, hi,
		o->kind == MODELOPT_SIZE ? " (such as 2T)" : "", arg);
	return -1;
}

int modelopt_check(const char *prog, const struct readmodel *m)
{
	if (m->seek_ms >= m->track_seek_ms)
		return 0;
	fprintf(stderr, "%s: the average seek (--seek-ms %.15g) cannot be shorter "
		"than the track-to-track seek (--track-seek-ms %.15g)\n", prog,
		m->seek_ms, m->track_seek_ms);
	return -1;
}

void modelopt_usage(FILE *out)
{
	struct readmodel defaults;
	char opt[48], deflt[48];
	int i;

	readmodel_defaults(&defaults);
	fputs("Read model (a 7200 rpm SATA disk by default):\n", out);
	for (i = 0; i < MODELOPT_COUNT; i++) {
		const struct modelopt *o = &modelopt_table[i];

		snprintf(opt, sizeof(opt), "--%s %s", o->name, o->arg);
		format_value(o, *(const double *)((const char *)&defaults + o->field),
			     deflt, sizeof(deflt));
		fprintf(out, "      %-20s%s (%s)\n", opt, o->help, deflt);
	}
}
