/*
 * workloads.c --- who writes how much, when: the seeds' workloads as
 * sequences of appends.  Where the blocks land is alloc.c's business.
 *
 *   streams           seed 004: N recorders (TV and radio channels), each
 *                     appending --chunk in turn, round robin.
 *   parallel-writers  seeds 000 and 003: iozone/tiobench threads, each
 *                     writing one big file in --chunk records; the
 *                     scheduler runs a random thread for a random burst.
 *   aged              a PVR disk: recorded full, recordings deleted at
 *                     random, new ones recorded in parallel into the holes.
 *   tree              seed 001: see tree.c.
 *   mixed             all of the above in one small image, for the demo.
 *   nearfull, turns   near-full disks as a today's kernel fills them:
 *                     see nearfull.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "e2frag.h"
#include "img.h"

#define MIB (1ULL << 20)

const char *workload_name(enum img_workload w)
{
	static const char *const names[] = {
		[WL_STREAMS] = "streams", [WL_PARALLEL] = "parallel-writers",
		[WL_TREE] = "tree", [WL_AGED] = "aged", [WL_MIXED] = "mixed",
		[WL_NEARFULL] = "nearfull", [WL_TURNS] = "turns",
	};

	return w < WL_COUNT ? names[w] : "?";
}

const char *fstype_name(enum img_fstype t)
{
	return t == FS_EXT2 ? "ext2" : t == FS_EXT3 ? "ext3" : "ext4";
}

void workload_defaults(struct img_opts *o)
{
	if (!o->block_size)
		o->block_size = 4096;
	if (!o->streams)
		o->streams = o->workload == WL_AGED ? 3 : 4;
	if (!o->chunk && o->workload == WL_NEARFULL)
		o->chunk = 64 << 10;
	if (!o->chunk)
		o->chunk = o->workload == WL_PARALLEL || o->workload == WL_TURNS ?
			4096 : o->block_size;
	if (!o->total_set)
		o->total = 256 * MIB;
	if (!o->files_set)
		o->files = 24353;		/* seed 001's tree */
	if (!o->fill)
		o->fill = o->workload == WL_TURNS ? 85 : 90;
	if (!o->sync_set)
		o->sync = o->workload == WL_TURNS ? 2 * o->chunk : 8 * MIB;
	if (!o->rounds_set)
		o->rounds = 4;
}

void workload_need(const struct img_opts *o, struct img_need *need)
{
	need->bytes = 0;
	need->inodes = 64;
	need->size = 0;
	need->blocks_per_group = 0;
	switch (o->workload) {
	case WL_STREAMS:
	case WL_PARALLEL:
		need->bytes = o->total;
		need->inodes += o->streams;
		break;
	case WL_TREE:
		need->bytes = tree_bytes(o->seed, o->files);
		need->inodes += o->files + tree_dirs(o->files);
		break;
	case WL_AGED:
		need->size = 512 * MIB;
		break;
	case WL_MIXED:
		need->size = 128 * MIB;
		break;
	case WL_NEARFULL:
	case WL_TURNS:
		nearfull_need(o, need);
		break;
	case WL_COUNT:
		break;
	}
}

/* Names numbered to the width the largest number needs, so they sort. */
static void numbered(char *buf, size_t len, const char *prefix, unsigned i,
		     unsigned n, const char *suffix)
{
	int width = 2;
	unsigned m;

	for (m = n > 0 ? n - 1 : 0; m >= 100; m /= 10)
		width++;
	snprintf(buf, len, "%s%0*u%s", prefix, width & 15, i, suffix);
}

/* N new files in DIR named PREFIX<i>SUFFIX, entered into a new set. */
static errcode_t open_set(struct img *img, struct img_file *dir, unsigned n,
			  const char *prefix, const char *suffix,
			  struct img_file **files)
{
	char name[64];
	int32_t set;
	errcode_t ret;
	unsigned i;

	ret = set_new(img, &set);
	for (i = 0; i < n && !ret; i++) {
		numbered(name, sizeof(name), prefix, i, n, suffix);
		ret = file_create(img, dir, name, &files[i]);
		if (!ret)
			ret = set_add(img, set, files[i]);
	}
	return ret;
}

static errcode_t wl_streams(struct img *img, struct img_file *dir, unsigned n,
			    uint64_t total, uint64_t chunk)
{
	struct img_file **files = calloc(n, sizeof(*files));
	uint64_t *left = calloc(n, sizeof(*left)), w;
	errcode_t ret;
	unsigned i;
	int busy = 1;

	if (!files || !left) {
		ret = ENOMEM;
		goto out;
	}
	ret = open_set(img, dir, n, "rec", ".ts", files);
	for (i = 0; i < n; i++)
		left[i] = total / n + (i < total % n);
	/* Round robin: each recorder appends one chunk, then the next. */
	while (!ret && busy) {
		busy = 0;
		for (i = 0; i < n && !ret; i++) {
			if (!left[i])
				continue;
			w = left[i] < chunk ? left[i] : chunk;
			ret = file_append(img, files[i], w);
			left[i] -= w;
			busy = 1;
		}
	}
	for (i = 0; i < n && !ret; i++)
		ret = file_close(img, files[i]);
out:
	free(files);
	free(left);
	return ret;
}

static errcode_t wl_parallel(struct img *img, struct img_file *dir,
			     unsigned n, uint64_t total, uint64_t chunk)
{
	struct img_file **files = calloc(n, sizeof(*files));
	uint64_t *left = calloc(n, sizeof(*left)), w;
	unsigned i, active = n, pick;
	errcode_t ret;

	if (!files || !left) {
		ret = ENOMEM;
		goto out;
	}
	/* iozone -t N names its files iozone.DUMMY.0 .. N-1 */
	ret = open_set(img, dir, n, "iozone.DUMMY.", "", files);
	for (i = 0; i < n; i++) {
		left[i] = total / n + (i < total % n);
		if (!left[i])
			active--;
	}
	while (!ret && active) {
		/* The scheduler runs one of the busy threads for 1..16 records. */
		pick = (unsigned)rng_below(&img->rng, active);
		for (i = 0; i < n; i++)
			if (left[i] && pick-- == 0)
				break;
		w = chunk * rng_range(&img->rng, 1, 16);
		if (w > left[i])
			w = left[i];
		ret = file_append(img, files[i], w);
		left[i] -= w;
		if (!left[i])
			active--;
	}
	for (i = 0; i < n && !ret; i++)
		ret = file_close(img, files[i]);
out:
	free(files);
	free(left);
	return ret;
}

/* ------------------------------------------------------------------ aged */

struct recording {
	struct img_file	*file;
	uint64_t	left;
	unsigned	rate;		/* chunks per turn: radio 1 .. HD TV 4 */
};

struct pvr {
	struct img	*img;
	struct img_file	*dir;
	uint64_t	chunk;
	blk64_t		target;		/* stop recording at this many used blocks */
	uint64_t	min_size, max_size;
	unsigned	next_name;
	struct img_file	**live;		/* recordings on the disk, oldest first */
	uint32_t	nlive, live_cap;
};

static int pvr_full(const struct pvr *p)
{
	return alloc_used_blocks(p->img) >= p->target;
}

/*
 * N channels start recording together (one set) and write round robin,
 * each at its own rate, until each programme ends or the disk reaches the
 * fill level (then every recording stops where it is).
 */
static errcode_t pvr_session(struct pvr *p, unsigned n)
{
	struct img *img = p->img;
	struct recording *rec = calloc(n, sizeof(*rec));
	unsigned i, k, active = n;
	char name[32];
	errcode_t ret;
	int32_t set;
	uint64_t w;

	if (!rec)
		return ENOMEM;
	/* Each session is a new recorder process, with a colour of its own. */
	img->colour = (unsigned)rng_below(&img->rng, 16);
	ret = set_new(img, &set);
	for (i = 0; i < n && !ret; i++) {
		snprintf(name, sizeof(name), "rec%04u.ts", p->next_name++);
		ret = file_create(img, p->dir, name, &rec[i].file);
		if (!ret)
			ret = set_add(img, set, rec[i].file);
		if (!ret)
			ret = img_grow(&p->live, &p->live_cap, p->nlive + 1,
				       sizeof(*p->live));
		if (ret)
			break;
		p->live[p->nlive++] = rec[i].file;
		rec[i].left = rng_range(&img->rng, p->min_size, p->max_size);
		rec[i].rate = (unsigned)rng_range(&img->rng, 1, 4);
	}
	while (!ret && active && !pvr_full(p)) {
		for (i = 0; i < n && !ret; i++) {
			for (k = 0; k < rec[i].rate && rec[i].left && !ret; k++) {
				if (pvr_full(p))
					break;
				w = rec[i].left < p->chunk ? rec[i].left : p->chunk;
				ret = file_append(img, rec[i].file, w);
				rec[i].left -= w;
				if (!rec[i].left)
					active--;
			}
		}
	}
	for (i = 0; i < n && !ret; i++)
		ret = file_close(img, rec[i].file);
	img->colour = 0;
	free(rec);
	return ret;
}

static errcode_t pvr_fill(struct pvr *p, unsigned n)
{
	blk64_t before;
	errcode_t ret = 0;

	while (!ret && !pvr_full(p)) {
		before = alloc_used_blocks(p->img);
		ret = pvr_session(p, n);
		if (!ret && alloc_used_blocks(p->img) == before)
			break;
	}
	return ret;
}

/* Delete about a third of the recordings, at least one, at random. */
static errcode_t pvr_delete(struct pvr *p)
{
	struct img *img = p->img;
	uint32_t i, kept = 0, deleted = 0;
	errcode_t ret = 0;

	for (i = 0; i < p->nlive && !ret; i++) {
		if (rng_below(&img->rng, 3) == 0) {
			ret = file_delete(img, p->live[i]);
			deleted++;
		} else {
			p->live[kept++] = p->live[i];
		}
	}
	p->nlive = kept;
	if (!ret && !deleted && p->nlive) {
		i = (uint32_t)rng_below(&img->rng, p->nlive);
		ret = file_delete(img, p->live[i]);
		p->live[i] = p->live[--p->nlive];
	}
	return ret;
}

static errcode_t wl_aged(struct img *img, struct img_file *dir, unsigned n,
			 uint64_t chunk, unsigned fill, unsigned rounds)
{
	blk64_t blocks = ext2fs_blocks_count(img->fs->super);
	struct pvr p = { .img = img, .dir = dir, .chunk = chunk };
	uint64_t capacity = blocks * img->bs;
	errcode_t ret;
	unsigned r;

	p.target = blocks * fill / 100;
	/* Programmes of 1/64 to 1/16 of the disk: 30 min to 2 h on a 250 GB PVR. */
	p.min_size = capacity / 64 > chunk ? capacity / 64 : chunk;
	p.max_size = capacity / 16 > p.min_size ? capacity / 16 : p.min_size;
	ret = pvr_fill(&p, n);
	for (r = 0; r < rounds && !ret; r++) {
		ret = pvr_delete(&p);
		if (!ret)
			ret = pvr_fill(&p, n);
	}
	free(p.live);
	return ret;
}

/* ----------------------------------------------------------------- mixed */

/*
 * Everything once, in a small image: a source tree (300 files, fewer in
 * images under 28 MiB), recordings made
 * together, benchmark files, one file written alone (the contiguous
 * reference), then a PVR directory aged to 85 % full.
 */
static errcode_t wl_mixed(struct img *img)
{
	const struct img_opts *o = img->opts;
	uint64_t size = ext2fs_blocks_count(img->fs->super) * img->bs;
	uint64_t files = size / (96 << 10) < 300 ? size / (96 << 10) : 300;
	struct img_file *d, *f;
	errcode_t ret;

	ret = wl_tree(img, img->root, "src", files);
	if (!ret)
		ret = dir_create(img, img->root, "recordings", &d);
	if (!ret)
		ret = wl_streams(img, d, 3, size / 100 * 12, o->chunk);
	if (!ret)
		ret = dir_create(img, img->root, "bench", &d);
	if (!ret)
		ret = wl_parallel(img, d, 2, size / 100 * 8, 4096);
	if (!ret)
		ret = dir_create(img, img->root, "video", &d);
	if (!ret)
		ret = file_create(img, d, "alone.ts", &f);
	if (!ret)
		ret = file_append(img, f, size / 100 * 4);
	if (!ret)
		ret = file_close(img, f);
	if (!ret)
		ret = dir_create(img, img->root, "tv", &d);
	if (!ret)
		ret = wl_aged(img, d, 2, o->chunk, 85, 2);
	return ret;
}

errcode_t workload_run(struct img *img)
{
	const struct img_opts *o = img->opts;

	switch (o->workload) {
	case WL_STREAMS:
		return wl_streams(img, img->root, o->streams, o->total, o->chunk);
	case WL_PARALLEL:
		return wl_parallel(img, img->root, o->streams, o->total, o->chunk);
	case WL_TREE:
		return wl_tree(img, img->root, "linux", o->files);
	case WL_AGED:
		return wl_aged(img, img->root, o->streams, o->chunk, o->fill,
			       o->rounds);
	case WL_MIXED:
		return wl_mixed(img);
	case WL_NEARFULL:
		return wl_nearfull(img);
	case WL_TURNS:
		return wl_turns(img);
	case WL_COUNT:
		break;
	}
	return EINVAL;
}
