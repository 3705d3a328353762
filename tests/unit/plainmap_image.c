/*
 * plainmap_image.c --- the maps e2defrag's planner makes from the scan's
 * stream (fmap_from_stream, for files the scan found plain) against the
 * maps read from the disk (fmap_read), item by item, on a scanned image.
 * For a block-mapped one, fmap_stream_plain must say so too, with the
 * disk map's stream for its size (the planner's room without the map).
 * Run by tests/cli/defrag-plainmap.sh.
 *
 *   plainmap_image IMAGE [INODE...]
 *
 * Prints one line (files, block-mapped ones, plain ones, plain ones with
 * an indirect block, plain extent-mapped ones), then for each INODE given "INODE plain" or "INODE not
 * plain"; exits 0 when every plain file's two maps agree, 1 when one does
 * not (it is named), 8 when the image cannot be scanned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "fmap.h"
#include "scan_image.h"

/* Whether A and B say the same map, as the planner uses it. */
static int same_map(const struct fmap *a, const struct fmap *b)
{
	uint32_t i;

	if (a->nitems != b->nitems || a->extents != b->extents ||
	    a->depth != b->depth || a->ntree_blocks != b->ntree_blocks ||
	    a->stream_blocks != b->stream_blocks ||
	    a->data_blocks != b->data_blocks)
		return 0;
	for (i = 0; i < a->nitems; i++) {
		const struct fmap_item *x = &a->items[i], *y = &b->items[i];

		if (x->pblk != y->pblk || x->lblk != y->lblk || x->len != y->len ||
		    x->parent != y->parent || x->slot != y->slot ||
		    x->kind != y->kind || x->uninit != y->uninit)
			return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct fsopen_info info;
	struct layout *layout;
	ext2_filsys fs;
	uint64_t i, blockmapped = 0, plain = 0, indirect = 0, extent = 0, bad = 0;
	int a;

	if (argc < 2) {
		fprintf(stderr, "usage: plainmap_image IMAGE [INODE...]\n");
		return 16;
	}
	if (scan_image("plainmap_image", argv[1], &fs, &info, &layout))
		return 8;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		struct layout_piece sole;
		const struct layout_piece *runs = &sole;
		struct fmap disk, made;
		blk64_t total = 0;
		errcode_t r1, r2;
		int room_ok = 1;

		blockmapped += !(f->flags & LAYOUT_F_EXTENTS);
		if (!(f->flags & LAYOUT_F_PLAIN_MAP))
			continue;
		plain++;
		if (layout_file_pieces(layout, f) == 1)
			sole = layout_file_piece(layout, f, 0);
		else
			runs = layout->pieces + layout_file_where(f);
		r1 = fmap_read(fs, f->ino, &disk);
		r2 = fmap_from_stream(fs, f->ino, !!(f->flags & LAYOUT_F_EXTENTS), runs,
				      layout_file_pieces(layout, f), &made);
		/* A block map's room, the planner's without making it: the disk's stream. */
		if (!(f->flags & LAYOUT_F_EXTENTS))
			room_ok = fmap_stream_plain(fs, runs, layout_file_pieces(layout, f),
						    &total) && !r1 && total == disk.stream_blocks;
		/* (made.i_flags: the flags the planner tests are clear, as on the disk) */
		if (r1 || r2 || !room_ok || !same_map(&disk, &made) ||
		    (disk.i_flags & (EXT2_COMPR_FL | EXT2_COMPRBLK_FL | EXT4_SNAPFILE_FL)) ||
		    made.i_flags != (disk.i_flags & EXT4_EXTENTS_FL)) {
			if (bad++ < 10)
				printf("inode %u: read %ld, made %ld: the maps differ\n",
				       f->ino, (long)r1, (long)r2);
		} else if (disk.extents) {
			extent++;
		} else if (disk.nitems && disk.items[disk.nitems - 1].parent != FMAP_ROOT) {
			indirect++;
		}
		fmap_free(&disk);
		fmap_free(&made);
	}
	printf("%s: %llu files, %llu block-mapped; %llu plain (%llu with indirect blocks,"
	       " %llu extent-mapped): %s\n", argv[1], (unsigned long long)layout->nfiles,
	       (unsigned long long)blockmapped, (unsigned long long)plain,
	       (unsigned long long)indirect, (unsigned long long)extent,
	       bad ? "maps differ" : "every made map is the map on the disk");
	for (a = 2; a < argc; a++) {
		ext2_ino_t ino = strtoul(argv[a], NULL, 0);
		int is = 0;

		for (i = 0; i < layout->nfiles; i++)
			if (layout->files[i].ino == ino)
				is = !!(layout->files[i].flags & LAYOUT_F_PLAIN_MAP);
		printf("%u %s\n", ino, is ? "plain" : "not plain");
	}
	layout_free(layout);
	fsopen_close(fs, &info);
	return bad ? 1 : 0;
}
