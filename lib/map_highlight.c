/*
 * map_highlight.c --- which cells hold a chosen file, and which hold the
 * files it interleaves with (see map.h).
 *
 * The runs are gathered once when the file is chosen, sorted by address,
 * so that marking the cells of a window on every redraw only looks at the
 * runs inside it.
 */
#include <errno.h>
#include <stdlib.h>

#include "layout_int.h"
#include "map.h"
#include "lower_bound.h"

struct hl_run {
	blk64_t	start;
	blk64_t	len;
	uint8_t	mark;		/* enum map_mark */
};

struct map_highlight {
	const struct map	*map;
	uint64_t		file;
	struct hl_run		*runs;	/* sorted by start */
	blk64_t			*maxend; /* max end of runs[0 .. i] */
	uint64_t		nruns, cap;
};

static errcode_t hl_add(struct map_highlight *hl, blk64_t start, blk64_t len,
			uint8_t mark)
{
	errcode_t ret;

	if (!len)
		return 0;
	ret = util_grow(&hl->runs, &hl->cap, hl->nruns + 1, sizeof(*hl->runs));
	if (ret)
		return ret;
	hl->runs[hl->nruns++] = (struct hl_run){ start, len, mark };
	return 0;
}

/* Every block inode layout->files[FI] owns: pieces, then its aux blocks. */
static errcode_t hl_add_file(struct map_highlight *hl, const struct layout *layout,
			     uint64_t fi, uint8_t mark)
{
	const struct layout_file *f = &layout->files[fi];
	uint64_t i;
	errcode_t ret;

	for (i = 0; i < layout_file_pieces(layout, f); i++) {
		struct layout_piece pc = layout_file_piece(layout, f, i);

		ret = hl_add(hl, pc.start, pc.len, mark);
		if (ret)
			return ret;
	}
	/* Most files have no aux blocks: no need to look through them all. */
	if (!(f->flags & (LAYOUT_F_ETB | LAYOUT_F_HAS_XATTR_BLOCK)))
		return 0;
	for (i = 0; i < layout->naux; i++) {
		if (layout->aux[i].ino != f->ino)
			continue;
		ret = hl_add(hl, layout->aux[i].start, layout->aux[i].len, mark);
		if (ret)
			return ret;
	}
	return 0;
}

/* The partners of FI asked of the index (a scan that kept no lists). */
static errcode_t hl_add_asked(struct map_highlight *hl, const struct layout *layout,
			      struct layout_partners *lp, uint64_t fi)
{
	ext2_ino_t *inos;
	uint32_t n, i;
	errcode_t err;

	err = layout_partners_of(lp, fi, &inos, &n);
	for (i = 0; !err && i < n; i++) {
		int64_t pi = layout_find(layout, inos[i]);

		if (pi >= 0)
			err = hl_add_file(hl, layout, pi, MAP_MARK_PARTNER);
	}
	free(inos);
	return err;
}

static int cmp_hl_run(const void *a, const void *b)
{
	const struct hl_run *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->mark < y->mark ? -1 : x->mark > y->mark;
}

errcode_t map_highlight_new(const struct map *map, uint64_t file_index,
			    struct map_highlight **ret)
{
	const struct layout *layout = map_layout(map);
	const struct layout_interleave *il;
	struct map_highlight *hl;
	uint64_t i;
	errcode_t err = 0;

	*ret = NULL;
	if (file_index >= layout->nfiles)
		return EINVAL;
	hl = calloc(1, sizeof(*hl));
	if (!hl)
		return ENOMEM;
	hl->map = map;
	hl->file = file_index;
	il = layout_file_interleave(layout, &layout->files[file_index]);
	err = hl_add_file(hl, layout, file_index, MAP_MARK_FILE);
	if (!err && il && il->partners && !layout->partners) {
		/* Highlighting marks one file's partners: a few, not every file's list. */
		struct layout_partners *lp;

		err = map_partners(map, &lp);
		if (!err && lp)
			err = hl_add_asked(hl, layout, lp, file_index);
	}
	for (i = 0; !err && il && layout->partners && i < il->partners; i++) {
		int64_t pi = layout_find(layout,
					 layout->partners[il->first_partner + i]);

		if (pi >= 0)
			err = hl_add_file(hl, layout, pi, MAP_MARK_PARTNER);
	}
	if (!err) {
		hl->maxend = malloc((hl->nruns + 1) * sizeof(*hl->maxend));
		if (!hl->maxend)
			err = ENOMEM;
	}
	if (err) {
		map_highlight_free(hl);
		return err;
	}
	qsort(hl->runs, hl->nruns, sizeof(*hl->runs), cmp_hl_run);
	for (i = 0; i < hl->nruns; i++) {
		blk64_t end = hl->runs[i].start + hl->runs[i].len;

		hl->maxend[i] = i && hl->maxend[i - 1] > end ? hl->maxend[i - 1] : end;
	}
	*ret = hl;
	return 0;
}

void map_highlight_free(struct map_highlight *hl)
{
	if (!hl)
		return;
	free(hl->runs);
	free(hl->maxend);
	free(hl);
}

uint64_t map_highlight_file(const struct map_highlight *hl)
{
	return hl->file;
}

void map_highlight_cells(const struct map_highlight *hl, unsigned level,
			 uint64_t first, uint64_t count, uint8_t *marks)
{
	blk64_t from, to;
	uint64_t i, ncells;

	memset(marks, MAP_MARK_NONE, count);
	ncells = map_cells(hl->map, level);
	if (level >= map_levels(hl->map) || first >= ncells)
		return;
	if (count > ncells - first)
		count = ncells - first;
	from = first << level;
	to = (first + count) << level;
	i = lower_bound(0, hl->nruns, blk_at_or_before, hl->maxend, &from);
	for (; i < hl->nruns && hl->runs[i].start < to; i++) {
		const struct hl_run *r = &hl->runs[i];
		blk64_t a = r->start > from ? r->start : from;
		blk64_t b = r->start + r->len < to ? r->start + r->len : to;
		uint64_t c;

		if (b <= a)
			continue;
		for (c = a >> level; c <= (b - 1) >> level; c++)
			if (marks[c - first] < r->mark)
				marks[c - first] = r->mark;
	}
}

void map_highlight_file_blocks(const struct map_highlight *hl, unsigned level,
			       uint64_t first, uint64_t count, blk64_t *blocks)
{
	blk64_t from = first << level, to = (first + count) << level;
	uint64_t i;

	memset(blocks, 0, count * sizeof(*blocks));
	for (i = 0; i < hl->nruns; i++) {
		const struct hl_run *r = &hl->runs[i];
		blk64_t a = r->start > from ? r->start : from;
		blk64_t b = r->start + r->len < to ? r->start + r->len : to;

		/* A cell's share of the run: from A to the cell's end, or B. */
		while (r->mark == MAP_MARK_FILE && a < b) {
			blk64_t cell_end = ((a >> level) + 1) << level;
			blk64_t end = cell_end < b ? cell_end : b;

			blocks[(a >> level) - first] += end - a;
			a = end;
		}
	}
}
