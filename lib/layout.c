/*
 * layout.c --- the layout model's lifetime, lookups and summary.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout_int.h"
#include "sanity.h"
#include "lower_bound.h"

void layout_free(struct layout *layout)
{
	if (!layout)
		return;
	free(layout->files);
	free(layout->pieces);
	free(layout->aux);
	free(layout->file_etb);
	free(layout->file_big);
	free(layout->interleaved);
	free(layout->partners);
	free(layout->interleave_top);
	free(layout->set_members);
	free(layout->sets);
	free(layout->zones);
	free(layout->zone_prefix);
	free(layout->journal.runs);
	free(layout->resize.runs);
	if (layout->fixed)
		ext2fs_free_block_bitmap(layout->fixed);
	freespace_free(&layout->free);
	names_free(layout);
	sanity_notes_free(layout->sanity);
	free(layout);
}

void layout_drop_extras(struct layout *layout)
{
	free(layout->interleave_top);
	layout->interleave_top = NULL;
	sanity_notes_free(layout->sanity);
	layout->sanity = NULL;
}

static int file_before(const void *files, uint64_t i, const void *ino)
{
	return ((const struct layout_file *)files)[i].ino < *(const ext2_ino_t *)ino;
}

int64_t layout_find(const struct layout *layout, ext2_ino_t ino)
{
	uint64_t i = lower_bound(0, layout->nfiles, file_before, layout->files, &ino);

	return i < layout->nfiles && layout->files[i].ino == ino ? (int64_t)i : -1;
}

uint32_t layout_file_etb(const struct layout *layout, const struct layout_file *f)
{
	uint64_t lo = 0, hi = layout->nfile_etb;

	if (!(f->flags & LAYOUT_F_ETB))
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (layout->file_etb[mid].ino < f->ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < layout->nfile_etb && layout->file_etb[lo].ino == f->ino ?
		layout->file_etb[lo].blocks : 0;
}

static int big_before(const void *big, uint64_t i, const void *ino)
{
	return ((const struct layout_file_big *)big)[i].ino < *(const ext2_ino_t *)ino;
}

const struct layout_file_big *layout_file_big(const struct layout *layout,
					      const struct layout_file *f)
{
	static const struct layout_file_big none;
	uint64_t i = lower_bound(0, layout->nfile_big, big_before,
				 layout->file_big, &f->ino);

	return i < layout->nfile_big && layout->file_big[i].ino == f->ino ?
		&layout->file_big[i] : &none;
}

errcode_t layout_file_set(struct layout *layout, struct layout_file *f,
			  uint64_t size, blk64_t stream, uint64_t where,
			  uint32_t pieces, uint32_t extents)
{
	struct layout_file_big *b;
	uint64_t i;
	errcode_t ret;

	if (where > LAYOUT_WHERE_MAX)
		return EOVERFLOW;
	layout_file_set_where(f, where);
	f->size32 = size < LAYOUT_BIG32 ? size : LAYOUT_BIG32;
	f->stream32 = stream < LAYOUT_BIG32 ? stream : LAYOUT_BIG32;
	f->pieces16 = pieces < LAYOUT_BIG16 ? pieces : LAYOUT_BIG16;
	f->extents16 = extents < LAYOUT_BIG16 ? extents : LAYOUT_BIG16;
	i = lower_bound(0, layout->nfile_big, big_before, layout->file_big, &f->ino);
	if (i < layout->nfile_big && layout->file_big[i].ino == f->ino) {
		b = &layout->file_big[i];
	} else if (f->size32 == LAYOUT_BIG32 || f->stream32 == LAYOUT_BIG32 ||
		   f->pieces16 == LAYOUT_BIG16 || f->extents16 == LAYOUT_BIG16) {
		/* The scan goes in inode order: nearly always at the end. */
		ret = util_grow(&layout->file_big, &layout->file_big_cap,
				layout->nfile_big + 1, sizeof(*layout->file_big));
		if (ret)
			return ret;
		b = &layout->file_big[i];
		memmove(b + 1, b, (layout->nfile_big - i) * sizeof(*b));
		layout->nfile_big++;
		b->ino = f->ino;
	} else {
		return 0;
	}
	b->size = size;
	b->stream = stream;
	b->pieces = pieces;
	b->extents = extents;
	return 0;
}

uint32_t layout_file_best(const struct layout *layout, const struct layout_file *f)
{
	return zones_best(layout, layout_stream_blocks(layout, f));
}

void layout_file_times(const struct layout *layout, const struct layout_file *f,
		       double *read, double *ideal)
{
	readmodel_file(&layout->model, layout, f, layout_file_best(layout, f),
		       read, ideal);
}

static int entry_before(const void *entries, uint64_t i, const void *file)
{
	return ((const struct layout_interleave *)entries)[i].file < *(const uint32_t *)file;
}

const struct layout_interleave *
layout_file_interleave(const struct layout *layout, const struct layout_file *f)
{
	uint32_t file = f - layout->files;
	uint64_t i;

	/*
	 * Only files in more than one piece can interleave; those are looked
	 * up (interleaved is by file), where an index of every file would
	 * take 4 bytes a file for the few that have an entry.
	 */
	if (layout_file_pieces(layout, f) < 2)
		return NULL;
	i = lower_bound(0, layout->ninterleaved, entry_before, layout->interleaved, &file);
	return i < layout->ninterleaved && layout->interleaved[i].file == file ?
		&layout->interleaved[i] : NULL;
}

const char *layout_type_name(enum layout_type type)
{
	static const char *const names[] = {
		[LAYOUT_FILE] = "file", [LAYOUT_DIR] = "dir",
		[LAYOUT_SYMLINK] = "symlink", [LAYOUT_OTHER] = "other",
	};

	return type <= LAYOUT_OTHER ? names[type] : "other";
}

void layout_summarize(struct layout *layout, int all)
{
	struct layout_summary *s = &layout->summary;
	blk64_t bpg = layout->fs->super->s_blocks_per_group;
	uint64_t i, corrupt = s->corrupt_files;

	memset(s, 0, sizeof(*s));
	s->corrupt_files = corrupt;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		uint32_t best, pieces;
		double read, ideal;
		blk64_t blocks;

		if (!all && !(f->flags & LAYOUT_F_SELECTED))
			continue;
		blocks = layout_file_blocks(layout, f);
		best = layout_file_best(layout, f);
		readmodel_file(&layout->model, layout, f, best, &read, &ideal);
		pieces = layout_file_pieces(layout, f);
		s->files++;
		s->pieces += pieces;
		s->best_pieces += best;
		s->extents += layout_file_extents(layout, f);
		s->blocks += blocks;
		if (pieces > 1)
			s->fragmented_files++;
		/* e2fsck counts the EA block too when it compares with a group. */
		if (pieces > 1 &&
		    blocks + !!(f->flags & LAYOUT_F_HAS_XATTR_BLOCK) < bpg)
			s->fragmented_small_files++;
		if (pieces > best)
			s->avoidably_fragmented_files++;
		if (layout_file_interleave(layout, f))
			s->interleaved_files++;
		s->modeled_read_seconds += read;
		s->ideal_read_seconds += ideal;
	}
	if (all) {
		s->interleave_sets = layout->nsets;
	} else {
		/* Sets with at least one selected member. */
		for (i = 0; i < layout->nsets; i++) {
			const struct layout_set *set = &layout->sets[i];
			uint32_t m;

			for (m = 0; m < set->members; m++) {
				uint32_t fi = layout->set_members[set->first_member + m];

				if (layout->files[fi].flags & LAYOUT_F_SELECTED) {
					s->interleave_sets++;
					break;
				}
			}
		}
	}
	s->read_efficiency = s->modeled_read_seconds > 0 ?
		s->ideal_read_seconds / s->modeled_read_seconds : 1.0;
	s->score = readmodel_score(s->modeled_read_seconds, s->ideal_read_seconds);
}
