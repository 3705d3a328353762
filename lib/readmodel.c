/*
 * readmodel.c --- how long a rotating disk takes to read a file.
 *
 * The model (also in e2frag(8)):
 *
 *   read   = transfer + sum over the jumps between consecutive pieces
 *   transfer = stream bytes / rate
 *   jump(gap) = 0                                  gap == 0 (contiguous)
 *             = min(gap / rate, reposition(gap))   gap > 0 (forward)
 *             = reposition(|gap|)                  gap < 0 (backward)
 *   reposition(d) = seek(d) + rotation / 2
 *   seek(d)  = t2t + (full - t2t) * sqrt(min(d, disk) / disk)
 *   full     = t2t + (avg - t2t) * sqrt(3)         (avg = seek over disk/3)
 *
 * A short forward gap costs only the time the platter takes to carry it
 * past the head, when that is quicker than repositioning; anything else
 * is a seek, growing with the square root of the distance as head seeks
 * do, plus on average half a rotation of latency.
 * The ideal is the same file in `best` pieces, each jump between zones
 * costing a track-to-track seek plus half a rotation.
 */
#include <math.h>

#include "e2frag.h"

void readmodel_defaults(struct readmodel *m)
{
	m->rpm = 7200;
	m->mbps = 120;
	m->seek_ms = 8.5;
	m->track_seek_ms = 1.0;
	m->disk_bytes = 1e12;
}

static double rotation_seconds(const struct readmodel *m)
{
	return 60.0 / m->rpm;
}

static double rate(const struct readmodel *m)
{
	return m->mbps * 1e6;
}

double readmodel_transfer_seconds(const struct readmodel *m, double nbytes)
{
	return nbytes / rate(m);
}

double readmodel_jump_seconds(const struct readmodel *m, double gap_bytes)
{
	double t2t = m->track_seek_ms / 1e3;
	double full = t2t + (m->seek_ms / 1e3 - t2t) * sqrt(3.0);
	double d = fabs(gap_bytes), reposition;

	if (gap_bytes == 0)
		return 0;
	if (d > m->disk_bytes)
		d = m->disk_bytes;
	reposition = t2t + (full - t2t) * sqrt(d / m->disk_bytes) +
		     rotation_seconds(m) / 2;
	if (gap_bytes > 0 && gap_bytes / rate(m) < reposition)
		return gap_bytes / rate(m);
	return reposition;
}

double readmodel_zone_jump_seconds(const struct readmodel *m)
{
	return m->track_seek_ms / 1e3 + rotation_seconds(m) / 2;
}

void readmodel_file(const struct readmodel *m, const struct layout *layout,
		    const struct layout_file *f, uint32_t best,
		    double *read, double *ideal)
{
	double bs = layout->fs->blocksize;
	double t, best_t;
	struct layout_piece prev = { 0, 0 }, p;
	uint32_t i, n = layout_file_pieces(layout, f);

	t = readmodel_transfer_seconds(m, layout_stream_blocks(layout, f) * bs);
	best_t = t + (best > 1 ? (best - 1) * readmodel_zone_jump_seconds(m) : 0);
	/* A corrupt map can leave extent tree blocks and no data: no piece. */
	if (n)
		prev = layout_file_piece(layout, f, 0);
	for (i = 1; i < n; i++, prev = p) {
		p = layout_file_piece(layout, f, i);
		t += readmodel_jump_seconds(m, ((double)p.start -
					       (double)(prev.start + prev.len)) * bs);
	}
	*read = t;
	/* A few tiny forward hops can beat the model's ideal; never score below 0. */
	*ideal = best_t < t ? best_t : t;
}

double readmodel_score(double modeled, double ideal)
{
	if (modeled <= 0 || ideal >= modeled)
		return 0;
	return 100.0 * (1.0 - ideal / modeled);
}
