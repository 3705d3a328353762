/*
 * map_names.c --- the names of a layout scanned without them, read later
 * (see map.h).
 *
 * The map's first screen needs no names: e2fragmap scans with
 * LAYOUT_NAMES_NONE, draws, and reads the directories while the map is
 * already on the screen.  The directories' data blocks are known from the
 * layout itself: an extent-mapped directory's pieces are all data (its
 * tree blocks are aux runs), and so are those of a block-mapped one of at
 * most 12 blocks, which has no indirect block; only larger block-mapped
 * directories have their map walked again.  Then the scan's own
 * names_build() reads them, as a scan with LAYOUT_NAMES_ALL would have.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "map.h"

struct dir_runs {
	struct scan_extra	*x;
	ext2_ino_t		ino;
};

static errcode_t add_dir_run(struct scan_extra *x, ext2_ino_t ino, blk64_t start,
			     blk64_t len)
{
	struct dir_run *last = x->ndir_runs ? &x->dir_runs[x->ndir_runs - 1] : NULL;
	errcode_t ret;

	if (last && last->ino == ino && last->start + last->len == start) {
		last->len += len;
		return 0;
	}
	ret = util_grow(&x->dir_runs, &x->dir_runs_cap, x->ndir_runs + 1,
			  sizeof(*x->dir_runs));
	if (ret)
		return ret;
	x->dir_runs[x->ndir_runs++] = (struct dir_run){ start, len, ino };
	return 0;
}

static errcode_t walk_data(void *priv, blk64_t lblk, blk64_t pblk, blk64_t len,
			   int uninit)
{
	struct dir_runs *d = priv;

	(void)lblk;
	(void)uninit;
	return add_dir_run(d->x, d->ino, pblk, len);
}

/* The data blocks of a block-mapped directory with indirect blocks. */
static errcode_t walk_dir(ext2_filsys fs, struct scan_extra *x, ext2_ino_t ino,
			  char *buf)
{
	static const struct blockmap_visitor v = { .data = walk_data };
	struct ext2_inode inode;
	struct dir_runs d = { x, ino };
	errcode_t ret;

	ret = ext2fs_read_inode(fs, ino, &inode);
	if (ret)
		return 0;	/* unreadable now: its entries stay nameless */
	ret = blockmap_walk(fs, ino, &inode, &v, &d, buf);
	return ret == E2F_ERR_CORRUPT_INODE || ret == EXT2_ET_SHORT_READ ? 0 : ret;
}

int map_names_can_wait(ext2_filsys fs)
{
	/* Inline directories own no blocks: only the inode scan finds them. */
	return !ext2fs_has_feature_inline_data(fs->super);
}

/* The data blocks of every directory of LAYOUT into X->dir_runs. */
static errcode_t collect_dir_runs(struct layout *layout, struct scan_extra *x)
{
	ext2_filsys fs = layout->fs;
	char *buf = NULL;
	uint64_t i;
	uint32_t p;
	errcode_t ret;

	ret = ext2fs_get_mem(3 * fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		if (f->type != LAYOUT_DIR)
			continue;
		if (!(f->flags & LAYOUT_F_CORRUPT) &&
		    ((f->flags & LAYOUT_F_EXTENTS) || layout_stream_blocks(layout, f) <= EXT2_NDIR_BLOCKS)) {
			for (p = 0; p < layout_file_pieces(layout, f) && !ret; p++) {
				struct layout_piece pc = layout_file_piece(layout, f, p);

				ret = add_dir_run(x, f->ino, pc.start, pc.len);
			}
		} else {
			ret = walk_dir(fs, x, f->ino, buf);
		}
		if (ret)
			break;
	}
	ext2fs_free_mem(&buf);
	return ret;
}

errcode_t map_names_read(struct layout *layout, e2f_progress_fn progress, void *priv)
{
	struct layout_opts opts;
	struct scan_extra x;
	errcode_t ret;

	memset(&x, 0, sizeof(x));
	memset(&opts, 0, sizeof(opts));
	opts.model = layout->model;
	opts.names = LAYOUT_NAMES_ALL;
	opts.progress = progress;
	opts.progress_priv = priv;
	ret = collect_dir_runs(layout, &x);
	if (!ret) {
		/* What the scan named without reading directories goes: all are named now. */
		names_free(layout);
		layout->nnames = layout->name_pool_len = layout->name_pool_size = 0;
		ret = names_build(layout, &x, &opts);
	}
	if (!ret)
		interleave_order_sets(layout);
	free(x.dir_runs);
	return ret;
}

errcode_t layout_names_more(struct layout *layout,
			    int (*want)(void *priv, uint64_t file), void *priv)
{
	struct scan_extra x;
	errcode_t ret;

	memset(&x, 0, sizeof(x));
	ret = collect_dir_runs(layout, &x);
	if (!ret)
		ret = names_add(layout, &x, want, priv);
	free(x.dir_runs);
	return ret;
}
