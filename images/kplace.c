/*
 * kplace.c --- where a current kernel (ext4's driver, which also mounts
 * ext2 and ext3: delayed allocation, mballoc) puts the blocks of small
 * files written one after another, each closed before writeback.
 *
 * The rules, read off loop-mounted images written by a 6.x kernel
 * (bench/kernel-tree.sh) and the kernel's ialloc.c and mballoc.c:
 *
 *  - Directories made in the root go to the group (with flex_bg, the flex
 *    group) with the fewest directories among those with at least the
 *    average free inodes and free blocks, looking from a random group on
 *    (find_group_orlov); their blocks come from the start of that group.
 *    Files get inodes in their directory's group (find_group_other).
 *  - Small requests (up to 16 blocks, s_mb_stream_request) share the
 *    locality group's preallocation: 512 blocks (s_mb_group_prealloc)
 *    taken at the first free 512-aligned chunk from the goal of the file
 *    that needed it, then handed out in write order whatever directory
 *    each file is in.  Goal: the inode's group start; with flex_bg the
 *    flex group's second group for regular files
 *    (ext4_inode_to_goal_block).
 *  - Extent-mapped (ext4): a closed file larger than that is mapped in
 *    one request of its exact size (no inode preallocation for closed
 *    files), at the first free run that holds it from its goal.
 *  - Block-mapped (ext2, ext3): writeback maps the file in pieces, so the
 *    first 16 blocks come from the locality group and the rest (the
 *    tail) is a stream request from mballoc's global stream goal: a
 *    chunk of the file size rounded up to a power of two (at most 8M),
 *    aligned to it, which maps the file from block 0, so the tail starts
 *    16 blocks in (tail_place).  The unused parts of the chunk are given
 *    back later; the stream has moved on, so only one-block requests
 *    fill them.  Indirect blocks are such requests
 *    (no preallocation for metadata): the lowest free block in the group
 *    of the data they map.  So the indirect blocks of files from all over
 *    the filesystem land in the holes between other files' tails, and
 *    the tails and their neighbours' indirect blocks interleave: what
 *    e2frag reports as one huge interleave set on such a tree.
 *
 * What is not modelled: preallocations discarded under memory pressure,
 * several locality groups (one per CPU: one writer here), the buddy
 * allocator's criteria beyond first fit from the goal.
 */
#include <errno.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

#define SMALL_REQUEST	16	/* s_mb_stream_request */
#define LG_BLOCKS	512	/* s_mb_group_prealloc */
#define TAIL_ALIGN	16
#define PA_MAX_BYTES	(8ULL << 20)
#define FLEX_DIR_SCHEME	4	/* EXT4_FLEX_SIZE_DIR_ALLOC_SCHEME */
#define STREAM_ORLOV	0x0410f1ULL

void kplace_init(struct kplace *k, struct img *img)
{
	ext2_filsys fs = img->fs;

	memset(k, 0, sizeof(*k));
	k->img = img;
	rng_seed(&k->rng, img->opts->seed, STREAM_ORLOV);
	k->flex = 1;
	if (ext2fs_has_feature_flex_bg(fs->super))
		k->flex = 1U << fs->super->s_log_groups_per_flex;
	k->stream = fs->super->s_first_data_block;
}

static blk64_t last_block(const struct img *img)
{
	return ext2fs_blocks_count(img->fs->super) - 1;
}

/*
 * The first run of LEN free blocks starting at a multiple of ALIGN, at
 * or after GOAL and then from the start up to it; 0 when there is none.
 */
static blk64_t find_run(const struct img *img, blk64_t goal, blk64_t len,
			blk64_t align)
{
	blk64_t first = img->fs->super->s_first_data_block, last = last_block(img);
	blk64_t from, to, b, run;
	int pass;

	if (goal < first || goal > last)
		goal = first;
	for (pass = 0, from = goal, to = last; pass < 2; pass++) {
		b = from;
		while (b <= to) {
			b = alloc_first_free(img, b, to);
			if (!b)
				break;
			b = (b + align - 1) / align * align;
			if (b > to)
				break;
			run = alloc_free_run(img, b, len, last);
			if (run == len)
				return b;
			b += run ? run : 1;
		}
		if (goal == first)
			break;
		from = first;
		to = goal - 1;
	}
	return 0;
}

/* The lowest free block in the group of B (0: the group is full). */
static blk64_t group_low_free(const struct img *img, blk64_t b)
{
	dgrp_t g = ext2fs_group_of_blk2(img->fs, b);

	return alloc_first_free(img, ext2fs_group_first_block2(img->fs, g),
				ext2fs_group_last_block2(img->fs, g));
}

/* ext4_inode_to_goal_block() for a regular file, without the colour. */
static blk64_t file_goal(const struct kplace *k, ext2_ino_t ino)
{
	ext2_filsys fs = k->img->fs;
	dgrp_t g = ext2fs_group_of_ino(fs, ino);

	if (k->flex >= FLEX_DIR_SCHEME) {
		g &= ~(k->flex - 1);
		if (g + 1 < fs->group_desc_count)
			g++;
	}
	return ext2fs_group_first_block2(fs, g);
}

/*
 * No group has both average free inodes and blocks: the first group from
 * the root's (group 0) on with at least the average free inodes, then
 * with any.  Each directory takes its group below the average, so this
 * too spreads directories round the groups.
 */
static ext2_ino_t orlov_fallback(ext2_filsys fs)
{
	dgrp_t g, ngroups = fs->group_desc_count;
	uint64_t ave = fs->super->s_free_inodes_count / ngroups;
	int pass;

	for (pass = 0; pass < 2; pass++, ave = 1)
		for (g = 0; g < ngroups; g++)
			if (ext2fs_bg_free_inodes_count(fs, g) &&
			    ext2fs_bg_free_inodes_count(fs, g) >= ave)
				return g * fs->super->s_inodes_per_group + 1;
	return EXT2_ROOT_INO;
}

ext2_ino_t kplace_topdir_goal(struct kplace *k)
{
	ext2_filsys fs = k->img->fs;
	dgrp_t ngroups = fs->group_desc_count, nflex, start, i, f, g, best = 0;
	uint64_t freei, freeb, dirs, best_dirs = UINT64_MAX;
	uint64_t ave_freei, ave_freeb;
	int found = 0;

	nflex = (ngroups + k->flex - 1) / k->flex;
	ave_freei = fs->super->s_free_inodes_count / nflex;
	ave_freeb = ext2fs_free_blocks_count(fs->super) / nflex;
	start = (dgrp_t)rng_below(&k->rng, nflex);
	for (i = 0; i < nflex; i++) {
		f = (start + i) % nflex;
		freei = freeb = dirs = 0;
		for (g = f * k->flex; g < (f + 1) * k->flex && g < ngroups; g++) {
			freei += ext2fs_bg_free_inodes_count(fs, g);
			freeb += ext2fs_bg_free_blocks_count(fs, g);
			dirs += ext2fs_bg_used_dirs_count(fs, g);
		}
		if (!freei || dirs >= best_dirs || freei < ave_freei ||
		    freeb < ave_freeb)
			continue;
		best = f;
		best_dirs = dirs;
		found = 1;
	}
	if (!found)
		return orlov_fallback(fs);
	/* Within the flex group, the first group with a free inode. */
	for (g = best * k->flex; g < (best + 1) * k->flex && g < ngroups; g++)
		if (ext2fs_bg_free_inodes_count(fs, g))
			break;
	if (g >= ngroups)
		g = best * k->flex;
	return g * fs->super->s_inodes_per_group + 1;
}

/* Give the unused rest of the locality group's preallocation back. */
static void lg_release(struct kplace *k)
{
	if (k->lg_end > k->lg_next)
		ext2fs_block_alloc_stats_range(k->img->fs, k->lg_next,
					       k->lg_end - k->lg_next, -1);
	k->lg_next = k->lg_end = 0;
}

void kplace_finish(struct kplace *k)
{
	lg_release(k);
}

/*
 * N blocks from the locality group's preallocation, a new one from the
 * goal of inode INO when the old one has not enough left.  *START is 0
 * when no free run of N blocks is left anywhere.
 */
static void lg_take(struct kplace *k, ext2_ino_t ino, blk64_t n, blk64_t *start)
{
	struct img *img = k->img;
	blk64_t goal, b, len = LG_BLOCKS;

	*start = 0;
	if (k->lg_end - k->lg_next < n) {
		lg_release(k);
		goal = file_goal(k, ino);
		b = find_run(img, goal, LG_BLOCKS, LG_BLOCKS);
		if (!b) {
			b = find_run(img, goal, n, 1);
			if (!b)
				return;
			len = alloc_free_run(img, b, LG_BLOCKS, last_block(img));
		}
		ext2fs_block_alloc_stats_range(img->fs, b, len, +1);
		k->lg_next = b;
		k->lg_end = b + len;
	}
	*start = k->lg_next;
	k->lg_next += n;
}

/*
 * Where the TAIL blocks after the first HEAD of a block-mapped file of N
 * blocks go.  mballoc normalizes the request to the file's size rounded
 * up to a power of two and looks for a free chunk of that size, aligned
 * to it (the buddy allocator), from the start of the stream goal's group;
 * the chunk maps the file from logical block 0, so the tail starts HEAD
 * blocks into it and the rest of the chunk is given back.
 */
static blk64_t tail_place(struct kplace *k, blk64_t n, blk64_t head,
			  blk64_t tail)
{
	struct img *img = k->img;
	ext2_filsys fs = img->fs;
	blk64_t chunk = 1, max = PA_MAX_BYTES / img->bs, from, p;

	while (chunk < n && chunk < max)
		chunk <<= 1;
	from = ext2fs_group_first_block2(fs, ext2fs_group_of_blk2(fs, k->stream));
	p = chunk >= n ? find_run(img, from, chunk, chunk) : 0;
	if (p) {
		p += head;
	} else {
		p = find_run(img, from, tail, TAIL_ALIGN);
		if (!p)
			p = find_run(img, from, tail, 1);
		if (!p)
			return k->stream;	/* no room in one run: fragments */
	}
	k->stream = p;
	return p;
}

errcode_t kplace_write(struct kplace *k, struct img_file *f, uint64_t size)
{
	struct img *img = k->img;
	unsigned bs = img->bs;
	blk64_t n = (size + bs - 1) / bs, head, start, tail, t;
	uint64_t head_bytes = 0;
	errcode_t ret = 0;

	if (img->extents)
		head = n <= SMALL_REQUEST ? n : 0;
	else
		head = n < SMALL_REQUEST ? n : SMALL_REQUEST;
	if (head) {
		lg_take(k, f->ino, head, &start);
		if (start) {
			/* Indirect blocks: not from the preallocation (still held). */
			if (!img->extents && n > EXT2_NDIR_BLOCKS)
				f->map.meta_goal = group_low_free(img, start);
			ext2fs_block_alloc_stats_range(img->fs, start, head, -1);
			f->map.goal = start;
		} else {
			f->map.goal = file_goal(k, f->ino);
		}
		head_bytes = size < head * bs ? size : head * bs;
		ret = file_append(img, f, head_bytes);
	}
	if (!ret && n > head) {
		tail = n - head;
		if (img->extents) {
			t = find_run(img, file_goal(k, f->ino), tail, 1);
			if (!t)
				t = file_goal(k, f->ino);
		} else {
			t = tail_place(k, n, head, tail);
			f->map.meta_goal = group_low_free(img, t);
		}
		f->map.goal = t;
		ret = file_append(img, f, size - head_bytes);
	}
	f->map.meta_goal = 0;
	if (!ret)
		ret = file_close(img, f);
	return ret;
}
