/*
 * table.c --- the per-file table.  Columns are data (util-linux style):
 * one description serves -o, and libsmartcols prints it aligned, --raw,
 * --pairs or as JSON, as lsblk and findmnt do.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libsmartcols.h>

#include "report.h"
#include "report_json.h"

/* Lines of --raw and --pairs printed at a time. */
#define STREAM_BATCH	4096

enum col_id {
	COL_INO, COL_PATH, COL_TYPE, COL_SIZE, COL_BLOCKS, COL_PIECES,
	COL_EXTENTS, COL_BEST, COL_PIECES_BEST, COL_PARTNERS, COL_SET,
	COL_READ, COL_IDEAL, COL_EFFICIENCY, COL_LOST, COL_SCORE, COL_COUNT
};

struct colinfo {
	const char	*name;
	int		width;		/* smartcols' width hint */
	int		number;		/* 1: a number (right-aligned; a JSON number),
					 * 2: right-aligned text, 0: text */
	const char	*help;
};

static const struct colinfo infos[COL_COUNT] = {
	[COL_INO]	  = { "INO",	     7, 1, "inode number" },
	[COL_PATH]	  = { "PATH",	    24, 0, "path inside the filesystem" },
	[COL_TYPE]	  = { "TYPE",	     4, 0, "file, dir, symlink or other" },
	[COL_SIZE]	  = { "SIZE",	     8, 1, "size (machine formats: bytes)" },
	[COL_BLOCKS]	  = { "BLOCKS",	     7, 1, "blocks owned, mapping blocks included" },
	[COL_PIECES]	  = { "PIECES",	     6, 1, "physically contiguous runs" },
	[COL_EXTENTS]	  = { "EXTENTS",     7, 1, "logically and physically contiguous runs" },
	[COL_BEST]	  = { "BEST",	     4, 1, "fewest pieces possible here" },
	[COL_PIECES_BEST] = { "PIECES/BEST", 11, 2, "pieces against best" },
	[COL_PARTNERS]	  = { "INTERLEAVED", 11, 1, "files it interleaves with" },
	[COL_SET]	  = { "SET",	     3, 1, "interleave set (0: none)" },
	[COL_READ]	  = { "READ",	     8, 1, "modeled read time, seconds" },
	[COL_IDEAL]	  = { "IDEAL",	     8, 1, "read time in best pieces, seconds" },
	[COL_EFFICIENCY]  = { "EFFICIENCY", 10, 1, "ideal / modeled read time (machine formats: a ratio)" },
	[COL_LOST]	  = { "LOST",	     8, 1, "read time lost to layout, seconds" },
	[COL_SCORE]	  = { "SCORE",	     5, 1, "0-100, share of read time lost" },
};

static const int default_cols[] = {
	COL_PATH, COL_SIZE, COL_PIECES_BEST, COL_EFFICIENCY, COL_LOST,
};

static int parse_names(const char *p, int *cols, int n, int max,
		       const char **bad, size_t *badlen)
{
	while (*p) {
		size_t len = strcspn(p, ",");
		int c;

		for (c = 0; c < COL_COUNT; c++)
			if (strlen(infos[c].name) == len &&
			    !strncasecmp(infos[c].name, p, len))
				break;
		if (c == COL_COUNT || n == max) {
			*bad = p;
			*badlen = len;
			return c == COL_COUNT ? -1 : -2;
		}
		cols[n++] = c;
		p += len;
		if (*p == ',')
			p++;
	}
	return n;
}

int table_parse_columns(const char *list, int *cols, int max, const char **bad,
			size_t *badlen)
{
	int n = 0;

	*bad = list;
	*badlen = 0;
	/* "+COL,...": the default columns and these (util-linux's -o +COL). */
	if (*list == '+') {
		n = sizeof(default_cols) / sizeof(default_cols[0]);
		memcpy(cols, default_cols, sizeof(default_cols));
		list++;
		if (!*list)
			return -1;
	}
	n = parse_names(list, cols, n, max, bad, badlen);
	return n ? n : -1;
}

void table_list_columns(FILE *out)
{
	int c;

	for (c = 0; c < COL_COUNT; c++)
		fprintf(out, "%12s  %s\n", infos[c].name, infos[c].help);
}

struct ranked {
	double		loss;
	uint32_t	file;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->loss != y->loss)
		return x->loss > y->loss ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

uint32_t *table_worst_files(const struct layout *layout, int lossy_only,
			    uint64_t *n)
{
	struct ranked *r = malloc((layout->nfiles + 1) * sizeof(*r));
	uint32_t *idx = NULL;
	uint64_t i, k = 0;

	*n = 0;
	if (!r)
		return NULL;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		double read = 0, ideal = 0;

		if (!(f->flags & LAYOUT_F_SELECTED))
			continue;
		/* One piece loses nothing: skip the model for most files. */
		if (layout_file_pieces(layout, f) > 1)
			layout_file_times(layout, f, &read, &ideal);
		if (lossy_only && !(read > ideal))
			continue;
		r[k].loss = read - ideal;
		r[k++].file = i;
	}
	qsort(r, k, sizeof(*r), cmp_ranked);
	idx = malloc((k + 1) * sizeof(*idx));
	if (idx) {
		for (i = 0; i < k; i++)
			idx[i] = r[i].file;
		*n = k;
	}
	free(r);
	return idx;
}

/* Who makes a path printable: util_printable, or smartcols as it prints. */
enum escape { ESCAPE_OURS, ESCAPE_SMARTCOLS };

/*
 * One cell's text.  MACHINE (--raw, --pairs, the table's JSON) gives
 * numbers unformatted: bytes, seconds, ratios.
 */

static void cell(char *buf, size_t len, const struct layout *layout,
		 const struct layout_file *f, int col, int machine,
		 enum escape escape)
{
	const struct layout_interleave *il = layout_file_interleave(layout, f);
	char raw_path[4096];
	double read, ideal, eff;

	layout_file_times(layout, f, &read, &ideal);
	eff = read > 0 ? ideal / read : 1;
	switch (col) {
	case COL_INO: snprintf(buf, len, "%u", f->ino); break;
	case COL_PATH:
		layout_path(layout, f->ino, raw_path, sizeof(raw_path));
		/*
		 * The bytes, which smartcols encodes as util-linux does (\x5c,
		 * \x0a, and \x20 in --raw; ours first would be encoded twice);
		 * JSON must be UTF-8: printable, as the report's paths are.
		 */
		if (escape == ESCAPE_SMARTCOLS)
			snprintf(buf, len, "%s", raw_path);
		else
			util_printable(raw_path, buf, len);
		break;
	case COL_TYPE: snprintf(buf, len, "%s", layout_type_name(f->type)); break;
	case COL_SIZE:
		if (machine)
			snprintf(buf, len, "%llu", (unsigned long long)layout_file_size(layout, f));
		else
			util_format_size(layout_file_size(layout, f), buf, len);
		break;
	case COL_BLOCKS: snprintf(buf, len, "%llu", (unsigned long long)layout_file_blocks(layout, f)); break;
	case COL_PIECES: snprintf(buf, len, "%u", layout_file_pieces(layout, f)); break;
	case COL_EXTENTS: snprintf(buf, len, "%u", layout_file_extents(layout, f)); break;
	case COL_BEST: snprintf(buf, len, "%u", layout_file_best(layout, f)); break;
	case COL_PIECES_BEST:
		snprintf(buf, len, "%u/%u", layout_file_pieces(layout, f), layout_file_best(layout, f));
		break;
	case COL_PARTNERS: snprintf(buf, len, "%u", il ? il->partners : 0); break;
	case COL_SET: snprintf(buf, len, "%u", il ? il->set : 0); break;
	case COL_READ:
	case COL_IDEAL:
	case COL_LOST: {
		double t = col == COL_READ ? read : col == COL_IDEAL ? ideal :
			read - ideal;

		if (machine)
			snprintf(buf, len, "%.6f", t);
		else
			util_format_seconds(t, buf, len);
		break;
	}
	case COL_EFFICIENCY:
		snprintf(buf, len, machine ? "%.4f" : "%.1f%%", machine ? eff : eff * 100);
		break;
	case COL_SCORE: snprintf(buf, len, "%.1f", readmodel_score(read, ideal)); break;
	}
}

static struct libscols_table *new_table(const struct report_opts *o,
					const int *cols, int ncols)
{
	struct libscols_table *tb = scols_new_table();
	int c;

	if (!tb)
		return NULL;
	scols_table_enable_raw(tb, o->format == TABLE_RAW);
	scols_table_enable_export(tb, o->format == TABLE_PAIRS);
	/* KEY="value" pairs a shell can eval: PIECES/BEST is PIECES_BEST. */
	scols_table_enable_shellvar(tb, o->format == TABLE_PAIRS);
	scols_table_enable_json(tb, o->format == TABLE_JSON);
	scols_table_set_name(tb, "files");
	scols_table_enable_noheadings(tb, o->noheadings);
	for (c = 0; c < ncols; c++) {
		const struct colinfo *ci = &infos[cols[c]];
		struct libscols_column *cl = scols_table_new_column(tb, ci->name,
			ci->width, ci->number ? SCOLS_FL_RIGHT : 0);

		if (!cl) {
			scols_unref_table(tb);
			return NULL;
		}
		scols_column_set_json_type(cl, ci->number == 1 ? SCOLS_JSON_NUMBER :
					   SCOLS_JSON_STRING);
	}
	return tb;
}

/* The aligned table inside the text report, every line indented. */
static int print_indented(FILE *out, struct libscols_table *tb, int indent)
{
	char *text = NULL, *line, *next;

	if (scols_print_table_to_string(tb, &text) || !text) {
		free(text);
		return -1;
	}
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		next = next ? next + 1 : line + strlen(line);
		fprintf(out, "%*s%.*s", indent, "", (int)(next - line), line);
		if (next[-1] != '\n')
			fputc('\n', out);
	}
	free(text);
	return 0;
}

int table_print_files(FILE *out, const struct layout *layout,
		      const struct report_opts *o, int indent)
{
	int cols[64], ncols, c, machine = o->format != TABLE_ALIGNED, ret = -1;
	enum escape escape = o->format == TABLE_JSON ? ESCAPE_OURS : ESCAPE_SMARTCOLS;
	const char *bad;
	size_t badlen;
	uint64_t n, i, shown;
	/* The summary's list shows only files that lose time; --list all. */
	uint32_t *idx = table_worst_files(layout, !o->list, &n);
	struct libscols_table *tb = NULL;
	char buf[16384];

	if (!idx)
		return -1;
	if (o->columns) {
		ncols = table_parse_columns(o->columns, cols, 64, &bad, &badlen);
	} else {
		ncols = sizeof(default_cols) / sizeof(default_cols[0]);
		memcpy(cols, default_cols, sizeof(default_cols));
	}
	/* --list shows every file unless --top says otherwise. */
	shown = o->top && o->top < n ? o->top : n;
	if (o->list && !o->top_set)
		shown = n;

	tb = ncols > 0 ? new_table(o, cols, ncols) : NULL;
	if (!tb)
		goto out;
	scols_table_set_stream(tb, out);
	for (i = 0; i < shown; i++) {
		struct libscols_line *ln = scols_table_new_line(tb, NULL);

		if (!ln)
			goto out;
		for (c = 0; c < ncols; c++) {
			cell(buf, sizeof(buf), layout, &layout->files[idx[i]],
			     cols[c], machine, escape);
			if (scols_line_set_data(ln, c, buf))
				goto out;
		}
		/*
		 * Unaligned lines need no widths: print them in batches, so
		 * that millions of files do not hold the table in memory.
		 */
		if ((o->format == TABLE_RAW || o->format == TABLE_PAIRS) &&
		    (i + 1) % STREAM_BATCH == 0 && i + 1 < shown) {
			if (scols_print_table(tb))
				goto out;
			scols_table_remove_lines(tb);
			scols_table_enable_noheadings(tb, 1);
		}
	}
	if (indent && o->format == TABLE_ALIGNED)
		ret = print_indented(out, tb, indent);
	else
		ret = scols_print_table(tb) ? -1 : 0;
out:
	scols_unref_table(tb);
	free(idx);
	return ret;
}
