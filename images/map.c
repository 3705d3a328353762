/*
 * map.c --- the block map of an inode while the workload writes it.
 *
 * Data blocks are appended run by run.  A block-mapped file (ext2, ext3)
 * takes its indirect blocks just before the first data block that needs
 * them, top down (TIND, DIND, IND, data), in the same cursor order, as
 * ext3_alloc_branch did.  An extent-mapped file (ext4) takes its extent
 * tree blocks just after the data block that overflowed the tree
 * (etree.c).  When the file is finished the mapping blocks are written
 * and the inode's i_block filled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"
#include <ext2fs/ext3_extents.h>

void map_init(struct img *img, struct img_map *m, blk64_t goal, int reserve)
{
	memset(m, 0, sizeof(*m));
	m->goal = goal;
	m->extents = img->extents;
	m->reserve = reserve;
}

void map_free(struct img_map *m)
{
	free(m->runs);
	free(m->ind);
	free(m->dind);
	etree_free(m);
	m->runs = NULL;
	m->ind = m->dind = NULL;
	m->nruns = m->runs_cap = m->nind = m->ind_cap = m->ndind = m->dind_cap = 0;
}

/*
 * Record LEN blocks from START at the end of the file: they extend the
 * last run when they continue it (up to the longest extent), or start new
 * runs, each of which an extent-mapped file enters into its tree.
 */
static errcode_t push_run(struct img *img, struct img_map *m, blk64_t start,
			  blk64_t len)
{
	blk64_t max = m->extents ? EXT_INIT_MAX_LEN : ~(blk64_t)0;
	struct img_run *last;
	errcode_t ret;

	while (len) {
		last = m->nruns ? &m->runs[m->nruns - 1] : NULL;
		if (last && last->pblk + last->len == start && last->len < max) {
			blk64_t add = len < max - last->len ? len : max - last->len;

			last->len += add;
			start += add;
			len -= add;
			m->nblocks += add;
			continue;
		}
		ret = img_grow(&m->runs, &m->runs_cap, m->nruns + 1,
			       sizeof(*m->runs));
		if (ret)
			return ret;
		m->runs[m->nruns].pblk = start;
		m->runs[m->nruns].len = 0;
		m->nruns++;
		if (m->extents) {
			ret = etree_add(img, m);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static errcode_t take_meta(struct img *img, struct img_map *m, blk64_t **arr,
			   uint32_t *n, uint32_t *cap, blk64_t *one)
{
	blk64_t pblk;
	errcode_t ret;

	if (arr) {
		ret = img_grow(arr, cap, *n + 1, sizeof(**arr));
		if (ret)
			return ret;
	}
	ret = alloc_meta(img, m, &pblk);
	if (ret)
		return ret;
	m->meta++;
	data_skip(img, pblk);
	if (arr)
		(*arr)[(*n)++] = pblk;
	else
		*one = pblk;
	return 0;
}

static errcode_t take_ind(struct img *img, struct img_map *m)
{
	return take_meta(img, m, &m->ind, &m->nind, &m->ind_cap, NULL);
}

static errcode_t take_dind(struct img *img, struct img_map *m)
{
	return take_meta(img, m, &m->dind, &m->ndind, &m->dind_cap, NULL);
}

/*
 * Before data block m->nblocks of a block-mapped file: take the indirect
 * blocks it is the first to need, and say how many data blocks follow
 * before the next one is needed.
 */
static errcode_t take_chain(struct img *img, struct img_map *m, blk64_t *room)
{
	blk64_t apb = img->apb, r;
	errcode_t ret = 0;

	if (m->nblocks < EXT2_NDIR_BLOCKS) {
		*room = EXT2_NDIR_BLOCKS - m->nblocks;
		return 0;
	}
	r = m->nblocks - EXT2_NDIR_BLOCKS;
	*room = apb - r % apb;
	if (r < apb)
		return r == 0 ? take_ind(img, m) : 0;
	r -= apb;
	if (r < apb * apb) {
		if (r == 0)
			ret = take_dind(img, m);
		if (!ret && r % apb == 0)
			ret = take_ind(img, m);
		return ret;
	}
	r -= apb * apb;
	if (r >= apb * apb * apb)
		return EFBIG;
	if (r == 0)
		ret = take_meta(img, m, NULL, NULL, NULL, &m->tind);
	if (!ret && r % (apb * apb) == 0)
		ret = take_dind(img, m);
	if (!ret && r % apb == 0)
		ret = take_ind(img, m);
	return ret;
}

errcode_t map_extend(struct img *img, struct img_map *m, blk64_t want,
		     blk64_t *start, blk64_t *len)
{
	blk64_t room;
	errcode_t ret;

	if (!m->extents) {
		ret = take_chain(img, m, &room);
		if (ret)
			return ret;
		if (want > room)
			want = room;
	} else if (m->nblocks + want > (1ULL << 32)) {
		return EFBIG;
	}
	ret = alloc_run(img, m, want, start, len);
	if (ret)
		return ret;
	return push_run(img, m, *start, *len);
}

errcode_t map_adopt(struct img *img, struct img_map *m, blk64_t pblk)
{
	m->goal = pblk + 1;
	return push_run(img, m, pblk, 1);
}

void map_release(struct img *img, struct img_map *m)
{
	uint32_t i;

	for (i = 0; i < m->nruns; i++)
		ext2fs_block_alloc_stats_range(img->fs, m->runs[i].pblk,
					       m->runs[i].len, -1);
	for (i = 0; i < m->nind; i++)
		ext2fs_block_alloc_stats_range(img->fs, m->ind[i], 1, -1);
	for (i = 0; i < m->ndind; i++)
		ext2fs_block_alloc_stats_range(img->fs, m->dind[i], 1, -1);
	if (m->tind)
		ext2fs_block_alloc_stats_range(img->fs, m->tind, 1, -1);
	etree_release(img, m);
	alloc_drop_window(img, m);
	map_free(m);
}

blk64_t map_pblk(const struct img_map *m, blk64_t lblk)
{
	uint32_t i;

	for (i = 0; i < m->nruns; i++) {
		if (lblk < m->runs[i].len)
			return m->runs[i].pblk + lblk;
		lblk -= m->runs[i].len;
	}
	return 0;
}

/* An indirect block of block numbers: NUMS[0..n-1], zeros after. */
static errcode_t write_ind(struct img *img, blk64_t pblk, const blk64_t *nums,
			   uint32_t n)
{
	__u32 *buf = (__u32 *)img->scratch;
	uint32_t k;

	memset(buf, 0, img->bs);
	for (k = 0; k < n; k++)
		buf[k] = ext2fs_cpu_to_le32((__u32)nums[k]);
	return io_channel_write_blk64(img->fs->io, pblk, 1, buf);
}

/* Children [first, first + apb) of an index array that has N entries. */
static uint32_t children(uint64_t first, uint32_t apb, uint32_t n)
{
	if (first >= n)
		return 0;
	return n - first < apb ? (uint32_t)(n - first) : apb;
}

static errcode_t blockmap_write(struct img *img, struct img_map *m,
				struct ext2_inode *inode)
{
	uint32_t apb = img->apb, i, fill = 0, cur = 0;
	blk64_t lblk = 0, *nums = NULL, b;
	errcode_t ret = 0;

	if (m->nblocks > EXT2_NDIR_BLOCKS) {
		nums = malloc(apb * sizeof(*nums));
		if (!nums)
			return ENOMEM;
	}
	for (i = 0; i < m->nruns; i++) {
		for (b = m->runs[i].pblk; b < m->runs[i].pblk + m->runs[i].len;
		     b++, lblk++) {
			if (lblk < EXT2_NDIR_BLOCKS) {
				inode->i_block[lblk] = (__u32)b;
				continue;
			}
			if (fill == apb) {
				ret = write_ind(img, m->ind[cur++], nums, fill);
				if (ret)
					goto out;
				fill = 0;
			}
			nums[fill++] = b;
		}
	}
	if (fill) {
		ret = write_ind(img, m->ind[cur++], nums, fill);
		if (ret)
			goto out;
	}
	if (cur != m->nind) {
		ret = EXT2_ET_BAD_IND_BLOCK;	/* a bug in the bookkeeping */
		goto out;
	}
	for (i = 0; i < m->ndind; i++) {
		uint64_t f = 1 + (uint64_t)i * apb;

		ret = write_ind(img, m->dind[i], f < m->nind ? m->ind + f : NULL,
				children(f, apb, m->nind));
		if (ret)
			goto out;
	}
	if (m->tind) {
		ret = write_ind(img, m->tind, m->dind + 1,
				children(1, apb, m->ndind));
		if (ret)
			goto out;
	}
	inode->i_block[EXT2_IND_BLOCK] = m->nind ? (__u32)m->ind[0] : 0;
	inode->i_block[EXT2_DIND_BLOCK] = m->ndind ? (__u32)m->dind[0] : 0;
	inode->i_block[EXT2_TIND_BLOCK] = (__u32)m->tind;
out:
	free(nums);
	return ret;
}

errcode_t map_write(struct img *img, struct img_map *m, ext2_ino_t ino,
		    struct ext2_inode *inode)
{
	errcode_t ret;

	memset(inode->i_block, 0, sizeof(inode->i_block));
	ret = ext2fs_iblk_set(img->fs, inode, m->nblocks + m->meta);
	if (ret)
		return ret;
	if (m->extents) {
		inode->i_flags |= EXT4_EXTENTS_FL;
		return etree_write(img, m, ino, inode);
	}
	inode->i_flags &= ~EXT4_EXTENTS_FL;
	return blockmap_write(img, m, inode);
}
