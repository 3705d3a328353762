/*
 * svg.c --- e2frag --svg: the block map (lib/map.h) as a picture, for
 * reports and the README.  The same model e2fragmap draws: cells of 2^k
 * blocks in the worst state of their blocks, at the finest zoom level
 * with at most SVG_MAX_CELLS cells, SVG_COLUMNS to a row.
 *
 * The picture carries its numbers as data-* attributes (blocks, blocks
 * per cell, cells; data-cell and data-n on each run of cells) so that
 * tests and scripts can read it without measuring pixels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>

#include "../lib/map.h"
#include "svg.h"

#define CELL_PX		6
#define MARGIN		10
#define GUTTER_PX	70	/* block numbers left of the rows */
#define HEADER_PX	46
#define LEGEND_COLS	4
#define LEGEND_W	200
#define LEGEND_ROW	18

static const char *const state_fill[MAP_NSTATES] = {
	[MAP_FREE]	  = "#eeeeee",
	[MAP_FIXED]	  = "#44527f",
	[MAP_JOURNAL]	  = "#93a6d8",
	[MAP_UNKNOWN]	  = "#999999",
	[MAP_DIR]	  = "#2a9d9d",
	[MAP_FILE]	  = "#5cb85c",
	[MAP_FRAGMENTED]  = "#f0ad4e",
	[MAP_INTERLEAVED] = "#d9534f",
};
#define MARK_FILE_FILL		"#111111"
#define MARK_PARTNER_FILL	"#b040c0"

/* Text for XML: printable (util_printable), then &, <, > and " escaped. */
static void put_text(FILE *out, const char *s)
{
	char buf[4096];
	const char *p;

	util_printable(s, buf, sizeof(buf));
	for (p = buf; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*p, out);
		}
	}
}

struct picture {
	FILE			*out;
	const struct layout	*layout;
	const struct map	*map;
	unsigned		level;
	uint64_t		ncells, columns, rows;
};

static void cell_xy(const struct picture *p, uint64_t cell, long *x, long *y)
{
	*x = GUTTER_PX + (long)(cell % p->columns) * CELL_PX;
	*y = HEADER_PX + (long)(cell / p->columns) * CELL_PX;
}

/*
 * One rect per run of equal values in a row: VALUES[c] for the cells of
 * the map; runs of SKIP are left out.  CLASS_OF names the class of a value.
 */
static void put_runs(const struct picture *p, const uint8_t *values, int skip,
		     const char *(*class_of)(int value))
{
	uint64_t c = 0, run;

	while (c < p->ncells) {
		long x, y;

		for (run = 1; c + run < p->ncells && (c + run) % p->columns &&
		     values[c + run] == values[c]; run++)
			;
		if (values[c] != skip) {
			cell_xy(p, c, &x, &y);
			fprintf(p->out, "<rect class=\"%s\" x=\"%ld\" y=\"%ld\" width=\"%ld\" "
				"height=\"%d\" data-cell=\"%llu\" data-n=\"%llu\"/>\n",
				class_of(values[c]), x, y, (long)run * CELL_PX, CELL_PX,
				(unsigned long long)c, (unsigned long long)run);
		}
		c += run;
	}
}

static const char *state_class(int state)
{
	static const char *const names[MAP_NSTATES] = {
		"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7",
	};

	return state < MAP_NSTATES ? names[state] : "s0";
}

static const char *mark_class(int mark)
{
	return mark == MAP_MARK_FILE ? "hl" : "hp";
}

static void put_style(FILE *out)
{
	int s;

	fputs("<style>\n", out);
	for (s = 0; s < MAP_NSTATES; s++)
		fprintf(out, ".%s{fill:%s}\n", state_class(s), state_fill[s]);
	fprintf(out, ".hl{fill:%s}\n.hp{fill:%s}\n", MARK_FILE_FILL, MARK_PARTNER_FILL);
	fputs(".group{stroke:#000;stroke-width:1.5}\n"
	      "text{font-family:sans-serif;font-size:12px;fill:#222}\n"
	      ".num{font-family:monospace;font-size:9px;text-anchor:end;fill:#666}\n"
	      "</style>\n", out);
}

/*
 * Every how many groups a boundary is drawn: every one while a group spans
 * at least GROUP_MIN_CELLS cells; else the lines would cover the map, so
 * every 2nd, 4th ... group, as few as keep that spacing.
 */
#define GROUP_MIN_CELLS	16

static dgrp_t group_step(const struct picture *p)
{
	blk64_t bpg = p->layout->fs->super->s_blocks_per_group;
	dgrp_t step = 1;

	while ((blk64_t)step * bpg < ((blk64_t)GROUP_MIN_CELLS << p->level) &&
	       step < p->layout->fs->group_desc_count)
		step *= 2;
	return step;
}

/* A line at the left edge of the cell holding a group's first block. */
static void put_groups(const struct picture *p)
{
	ext2_filsys fs = p->layout->fs;
	dgrp_t g, step = group_step(p);

	fputs("<g class=\"groups\">\n", p->out);
	for (g = step; g < fs->group_desc_count; g += step) {
		blk64_t first = ext2fs_group_first_block2(fs, g);
		long x, y;

		cell_xy(p, first >> p->level, &x, &y);
		fprintf(p->out, "<line class=\"group\" x1=\"%ld\" y1=\"%ld\" x2=\"%ld\" "
			"y2=\"%ld\" data-group=\"%u\"><title>group %u from block %llu</title></line>\n",
			x, y - 1, x, y + CELL_PX + 1, g, g, (unsigned long long)first);
	}
	fputs("</g>\n", p->out);
}

static void put_row_numbers(const struct picture *p)
{
	uint64_t r, every = p->rows > 32 ? 8 : 4;

	for (r = 0; r < p->rows; r += every)
		fprintf(p->out, "<text class=\"num\" x=\"%d\" y=\"%ld\">%llu</text>\n",
			GUTTER_PX - 4, HEADER_PX + (long)r * CELL_PX + CELL_PX,
			(unsigned long long)((r * p->columns) << p->level));
}

static void legend_entry(FILE *out, int i, long y0, const char *cls,
			 const char *label)
{
	long x = GUTTER_PX + (i % LEGEND_COLS) * LEGEND_W;
	long y = y0 + (i / LEGEND_COLS) * LEGEND_ROW;

	fprintf(out, "<rect class=\"%s\" x=\"%ld\" y=\"%ld\" width=\"10\" height=\"10\"/>"
		"<text x=\"%ld\" y=\"%ld\">", cls, x, y, x + 14, y + 10);
	put_text(out, label);
	fputs("</text>\n", out);
}

/*
 * The legend's entries: the states, then the highlighted file (named as
 * it was asked for: a summary's scan names only some files) and its
 * partners.
 */
static int put_legend(const struct picture *p, long y0, int64_t hl_file,
		      const char *hl_name)
{
	char what[64];
	int s, i = 0;

	fputs("<g class=\"legend\">\n", p->out);
	for (s = 0; s < MAP_NSTATES; s++)
		legend_entry(p->out, i++, y0, state_class(s), map_state_name(s));
	if (hl_file >= 0) {
		const struct layout_file *f = &p->layout->files[hl_file];
		const struct layout_interleave *il = layout_file_interleave(p->layout, f);
		uint32_t partners = il ? il->partners : 0;

		legend_entry(p->out, i++, y0, "hl", hl_name);
		snprintf(what, sizeof(what), "%u file%s interleaved with it",
			 partners, partners == 1 ? "" : "s");
		legend_entry(p->out, i++, y0, "hp", what);
	}
	fputs("</g>\n", p->out);
	return i;
}

static int legend_entries(int64_t hl_file)
{
	return MAP_NSTATES + (hl_file >= 0 ? 2 : 0);
}

static int write_picture(struct picture *p, const char *device,
			 const struct map_highlight *hl, const char *hl_name)
{
	const struct layout *layout = p->layout;
	ext2_filsys fs = layout->fs;
	int64_t hl_file = hl ? (int64_t)map_highlight_file(hl) : -1;
	uint8_t *cells = malloc(p->ncells + 1);
	long width, height, legend_y;
	int legend_rows = (legend_entries(hl_file) + LEGEND_COLS - 1) / LEGEND_COLS;
	blk64_t bpc = (blk64_t)1 << p->level;

	if (!cells)
		return ENOMEM;
	legend_y = HEADER_PX + (long)p->rows * CELL_PX + 16;
	width = GUTTER_PX + (long)p->columns * CELL_PX + MARGIN;
	if (width < GUTTER_PX + LEGEND_COLS * LEGEND_W)
		width = GUTTER_PX + LEGEND_COLS * LEGEND_W;
	height = legend_y + legend_rows * LEGEND_ROW + MARGIN;

	fprintf(p->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
		"viewBox=\"0 0 %ld %ld\" data-blocks=\"%llu\" data-blocks-per-cell=\"%llu\" "
		"data-cells=\"%llu\" data-columns=\"%llu\" data-groups=\"%u\" "
		"data-group-step=\"%u\">\n",
		width, height, width, height,
		(unsigned long long)map_blocks(p->map), (unsigned long long)bpc,
		(unsigned long long)p->ncells, (unsigned long long)p->columns,
		fs->group_desc_count, group_step(p));
	fputs("<title>block map of ", p->out);
	put_text(p->out, device);
	fputs("</title>\n", p->out);
	put_style(p->out);
	fputs("<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", p->out);
	fprintf(p->out, "<text x=\"%d\" y=\"18\" font-weight=\"bold\">", GUTTER_PX);
	put_text(p->out, device);
	fprintf(p->out, "</text>\n<text x=\"%d\" y=\"34\">%s, %llu blocks of %u bytes, "
		"%llu block%s per cell, %u block group%s",
		GUTTER_PX, fsopen_fs_type(fs), (unsigned long long)map_blocks(p->map),
		fs->blocksize, (unsigned long long)bpc, bpc == 1 ? "" : "s",
		fs->group_desc_count, fs->group_desc_count == 1 ? "" : "s");
	if (group_step(p) > 1)
		fprintf(p->out, " (a line every %u)", group_step(p));
	fprintf(p->out, ", score %.0f</text>\n", layout->summary.score);

	map_cell_states(p->map, p->level, 0, p->ncells, cells);
	fputs("<g class=\"cells\">\n", p->out);
	put_runs(p, cells, -1, state_class);
	fputs("</g>\n", p->out);
	if (hl) {
		map_highlight_cells(hl, p->level, 0, p->ncells, cells);
		fputs("<g class=\"highlight\">\n", p->out);
		put_runs(p, cells, MAP_MARK_NONE, mark_class);
		fputs("</g>\n", p->out);
	}
	put_groups(p);
	put_row_numbers(p);
	put_legend(p, legend_y, hl_file, hl_name);
	fputs("</svg>\n", p->out);
	free(cells);
	return 0;
}

/* The file index of PATH in LAYOUT, or -1 after a message. */
static int64_t find_highlight(const struct layout *layout, const char *path,
			      const char *device, const char *prog)
{
	ext2_ino_t ino;
	int64_t fi;
	errcode_t ret;

	ret = ext2fs_namei(layout->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino);
	if (ret) {
		com_err(prog, ret == EXT2_ET_FILE_NOT_FOUND ? ENOENT : ret,
			"while looking up %s in %s", path, device);
		return -1;
	}
	fi = layout_find(layout, ino);
	if (fi < 0)
		fprintf(stderr, "%s: %s owns no blocks in %s: nothing to highlight\n",
			prog, path, device);
	return fi;
}

int svg_report(const struct layout *layout, const char *device,
	       const char *path, const char *highlight, const char *prog)
{
	struct picture p;
	struct map *map = NULL;
	struct map_highlight *hl = NULL;
	int64_t fi = -1;
	errcode_t ret;
	int status = -1, to_stdout = !strcmp(path, "-");

	memset(&p, 0, sizeof(p));
	if (highlight) {
		fi = find_highlight(layout, highlight, device, prog);
		if (fi < 0)
			return -1;
	}
	ret = map_build(layout, &map);
	if (!ret && fi >= 0)
		ret = map_highlight_new(map, fi, &hl);
	if (ret) {
		com_err(prog, ret, "while building the map of %s", device);
		goto out;
	}
	p.out = to_stdout ? stdout : fopen(path, "w");
	if (!p.out) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	p.layout = layout;
	p.map = map;
	p.level = map_level_fit(map, SVG_MAX_CELLS);
	p.ncells = map_cells(map, p.level);
	p.columns = p.ncells < SVG_COLUMNS ? p.ncells : SVG_COLUMNS;
	p.rows = (p.ncells + p.columns - 1) / p.columns;
	ret = write_picture(&p, device, hl, highlight);
	if (ret)
		com_err(prog, ret, "while writing %s", path);
	else if (fflush(p.out) || ferror(p.out))
		fprintf(stderr, "%s: error writing %s: %s\n", prog, path, strerror(errno));
	else
		status = 0;
	if (!to_stdout && fclose(p.out) && !status) {
		fprintf(stderr, "%s: error writing %s: %s\n", prog, path, strerror(errno));
		status = -1;
	}
out:
	map_highlight_free(hl);
	map_free(map);
	return status;
}
