/*
 * manifest.c --- OUTPUT.img.json, the ground truth tests check against:
 * every regular file with its size and SHA-256, and the sets of files
 * that were written at the same time.
 *
 *   { "image", "workload", "type", "seed", "block_size", "size",
 *     "files": [ { "path", "ino", "size", "sha256", "set" } ],
 *     "sets":  [ [ path, ... ], ... ] }
 *
 * Files are in path order; "set" indexes "sets" or is null for a file
 * written alone.  A set lists the files still on the image (deleted
 * recordings are gone); a set left with one file is dropped, since that
 * file no longer shares its region with anything written with it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "e2frag.h"
#include "img.h"

struct entry {
	char		*path;
	struct img_file	*file;
};

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->path,
		      ((const struct entry *)b)->path);
}

static int live_file(const struct img_file *f)
{
	return !(f->flags & (IMGF_DIR | IMGF_DELETED | IMGF_FOREIGN));
}

static char *path_of(const struct img_file *f)
{
	char buf[PATH_MAX];

	if (file_path(f, buf, sizeof(buf)) >= sizeof(buf))
		return NULL;
	return strdup(buf);
}

static void hex(const unsigned char *d, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[d[i] >> 4];
		out[2 * i + 1] = digits[d[i] & 15];
	}
	out[2 * n] = 0;
}

/* Renumber the sets that keep two or more files: old index -> new or -1. */
static int32_t *renumber_sets(const struct img *img, uint32_t *kept)
{
	int32_t *map = calloc(img->nsets + 1, sizeof(*map));
	uint32_t s, i, live;

	if (!map)
		return NULL;
	*kept = 0;
	for (s = 0; s < img->nsets; s++) {
		for (i = live = 0; i < img->sets[s].n; i++)
			live += live_file(img->sets[s].members[i]);
		map[s] = live >= 2 ? (int32_t)(*kept)++ : -1;
	}
	return map;
}

static json_t *file_json(const struct entry *e, const int32_t *setmap)
{
	char sha[65];
	json_t *o;

	hex(e->file->digest, 32, sha);
	o = json_pack("{s:s, s:I, s:I, s:s}", "path", e->path,
		      "ino", (json_int_t)e->file->ino,
		      "size", (json_int_t)e->file->size, "sha256", sha);
	if (!o)
		return NULL;
	if (json_object_set_new(o, "set", e->file->set >= 0 &&
				setmap[e->file->set] >= 0 ?
				json_integer(setmap[e->file->set]) : json_null())) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static errcode_t build(json_t *root, struct entry *ents,
		       uint64_t n, const int32_t *setmap, uint32_t nkept)
{
	json_t *files, *sets;
	uint64_t i;
	uint32_t s;

	if (json_object_set_new(root, "files", json_array()) ||
	    json_object_set_new(root, "sets", json_array()))
		return ENOMEM;
	files = json_object_get(root, "files");
	sets = json_object_get(root, "sets");
	for (s = 0; s < nkept; s++)
		if (json_array_append_new(sets, json_array()))
			return ENOMEM;
	for (i = 0; i < n; i++) {
		if (json_array_append_new(files, file_json(&ents[i], setmap)))
			return ENOMEM;
		/* In path order, so each set's paths come out sorted too. */
		if (ents[i].file->set >= 0 && setmap[ents[i].file->set] >= 0 &&
		    json_array_append_new(json_array_get(sets,
						setmap[ents[i].file->set]),
					  json_string(ents[i].path)))
			return ENOMEM;
	}
	return 0;
}

/* What the image is: the options it was made with, for whoever reads it. */
static json_t *header(const struct img *img, const char *image)
{
	const struct img_opts *o = img->opts;

	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "image", image,
			 "workload", workload_name(o->workload),
			 "type", fstype_name(o->type), "seed", (json_int_t)o->seed,
			 "block_size", (json_int_t)img->bs,
			 "size", (json_int_t)(ext2fs_blocks_count(img->fs->super) *
					      img->bs));
}

errcode_t manifest_write(struct img *img, const char *path, const char *image,
			 uint64_t *nfiles, uint64_t *nsets)
{
	struct entry *ents = NULL;
	int32_t *setmap = NULL;
	json_t *root = NULL;
	uint64_t n = 0, i;
	uint32_t kept = 0;
	errcode_t ret = ENOMEM;
	FILE *out;

	ents = calloc(img->nfiles + 1, sizeof(*ents));
	setmap = renumber_sets(img, &kept);
	root = header(img, image);
	if (!ents || !setmap || !root)
		goto out;
	for (i = 0; i < img->nfiles; i++) {
		if (!live_file(img->files[i]))
			continue;
		ents[n].file = img->files[i];
		ents[n].path = path_of(img->files[i]);
		if (!ents[n++].path)
			goto out;
	}
	qsort(ents, n, sizeof(*ents), by_path);
	ret = build(root, ents, n, setmap, kept);
	if (ret)
		goto out;
	out = fopen(path, "w");
	if (!out) {
		ret = errno;
		goto out;
	}
	if (json_dumpf(root, out, JSON_INDENT(1)) || fputc('\n', out) == EOF) {
		ret = ferror(out) && errno ? errno : EIO;
		fclose(out);
		goto out;
	}
	ret = fclose(out) ? errno : 0;
	*nfiles = n;
	*nsets = kept;
out:
	for (i = 0; i < n; i++)
		free(ents[i].path);
	free(ents);
	free(setmap);
	json_decref(root);
	return ret;
}
