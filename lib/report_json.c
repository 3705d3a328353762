/*
 * report_json.c --- the layout as the JSON objects of doc/design.md's report.
 *
 * Each part is its own json_t so that a front end can stream the files
 * array one object at a time instead of holding the whole report.
 * jansson does all the quoting; paths are first made printable text
 * (util_printable) because jansson only takes UTF-8.
 */
#include <math.h>

#include <e2p/e2p.h>

#include "compare.h"
#include "report_json.h"

json_t *report_json_real(double x)
{
	return json_real(round(x * 1e6) / 1e6);
}

static json_t *path_json(const struct layout *layout, ext2_ino_t ino)
{
	char raw[4096], text[4096 * 4];

	layout_path(layout, ino, raw, sizeof(raw));
	util_printable(raw, text, sizeof(text));
	return json_string(text);
}

static json_t *features_json(ext2_filsys fs)
{
	const struct { int type; __u32 mask; } sets[] = {
		{ E2P_FEATURE_COMPAT, fs->super->s_feature_compat },
		{ E2P_FEATURE_INCOMPAT, fs->super->s_feature_incompat },
		{ E2P_FEATURE_RO_INCOMPAT, fs->super->s_feature_ro_compat },
	};
	json_t *a = json_array();
	unsigned i, bit;

	for (i = 0; i < 3; i++)
		for (bit = 0; bit < 32; bit++)
			if (sets[i].mask & (1U << bit))
				json_array_append_new(a, json_string(
					e2p_feature2string(sets[i].type, 1U << bit)));
	return a;
}

static json_t *reserved_json(const struct layout_reserved *r)
{
	if (!r->ino)
		return json_null();
	return json_pack("{s:I, s:I, s:I}", "ino", (json_int_t)r->ino,
			 "blocks", (json_int_t)r->blocks,
			 "pieces", (json_int_t)r->pieces);
}

json_t *report_json_filesystem(const struct layout *layout, const char *device)
{
	ext2_filsys fs = layout->fs;
	json_t *o;

	o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
		      "device", device, "type", fsopen_fs_type(fs),
		      "block_size", (json_int_t)fs->blocksize,
		      "blocks", (json_int_t)ext2fs_blocks_count(fs->super),
		      "free_blocks", (json_int_t)layout->free.free_blocks,
		      "groups", (json_int_t)fs->group_desc_count,
		      "blocks_per_group", (json_int_t)fs->super->s_blocks_per_group,
		      "inodes", (json_int_t)fs->super->s_inodes_count,
		      "inodes_used", (json_int_t)layout->inodes_used);
	if (!o)
		return NULL;
	json_object_set_new(o, "features", features_json(fs));
	json_object_set_new(o, "journal", reserved_json(&layout->journal));
	json_object_set_new(o, "resize_inode", reserved_json(&layout->resize));
	json_object_set_new(o, "fixed_metadata_zones", json_integer(layout->nzones));
	return o;
}

json_t *report_json_summary(const struct layout *layout)
{
	const struct layout_summary *s = &layout->summary;
	json_t *o = json_object();

	json_object_set_new(o, "files", json_integer(s->files));
	json_object_set_new(o, "fragmented_files", json_integer(s->fragmented_files));
	json_object_set_new(o, "avoidably_fragmented_files",
			    json_integer(s->avoidably_fragmented_files));
	json_object_set_new(o, "pieces", json_integer(s->pieces));
	json_object_set_new(o, "best_pieces", json_integer(s->best_pieces));
	json_object_set_new(o, "extents", json_integer(s->extents));
	json_object_set_new(o, "interleaved_files", json_integer(s->interleaved_files));
	json_object_set_new(o, "interleave_sets", json_integer(s->interleave_sets));
	json_object_set_new(o, "modeled_read_seconds", report_json_real(s->modeled_read_seconds));
	json_object_set_new(o, "ideal_read_seconds", report_json_real(s->ideal_read_seconds));
	json_object_set_new(o, "read_efficiency", report_json_real(s->read_efficiency));
	json_object_set_new(o, "score", report_json_real(s->score));
	/* Additions to the doc/design.md contract. */
	json_object_set_new(o, "fragmented_small_files",
			    json_integer(s->fragmented_small_files));
	json_object_set_new(o, "blocks", json_integer(s->blocks));
	json_object_set_new(o, "corrupt_files", json_integer(s->corrupt_files));
	json_object_set_new(o, "unreadable_inodes",
			    json_integer(layout->unreadable_inodes));
	return o;
}

json_t *report_json_file(const struct layout *layout, const struct layout_file *f)
{
	const struct layout_interleave *il = layout_file_interleave(layout, f);
	json_t *o = json_object(), *partners = json_array();
	double read, ideal;
	uint32_t i;

	layout_file_times(layout, f, &read, &ideal);
	if (il && layout->partners && il->partners) {
		/* The scan keeps them in the order found; the report lists them ascending. */
		ext2_ino_t *sorted = malloc(il->partners * sizeof(*sorted));

		if (sorted) {
			memcpy(sorted, layout->partners + il->first_partner,
			       il->partners * sizeof(*sorted));
			qsort(sorted, il->partners, sizeof(*sorted), compare_u32);
			for (i = 0; i < il->partners; i++)
				json_array_append_new(partners, json_integer(sorted[i]));
			free(sorted);
		} else {
			json_decref(partners);
			json_decref(o);
			return NULL;	/* the caller's write fails: no report with a list missing */
		}
	}
	json_object_set_new(o, "ino", json_integer(f->ino));
	json_object_set_new(o, "path", path_json(layout, f->ino));
	json_object_set_new(o, "type", json_string(layout_type_name(f->type)));
	json_object_set_new(o, "size", json_integer(layout_file_size(layout, f)));
	json_object_set_new(o, "blocks", json_integer(layout_file_blocks(layout, f)));
	json_object_set_new(o, "pieces", json_integer(layout_file_pieces(layout, f)));
	json_object_set_new(o, "extents", json_integer(layout_file_extents(layout, f)));
	json_object_set_new(o, "best", json_integer(layout_file_best(layout, f)));
	json_object_set_new(o, "interleaved_with", partners);
	json_object_set_new(o, "read_seconds", report_json_real(read));
	json_object_set_new(o, "ideal_read_seconds", report_json_real(ideal));
	json_object_set_new(o, "score", report_json_real(readmodel_score(read, ideal)));
	/* Additions to the doc/design.md contract. */
	json_object_set_new(o, "interleave_set", json_integer(il ? il->set : 0));
	json_object_set_new(o, "mapping", json_string(
		f->flags & LAYOUT_F_EXTENTS ? "extents" : "blockmap"));
	if (f->flags & LAYOUT_F_CORRUPT)
		json_object_set_new(o, "corrupt", json_true());
	return o;
}

json_t *report_json_groups(const struct layout *layout)
{
	ext2_filsys fs = layout->fs;
	json_t *a = json_array();
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		const struct free_group *fg = &layout->free.groups[g];

		json_array_append_new(a, json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:I}",
			"group", (json_int_t)g,
			"first_block", (json_int_t)ext2fs_group_first_block2(fs, g),
			"blocks", (json_int_t)ext2fs_group_blocks_count(fs, g),
			"free_blocks", (json_int_t)fg->free_blocks,
			"free_extents", (json_int_t)fg->free_extents,
			"largest_free", (json_int_t)fg->largest_free));
	}
	return a;
}

json_t *report_json_free_space(const struct layout *layout)
{
	const struct free_space *fsp = &layout->free;
	json_t *o, *h = json_array();
	unsigned i;

	for (i = 0; i < FREE_BUCKETS; i++) {
		const struct free_bucket *b = &fsp->histogram[i];

		if (!b->count)
			continue;
		json_array_append_new(h, json_pack("{s:I, s:I, s:I}",
			"min_blocks", (json_int_t)b->min_blocks,
			"count", (json_int_t)b->count,
			"blocks", (json_int_t)b->blocks));
	}
	o = json_pack("{s:I, s:I, s:I}",
		      "free_blocks", (json_int_t)fsp->free_blocks,
		      "free_extents", (json_int_t)fsp->free_extents,
		      "largest_free_extent", (json_int_t)fsp->largest_free_extent);
	json_object_set_new(o, "histogram", h);
	return o;
}

/*
 * What a reader of a large set can act on: the directories most of it is
 * in, and the pairs that alternate most.
 */
static json_t *set_outline_json(const struct layout *layout,
				const struct layout_set *s, json_t *o)
{
	struct layout_set_outline ol;
	json_t *dirs = json_array(), *pairs = json_array();
	uint32_t i;

	if (layout_set_outline(layout, s, &ol)) {
		json_decref(dirs);
		json_decref(pairs);
		json_decref(o);
		return NULL;
	}
	for (i = 0; i < ol.ndirs; i++)
		json_array_append_new(dirs, json_pack("{s:I, s:o, s:I}",
			"ino", (json_int_t)ol.dirs[i].ino,
			"path", ol.dirs[i].ino ? path_json(layout, ol.dirs[i].ino) :
						 json_null(),
			"files", (json_int_t)ol.dirs[i].members));
	for (i = 0; i < ol.npairs; i++)
		json_array_append_new(pairs, json_pack("{s:[I, I], s:[o, o], s:I}",
			"files", (json_int_t)ol.pairs[i].a, (json_int_t)ol.pairs[i].b,
			"paths", path_json(layout, ol.pairs[i].a),
			path_json(layout, ol.pairs[i].b),
			"alternations", (json_int_t)ol.pairs[i].alternations));
	json_object_set_new(o, "directory_count", json_integer(ol.directories));
	json_object_set_new(o, "top_directories", dirs);
	json_object_set_new(o, "strongest_pairs", pairs);
	return o;
}

json_t *report_json_sets(const struct layout *layout)
{
	json_t *a = json_array();
	uint64_t i;

	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];
		json_t *inos = json_array(), *paths = json_array(), *o;
		uint32_t m;

		for (m = 0; m < s->members; m++) {
			const struct layout_file *f =
				&layout->files[layout->set_members[s->first_member + m]];

			json_array_append_new(inos, json_integer(f->ino));
			json_array_append_new(paths, path_json(layout, f->ino));
		}
		o = json_pack("{s:I, s:o, s:o, s:I, s:I}",
			      "set", (json_int_t)(i + 1), "files", inos,
			      "paths", paths,
			      "alternations", (json_int_t)s->alternations,
			      "blocks", (json_int_t)s->blocks);
		json_object_set_new(o, "read_seconds", report_json_real(s->read_seconds));
		json_object_set_new(o, "ideal_read_seconds", report_json_real(s->ideal_seconds));
		if (s->members > LAYOUT_SET_LARGE)
			o = set_outline_json(layout, s, o);
		if (!o) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, o);
	}
	return a;
}
