/*
 * scan_image.h --- open and scan an image the way e2frag does (no names),
 * for the test programs that check a scan against an oracle
 * (interleave_image.c, plainmap_image.c).
 */
#ifndef TESTS_SCAN_IMAGE_H
#define TESTS_SCAN_IMAGE_H

#include <stdio.h>
#include <string.h>

#include "e2frag.h"

/* Open and scan PATH; on failure say so as PROG and return 8 (0: done). */
static int scan_image(const char *prog, const char *path, ext2_filsys *fs,
		      struct fsopen_info *info, struct layout **layout)
{
	struct layout_opts opts;
	errcode_t ret;

	memset(info, 0, sizeof(*info));
	memset(&opts, 0, sizeof(opts));
	readmodel_defaults(&opts.model);
	opts.names = LAYOUT_NAMES_NONE;
	ret = fsopen_open(path, 0, NULL, fs, info);
	if (ret) {
		fprintf(stderr, "%s: cannot open %s (%ld)\n", prog, path, (long)ret);
		return 8;
	}
	ret = layout_scan(*fs, &opts, layout);
	if (ret) {
		fprintf(stderr, "%s: cannot scan %s (%ld)\n", prog, path, (long)ret);
		fsopen_close(*fs, info);
		return 8;
	}
	return 0;
}

#endif /* TESTS_SCAN_IMAGE_H */
