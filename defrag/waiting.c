/*
 * waiting.c --- what units kept waiting hold back from later ones.
 *
 * A move that gains blocks a move of the open batch released must wait
 * for the batch's commit (the old layout uses them until then).  In plan
 * order each such move ends a batch: on a tree whose files slide into
 * the blocks their neighbours left, a commit (a journal write and two
 * flushes on a rotating disk) every few kilobytes.  So the unit may wait
 * while later units that need no commit go ahead (unit_walk.c), and the
 * waiting ones go once the batch has committed as it fills.
 *
 * Reordering is safe where the units commute, and the marks here say
 * where they may not.  Files: a later unit that moves a file a waiting
 * unit moves waits too, so each file's moves keep their order, and units
 * of distinct files change the pieces and read time (per file) by the
 * same in any order: every stop between units still leaves the disk no
 * worse.  Blocks: a later unit that goes ahead must not gain a block
 * that a waiting unit's moves may gain (their planned destinations and
 * new mapping blocks), or the waiting unit would find it taken; a block
 * a waiting unit still holds is not free, so a later unit that wants it
 * waits too (move.c checks every gained block free).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "units.h"
#include "waiting.h"

errcode_t waiting_init(struct waiting *w, ext2_filsys fs, const struct layout *layout,
		       const struct plan *plan, const struct run_opts *opts)
{
	errcode_t ret;

	memset(w, 0, sizeof(*w));
	w->layout = layout;
	w->plan = plan;
	w->opts = opts;
	w->first = fs->super->s_first_data_block;
	w->end = ext2fs_blocks_count(fs->super);
	w->seg_at = calloc(plan->nmoves + 1, sizeof(*w->seg_at));
	w->meta_at = calloc(plan->nmoves + 1, sizeof(*w->meta_at));
	w->file_walk[0] = calloc(layout->nfiles + 1, sizeof(*w->file_walk[0]));
	w->file_walk[1] = calloc(layout->nfiles + 1, sizeof(*w->file_walk[1]));
	if (!w->seg_at || !w->meta_at || !w->file_walk[0] || !w->file_walk[1]) {
		waiting_fini(w);
		return ENOMEM;
	}
	plan_move_offsets(plan, w->seg_at, w->meta_at);
	waiting_unmark(w, 0);
	waiting_unmark(w, 1);
	ret = ext2fs_allocate_block_bitmap(fs, "blocks waiting units gain", &w->dst[0]);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "blocks waiting units gain", &w->dst[1]);
	if (ret)
		waiting_fini(w);
	return ret;
}

void waiting_fini(struct waiting *w)
{
	free(w->seg_at);
	free(w->meta_at);
	free(w->file_walk[0]);
	free(w->file_walk[1]);
	if (w->dst[0])
		ext2fs_free_block_bitmap(w->dst[0]);
	if (w->dst[1])
		ext2fs_free_block_bitmap(w->dst[1]);
	memset(w, 0, sizeof(*w));
}

void waiting_unit_moves(const struct waiting *w, uint64_t u, uint64_t *first,
			uint64_t *end)
{
	const struct units *un = w->opts->units;

	if (!un) {
		*first = u;
		*end = u + 1 < w->plan->nmoves ? u + 1 : w->plan->nmoves;
		return;
	}
	*first = u ? un->end[u - 1] : 0;
	*end = u < un->n ? un->end[u] : w->plan->nmoves;
}

void waiting_unmark(struct waiting *w, int layer)
{
	if (w->dst[layer])
		ext2fs_clear_block_bitmap(w->dst[layer]);
	if (++w->walk[layer] == 0) {
		/* Wrapped: no file is marked in walk 1 but by this walk. */
		memset(w->file_walk[layer], 0,
		       (w->layout->nfiles + 1) * sizeof(*w->file_walk[layer]));
		w->walk[layer] = 1;
	}
}

/* Whether unit U from FROM moves a file a marked unit moves; MARK: mark them in LAYER. */
static int files_of(struct waiting *w, uint64_t u, uint64_t from, int mark, int layer)
{
	uint64_t first, end, m;

	waiting_unit_moves(w, u, &first, &end);
	for (m = first > from ? first : from; m < end; m++) {
		uint32_t f = w->plan->moves[m].file;

		if (mark)
			w->file_walk[layer][f] = w->walk[layer];
		else if (w->file_walk[0][f] == w->walk[0] ||
			 w->file_walk[1][f] == w->walk[1])
			return 1;
	}
	return 0;
}

/*
 * Call FN on each run unit U's moves from FROM may gain, clipped to the
 * filesystem; stop when it returns nonzero (returned).
 */
static int each_dst(const struct waiting *w, uint64_t u, uint64_t from,
		    int (*fn)(void *, blk64_t, blk64_t))
{
	uint64_t first, end, m;
	int stop = 0;

	waiting_unit_moves(w, u, &first, &end);
	for (m = first > from ? first : from; m < end && !stop; m++)
		stop = plan_move_gains(w->layout, w->plan, m, w->seg_at, w->meta_at, fn,
				       (void *)w);
	return stop;
}

/* RUN clipped to the filesystem; 0 when nothing is left. */
static blk64_t clip(const struct waiting *w, blk64_t *start, blk64_t len)
{
	blk64_t a = *start, b = *start + len;

	if (b < a)
		b = w->end;	/* wrapped: a damaged plan, clipped */
	if (a < w->first)
		a = w->first;
	if (b > w->end)
		b = w->end;
	*start = a;
	return b > a ? b - a : 0;
}

static int taken(void *priv, blk64_t start, blk64_t len)
{
	const struct waiting *w = priv;

	len = clip(w, &start, len);
	return len && (!ext2fs_test_block_bitmap_range2(w->dst[0], start, len) ||
		       !ext2fs_test_block_bitmap_range2(w->dst[1], start, len));
}

/* each_dst's FN marks in one layer: the layer each_dst is called for. */
static int mark_layer(const struct waiting *w, int layer, blk64_t start, blk64_t len)
{
	len = clip(w, &start, len);
	if (len)
		ext2fs_mark_block_bitmap_range2(w->dst[layer], start, len);
	return 0;
}

static int mark_rest(void *priv, blk64_t start, blk64_t len)
{
	return mark_layer(priv, 0, start, len);
}

static int mark_front(void *priv, blk64_t start, blk64_t len)
{
	return mark_layer(priv, 1, start, len);
}

int waiting_conflicts(struct waiting *w, uint64_t u, uint64_t from)
{
	return files_of(w, u, from, 0, 0) || each_dst(w, u, from, taken);
}

void waiting_mark(struct waiting *w, uint64_t u, int layer)
{
	(void)files_of(w, u, 0, 1, layer);
	(void)each_dst(w, u, 0, layer ? mark_front : mark_rest);
}
