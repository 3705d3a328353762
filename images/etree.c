/*
 * etree.c --- extent trees grown as ext4 grows them, by appending.
 *
 * A file written front to back only ever adds an extent at the right
 * edge.  The kernel then fills the rightmost leaf; when it is full it
 * adds a new leaf (and new index blocks down from the lowest level that
 * still has room: ext4_ext_split), and when every level is full up to the
 * in-inode root it moves the root's entries into a new block and the
 * tree grows one level (ext4_ext_grow_indepth).  Tree blocks are taken
 * when that happens, from the file's goal, right after the data block
 * that needed them, so they sit among the file's data as on a real disk.
 *
 * Only the shape is kept while the file grows; the entries are derived
 * from the file's extents (its runs) when the tree is written.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"
#include <ext2fs/ext3_extents.h>

#define ROOT_MAX 4	/* entries in the 60-byte i_block after the header */

static errcode_t new_node(struct img *img, struct img_map *m, int level,
			  uint32_t entries)
{
	struct img_etree *t = &m->etree;
	blk64_t pblk;
	errcode_t ret;

	ret = img_grow(&t->level[level], &t->cap[level], t->nlevel[level] + 1,
		       sizeof(struct img_enode));
	if (ret)
		return ret;
	ret = alloc_meta(img, m, &pblk);
	if (ret)
		return ret;
	m->meta++;
	data_skip(img, pblk);
	t->level[level][t->nlevel[level]].pblk = pblk;
	t->level[level][t->nlevel[level]].entries = entries;
	t->nlevel[level]++;
	return 0;
}

/* The root's entries move into a new block; the tree is one level deeper. */
static errcode_t grow_indepth(struct img *img, struct img_map *m)
{
	struct img_etree *t = &m->etree;
	errcode_t ret;

	if (t->depth >= IMG_MAX_DEPTH)
		return EFBIG;
	ret = new_node(img, m, t->depth, t->root);
	if (ret)
		return ret;
	t->depth++;
	t->root = 1;
	return 0;
}

static struct img_enode *rightmost(struct img_etree *t, int level)
{
	return &t->level[level][t->nlevel[level] - 1];
}

errcode_t etree_add(struct img *img, struct img_map *m)
{
	struct img_etree *t = &m->etree;
	uint32_t cap = img->ext_per_block;
	errcode_t ret;
	int k, l;

	if (t->depth == 0) {
		if (t->root < ROOT_MAX) {
			t->root++;
			return 0;
		}
		ret = grow_indepth(img, m);
		if (ret)
			return ret;
	}
	for (;;) {
		if (rightmost(t, 0)->entries < cap) {
			rightmost(t, 0)->entries++;
			return 0;
		}
		for (k = 1; k < t->depth; k++)
			if (rightmost(t, k)->entries < cap)
				break;
		if (k < t->depth || t->root < ROOT_MAX)
			break;
		ret = grow_indepth(img, m);
		if (ret)
			return ret;
	}
	/*
	 * Level k has room: a new chain of blocks below it, taken top down
	 * (the new leaf last), each holding one entry.
	 */
	for (l = k - 1; l >= 0; l--) {
		ret = new_node(img, m, l, 1);
		if (ret)
			return ret;
	}
	if (k == t->depth)
		t->root++;
	else
		rightmost(t, k)->entries++;
	return 0;
}

void etree_release(struct img *img, struct img_map *m)
{
	struct img_etree *t = &m->etree;
	uint32_t i;
	int l;

	for (l = 0; l < t->depth; l++)
		for (i = 0; i < t->nlevel[l]; i++)
			ext2fs_block_alloc_stats_range(img->fs, t->level[l][i].pblk,
						       1, -1);
}

void etree_free(struct img_map *m)
{
	int l;

	for (l = 0; l < IMG_MAX_DEPTH; l++)
		free(m->etree.level[l]);
	memset(&m->etree, 0, sizeof(m->etree));
}

static void put_header(struct ext3_extent_header *eh, uint32_t entries,
		       uint32_t max, int depth)
{
	eh->eh_magic = ext2fs_cpu_to_le16(EXT3_EXT_MAGIC);
	eh->eh_entries = ext2fs_cpu_to_le16(entries);
	eh->eh_max = ext2fs_cpu_to_le16(max);
	eh->eh_depth = ext2fs_cpu_to_le16(depth);
	eh->eh_generation = 0;
}

static void put_extent(struct ext3_extent *ex, blk64_t lblk,
		       const struct img_run *r)
{
	ex->ee_block = ext2fs_cpu_to_le32((__u32)lblk);
	ex->ee_len = ext2fs_cpu_to_le16((__u16)r->len);
	ex->ee_start = ext2fs_cpu_to_le32((__u32)r->pblk);
	ex->ee_start_hi = ext2fs_cpu_to_le16((__u16)(r->pblk >> 32));
}

static void put_index(struct ext3_extent_idx *ix, blk64_t lblk, blk64_t pblk)
{
	ix->ei_block = ext2fs_cpu_to_le32((__u32)lblk);
	ix->ei_leaf = ext2fs_cpu_to_le32((__u32)pblk);
	ix->ei_leaf_hi = ext2fs_cpu_to_le16((__u16)(pblk >> 32));
	ix->ei_unused = 0;
}

static errcode_t write_node(struct img *img, ext2_ino_t ino, blk64_t pblk,
			    char *buf)
{
	errcode_t ret;

	ret = ext2fs_extent_block_csum_set(img->fs, ino,
					   (struct ext3_extent_header *)buf);
	if (ret)
		return ret;
	return io_channel_write_blk64(img->fs->io, pblk, 1, buf);
}

/*
 * Write the tree blocks level by level from the leaves up, and the root
 * into INODE's i_block.  FIRST[i] is the first logical block under node i
 * of the level just written: what the level above indexes by.
 */
errcode_t etree_write(struct img *img, struct img_map *m, ext2_ino_t ino,
		      struct ext2_inode *inode)
{
	struct img_etree *t = &m->etree;
	struct ext3_extent_header *eh;
	blk64_t *first = NULL, *upper = NULL, lblk = 0;
	uint32_t i, j, e = 0, child = 0;
	char *buf = img->scratch;
	errcode_t ret = 0;
	int l;

	if (t->depth == 0) {
		if (t->root != m->nruns)
			return EXT2_ET_EXTENT_HEADER_BAD;
		eh = (struct ext3_extent_header *)inode->i_block;
		put_header(eh, t->root, ROOT_MAX, 0);
		for (i = 0; i < t->root; i++) {
			put_extent((struct ext3_extent *)(eh + 1) + i, lblk,
				   &m->runs[i]);
			lblk += m->runs[i].len;
		}
		return 0;
	}
	for (l = 0; l < t->depth; l++) {
		upper = calloc(t->nlevel[l], sizeof(*upper));
		if (!upper) {
			ret = ENOMEM;
			goto out;
		}
		child = 0;
		for (i = 0; i < t->nlevel[l]; i++) {
			struct img_enode *n = &t->level[l][i];

			memset(buf, 0, img->bs);
			eh = (struct ext3_extent_header *)buf;
			put_header(eh, n->entries, img->ext_per_block, l);
			for (j = 0; j < n->entries; j++) {
				if (l == 0) {
					if (e >= m->nruns)
						goto bad;
					if (j == 0)
						upper[i] = lblk;
					put_extent((struct ext3_extent *)(eh + 1) + j,
						   lblk, &m->runs[e]);
					lblk += m->runs[e++].len;
				} else {
					if (child >= t->nlevel[l - 1])
						goto bad;
					if (j == 0)
						upper[i] = first[child];
					put_index((struct ext3_extent_idx *)(eh + 1) + j,
						  first[child],
						  t->level[l - 1][child].pblk);
					child++;
				}
			}
			ret = write_node(img, ino, n->pblk, buf);
			if (ret)
				goto out;
		}
		if ((l == 0 && e != m->nruns) ||
		    (l > 0 && child != t->nlevel[l - 1]))
			goto bad;
		free(first);
		first = upper;
		upper = NULL;
	}
	if (t->root != t->nlevel[t->depth - 1])
		goto bad;
	eh = (struct ext3_extent_header *)inode->i_block;
	put_header(eh, t->root, ROOT_MAX, t->depth);
	for (i = 0; i < t->root; i++)
		put_index((struct ext3_extent_idx *)(eh + 1) + i, first[i],
			  t->level[t->depth - 1][i].pblk);
	goto out;
bad:
	/* The shape and the extents disagree: a bug here, not bad input. */
	ret = EXT2_ET_EXTENT_HEADER_BAD;
out:
	free(first);
	free(upper);
	return ret;
}
