/*
 * interleave_image.c --- scan an image and compare its interleaving with
 * the brute-force reference of interleave_ref.h.  Run by
 * tests/cli/analyze-interleave-ref.sh on images of e2fragimg's workloads.
 *
 *   interleave_image IMAGE
 *
 * Prints one line (files, sets, largest set) and exits 0 when every
 * partner list, count, strongest pair and set agrees, 1 when not, 8 when
 * the image cannot be scanned.
 */
#include <stdio.h>

#include "e2frag.h"
#include "interleave_ref.h"

int main(int argc, char **argv)
{
	struct fsopen_info info;
	struct layout_opts opts;
	struct layout *layout;
	ext2_filsys fs;
	uint64_t files;
	uint32_t largest, bad;
	errcode_t ret;

	if (argc != 2) {
		fprintf(stderr, "usage: interleave_image IMAGE\n");
		return 16;
	}
	memset(&info, 0, sizeof(info));
	memset(&opts, 0, sizeof(opts));
	readmodel_defaults(&opts.model);
	opts.names = LAYOUT_NAMES_NONE;
	ret = fsopen_open(argv[1], 0, NULL, &fs, &info);
	if (ret) {
		fprintf(stderr, "interleave_image: cannot open %s (%ld)\n", argv[1], (long)ret);
		return 8;
	}
	ret = layout_scan(fs, &opts, &layout);
	if (ret) {
		fprintf(stderr, "interleave_image: cannot scan %s (%ld)\n", argv[1], (long)ret);
		fsopen_close(fs, &info);
		return 8;
	}
	bad = ref_compare(layout, argv[1], &files, &largest);
	printf("%s: %llu pieces, %llu files interleaved in %llu sets (largest %u), "
	       "%llu partners: %s\n", argv[1], (unsigned long long)layout->npieces,
	       (unsigned long long)files, (unsigned long long)layout->nsets, largest,
	       (unsigned long long)layout->npartners,
	       bad ? "differs from the reference" : "as the reference has it");
	layout_free(layout);
	fsopen_close(fs, &info);
	return bad ? 1 : 0;
}
