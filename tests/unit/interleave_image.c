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
#include "scan_image.h"

int main(int argc, char **argv)
{
	struct fsopen_info info;
	struct layout *layout;
	ext2_filsys fs;
	uint64_t files;
	uint32_t largest, bad;

	if (argc != 2) {
		fprintf(stderr, "usage: interleave_image IMAGE\n");
		return 16;
	}
	if (scan_image("interleave_image", argv[1], &fs, &info, &layout))
		return 8;
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
