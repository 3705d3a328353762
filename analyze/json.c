/*
 * json.c --- the doc/design.md report.  Objects come from the core
 * (report_json.c); the files array is written one object at a time so that
 * a filesystem with millions of files needs no report-sized tree in memory.
 */
#include "report.h"
#include "report_json.h"

static int dump(FILE *out, const char *key, json_t *value, int last)
{
	int ret;

	if (!value)
		return -1;
	fprintf(out, "  \"%s\": ", key);	/* KEY is one of our literals */
	ret = json_dumpf(value, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			 JSON_REAL_PRECISION(12));
	json_decref(value);
	fputs(last ? "\n" : ",\n", out);
	return ret;
}

int json_report(FILE *out, const struct layout *layout,
		const struct report_opts *o)
{
	uint64_t i, n = 0;

	fputs("{\n", out);
	if (dump(out, "filesystem", report_json_filesystem(layout, o->device), 0) ||
	    dump(out, "summary", report_json_summary(layout), 0))
		return -1;
	fputs("  \"files\": [", out);
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		json_t *obj;

		if (!(f->flags & LAYOUT_F_SELECTED))
			continue;
		obj = report_json_file(layout, f);
		if (!obj)
			return -1;
		fputs(n++ ? ",\n    " : "\n    ", out);
		if (json_dumpf(obj, out, JSON_COMPACT | JSON_PRESERVE_ORDER |
			       JSON_REAL_PRECISION(12))) {
			json_decref(obj);
			return -1;
		}
		json_decref(obj);
	}
	fputs(n ? "\n  ],\n" : "],\n", out);
	if (dump(out, "interleave_sets", report_json_sets(layout), 0) ||
	    dump(out, "groups", report_json_groups(layout), 0) ||
	    dump(out, "free_space", report_json_free_space(layout), 1))
		return -1;
	fputs("}\n", out);
	return 0;
}
