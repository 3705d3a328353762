/*
 * json.c --- the doc/design.md report.  Objects come from the core
 * (report_json.c); the files array is written one object at a time so that
 * a filesystem with millions of files needs no report-sized tree in memory.
 *
 * The layout is jansson's JSON_INDENT(2) for the whole document, nested
 * members indented by their depth, except that each file's object is on
 * one line (four spaces in): a line a file, which grep and a line-by-line
 * reader can take, and a third of the size a member a line would have.
 */
#include "report.h"
#include "report_json.h"

#define DUMP_FLAGS	(JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))

/* json_dump_callback's writer: every line after the first one level in. */
static int put_indented(const char *buffer, size_t size, void *data)
{
	FILE *out = data;
	size_t i;

	for (i = 0; i < size; i++) {
		/* A string's newlines are escaped: every '\n' starts a line. */
		if (fputc(buffer[i], out) == EOF)
			return -1;
		if (buffer[i] == '\n' && fputs("  ", out) == EOF)
			return -1;
	}
	return 0;
}

/* "KEY": VALUE (taken), a member of the top-level object, one level deep. */
static int dump(FILE *out, const char *key, json_t *value, int last)
{
	int ret;

	if (!value)
		return -1;
	fprintf(out, "  \"%s\": ", key);	/* KEY is one of our literals */
	ret = json_dump_callback(value, put_indented, out, JSON_INDENT(2) | DUMP_FLAGS);
	json_decref(value);
	fputs(last ? "\n" : ",\n", out);
	return ret;
}

int json_report(FILE *out, const struct layout *layout,
		const struct report_opts *o)
{
	json_t *summary = report_json_summary(layout);
	uint64_t i, n = 0;

	fputs("{\n", out);
	/* e2frag's own addition: what e2defrag could improve (room.c). */
	if (summary)
		json_object_set_new(summary, "improvable_files", json_integer(o->improvable));
	if (dump(out, "filesystem", report_json_filesystem(layout, o->device), 0) ||
	    dump(out, "summary", summary, 0))
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
		if (json_dumpf(obj, out, JSON_COMPACT | DUMP_FLAGS)) {
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
