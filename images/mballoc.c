/*
 * mballoc.c --- the block allocator of a today's kernel, for the workloads
 * that reproduce what users' disks look like now (nearfull.c).
 *
 * Since Linux 4.3 ext2 and ext3 are served by the ext4 driver, so every
 * type goes through ext4's multiblock allocator (fs/ext4/mballoc.c):
 *
 * - A data request is first normalized to a preallocation window of the
 *   file's logical space (ext4_mb_normalize_request): the power of two
 *   from 16 KiB to 1 MiB at or above the file's end, then windows of
 *   2, 4 or 8 MiB aligned in the file (which size depends on the block
 *   size), never covering blocks the file already has, never more than a
 *   group.  The whole window is taken and marked in use; what the write
 *   does not use stays the inode's preallocation, used by the next writes
 *   at those logical blocks and given back when the file is closed.
 * - Files of at most 16 blocks (s_mb_stream_request) share the locality
 *   group's preallocation of 512 blocks instead, so small files written
 *   one after the other sit together.
 * - Where: for an extent-mapped file going on, the goal (the block after
 *   its previous one) when the whole window is free there (block-mapped
 *   files and mapping blocks never ask for the goal itself: without
 *   EXT4_MB_HINT_TRY_GOAL it only names the group); else a scan of the groups, from the goal's
 *   group or, for files past 16 blocks, from where the last such
 *   allocation ended (stream allocation): first an aligned free chunk of
 *   the window's power-of-two size, then the best fitting free extent of
 *   the first few in a group with room (ext4_mb_complex_scan_group), and
 *   when no extent anywhere is long enough, the largest of the first group
 *   with free blocks, however short.
 * - Mapping blocks (indirect, extent tree) are single blocks, never
 *   preallocated: the best fitting hole of the goal's group, scanned
 *   from its start.
 *
 * Left out: the buddy orders behind aligned chunks beyond the first fit,
 * mb_optimize_scan's group lists (only on 16 groups or more), the
 * best-available trimming of 6.5+ and per-CPU locality groups (one CPU).
 */
#include <errno.h>

#include "e2frag.h"
#include "img.h"

#define STREAM_REQUEST	16	/* blocks: s_mb_stream_request */
#define GROUP_PREALLOC	512	/* blocks: s_mb_group_prealloc */
#define MIN_TO_SCAN	10	/* s_mb_min_to_scan */
#define MAX_TO_SCAN	200	/* s_mb_max_to_scan */

static blk64_t group_first(const struct img *img, dgrp_t g)
{
	return ext2fs_group_first_block2(img->fs, g);
}

static blk64_t group_last(const struct img *img, dgrp_t g)
{
	return ext2fs_group_last_block2(img->fs, g);
}

/* The group of B; the first one for a goal outside the filesystem. */
static dgrp_t group_of(const struct img *img, blk64_t b)
{
	if (b < img->fs->super->s_first_data_block ||
	    b >= ext2fs_blocks_count(img->fs->super))
		return 0;
	return ext2fs_group_of_blk2(img->fs, b);
}

static int power_of_two(blk64_t n)
{
	return n && !(n & (n - 1));
}

/*
 * The free extents of group G from its start, as ext4_mb_complex_scan_group
 * measures them: an extent of exactly WANT is taken at once; otherwise
 * the smallest one long enough once more than MIN_TO_SCAN were seen (or
 * the group ends), else the longest seen.  Returns its start (0: none)
 * and its length, not capped.
 */
static blk64_t group_scan(const struct img *img, dgrp_t g, blk64_t want,
			  blk64_t *len)
{
	blk64_t b = group_first(img, g), last = group_last(img, g), run;
	blk64_t best = 0, best_len = 0;
	unsigned seen = 0;

	while (b <= last) {
		b = alloc_first_free(img, b, last);
		if (!b)
			break;
		run = alloc_free_run(img, b, last - b + 1, last);
		seen++;
		if (run == want) {
			best = b;
			best_len = run;
			break;
		}
		if ((best_len < want && run > best_len) ||
		    (best_len > want && run > want && run < best_len)) {
			best = b;
			best_len = run;
		}
		if ((best_len >= want && seen > MIN_TO_SCAN) || seen > MAX_TO_SCAN)
			break;
		b += run;
	}
	*len = best_len;
	return best;
}

/* An aligned free chunk of WANT (a power of two) in group G, or 0. */
static blk64_t group_aligned(const struct img *img, dgrp_t g, blk64_t want)
{
	blk64_t first = group_first(img, g), last = group_last(img, g), b;

	for (b = first; b + want - 1 <= last; b += want)
		if (alloc_free_run(img, b, want, last) == want)
			return b;
	return 0;
}

/*
 * Find up to WANT blocks for a request whose goal is GOAL (tried first
 * only when TRY_GOAL: an extent-mapped file going on from its left
 * neighbour, EXT4_MB_HINT_TRY_GOAL), scanning the groups from START.
 * Returns the first block and sets *LEN (at most WANT; less only when no
 * extent of WANT is free anywhere).
 */
static blk64_t find_extent(const struct img *img, blk64_t goal, int try_goal,
			   dgrp_t start, blk64_t want, blk64_t *len)
{
	dgrp_t n = img->fs->group_desc_count, i, g;
	blk64_t b, run, bpg = EXT2_BLOCKS_PER_GROUP(img->fs->super);
	int pass;

	if (try_goal && goal >= img->fs->super->s_first_data_block &&
	    goal < ext2fs_blocks_count(img->fs->super) &&
	    !ext2fs_test_block_bitmap2(img->fs->block_map, goal) &&
	    alloc_free_run(img, goal, want, group_last(img, group_of(img, goal))) == want) {
		*len = want;
		return goal;
	}
	/* 0: aligned buddy chunk (powers of two of 4 blocks and more);
	 * 1: a fitting extent in a group with room; 2: whatever is free. */
	for (pass = power_of_two(want) && want >= 4 && want <= bpg ? 0 : 1;
	     pass < 3; pass++) {
		for (i = 0; i < n; i++) {
			g = (start + i) % n;
			if (!ext2fs_bg_free_blocks_count(img->fs, g) ||
			    (pass < 2 && ext2fs_bg_free_blocks_count(img->fs, g) < want))
				continue;
			if (pass == 0) {
				b = group_aligned(img, g, want);
				if (b) {
					*len = want;
					return b;
				}
				continue;
			}
			b = group_scan(img, g, want, &run);
			if (!b || (pass == 1 && run < want))
				continue;
			*len = run < want ? run : want;
			return b;
		}
	}
	return 0;
}

static void mark(struct img *img, blk64_t start, blk64_t len)
{
	ext2fs_block_alloc_stats_range(img->fs, start, len, +1);
}

/*
 * The logical window [*ws, *we) a request for WANT blocks at L of a file
 * is normalized to (ext4_mb_normalize_request).
 */
static void window(const struct img *img, blk64_t l, blk64_t want,
		   blk64_t *ws, blk64_t *we)
{
	uint64_t bs = img->bs, end = (l + want) * bs, size, start = 0;
	uint64_t maxk = 2 * bs;		/* "2 << bsbits", in KiB as the chunks */
	const uint64_t MiB = 1 << 20;

	if (end <= MiB) {
		for (size = 16 << 10; size < end; size <<= 1)
			;
	} else if (end <= 4 * MiB || maxk <= 2048) {
		size = 2 * MiB;
	} else if (end <= 8 * MiB || maxk <= 4096) {
		size = 4 * MiB;
	} else if (want * bs <= 8 * MiB || maxk <= 8192) {
		size = 8 * MiB;
	} else {
		size = want * bs;
		start = l * bs;
	}
	if (size >= 2 * MiB && size <= 8 * MiB)
		start = l * bs / size * size;
	*ws = start / bs;
	*we = (start + size) / bs;
	if (*ws < l)
		*ws = l;		/* never over blocks the file has */
	if (*we < l + want)
		*we = l + want;
	if (*we - *ws > EXT2_BLOCKS_PER_GROUP(img->fs->super))
		*we = *ws + EXT2_BLOCKS_PER_GROUP(img->fs->super);
}

/*
 * Nothing free: give back every preallocation and say whether that freed
 * anything (ext4_mb_discard_preallocations before the retry).
 */
static int discard_all(struct img *img)
{
	blk64_t before = img->pa_blocks + img->lg_len;
	uint32_t i;

	for (i = 0; i < img->nfiles; i++)
		if (img->files[i]->map.pa_len)
			mb_discard(img, &img->files[i]->map);
	mb_finish(img);
	return before > 0;
}

/* Small files: from the locality group's preallocation. */
static errcode_t group_alloc(struct img *img, struct img_map *m, blk64_t want,
			     blk64_t *start, blk64_t *len)
{
	blk64_t b, got;

	if (img->lg_len < want) {
		mb_finish(img);
		b = find_extent(img, m->goal, 0, group_of(img, m->goal),
				GROUP_PREALLOC, &got);
		if (!b && discard_all(img))
			b = find_extent(img, m->goal, 0, group_of(img, m->goal),
					GROUP_PREALLOC, &got);
		if (!b)
			return E2F_ERR_NO_SPACE;
		mark(img, b, got);
		img->lg_pstart = b;
		img->lg_len = got;
	}
	*start = img->lg_pstart;
	*len = want < img->lg_len ? want : img->lg_len;
	img->lg_pstart += *len;
	img->lg_len -= *len;
	m->goal = *start + *len;
	return 0;
}

errcode_t mb_alloc_data(struct img *img, struct img_map *m, blk64_t want,
			blk64_t *start, blk64_t *len)
{
	blk64_t l = m->nblocks, ws, we, b, got;
	int stream;

	if (m->pa_len && m->pa_lstart == l) {
		*start = m->pa_pstart;
		*len = want < m->pa_len ? want : m->pa_len;
		img->pa_blocks -= *len;
		m->pa_lstart += *len;
		m->pa_pstart += *len;
		m->pa_len -= *len;
		m->goal = *start + *len;
		return 0;
	}
	if (m->pa_len)
		mb_discard(img, m);
	if (!m->reserve) {
		/* directories: no normalization, no preallocation */
		ws = l;
		we = l + want;
		stream = 0;
	} else if (l + want <= STREAM_REQUEST) {
		return group_alloc(img, m, want, start, len);
	} else {
		window(img, l, want, &ws, &we);
		stream = 1;
	}
	b = find_extent(img, m->goal, m->extents && l > 0,
			stream ? img->last_group : group_of(img, m->goal),
			we - ws, &got);
	if (!b && discard_all(img))
		b = find_extent(img, m->goal, 0, group_of(img, m->goal),
				we - ws, &got);
	if (!b)
		return E2F_ERR_NO_SPACE;
	mark(img, b, got);
	if (stream)
		img->last_group = group_of(img, b + got - 1);
	*start = b;
	*len = want < got ? want : got;
	if (got > *len) {
		m->pa_lstart = l + *len;
		m->pa_pstart = b + *len;
		m->pa_len = got - *len;
		img->pa_blocks += m->pa_len;
	}
	m->goal = *start + *len;
	return 0;
}

errcode_t mb_alloc_meta(struct img *img, struct img_map *m, blk64_t *pblk)
{
	blk64_t b, len;

	b = find_extent(img, m->goal, 0, group_of(img, m->goal), 1, &len);
	if (!b && discard_all(img))
		b = find_extent(img, m->goal, 0, group_of(img, m->goal), 1, &len);
	if (!b)
		return E2F_ERR_NO_SPACE;
	mark(img, b, 1);
	*pblk = b;
	return 0;
}

void mb_discard(struct img *img, struct img_map *m)
{
	if (m->pa_len)
		ext2fs_block_alloc_stats_range(img->fs, m->pa_pstart, m->pa_len, -1);
	img->pa_blocks -= m->pa_len;
	m->pa_len = 0;
}

void mb_finish(struct img *img)
{
	if (img->lg_len)
		ext2fs_block_alloc_stats_range(img->fs, img->lg_pstart,
					       img->lg_len, -1);
	img->lg_len = 0;
}

blk64_t mb_used_blocks(const struct img *img)
{
	return alloc_used_blocks(img) - img->pa_blocks - img->lg_len;
}
