/*
 * reports/svg_int.h --- what svg.c (the picture), svg_sets.c (the
 * interleave sets' hues and their key) and svg_compare.c (two pictures
 * side by side) share.
 */
#ifndef REPORTS_SVG_INT_H
#define REPORTS_SVG_INT_H

#include <stdio.h>

#include "map.h"
#include "svg.h"

#define CELL_PX		6
#define MARGIN		10
#define GUTTER_PX	70	/* block numbers left of the rows */
#define HEADER_PX	46
#define LEGEND_COLS	4
#define LEGEND_W	200
#define LEGEND_ROW	18

/*
 * The largest interleave sets each get a hue of their own, from Paul
 * Tol's "muted" qualitative scheme (https://personal.sron.nl/~pault/),
 * chosen to stay apart with colour blindness (svg_sets.c says how far;
 * tests/tui/svg-key.sh checks it), the others a neutral grey they share.
 * SVG_NEUTRAL is the index of that grey.
 */
#define SVG_KEYED	6
#define SVG_NEUTRAL	SVG_KEYED
extern const char *const svg_set_rgb[SVG_KEYED + 1];

/*
 * A cell's look: its state (enum map_state), or for an interleaved cell
 * whose interleaved blocks belong mostly to a member of a set, LOOK_SET +
 * the set's hue (0 .. SVG_KEYED - 1, or SVG_NEUTRAL).
 */
#define LOOK_SET	16

struct picture {
	FILE			*out;
	const struct layout	*layout;
	const struct map	*map;
	unsigned		level;
	uint64_t		ncells, columns, rows;
	uint32_t		*looks;		/* per cell */
	uint32_t		*set_of;	/* per cell: 1-based set, 0 none */
	unsigned		*hue_of_set;	/* per set index: its hue, or SVG_NEUTRAL */
	uint32_t		keyed[SVG_KEYED];	/* set indexes, largest first */
	unsigned		nkeyed;
	const char		*id;	/* inside another picture: its name (a <g
					 * data-picture=ID>); NULL for a document */
	long			x, y;	/* where, inside the other picture */
	long			width, height;	/* set by svg_draw */
};

/* svg.c */
/* Text for XML: printable (util_printable), then &, <, > and " escaped. */
void svg_put_text(FILE *out, const char *s);
/* S, already printable (util_printable), escaped for XML text. */
void svg_put_printable(FILE *out, const char *s);
/* The <defs> and <style> every picture in a document shares. */
void svg_put_style(FILE *out);
/* The "#rrggbb" a look is filled with. */
const char *svg_look_rgb(uint32_t look);
/*
 * Draw the picture of P (svg_geometry's fields set; ID, X, Y for a
 * picture inside another, which gives the style) to P->out, with the highlight HL
 * (may be NULL; HL_NAME names it) and CAPTION after the device in the
 * title.  Sets P->width and P->height.  0 or an errno.
 */
int svg_draw(struct picture *p, const char *device, const struct map_highlight *hl,
	     const char *hl_name, const char *caption);
/* Fill in P's map geometry for LAYOUT and MAP. */
void svg_geometry(struct picture *p, const struct layout *layout, const struct map *map);

/* svg_sets.c */
/*
 * Which set each cell's interleaved blocks belong to (P->set_of, and the
 * set's hue in P->looks), after choosing the keyed sets (P->keyed,
 * P->hue_of_set): the SVG_KEYED with the most blocks.  0 or ENOMEM.
 */
int svg_find_sets(struct picture *p);
/*
 * The key of the sets' hues from Y0 on: a row a keyed set (its hue, its
 * number, its size and its files) and one for the rest.  Returns its
 * rows; draws nothing when OUT is NULL.
 */
int svg_put_key(const struct picture *p, FILE *out, long y0);

#endif /* REPORTS_SVG_INT_H */
