/*
 * table.c --- the per-file table.  Columns are data (util-linux style):
 * one description serves the aligned table, --raw output and -o.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"

enum col_id {
	COL_INO, COL_PATH, COL_TYPE, COL_SIZE, COL_BLOCKS, COL_PIECES,
	COL_EXTENTS, COL_BEST, COL_PIECES_BEST, COL_PARTNERS, COL_SET,
	COL_READ, COL_IDEAL, COL_EFFICIENCY, COL_LOST, COL_SCORE, COL_COUNT
};

struct colinfo {
	const char	*name;
	int		width;		/* minimum, for the aligned table */
	int		right;		/* right-aligned (numbers) */
	const char	*help;
};

static const struct colinfo infos[COL_COUNT] = {
	[COL_INO]	  = { "INO",	     7, 1, "inode number" },
	[COL_PATH]	  = { "PATH",	    24, 0, "path inside the filesystem" },
	[COL_TYPE]	  = { "TYPE",	     4, 0, "file, dir, symlink or other" },
	[COL_SIZE]	  = { "SIZE",	     8, 1, "size (raw: bytes)" },
	[COL_BLOCKS]	  = { "BLOCKS",	     7, 1, "blocks owned, mapping blocks included" },
	[COL_PIECES]	  = { "PIECES",	     6, 1, "physically contiguous runs" },
	[COL_EXTENTS]	  = { "EXTENTS",     7, 1, "logically and physically contiguous runs" },
	[COL_BEST]	  = { "BEST",	     4, 1, "fewest pieces possible here" },
	[COL_PIECES_BEST] = { "PIECES/BEST", 11, 1, "pieces against best" },
	[COL_PARTNERS]	  = { "INTERLEAVED", 11, 1, "files it interleaves with" },
	[COL_SET]	  = { "SET",	     3, 1, "interleave set (0: none)" },
	[COL_READ]	  = { "READ",	     8, 1, "modeled read time (raw: seconds)" },
	[COL_IDEAL]	  = { "IDEAL",	     8, 1, "read time in best pieces (raw: seconds)" },
	[COL_EFFICIENCY]  = { "EFFICIENCY", 10, 1, "ideal / modeled read time" },
	[COL_LOST]	  = { "LOST",	     8, 1, "read time lost to layout (raw: seconds)" },
	[COL_SCORE]	  = { "SCORE",	     5, 1, "0-100, share of read time lost" },
};

static const int default_cols[] = {
	COL_PATH, COL_SIZE, COL_PIECES_BEST, COL_EFFICIENCY, COL_LOST,
};

int table_parse_columns(const char *list, int *cols, int max, const char **bad,
			size_t *badlen)
{
	const char *p = list;
	int n = 0;

	*bad = list;
	*badlen = 0;
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
		if (f->pieces > 1)
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

/* --raw separates columns by spaces: a space in a name becomes \x20. */
static void escape_spaces(char *buf, size_t len)
{
	char tmp[16384];
	size_t i, pos = 0;

	for (i = 0; buf[i] && pos + 5 < sizeof(tmp); i++) {
		if (buf[i] == ' ') {
			memcpy(tmp + pos, "\\x20", 4);
			pos += 4;
		} else {
			tmp[pos++] = buf[i];
		}
	}
	tmp[pos] = 0;
	snprintf(buf, len, "%s", tmp);
}

static void cell(char *buf, size_t len, const struct layout *layout,
		 const struct layout_file *f, int col, int raw)
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
		util_printable(raw_path, buf, len);
		if (raw)
			escape_spaces(buf, len);
		break;
	case COL_TYPE: snprintf(buf, len, "%s", layout_type_name(f->type)); break;
	case COL_SIZE:
		if (raw)
			snprintf(buf, len, "%llu", (unsigned long long)f->size);
		else
			util_format_size(f->size, buf, len);
		break;
	case COL_BLOCKS: snprintf(buf, len, "%llu", (unsigned long long)f->blocks); break;
	case COL_PIECES: snprintf(buf, len, "%u", f->pieces); break;
	case COL_EXTENTS: snprintf(buf, len, "%u", f->extents); break;
	case COL_BEST: snprintf(buf, len, "%u", layout_file_best(layout, f)); break;
	case COL_PIECES_BEST:
		snprintf(buf, len, "%u/%u", f->pieces, layout_file_best(layout, f));
		break;
	case COL_PARTNERS: snprintf(buf, len, "%u", il ? il->partners : 0); break;
	case COL_SET: snprintf(buf, len, "%u", il ? il->set : 0); break;
	case COL_READ:
		if (raw)
			snprintf(buf, len, "%.6f", read);
		else
			util_format_seconds(read, buf, len);
		break;
	case COL_IDEAL:
		if (raw)
			snprintf(buf, len, "%.6f", ideal);
		else
			util_format_seconds(ideal, buf, len);
		break;
	case COL_EFFICIENCY:
		snprintf(buf, len, raw ? "%.4f" : "%.1f%%", raw ? eff : eff * 100);
		break;
	case COL_LOST:
		if (raw)
			snprintf(buf, len, "%.6f", read - ideal);
		else
			util_format_seconds(read - ideal, buf, len);
		break;
	case COL_SCORE: snprintf(buf, len, "%.1f", readmodel_score(read, ideal)); break;
	}
}

void table_print_files(FILE *out, const struct layout *layout,
		       const struct report_opts *o, int indent)
{
	int cols[64], ncols, c, width[64];
	const char *bad;
	size_t badlen;
	uint64_t n, i, shown;
	/* The summary's list shows only files that lose time; --raw shows all. */
	uint32_t *idx = table_worst_files(layout, !o->raw, &n);
	char buf[16384];

	if (!idx)
		return;
	if (o->columns) {
		ncols = table_parse_columns(o->columns, cols, 64, &bad, &badlen);
	} else {
		ncols = sizeof(default_cols) / sizeof(default_cols[0]);
		memcpy(cols, default_cols, sizeof(default_cols));
	}
	/* --raw lists every file unless --top says otherwise. */
	shown = o->top && o->top < n ? o->top : n;
	if (o->raw && !o->top_set)
		shown = n;

	/* Widths from the header and the rows shown. */
	for (c = 0; c < ncols; c++)
		width[c] = o->raw ? 0 : (int)strlen(infos[cols[c]].name);
	if (!o->raw)
		for (i = 0; i < shown; i++)
			for (c = 0; c < ncols; c++) {
				int w;

				cell(buf, sizeof(buf), layout,
				     &layout->files[idx[i]], cols[c], 0);
				w = strlen(buf);
				if (w > width[c])
					width[c] = w;
			}

	fprintf(out, "%*s", indent, "");
	for (c = 0; c < ncols; c++) {
		const char *sep = c + 1 < ncols ? " " : "";
		int w = c + 1 < ncols || infos[cols[c]].right ? width[c] : 0;

		fprintf(out, infos[cols[c]].right ? "%*s%s" : "%-*s%s", w,
			infos[cols[c]].name, o->raw ? sep : (*sep ? "  " : ""));
	}
	fputc('\n', out);
	for (i = 0; i < shown; i++) {
		fprintf(out, "%*s", indent, "");
		for (c = 0; c < ncols; c++) {
			const char *sep = c + 1 < ncols ? (o->raw ? " " : "  ") : "";
			int w = c + 1 < ncols || infos[cols[c]].right ? width[c] : 0;

			cell(buf, sizeof(buf), layout, &layout->files[idx[i]],
			     cols[c], o->raw);
			fprintf(out, infos[cols[c]].right ? "%*s%s" : "%-*s%s",
				w, buf, sep);
		}
		fputc('\n', out);
	}
	free(idx);
}
