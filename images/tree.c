/*
 * tree.c --- seed 001's untar: a source tree of many directories of small
 * files, extracted in archive order, one file after another.
 *
 * The shape: about 16 files per directory (the 2.6.35 kernel tree has
 * 24,353 files in some 1,400 directories), directories hanging mostly
 * under recent ones and at most 8 deep, file sizes lognormal (median
 * 5 kB, mean about 13 kB: 323 MB over 24,353 files) with a few empty
 * ones.  The archive lists each directory, then its entries (files and
 * subdirectories mixed), depth first, as tar does.
 *
 * Shape and sizes come from their own generators seeded by --seed, so
 * main can add up the sizes (tree_bytes) before the filesystem exists.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

#define STREAM_SIZES	0x7ee5512eULL
#define STREAM_SHAPE	0x7ee5a9eULL
#define FILES_PER_DIR	16
#define MAX_DEPTH	8
#define SHALLOW		20		/* the first directories: the top of the tree */
#define MAX_FILE	(16ULL << 20)

static const char *const dir_words[] = {
	"arch", "block", "crypto", "drivers", "fs", "include", "init", "ipc",
	"kernel", "lib", "mm", "net", "scripts", "security", "sound", "tools",
	"usr", "virt", "firmware", "samples", "Documentation", "certs", "media",
	"gpu", "usb", "scsi", "ata", "video", "input", "pci", "acpi", "power",
};

static const char *const file_words[] = {
	"main", "core", "dev", "ops", "util", "init", "irq", "dma", "sysfs",
	"debug", "proc", "trace", "hw", "ctl", "map", "buf", "sched", "table",
	"probe", "bus", "regs", "phy", "mac", "queue", "fw", "pm", "clk", "io",
};

static const char *const file_exts[] = {
	".c", ".h", ".c", ".h", ".c", ".S", ".txt", ".rst",
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

uint64_t tree_dirs(uint64_t nfiles)
{
	return nfiles / FILES_PER_DIR > 1 ? nfiles / FILES_PER_DIR : 1;
}

uint64_t tree_draw_size(struct img_rng *r)
{
	double v;

	if (rng_below(r, 200) == 0)
		return 0;
	v = exp(log(5000.0) + 1.4 * rng_normal(r));
	if (v > (double)MAX_FILE)
		return MAX_FILE;
	return (uint64_t)v;
}

void tree_sizes_seed(struct img_rng *r, uint64_t seed)
{
	rng_seed(r, seed, STREAM_SIZES);
}

uint64_t tree_bytes(uint64_t seed, uint64_t nfiles)
{
	struct img_rng r;
	uint64_t i, sum = 0;

	tree_sizes_seed(&r, seed);
	for (i = 0; i < nfiles; i++)
		sum += tree_draw_size(&r);
	return sum;
}

/*
 * The archive: for each directory its entries, as indexes into one
 * array (CSR): entry values below ndirs are directories, the rest files.
 */
struct archive {
	uint64_t	ndirs, nfiles;
	uint32_t	*parent, *depth;	/* per directory */
	uint64_t	*first;			/* ndirs + 1 offsets into entry */
	uint64_t	*entry;
	uint64_t	*size;			/* per file */
};

static void archive_free(struct archive *a)
{
	free(a->parent);
	free(a->depth);
	free(a->first);
	free(a->entry);
	free(a->size);
}

static errcode_t archive_plan(struct archive *a, uint64_t seed)
{
	uint64_t i, d, *fill = NULL, *file_dir = NULL;
	struct img_rng shape, sizes;
	errcode_t ret = ENOMEM;

	a->parent = calloc(a->ndirs, sizeof(*a->parent));
	a->depth = calloc(a->ndirs, sizeof(*a->depth));
	a->first = calloc(a->ndirs + 1, sizeof(*a->first));
	a->entry = calloc(a->ndirs + a->nfiles, sizeof(*a->entry));
	a->size = calloc(a->nfiles + 1, sizeof(*a->size));
	fill = calloc(a->ndirs, sizeof(*fill));
	file_dir = calloc(a->nfiles + 1, sizeof(*file_dir));
	if (!a->parent || !a->depth || !a->first || !a->entry || !a->size ||
	    !fill || !file_dir)
		goto out;
	rng_seed(&shape, seed, STREAM_SHAPE);
	rng_seed(&sizes, seed, STREAM_SIZES);
	for (i = 1; i < a->ndirs; i++) {
		uint64_t p;

		if (i <= SHALLOW || rng_below(&shape, 4) == 0)
			p = rng_below(&shape, i < SHALLOW ? i : SHALLOW);
		else
			p = i - 1 - rng_below(&shape, i < 8 ? i : 8);
		if (a->depth[p] + 1 >= MAX_DEPTH)
			p = 0;
		a->parent[i] = (uint32_t)p;
		a->depth[i] = a->depth[p] + 1;
		a->first[p + 1]++;
	}
	for (i = 0; i < a->nfiles; i++) {
		file_dir[i] = rng_below(&shape, a->ndirs);
		a->first[file_dir[i] + 1]++;
		a->size[i] = tree_draw_size(&sizes);
	}
	for (d = 0; d < a->ndirs; d++)
		a->first[d + 1] += a->first[d];
	for (i = 1; i < a->ndirs; i++)
		a->entry[a->first[a->parent[i]] + fill[a->parent[i]]++] = i;
	for (i = 0; i < a->nfiles; i++)
		a->entry[a->first[file_dir[i]] + fill[file_dir[i]]++] = a->ndirs + i;
	/* Mix files and subdirectories in each directory (Fisher-Yates). */
	for (d = 0; d < a->ndirs; d++) {
		uint64_t n = a->first[d + 1] - a->first[d], *e = a->entry + a->first[d];

		for (i = n; i > 1; i--) {
			uint64_t j = rng_below(&shape, i), t = e[i - 1];

			e[i - 1] = e[j];
			e[j] = t;
		}
	}
	ret = 0;
out:
	free(fill);
	free(file_dir);
	return ret;
}

static void dir_name(char *buf, size_t len, uint64_t d)
{
	const char *w = dir_words[rng_mix64(d) % NELEM(dir_words)];

	if (d < NELEM(dir_words))
		snprintf(buf, len, "%s", dir_words[d]);
	else
		snprintf(buf, len, "%s%llu", w, (unsigned long long)d);
}

static void file_name(char *buf, size_t len, uint64_t i)
{
	uint64_t h = rng_mix64(i ^ 0xf11e);

	snprintf(buf, len, "%s_%llu%s", file_words[h % NELEM(file_words)],
		 (unsigned long long)i, file_exts[(h >> 32) % NELEM(file_exts)]);
}

/* Extract the archive depth first: each directory, then its entries. */
static errcode_t extract(struct img *img, struct archive *a, struct img_file *top)
{
	struct img_file **made = calloc(a->ndirs, sizeof(*made)), *f;
	uint64_t *stack = calloc(a->ndirs, sizeof(*stack));
	uint64_t *pos = calloc(a->ndirs, sizeof(*pos));
	uint64_t sp = 0, d, e;
	errcode_t ret = 0;
	char name[64];

	if (!made || !stack || !pos) {
		ret = ENOMEM;
		goto out;
	}
	made[0] = top;
	stack[sp++] = 0;
	while (sp && !ret) {
		d = stack[sp - 1];
		if (a->first[d] + pos[d] == a->first[d + 1]) {
			sp--;
			continue;
		}
		e = a->entry[a->first[d] + pos[d]++];
		if (e < a->ndirs) {
			dir_name(name, sizeof(name), e);
			ret = dir_create(img, made[d], name, &made[e]);
			stack[sp++] = e;
		} else {
			file_name(name, sizeof(name), e - a->ndirs);
			ret = file_create(img, made[d], name, &f);
			if (!ret)
				ret = file_append(img, f, a->size[e - a->ndirs]);
			if (!ret)
				ret = file_close(img, f);
		}
	}
out:
	free(made);
	free(stack);
	free(pos);
	return ret;
}

errcode_t wl_tree(struct img *img, struct img_file *dir, const char *name,
		  uint64_t nfiles)
{
	struct archive a;
	struct img_file *top;
	errcode_t ret;

	memset(&a, 0, sizeof(a));
	a.ndirs = tree_dirs(nfiles);
	a.nfiles = nfiles;
	ret = archive_plan(&a, img->opts->seed);
	if (!ret)
		ret = dir_create(img, dir, name, &top);
	if (!ret)
		ret = extract(img, &a, top);
	archive_free(&a);
	return ret;
}
