/*
 * ktree.c --- kernel-tree: many small files written one after another
 * into directories chosen at random, laid out as a current kernel lays
 * them out on a loop mount (kplace.c).  This is the benchmark tree on
 * which e2frag and e2defrag met the kernel's interleaving: on ext3 the
 * indirect blocks of files from everywhere fill the holes between other
 * files' tails.
 *
 * First --dirs directories /d0000 ... in the root (Orlov spreads them
 * over the groups), then --files files /dNNNN/fNNNNNNN, numbered in the
 * order they are written, each of a size drawn as tree.c draws them (the
 * same sizes as --workload tree for the same seed) into a directory
 * drawn at random.  The manifest is therefore also the write sequence:
 * bench/kernel-tree.sh replays it on a loop mount, sorted by number.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "e2frag.h"
#include "img.h"

#define STREAM_DIRS	0x6b7472656564ULL
#define GIB		(1ULL << 30)

void ktree_need(const struct img_opts *o, struct img_need *need)
{
	uint64_t size = 64ULL << 20;

	need->bytes = tree_bytes(o->seed, o->files);
	need->inodes += o->files + o->dirs;
	/* About three times the data, in a power of two: the benchmark's
	 * 8 GiB for 200,000 files, 1 GiB for 20,000. */
	while (size < 3 * need->bytes && size < (1ULL << 40))
		size <<= 1;
	need->size = size;
}

/* PREFIX and I in at least MINW digits, as many as N - 1 needs, so they sort. */
static void numbered_name(char *buf, size_t len, char prefix, uint64_t i,
			  uint64_t n, int minw)
{
	int width = 1;
	uint64_t m;

	for (m = n > 1 ? n - 1 : 0; m >= 10; m /= 10)
		width++;
	if (width < minw)
		width = minw;
	snprintf(buf, len, "%c%0*llu", prefix, width & 15, (unsigned long long)i);
}

errcode_t wl_ktree(struct img *img, struct img_file *top)
{
	const struct img_opts *o = img->opts;
	struct img_file **dirs = calloc(o->dirs ? o->dirs : 1, sizeof(*dirs)), *f;
	struct img_rng sizes, pick;
	struct kplace k;
	errcode_t ret = 0;
	char name[32];
	uint64_t i;

	if (!dirs)
		return ENOMEM;
	kplace_init(&k, img);
	for (i = 0; i < o->dirs && !ret; i++) {
		numbered_name(name, sizeof(name), 'd', i, o->dirs, 4);
		img->dir_goal = kplace_topdir_goal(&k);
		ret = dir_create(img, top, name, &dirs[i]);
	}
	tree_sizes_seed(&sizes, o->seed);
	rng_seed(&pick, o->seed, STREAM_DIRS);
	for (i = 0; i < o->files && !ret; i++) {
		uint64_t size = tree_draw_size(&sizes);
		uint64_t d = rng_below(&pick, o->dirs);

		numbered_name(name, sizeof(name), 'f', i, o->files, 7);
		ret = file_create(img, dirs[d], name, &f);
		if (!ret)
			ret = kplace_write(&k, f, size);
	}
	kplace_finish(&k);
	free(dirs);
	return ret;
}
