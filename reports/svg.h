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

#endif
