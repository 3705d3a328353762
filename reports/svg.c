/*
 * svg.c --- e2frag --svg and e2defrag --svg-before/--svg-after: the block
 * map (lib/map.h) as a picture, for reports and the README.  The same
 * model e2fragmap draws: cells of 2^k blocks in the worst state of their
 * blocks, at the finest zoom level with at most SVG_MAX_CELLS cells,
 * SVG_COLUMNS to a row.  Inside a run of cells of one state, a thin line
 * marks where one file's blocks end and another's begin.  The interleave
 * sets' hues and their key are svg_sets.c's; two pictures side by side,
 * svg_compare.c's.
 *
 * The picture carries its numbers as data-* attributes (blocks, blocks
 * per cell, cells; data-cell and data-n on each run of cells, data-cell
 * on each boundary) so that tests and scripts can read it without
 * measuring pixels.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>

#include "color.h"
#include "svg_int.h"

#define SCALE_ROW	30	/* the scale bar under the legend */
#define SCALE_TARGET_PX	120	/* about how long the scale bar is */

/* The states' shapes, over their colour: colour is never all there is. */
static const char *const state_shape[MAP_NSTATES] = {
	[MAP_JOURNAL]	  = "<path d=\"M0 0L6 6M6 0L0 6\" stroke=\"#fff\" stroke-width=\"0.7\"/>",
	[MAP_UNKNOWN]	  = "<path d=\"M1 0V6M4 0V6\" stroke=\"#000\" stroke-width=\"0.8\"/>",
	[MAP_DIR]	  = "<path d=\"M0 1.5H6M0 4.5H6\" stroke=\"#fff\" stroke-width=\"1\"/>",
	[MAP_FRAGMENTED]  = "<path d=\"M0 6L6 0M-1 1L1 -1M5 7L7 5\" stroke=\"#000\" stroke-width=\"1\"/>",
	[MAP_INTERLEAVED] = "<path d=\"M0 0H3V3H0zM3 3H6V6H3z\" fill=\"#000\" fill-opacity=\"0.35\"/>",
};
#define MARK_FILE_FILL		"#000000"
#define MARK_PARTNER_FILL	"#cc79a7"	/* Okabe-Ito reddish purple */

void svg_put_text(FILE *out, const char *s)
{
	char buf[4096];

	util_printable(s, buf, sizeof(buf));
	svg_put_printable(out, buf);
}

void svg_put_printable(FILE *out, const char *s)
{
	const char *p;

	for (p = s; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*p, out);
		}
	}
}

static void cell_xy(const struct picture *p, uint64_t cell, long *x, long *y)
{
	*x = GUTTER_PX + (long)(cell % p->columns) * CELL_PX;
	*y = HEADER_PX + (long)(cell / p->columns) * CELL_PX;
}

/* Blocks in CELL: 2^level, fewer in the last. */
static blk64_t cell_blocks(const struct picture *p, uint64_t cell)
{
	blk64_t first = (blk64_t)cell << p->level, n = (blk64_t)1 << p->level;

	return first + n > map_blocks(p->map) ? map_blocks(p->map) - first : n;
}

/* A set hue's class: k0 .. k5, kn for the neutral one. */
static const char *hue_class(unsigned hue, char *buf, size_t len)
{
	if (hue >= SVG_NEUTRAL)
		snprintf(buf, len, "kn");
	else
		snprintf(buf, len, "k%u", hue);
	return buf;
}

static const char *look_class(const struct picture *p, uint32_t look, char *buf,
			      size_t len)
{
	char hue[8];

	(void)p;
	if (look < LOOK_SET)
		snprintf(buf, len, "s%u", look);
	else
		snprintf(buf, len, "s%d %s", MAP_INTERLEAVED,
			 hue_class(look - LOOK_SET, hue, sizeof(hue)));
	return buf;
}

const char *svg_look_rgb(uint32_t look)
{
	if (look >= LOOK_SET)
		return svg_set_rgb[look - LOOK_SET <= SVG_NEUTRAL ? look - LOOK_SET : SVG_NEUTRAL];
	return color_hues[color_state_hue((int)look)].rgb;
}

/*
 * One rect per run of equal values in a row: VALUES[c] for the cells of
 * the map; runs of SKIP are left out.  CLASS_OF names the class of a
 * value; the runs of interleaved cells say their set (data-set).
 */
static void put_runs(const struct picture *p, const uint32_t *values, uint32_t skip,
		     const char *(*class_of)(const struct picture *, uint32_t,
					     char *, size_t))
{
	uint64_t c = 0, run;
	char cls[64];

	while (c < p->ncells) {
		long x, y;

		for (run = 1; c + run < p->ncells && (c + run) % p->columns &&
		     values[c + run] == values[c] &&
		     (!p->set_of || p->set_of[c + run] == p->set_of[c]); run++)
			;
		if (values[c] != skip) {
			cell_xy(p, c, &x, &y);
			fprintf(p->out, "<rect class=\"%s\" x=\"%ld\" y=\"%ld\" width=\"%ld\" "
				"height=\"%d\" data-cell=\"%llu\" data-n=\"%llu\"",
				class_of(p, values[c], cls, sizeof(cls)), x, y,
				(long)run * CELL_PX, CELL_PX,
				(unsigned long long)c, (unsigned long long)run);
			if (p->set_of && p->set_of[c])
				fprintf(p->out, " data-set=\"%u\"><title>interleave set %u</title></rect>\n",
					p->set_of[c], p->set_of[c]);
			else
				fputs("/>\n", p->out);
		}
		c += run;
	}
}

static const char *shape_class(const struct picture *p, uint32_t state, char *buf,
			       size_t len)
{
	(void)p;
	snprintf(buf, len, "p%u", state);
	return buf;
}

static const char *mark_class(const struct picture *p, uint32_t mark, char *buf,
			      size_t len)
{
	(void)p;
	snprintf(buf, len, "%s", mark == MAP_MARK_FILE ? "hl" : "hp");
	return buf;
}

void svg_put_style(FILE *out)
{
	int s;
	unsigned k;
	char cls[8];

	fputs("<defs>\n", out);
	for (s = 0; s < MAP_NSTATES; s++)
		if (state_shape[s])
			fprintf(out, "<pattern id=\"shape%d\" patternUnits=\"userSpaceOnUse\" "
				"x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\">%s</pattern>\n",
				s, GUTTER_PX, HEADER_PX, CELL_PX, CELL_PX, state_shape[s]);
	fputs("</defs>\n<style>\n", out);
	for (s = 0; s < MAP_NSTATES; s++) {
		fprintf(out, ".s%d{fill:%s}\n", s, color_hues[color_state_hue(s)].rgb);
		if (state_shape[s])
			fprintf(out, ".p%d{fill:url(#shape%d)}\n", s, s);
	}
	for (k = 0; k <= SVG_NEUTRAL; k++)
		fprintf(out, ".%s{fill:%s}\n", hue_class(k, cls, sizeof(cls)), svg_set_rgb[k]);
	fprintf(out, ".hl{fill:%s}\n.hp{fill:%s;fill-opacity:0.6}\n", MARK_FILE_FILL,
		MARK_PARTNER_FILL);
	/* File boundaries: white on dark fills, black on light ones. */
	fputs(".fbw{stroke:#fff;stroke-width:1}\n.fbk{stroke:#000;stroke-width:1}\n", out);
	fputs(".group{stroke:#000;stroke-width:1.5}\n"
	      ".scale{fill:#000}\n"
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

/* A swatch of CLS (and SHAPE's pattern over it, when >= 0), then LABEL. */
static void legend_entry(FILE *out, int i, long y0, const char *cls, int shape,
			 const char *what, const char *label)
{
	long x = GUTTER_PX + (i % LEGEND_COLS) * LEGEND_W;
	long y = y0 + (i / LEGEND_COLS) * LEGEND_ROW;

	fprintf(out, "<g data-legend=\"%s\"><rect class=\"%s\" x=\"%ld\" y=\"%ld\" "
		"width=\"12\" height=\"12\"/>", what, cls, x, y - 1);
	if (shape >= 0)
		fprintf(out, "<rect class=\"p%d\" x=\"%ld\" y=\"%ld\" width=\"12\" height=\"12\"/>",
			shape, x, y - 1);
	fprintf(out, "<text x=\"%ld\" y=\"%ld\">", x + 16, y + 10);
	svg_put_text(out, label);
	fputs("</text></g>\n", out);
}

/*
 * The legend's entries: the states the picture has (PRESENT), then the
 * highlighted file (named as it was asked for: a summary's scan names
 * only some files) and its partners.  Interleaved cells are in their
 * set's hue, which the key below the legend gives.  Returns the entries,
 * or counts them when OUT is NULL.
 */
static int put_legend(const struct picture *p, FILE *out, long y0,
		      const int present[MAP_NSTATES], int64_t hl_file,
		      const char *hl_name)
{
	char what[96], cls[16];
	int s, i = 0;

	if (out)
		fputs("<g class=\"legend\">\n", out);
	for (s = 0; s < MAP_NSTATES; s++) {
		if (!present[s])
			continue;
		if (out && s == MAP_INTERLEAVED && p->layout->nsets) {
			snprintf(cls, sizeof(cls), "s%d %s", s, p->nkeyed ? "k0" : "kn");
			legend_entry(out, i, y0, cls, s, map_state_name(s),
				     "interleaved (its set's hue)");
		} else if (out) {
			snprintf(cls, sizeof(cls), "s%d", s);
			legend_entry(out, i, y0, cls, state_shape[s] ? s : -1,
				     map_state_name(s), map_state_name(s));
		}
		i++;
	}
	if (hl_file >= 0) {
		const struct layout_file *f = &p->layout->files[hl_file];
		const struct layout_interleave *il = layout_file_interleave(p->layout, f);
		uint32_t partners = il ? il->partners : 0;

		if (out) {
			legend_entry(out, i, y0, "hl", -1, "file", hl_name);
			snprintf(what, sizeof(what), "%u file%s interleaved with it",
				 partners, partners == 1 ? "" : "s");
			legend_entry(out, i + 1, y0, "hp", -1, "partners", what);
		}
		i += 2;
	}
	if (out)
		fputs("</g>\n", out);
	return i;
}

/*
 * A bar of a round number of MiB (1, 2 or 5 times a power of ten), about
 * SCALE_TARGET_PX long: one cell is CELL_PX pixels.
 */
static void put_scale(const struct picture *p, long y)
{
	double mib_per_px = (double)((blk64_t)1 << p->level) *
		p->layout->fs->blocksize / (1024.0 * 1024.0) / CELL_PX;
	double want = SCALE_TARGET_PX * mib_per_px, mib = 1e-6, decade;
	static const double steps[] = { 1, 2, 5 };
	int i;

	for (decade = 1e-6; decade < 1e12; decade *= 10)
		for (i = 0; i < 3; i++)
			if (steps[i] * decade <= want)
				mib = steps[i] * decade;
	fprintf(p->out, "<g class=\"scalebar\" data-mib=\"%g\" data-mib-per-px=\"%.9g\">"
		"<rect class=\"scale\" x=\"%d\" y=\"%ld\" width=\"%.3f\" height=\"4\"/>"
		"<text x=\"%.3f\" y=\"%ld\">%g MiB (%g MiB a cell)</text></g>\n",
		mib, mib_per_px, GUTTER_PX, y, mib / mib_per_px,
		GUTTER_PX + mib / mib_per_px + 8, y + 6, mib, mib_per_px * CELL_PX);
}

/* Whether a fill is light enough for a black line over it (sRGB luminance). */
static int rgb_is_light(const char *rgb)
{
	unsigned r = 0, g = 0, b = 0;

	if (sscanf(rgb, "#%2x%2x%2x", &r, &g, &b) != 3)
		return 1;
	return 0.2126 * r + 0.7152 * g + 0.0722 * b >= 128;
}

/*
 * File boundaries: between two neighbouring cells of one state that files
 * own (directories, files, fragmented, interleaved), where the file that
 * owns the left cell's last owned block is not the one owning the right
 * cell's first, a line on the right cell's left edge.  Cells of different
 * states differ already; free space and metadata have no files.
 */
static int put_boundaries(const struct picture *p, const uint8_t *cells)
{
	ext2_ino_t *first = malloc(p->ncells * sizeof(*first));
	ext2_ino_t *last = malloc(p->ncells * sizeof(*last));
	uint64_t c;
	int ret;

	if (!first || !last) {
		free(first);
		free(last);
		return ENOMEM;
	}
	ret = map_cell_owner_ends(p->map, p->level, 0, p->ncells, first, last);
	if (ret)
		goto out;
	fputs("<g class=\"boundaries\">\n", p->out);
	for (c = 1; c < p->ncells; c++) {
		long x, y;

		if (cells[c] != cells[c - 1] || cells[c] < MAP_DIR ||
		    cells[c] > MAP_INTERLEAVED || !last[c - 1] || !first[c] ||
		    last[c - 1] == first[c])
			continue;
		cell_xy(p, c, &x, &y);
		fprintf(p->out, "<line class=\"%s\" x1=\"%ld\" y1=\"%ld\" x2=\"%ld\" "
			"y2=\"%ld\" data-cell=\"%llu\"/>\n",
			rgb_is_light(svg_look_rgb(p->looks[c])) ? "fbk" : "fbw",
			x, y, x, y + CELL_PX, (unsigned long long)c);
	}
	fprintf(p->out, "</g>\n");
out:
	free(first);
	free(last);
	return ret;
}

/* The highlight: partners' cells whole, the file's own in the share of them it fills. */
static int put_highlight(const struct picture *p, const struct map_highlight *hl)
{
	uint8_t *marks = malloc(p->ncells + 1);
	uint32_t *partner = malloc((p->ncells + 1) * sizeof(*partner));
	blk64_t *mine = malloc((p->ncells + 1) * sizeof(*mine));
	uint64_t c;

	if (!marks || !partner || !mine) {
		free(marks);
		free(partner);
		free(mine);
		return ENOMEM;
	}
	map_highlight_cells(hl, p->level, 0, p->ncells, marks);
	map_highlight_file_blocks(hl, p->level, 0, p->ncells, mine);
	for (c = 0; c < p->ncells; c++)
		partner[c] = marks[c] == MAP_MARK_PARTNER ? MAP_MARK_PARTNER : MAP_MARK_NONE;
	fputs("<g class=\"highlight\">\n", p->out);
	{
		struct picture q = *p;

		q.set_of = NULL;
		put_runs(&q, partner, MAP_MARK_NONE, mark_class);
	}
	for (c = 0; c < p->ncells; c++) {
		blk64_t all = cell_blocks(p, c);
		double h;
		long x, y;

		if (!mine[c])
			continue;
		/* At least a pixel high, whole only when the file fills the cell. */
		h = (double)CELL_PX * mine[c] / all;
		if (h < 1)
			h = 1;
		if (mine[c] < all && h > CELL_PX - 1)
			h = CELL_PX - 1;
		cell_xy(p, c, &x, &y);
		fprintf(p->out, "<rect class=\"hl\" x=\"%ld\" y=\"%.2f\" width=\"%d\" "
			"height=\"%.2f\" data-cell=\"%llu\" data-n=\"1\" data-blocks=\"%llu\"/>\n",
			x, y + CELL_PX - h, CELL_PX, h, (unsigned long long)c,
			(unsigned long long)mine[c]);
	}
	fputs("</g>\n", p->out);
	free(marks);
	free(partner);
	free(mine);
	return 0;
}

void svg_geometry(struct picture *p, const struct layout *layout, const struct map *map)
{
	p->layout = layout;
	p->map = map;
	p->level = map_level_fit(map, SVG_MAX_CELLS);
	p->ncells = map_cells(map, p->level);
	p->columns = p->ncells < SVG_COLUMNS ? p->ncells : SVG_COLUMNS;
	p->rows = (p->ncells + p->columns - 1) / p->columns;
}

/* The picture's numbers, as attributes of its <svg> or its <g>. */
static void put_data(const struct picture *p)
{
	ext2_filsys fs = p->layout->fs;

	fprintf(p->out, "data-blocks=\"%llu\" data-blocks-per-cell=\"%llu\" "
		"data-cells=\"%llu\" data-columns=\"%llu\" data-groups=\"%u\" "
		"data-group-step=\"%u\" data-block-size=\"%u\" data-cell-px=\"%d\" "
		"data-sets=\"%llu\" data-keyed=\"%u\"",
		(unsigned long long)map_blocks(p->map), 1ULL << p->level,
		(unsigned long long)p->ncells, (unsigned long long)p->columns,
		fs->group_desc_count, group_step(p), fs->blocksize, CELL_PX,
		(unsigned long long)p->layout->nsets, p->nkeyed);
}

int svg_draw(struct picture *p, const char *device, const struct map_highlight *hl,
	     const char *hl_name, const char *caption)
{
	const struct layout *layout = p->layout;
	ext2_filsys fs = layout->fs;
	int64_t hl_file = hl ? (int64_t)map_highlight_file(hl) : -1;
	uint8_t *cells = malloc(p->ncells + 1);
	uint32_t *shapes = NULL;
	long legend_y, key_y;
	int legend_rows, key_rows, present[MAP_NSTATES] = { 0 };
	blk64_t bpc = (blk64_t)1 << p->level;
	uint64_t c;
	errcode_t ret = 0;

	p->looks = malloc((p->ncells + 1) * sizeof(*p->looks));
	shapes = malloc((p->ncells + 1) * sizeof(*shapes));
	if (!cells || !p->looks || !shapes) {
		ret = ENOMEM;
		goto out;
	}
	map_cell_states(p->map, p->level, 0, p->ncells, cells);
	for (c = 0; c < p->ncells; c++) {
		p->looks[c] = cells[c];
		shapes[c] = cells[c] < MAP_NSTATES && state_shape[cells[c]] ? cells[c] :
			MAP_NSTATES;
		if (cells[c] < MAP_NSTATES)
			present[cells[c]] = 1;
	}
	ret = svg_find_sets(p);
	if (ret)
		goto out;

	legend_rows = (put_legend(p, NULL, 0, present, hl_file, hl_name) +
		       LEGEND_COLS - 1) / LEGEND_COLS;
	legend_y = HEADER_PX + (long)p->rows * CELL_PX + 16;
	key_y = legend_y + legend_rows * LEGEND_ROW + 6;
	key_rows = svg_put_key(p, NULL, key_y);
	p->width = GUTTER_PX + (long)p->columns * CELL_PX + MARGIN;
	if (p->width < GUTTER_PX + LEGEND_COLS * LEGEND_W)
		p->width = GUTTER_PX + LEGEND_COLS * LEGEND_W;
	p->height = key_y + key_rows * LEGEND_ROW + SCALE_ROW + MARGIN;

	if (p->id) {
		fprintf(p->out, "<g data-picture=\"%s\" transform=\"translate(%ld,%ld)\" "
			"data-width=\"%ld\" data-height=\"%ld\" ", p->id, p->x, p->y,
			p->width, p->height);
		put_data(p);
		fputs(">\n", p->out);
	} else {
		fprintf(p->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
			"viewBox=\"0 0 %ld %ld\" ", p->width, p->height, p->width, p->height);
		put_data(p);
		fputs(">\n", p->out);
	}
	fputs("<title>block map of ", p->out);
	svg_put_text(p->out, device);
	if (caption) {
		fputs(", ", p->out);
		svg_put_text(p->out, caption);
	}
	fputs("</title>\n", p->out);
	if (!p->id)
		svg_put_style(p->out);
	fprintf(p->out, "<rect x=\"0\" y=\"0\" width=\"%ld\" height=\"%ld\" fill=\"#fff\"/>\n",
		p->width, p->height);
	fprintf(p->out, "<text class=\"caption\" x=\"%d\" y=\"18\" font-weight=\"bold\">",
		GUTTER_PX);
	svg_put_text(p->out, device);
	if (caption) {
		fputs(": ", p->out);
		svg_put_text(p->out, caption);
	}
	fprintf(p->out, "</text>\n<text x=\"%d\" y=\"34\">%s, %llu blocks of %u bytes, "
		"%llu block%s per cell, %u block group%s",
		GUTTER_PX, fsopen_fs_type(fs), (unsigned long long)map_blocks(p->map),
		fs->blocksize, (unsigned long long)bpc, bpc == 1 ? "" : "s",
		fs->group_desc_count, fs->group_desc_count == 1 ? "" : "s");
	if (group_step(p) > 1)
		fprintf(p->out, " (a line every %u)", group_step(p));
	fprintf(p->out, ", score %.0f</text>\n", layout->summary.score);

	fputs("<g class=\"cells\">\n", p->out);
	put_runs(p, p->looks, UINT32_MAX, look_class);
	fputs("</g>\n<g class=\"shapes\">\n", p->out);
	{
		struct picture q = *p;

		q.set_of = NULL;
		put_runs(&q, shapes, MAP_NSTATES, shape_class);
	}
	fputs("</g>\n", p->out);
	ret = put_boundaries(p, cells);
	if (ret)
		goto out;
	if (hl) {
		ret = put_highlight(p, hl);
		if (ret)
			goto out;
	}
	put_groups(p);
	put_row_numbers(p);
	put_legend(p, p->out, legend_y, present, hl_file, hl_name);
	svg_put_key(p, p->out, key_y);
	put_scale(p, key_y + key_rows * LEGEND_ROW + 6);
	fputs(p->id ? "</g>\n" : "</svg>\n", p->out);
out:
	free(cells);
	free(shapes);
	free(p->looks);
	free(p->set_of);
	free(p->hue_of_set);
	p->looks = NULL;
	p->set_of = NULL;
	p->hue_of_set = NULL;
	return ret;
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
	       const char *path, const char *highlight, const char *caption,
	       const char *prog)
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
	svg_geometry(&p, layout, map);
	ret = svg_draw(&p, device, hl, highlight, caption);
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
