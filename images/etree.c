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

static errcode_t new_node(struct img *img, struct img_map *m, int level,
			  uint32_t entries)
{
	struct img_etree *t = &m->etree;
	blk64_t pblk;
	errcode_t ret;

	ret = img_grow(&t->level[level], &t->cap[level], t->nlevel[level] + 1,
		       sizeof(struct exttree_node));
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

	if (t->depth >= EXTTREE_MAX_DEPTH)
		return EFBIG;
	ret = new_node(img, m, t->depth, t->root);
	if (ret)
		return ret;
	t->depth++;
	t->root = 1;
	return 0;
}

static struct exttree_node *rightmost(struct img_etree *t, int level)
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
		if (t->root < EXTTREE_ROOT_MAX) {
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
		if (k < t->depth || t->root < EXTTREE_ROOT_MAX)
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

	for (l = 0; l < EXTTREE_MAX_DEPTH; l++)
		free(m->etree.level[l]);
	memset(&m->etree, 0, sizeof(m->etree));
}

/* Each tree block written as it comes (writer/exttree.c hands it over). */
static errcode_t write_block(void *priv, blk64_t pblk, char *block)
{
	struct img *img = priv;
	errcode_t ret = io_channel_write_blk64(img->fs->io, pblk, 1, block);

	free(block);
	return ret;
}

/*
 * Write the tree blocks in the shape grown, and the root into INODE's
 * i_block: the runs become the extents, logical blocks from 0 on.
 */
errcode_t etree_write(struct img *img, struct img_map *m, ext2_ino_t ino,
		      struct ext2_inode *inode)
{
	struct img_etree *t = &m->etree;
	struct exttree_shape shape = { .depth = t->depth, .root = t->root };
	struct exttree_extent *x;
	blk64_t lblk = 0;
	errcode_t ret;
	uint32_t i;
	int l;

	x = calloc(m->nruns + 1, sizeof(*x));
	if (!x)
		return ENOMEM;
	for (i = 0; i < m->nruns; i++) {
		x[i].lblk = lblk;
		x[i].pblk = m->runs[i].pblk;
		x[i].len = m->runs[i].len;
		lblk += m->runs[i].len;
	}
	for (l = 0; l < t->depth; l++) {
		shape.level[l] = t->level[l];
		shape.nlevel[l] = t->nlevel[l];
	}
	ret = exttree_write(img->fs, ino, x, m->nruns, &shape, inode->i_block,
			    write_block, img);
	free(x);
	return ret;
}
