/*
 * alloc.c --- the block allocator of a 2.6-era kernel, as the seeds met it.
 *
 * Without reservation (ext2 in 2.6.2, ext3 before 2.6.10) each inode's
 * next block is the first free block at or after its goal, the block
 * after the last one it got.  Two files written in turns from the same
 * place therefore take blocks in turns: 1,3,5 and 2,4,6 (seed 004).
 *
 * With reservation windows (ext3 from 2.6.10, seed 000's fix) each
 * regular file first claims a window of --reservation blocks that no
 * other open file's window overlaps, and takes its blocks inside it; when
 * the window is used up it claims the next.  Windows live in memory only,
 * as in the kernel: the bitmap never sees them, and closing the file
 * drops its window.
 */
#include <errno.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

blk64_t alloc_used_blocks(const struct img *img)
{
	return ext2fs_blocks_count(img->fs->super) -
		ext2fs_free_blocks_count(img->fs->super);
}

static blk64_t fs_first(const struct img *img)
{
	return img->fs->super->s_first_data_block;
}

static blk64_t fs_last(const struct img *img)
{
	return ext2fs_blocks_count(img->fs->super) - 1;
}

/* First free block in [from, to], or 0 when none (block 0 is never free). */
blk64_t alloc_first_free(const struct img *img, blk64_t from, blk64_t to)
{
	blk64_t out;

	if (from > to)
		return 0;
	if (ext2fs_find_first_zero_block_bitmap2(img->fs->block_map, from, to,
						 &out))
		return 0;
	return out;
}

/* Length of the free run at START, at most MAX and not past TO. */
blk64_t alloc_free_run(const struct img *img, blk64_t start, blk64_t max,
		       blk64_t to)
{
	blk64_t end = start + max - 1, out;

	if (end > to)
		end = to;
	if (ext2fs_find_first_set_block_bitmap2(img->fs->block_map, start, end,
						&out))
		return end - start + 1;
	return out - start;
}

/* First free block at or after GOAL, wrapping round once; 0: full. */
static blk64_t first_free_wrap(const struct img *img, blk64_t goal)
{
	blk64_t b;

	if (goal < fs_first(img) || goal > fs_last(img))
		goal = fs_first(img);
	b = alloc_first_free(img, goal, fs_last(img));
	if (!b && goal > fs_first(img))
		b = alloc_first_free(img, fs_first(img), goal - 1);
	return b;
}

static void take(struct img *img, struct img_map *m, blk64_t start, blk64_t len)
{
	ext2fs_block_alloc_stats_range(img->fs, start, len, +1);
	m->goal = start + len;
}

void alloc_drop_window(struct img *img, struct img_map *m)
{
	uint32_t i;

	if (m->pa_len)
		mb_discard(img, m);
	for (i = 0; i < img->nwindows; i++) {
		if (img->windows[i] == m) {
			memmove(img->windows + i, img->windows + i + 1,
				(img->nwindows - i - 1) * sizeof(*img->windows));
			img->nwindows--;
			break;
		}
	}
	m->win_start = m->win_end = 0;
}

/* The other open window containing B, or NULL. */
static struct img_map *window_at(const struct img *img, blk64_t b)
{
	uint32_t i;

	for (i = 0; i < img->nwindows; i++)
		if (b >= img->windows[i]->win_start && b < img->windows[i]->win_end)
			return img->windows[i];
	return NULL;
}

/* The window starting first after B, or NULL. */
static struct img_map *window_after(const struct img *img, blk64_t b)
{
	struct img_map *best = NULL;
	uint32_t i;

	for (i = 0; i < img->nwindows; i++)
		if (img->windows[i]->win_start > b &&
		    (!best || img->windows[i]->win_start < best->win_start))
			best = img->windows[i];
	return best;
}

/*
 * Claim a new window for M: from its goal on, the first free block not
 * inside another window, with room for a whole window before the next
 * one (ext3's find_next_reservable_window).  Returns 0 with the window
 * set, or ENOSPC when no window fits anywhere.
 */
static errcode_t window_new(struct img *img, struct img_map *m)
{
	blk64_t want = img->opts->reservation, goal = m->goal, c;
	blk64_t orig = goal;
	struct img_map *w;
	errcode_t ret;
	int wrapped = 0;

	alloc_drop_window(img, m);
	if (goal < fs_first(img) || goal > fs_last(img))
		goal = orig = fs_first(img);
	for (;;) {
		if (wrapped && goal >= orig)
			return ENOSPC;
		c = alloc_first_free(img, goal, fs_last(img));
		if (!c) {
			if (wrapped)
				return ENOSPC;
			wrapped = 1;
			goal = fs_first(img);
			continue;
		}
		if (wrapped && c >= orig)
			return ENOSPC;
		w = window_at(img, c);
		if (w) {
			goal = w->win_end;
			continue;
		}
		w = window_after(img, c);
		if (w && w->win_start - c < want) {
			goal = w->win_end;
			continue;
		}
		break;
	}
	m->win_start = c;
	m->win_end = c + want;
	if (m->win_end > fs_last(img) + 1)
		m->win_end = fs_last(img) + 1;
	ret = img_grow(&img->windows, &img->windows_cap, img->nwindows + 1,
		       sizeof(*img->windows));
	if (ret)
		return ret;
	img->windows[img->nwindows++] = m;
	return 0;
}

/* Inside M's window: the first free run from the goal on, or 0. */
static blk64_t alloc_in_window(struct img *img, struct img_map *m,
			       blk64_t want, blk64_t *len)
{
	blk64_t from = m->goal > m->win_start ? m->goal : m->win_start, b;

	if (m->win_end <= m->win_start || from >= m->win_end)
		return 0;
	b = alloc_first_free(img, from, m->win_end - 1);
	if (!b)
		return 0;
	*len = alloc_free_run(img, b, want, m->win_end - 1);
	return b;
}

errcode_t alloc_run(struct img *img, struct img_map *m, blk64_t want,
		    blk64_t *start, blk64_t *len)
{
	blk64_t b;
	errcode_t ret;
	int tries;

	if (!want)
		return EINVAL;
	if (img->mballoc)
		return mb_alloc_data(img, m, want, start, len);
	if (m->reserve && img->opts->reservation) {
		for (tries = 0; tries < 2; tries++) {
			b = alloc_in_window(img, m, want, len);
			if (b) {
				take(img, m, b, *len);
				*start = b;
				return 0;
			}
			ret = window_new(img, m);
			if (ret == ENOSPC)
				break;		/* no room for a window: take any block */
			if (ret)
				return ret;
		}
	}
	b = first_free_wrap(img, m->goal);
	if (!b)
		return E2F_ERR_NO_SPACE;
	*len = alloc_free_run(img, b, want, fs_last(img));
	take(img, m, b, *len);
	*start = b;
	return 0;
}

errcode_t alloc_meta(struct img *img, struct img_map *m, blk64_t *pblk)
{
	blk64_t len;

	if (img->mballoc)
		return mb_alloc_meta(img, m, pblk);
	return alloc_run(img, m, 1, pblk, &len);
}
