/*
 * readmodel.c --- the read model against figures worked out by hand from
 * the formulas in e2frag(8), with the default 7200 rpm disk:
 * rotation 8.333 ms, 120 MB/s, track-to-track 1 ms, average seek 8.5 ms,
 * so a full stroke is 1 + 7.5 * sqrt(3) = 13.990381 ms, over 1e12 bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "../lib/tap.h"

int main(void)
{
	struct readmodel m;
	struct layout layout;
	struct struct_ext2_filsys fs;
	struct layout_piece pieces[3];
	struct layout_file f;
	double read, ideal;
	const double half_rot = 60.0 / 7200 / 2;	/* 4.1666667 ms */
	const double full = 1e-3 + 7.5e-3 * 1.7320508075688772;

	tap_plan(15);
	readmodel_defaults(&m);

	tap_near(readmodel_transfer_seconds(&m, 120e6), 1.0, 1e-12,
		 "120 MB transfer at 120 MB/s takes 1 s");
	tap_near(readmodel_jump_seconds(&m, 0), 0, 0, "contiguous: no jump");
	tap_near(readmodel_jump_seconds(&m, 4096), 4096 / 120e6, 1e-12,
		 "4 KiB forward gap: the platter carries it past (34.13 us)");
	/* 1 MB forward: passing it takes 8.333 ms, repositioning 1 ms + 12.99 ms * 0.001 + 4.167 ms. */
	tap_near(readmodel_jump_seconds(&m, 1e6),
		 1e-3 + (full - 1e-3) * 1e-3 + half_rot, 1e-12,
		 "1 MB forward gap: a short seek plus half a rotation (5.180 ms)");
	tap_near(readmodel_jump_seconds(&m, -4096),
		 1e-3 + (full - 1e-3) * sqrt(4096 / 1e12) + half_rot, 1e-12,
		 "4 KiB backward: track seek plus half a rotation");
	tap_near(readmodel_jump_seconds(&m, 1e12 / 3), 8.5e-3 + half_rot, 1e-9,
		 "a third of the disk: the average seek, 8.5 ms, plus half a rotation");
	tap_near(readmodel_jump_seconds(&m, -1e12), full + half_rot, 1e-12,
		 "full stroke back: 13.990 ms plus half a rotation");
	tap_near(readmodel_jump_seconds(&m, 5e12), full + half_rot, 1e-12,
		 "beyond the disk: no more than a full stroke");
	tap_ok(readmodel_jump_seconds(&m, 600e3) < readmodel_jump_seconds(&m, 700e3) + 1e-15 &&
	       readmodel_jump_seconds(&m, 10e6) < readmodel_jump_seconds(&m, 100e6),
	       "jumps never get cheaper with distance");
	tap_near(readmodel_zone_jump_seconds(&m), 1e-3 + half_rot, 1e-12,
		 "a jump between zones in the ideal: track seek plus half a rotation");

	/* A file of 3 pieces of 256 blocks of 4 KiB, best 1. */
	memset(&layout, 0, sizeof(layout));
	memset(&fs, 0, sizeof(fs));
	fs.blocksize = 4096;
	layout.fs = &fs;
	layout.pieces = pieces;
	pieces[0] = (struct layout_piece){ 1000, 256 };
	pieces[1] = (struct layout_piece){ 1256 + 250000, 256 };	/* 1.024 GB on */
	pieces[2] = (struct layout_piece){ 1256, 256 };		/* back again */
	memset(&f, 0, sizeof(f));
	layout_file_set(&layout, &f, 768 * 4096, 768, 0, 3, 3);
	readmodel_file(&m, &layout, &f, 1, &read, &ideal);
	{
		double xfer = 768 * 4096 / 120e6;
		double j1 = 1e-3 + (full - 1e-3) * sqrt(250000 * 4096.0 / 1e12) + half_rot;
		double j2 = 1e-3 + (full - 1e-3) * sqrt((250000 + 256) * 4096.0 / 1e12) + half_rot;

		tap_near(read, xfer + j1 + j2, 1e-12,
			 "three pieces: transfer plus the two jumps");
		tap_near(ideal, xfer, 1e-12, "ideal: the transfer alone");
		tap_near(readmodel_score(read, ideal),
			 100 * (1 - xfer / (xfer + j1 + j2)), 1e-9, "score from the two");
	}
	pieces[1] = (struct layout_piece){ 1256, 256 };
	pieces[2] = (struct layout_piece){ 1512, 256 };
	readmodel_file(&m, &layout, &f, 1, &read, &ideal);
	tap_ok(read == ideal && read == 768 * 4096 / 120e6,
	       "a contiguous file reads in exactly the ideal time");

	/*
	 * A corrupt extent file: an extent tree block, but no data (no
	 * pieces).  Nothing to read, and no piece may be looked at: its
	 * "where" points past the pieces array.
	 */
	layout.pieces = NULL;
	memset(&f, 0, sizeof(f));
	f.flags = LAYOUT_F_ETB;	/* its count in layout.file_etb, none here */
	layout_file_set(&layout, &f, 0, 0, 7, 0, 0);
	readmodel_file(&m, &layout, &f, 0, &read, &ideal);
	tap_ok(read == 0 && ideal == 0, "a file with no pieces reads in no time");
	return tap_done();
}
