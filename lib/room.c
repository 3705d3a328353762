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

static int zone_ends_at_or_before(const void *zones, uint64_t k, const void *blk)
{
	const struct layout_zone *z = &((const struct layout_zone *)zones)[k];

	return z->start + z->len <= *(const blk64_t *)blk;
}

/* The zone holding BLK, or -1 (fixed metadata). */
static int64_t zone_of(const struct layout *layout, blk64_t blk)
{
	uint64_t k = lower_bound(0, layout->nzones, zone_ends_at_or_before,
				 layout->zones, &blk);

	return k < layout->nzones && layout->zones[k].start <= blk ? (int64_t)k : -1;
}

/* Free blocks in each zone, from the block bitmap the scan read. */
static errcode_t zone_free_blocks(const struct layout *layout, blk64_t **out)
{
	ext2_filsys fs = layout->fs;
	blk64_t *free_in = calloc(layout->nzones + 1, sizeof(*free_in));
	uint64_t z;

	if (!free_in)
		return ENOMEM;
	for (z = 0; z < layout->nzones; z++) {
		blk64_t start = layout->zones[z].start;
		blk64_t last = start + layout->zones[z].len - 1, end;

		while (start <= last) {
			if (ext2fs_find_first_zero_block_bitmap2(fs->block_map, start,
								 last, &start))
				break;
			if (ext2fs_find_first_set_block_bitmap2(fs->block_map, start,
								last, &end))
				end = last + 1;
			free_in[z] += end - start;
			start = end;
		}
	}
	*out = free_in;
	return 0;
}

static int cmp_room_desc(const void *a, const void *b)
{
	blk64_t x = *(const blk64_t *)a, y = *(const blk64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* A zone and the room it has for a file. */
struct zone_room {
	int64_t	zone;
	blk64_t	room;
};

static int cmp_zone_room_desc(const void *a, const void *b)
{
	const struct zone_room *x = a, *y = b;

	return cmp_room_desc(&x->room, &y->room);
}

static int cmp_zone(const void *a, const void *b)
{
	const struct zone_room *x = a, *y = b;

	return x->zone < y->zone ? -1 : x->zone > y->zone;
}

/*
 * Whether F could lie in fewer pieces than it has: the fewest zones
 * whose room for it (free blocks, and F's own blocks there) holds its
 * stream, fewer than its pieces.  Packing a zone slides the other files
 * in it aside, so the zone's free blocks and F's own make one run for F.
 * BY_ROOM: every zone's free blocks, largest first.
 */
static int fewer_possible(const struct layout *layout, const struct layout_file *f,
			  const blk64_t *zone_free, const struct zone_room *by_room,
			  struct zone_room *own, blk64_t *rooms)
{
	uint32_t pieces = layout_file_pieces(layout, f), i, n = 0, k, m = 0;
	blk64_t stream = layout_stream_blocks(layout, f), sum = 0;

	for (i = 0; i < pieces; i++) {
		struct layout_piece pc = layout_file_piece(layout, f, i);
		int64_t z = zone_of(layout, pc.start);

		if (z < 0)
			continue;
		own[n].zone = z;
		own[n++].room = pc.len;
	}
	qsort(own, n, sizeof(*own), cmp_zone);
	for (i = 0; i < n; i++) {
		if (m && own[m - 1].zone == own[i].zone) {
			own[m - 1].room += own[i].room;
			continue;
		}
		own[m++] = own[i];
	}
	/* F's zones with its own blocks, and the roomiest others: PIECES - 1 at most count. */
	for (i = 0; i < m; i++)
		rooms[i] = own[i].room + zone_free[own[i].zone];
	for (k = 0, i = 0; k < pieces && i < layout->nzones; i++) {
		struct zone_room key = { by_room[i].zone, 0 };

		if (!bsearch(&key, own, m, sizeof(*own), cmp_zone))
			rooms[m + k++] = by_room[i].room;
	}
	qsort(rooms, m + k, sizeof(*rooms), cmp_room_desc);
	for (i = 0; i < m + k && i + 1 < pieces; i++) {
		sum += rooms[i];
		if (sum >= stream)
			return 1;
	}
	return 0;
}

errcode_t layout_count_improvable(const struct layout *layout, int selected_only,
				  uint64_t *count)
{
	blk64_t *zone_free = NULL, *rooms = NULL;
	struct zone_room *own = NULL, *by_room = NULL;
	uint32_t most = 1;
	uint64_t i;
	errcode_t ret;

	*count = 0;
	for (i = 0; i < layout->nfiles; i++)
		if (layout_file_pieces(layout, &layout->files[i]) > most)
			most = layout_file_pieces(layout, &layout->files[i]);
	ret = zone_free_blocks(layout, &zone_free);
	if (ret)
		return ret;
	by_room = malloc((layout->nzones + 1) * sizeof(*by_room));
	own = malloc(((size_t)most + 1) * sizeof(*own));
	rooms = malloc(((size_t)most * 2 + 1) * sizeof(*rooms));
	if (!by_room || !own || !rooms) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < layout->nzones; i++) {
		by_room[i].zone = i;
		by_room[i].room = zone_free[i];
	}
	qsort(by_room, layout->nzones, sizeof(*by_room), cmp_zone_room_desc);
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if ((selected_only && !(f->flags & LAYOUT_F_SELECTED)) ||
		    (f->flags & LAYOUT_F_CORRUPT) ||
		    layout_file_pieces(layout, f) <= layout_file_best(layout, f))
			continue;
		/*
		 * Best within reach: the free space holds the largest part of
		 * its best layout, so the zones it takes can be cleared and
		 * filled one at a time.  Else fewer pieces, zone by zone.
		 */
		if (layout_room_available(layout) >= layout_room_needed(layout, f) ||
		    fewer_possible(layout, f, zone_free, by_room, own, rooms))
			(*count)++;
	}
out:
	free(zone_free);
	free(by_room);
	free(own);
	free(rooms);
	return ret;
}
