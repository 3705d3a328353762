/*
 * room.c --- the room a file's best layout needs against the room the
 * disk has, and e2frag's estimate of the avoidably fragmented files
 * e2defrag could bring closer to their best on the disk as it is
 * (doc/design.md: improvable).  Both come from the layout alone: the
 * core library cannot ask e2defrag's planner, so they are estimates,
 * and e2frag(8) says how they can be wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "lower_bound.h"

blk64_t layout_room_needed(const struct layout *layout, const struct layout_file *f)
{
	blk64_t stream = layout_stream_blocks(layout, f);
	blk64_t zone = layout->nzones ? layout->zone_prefix[1] : stream;

	/* The largest part of its best layout: all of it, or the largest zone. */
	return stream < zone ? stream : zone;
}

blk64_t layout_room_available(const struct layout *layout)
{
	return layout->free.free_blocks;
}

/* The free extents, in block order, from the bitmap the scan read. */
static errcode_t free_extents(const struct layout *layout, struct layout_piece **out,
			      uint64_t *n)
{
	ext2_filsys fs = layout->fs;
	blk64_t start, end;
	struct layout_piece *ext;
	uint64_t cap = layout->free.free_extents + 1;

	*n = 0;
	ext = malloc(cap * sizeof(*ext));
	if (!ext)
		return ENOMEM;
	for (start = fs->super->s_first_data_block;
	     *n < cap && freespace_next_run(fs, start, &start, &end); start = end) {
		ext[*n].start = start;
		ext[(*n)++].len = end - start;
	}
	*out = ext;
	return 0;
}

static int ends_at_or_before(const void *ext, uint64_t k, const void *blk)
{
	const struct layout_piece *e = &((const struct layout_piece *)ext)[k];

	return e->start + e->len <= *(const blk64_t *)blk;
}

/* Index of the free extent starting at BLK (FROM_END: ending there), or -1. */
static int64_t extent_at(const struct layout_piece *ext, uint64_t n, blk64_t blk,
			 int from_end)
{
	uint64_t k = lower_bound(0, n, ends_at_or_before, ext, &blk);

	if (from_end)
		return k && ext[k - 1].start + ext[k - 1].len == blk ? (int64_t)k - 1 : -1;
	return k < n && ext[k].start == blk ? (int64_t)k : -1;
}

static int cmp_piece_start(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Scratch of layout_count_improvable, sized for the file with most pieces. */
struct room_scratch {
	const struct layout_piece *ext;	/* free extents, block order */
	uint64_t	next;
	const uint64_t	*by_len;	/* their indexes, longest first */
	struct layout_piece *own;	/* a file's pieces, block order */
	blk64_t		*runs;		/* run lengths */
	uint64_t	*used;		/* free extents its runs take in */
};

/*
 * Whether F could lie in fewer pieces than it has without moving any
 * other file, as e2defrag's fewer-pieces step gives a file room
 * (doc/planner.md, step 6): all of it in one run of its own blocks and
 * the free blocks around and between them, or in fewer of the largest
 * free extents than it has pieces.
 */
static int fewer_possible(const struct layout *layout, const struct layout_file *f,
			  struct room_scratch *rs)
{
	uint32_t pieces = layout_file_pieces(layout, f), i, nrun = 0, nused = 0;
	blk64_t stream = layout_stream_blocks(layout, f), sum = 0;
	uint64_t k;
	int64_t e;
	int open = 0;

	for (i = 0; i < pieces; i++)
		rs->own[i] = layout_file_piece(layout, f, i);
	qsort(rs->own, pieces, sizeof(*rs->own), cmp_piece_start);
	for (i = 0; i < pieces; i++) {
		blk64_t end = rs->own[i].start + rs->own[i].len;

		/* A new run, with the free blocks before it. */
		if (!open) {
			rs->runs[nrun++] = 0;
			open = 1;
			e = extent_at(rs->ext, rs->next, rs->own[i].start, 1);
			if (e >= 0) {
				rs->runs[nrun - 1] += rs->ext[e].len;
				rs->used[nused++] = e;
			}
		}
		rs->runs[nrun - 1] += rs->own[i].len;
		/* The free blocks after it; the next piece goes on the run if they reach it. */
		e = extent_at(rs->ext, rs->next, end, 0);
		if (e >= 0) {
			rs->runs[nrun - 1] += rs->ext[e].len;
			rs->used[nused++] = e;
			end += rs->ext[e].len;
		}
		open = i + 1 < pieces && rs->own[i + 1].start == end;
	}
	/* All of it in one window of its own blocks and free ones. */
	for (i = 0; i < nrun; i++)
		if (rs->runs[i] >= stream)
			return 1;
	/* Else the fewest, largest free extents: fewer than its pieces. */
	for (k = 0; k < rs->next && k + 1 < pieces; k++) {
		sum += rs->ext[rs->by_len[k]].len;
		if (sum >= stream)
			return 1;
	}
	return 0;
}

static const struct layout_piece *sort_ext;

static int cmp_ext_len_desc(const void *a, const void *b)
{
	blk64_t x = sort_ext[*(const uint64_t *)a].len, y = sort_ext[*(const uint64_t *)b].len;

	return x < y ? 1 : x > y ? -1 : cmp_u64(a, b);
}

errcode_t layout_count_improvable(const struct layout *layout, int selected_only,
				  uint64_t *count)
{
	struct room_scratch rs;
	struct layout_piece *ext = NULL;
	uint64_t *by_len = NULL, i, n;
	uint32_t most = 1;
	errcode_t ret;

	*count = 0;
	memset(&rs, 0, sizeof(rs));
	for (i = 0; i < layout->nfiles; i++)
		if (layout_file_pieces(layout, &layout->files[i]) > most)
			most = layout_file_pieces(layout, &layout->files[i]);
	ret = free_extents(layout, &ext, &n);
	if (ret)
		return ret;
	by_len = malloc((n + 1) * sizeof(*by_len));
	rs.own = malloc(((size_t)most + 1) * sizeof(*rs.own));
	rs.runs = malloc(((size_t)most * 2 + 2) * sizeof(*rs.runs));
	rs.used = malloc(((size_t)most * 2 + 2) * sizeof(*rs.used));
	if (!by_len || !rs.own || !rs.runs || !rs.used) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		by_len[i] = i;
	sort_ext = ext;
	qsort(by_len, n, sizeof(*by_len), cmp_ext_len_desc);
	rs.ext = ext;
	rs.next = n;
	rs.by_len = by_len;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if ((selected_only && !(f->flags & LAYOUT_F_SELECTED)) ||
		    (f->flags & LAYOUT_F_CORRUPT) ||
		    layout_file_pieces(layout, f) <= layout_file_best(layout, f))
			continue;
		/*
		 * Best within reach: the free space holds the largest part of
		 * its best layout, so the zones it takes can be cleared and
		 * filled one at a time.  Else fewer pieces, in place.
		 */
		if (layout_room_available(layout) >= layout_room_needed(layout, f) ||
		    fewer_possible(layout, f, &rs))
			(*count)++;
	}
out:
	free(ext);
	free(by_len);
	free(rs.own);
	free(rs.runs);
	free(rs.used);
	return ret;
}
