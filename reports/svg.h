/*
 * reports/svg.h --- e2frag --svg: the block map as a standalone SVG.
 */
#ifndef REPORTS_SVG_H
#define REPORTS_SVG_H

#include <stdio.h>

#include "e2frag.h"

/* At most this many cells: the finest zoom level that fits (map.h). */
#define SVG_MAX_CELLS	8192
/* Cells per row of the picture. */
#define SVG_COLUMNS	128

/*
 * Write the map of LAYOUT (DEVICE names it in the title) to the file
 * PATH, or to stdout when PATH is "-".  HIGHLIGHT, when not NULL, is a
 * path inside the filesystem whose blocks are marked, with those of the
 * files it interleaves with.  CAPTION, when not NULL, follows the device
 * in the title ("before e2defrag").  Returns 0, or -1 after printing a
 * message prefixed with PROG.
 */
int svg_report(const struct layout *layout, const char *device,
	       const char *path, const char *highlight, const char *caption,
	       const char *prog);

/*
 * e2defrag --svg: the map before the run and after it side by side in one
 * picture.  svg_compare_begin draws LAYOUT as it is before anything moves
 * (kept in memory) and opens PATH ("-": stdout), so that a file that
 * cannot be written is known before the run; CAPTION captions the picture
 * before.  svg_compare_end draws LAYOUT (after the run) beside it,
 * captioned CAPTION, and writes the file.  Both return 0, or -1 after
 * printing a message prefixed with PROG.  svg_compare_free frees CMP
 * (NULL is fine), whether or not it was ended.
 */
struct svg_compare;
int svg_compare_begin(struct svg_compare **cmp, const struct layout *layout,
		      const char *device, const char *path, const char *caption,
		      const char *prog);
int svg_compare_end(struct svg_compare *cmp, const struct layout *layout,
		    const char *caption, const char *prog);
void svg_compare_free(struct svg_compare *cmp);

#endif
