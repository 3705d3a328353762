/*
 * files.c --- files and directories as a workload makes them: create,
 * append, close, delete, in the order a program on a 2.6 kernel would.
 *
 * Inodes come from libext2fs' allocator (the first free inode of the
 * parent's group, top-level directories spread over the groups as Orlov
 * does).  Blocks come from alloc.c through each inode's map.  Directory
 * entries are only counted into directory blocks here (a new block is
 * taken when an entry fits in none); the blocks themselves, like every
 * inode, are written once at the end (finish.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

/* Bytes a directory entry with a NAME_LEN-byte name takes. */
static uint32_t rec_len(size_t name_len)
{
	return ext2fs_dir_rec_len((__u8)name_len, 0);
}

/* Bytes of a directory block entries may use (the checksum tail excluded). */
static uint32_t dir_room(const struct img *img)
{
	return img->bs - (img->csum ? sizeof(struct ext2_dir_entry_tail) : 0);
}

static errcode_t register_file(struct img *img, struct img_file *f)
{
	errcode_t ret;

	ret = img_grow(&img->files, &img->files_cap, img->nfiles + 1,
		       sizeof(*img->files));
	if (ret)
		return ret;
	f->serial = img->nfiles;
	img->files[img->nfiles++] = f;
	return 0;
}

static errcode_t dir_new_block(struct img *img, struct img_file *d)
{
	blk64_t start, len;
	errcode_t ret;

	ret = img_grow(&d->dir->used, &d->dir->used_cap, d->dir->nused + 1,
		       sizeof(*d->dir->used));
	if (ret)
		return ret;
	ret = map_extend(img, &d->map, 1, &start, &len);
	if (ret)
		return ret;
	data_skip(img, start);
	d->dir->used[d->dir->nused++] = 0;
	return 0;
}

/* Put F's name into directory D: the first block with room, else a new one. */
static errcode_t dir_link(struct img *img, struct img_file *d, struct img_file *f)
{
	struct img_dir *dir = d->dir;
	uint32_t need = rec_len(strlen(f->name)), b;
	errcode_t ret;

	for (b = 0; b < dir->nused; b++)
		if (dir->used[b] + need <= dir_room(img))
			break;
	if (b == dir->nused) {
		ret = dir_new_block(img, d);
		if (ret)
			return ret;
	}
	ret = img_grow(&dir->ents, &dir->ents_cap, dir->nents + 1,
		       sizeof(*dir->ents));
	if (ret)
		return ret;
	dir->used[b] += need;
	dir->ents[dir->nents].file = f;
	dir->ents[dir->nents].block = b;
	dir->nents++;
	if (f->flags & IMGF_DIR)
		dir->subdirs++;
	d->mtime = img->clock;
	return 0;
}

static void dir_unlink(struct img *img, struct img_file *d, struct img_file *f)
{
	struct img_dir *dir = d->dir;
	uint32_t i;

	for (i = 0; i < dir->nents; i++) {
		if (dir->ents[i].file != f)
			continue;
		dir->used[dir->ents[i].block] -= rec_len(strlen(f->name));
		memmove(dir->ents + i, dir->ents + i + 1,
			(dir->nents - i - 1) * sizeof(*dir->ents));
		dir->nents--;
		break;
	}
	d->mtime = img->clock;
}

/*
 * Where a new inode is looked for: its parent's group, except that
 * directories made in the root go to a group of their own, as the Orlov
 * allocator spreads top-level directories (with flex_bg, whole flex groups).
 */
static ext2_ino_t inode_goal(struct img *img, struct img_file *parent, int is_dir)
{
	ext2_filsys fs = img->fs;
	dgrp_t g, flex = 1;

	if (is_dir && img->dir_goal) {
		/* The workload chose (kplace.c's Orlov). */
		ext2_ino_t goal = img->dir_goal;

		img->dir_goal = 0;
		return goal;
	}
	if (!is_dir || parent != img->root)
		return parent->ino;
	if (ext2fs_has_feature_flex_bg(fs->super))
		flex = 1U << fs->super->s_log_groups_per_flex;
	g = (dgrp_t)rng_below(&img->rng, fs->group_desc_count);
	g -= g % flex;
	return g * fs->super->s_inodes_per_group + 1;
}

/*
 * Where a new inode's first block is looked for: in the group (with
 * flex_bg, the flex group) of the inode, at the writing process' colour.
 * ext3_find_near() offsets a file's first goal by (pid % 16) sixteenths
 * of the group, so that processes writing at the same time start apart;
 * threads of one process writing in turns share it.  Sixteenths of the
 * group as it is, so small images see the effect too.
 */
static blk64_t block_goal(struct img *img, ext2_ino_t ino)
{
	ext2_filsys fs = img->fs;
	dgrp_t g = ext2fs_group_of_ino(fs, ino);
	blk64_t first, span;

	if (ext2fs_has_feature_flex_bg(fs->super))
		g &= ~((1U << fs->super->s_log_groups_per_flex) - 1);
	first = ext2fs_group_first_block2(fs, g);
	span = ext2fs_group_last_block2(fs, g) - first + 1;
	return first + img->colour * (span / 16);
}

static void free_file(struct img_file *f)
{
	if (!f)
		return;
	if (f->sha)
		EVP_MD_CTX_free(f->sha);
	map_free(&f->map);
	if (f->dir) {
		free(f->dir->ents);
		free(f->dir->used);
		free(f->dir);
	}
	free(f->name);
	free(f);
}

static errcode_t new_inode(struct img *img, struct img_file *parent,
			   const char *name, int is_dir, struct img_file **ret_f)
{
	struct img_file *f;
	errcode_t ret;

	if (!parent || !parent->dir || strlen(name) > EXT2_NAME_LEN ||
	    !*name || strchr(name, '/'))
		return EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return ENOMEM;
	f->name = strdup(name);
	if (!f->name) {
		free(f);
		return ENOMEM;
	}
	f->parent = parent;
	f->set = -1;
	f->flags = is_dir ? IMGF_DIR : 0;
	f->ctime = f->mtime = img->clock++;
	ret = ext2fs_new_inode(img->fs, inode_goal(img, parent, is_dir),
			       is_dir ? LINUX_S_IFDIR : LINUX_S_IFREG, 0, &f->ino);
	if (ret) {
		free_file(f);
		return ret == EXT2_ET_INODE_ALLOC_FAIL ? E2F_ERR_NO_SPACE : ret;
	}
	ext2fs_inode_alloc_stats2(img->fs, f->ino, +1, is_dir);
	map_init(img, &f->map, block_goal(img, f->ino), !is_dir);
	ret = register_file(img, f);
	if (ret) {
		ext2fs_inode_alloc_stats2(img->fs, f->ino, -1, is_dir);
		free_file(f);
		return ret;
	}
	*ret_f = f;
	return 0;
}

errcode_t file_create(struct img *img, struct img_file *dir, const char *name,
		      struct img_file **ret_f)
{
	struct img_file *f;
	errcode_t ret;

	ret = new_inode(img, dir, name, 0, &f);
	if (ret)
		return ret;
	f->sha = EVP_MD_CTX_new();
	if (!f->sha || !EVP_DigestInit_ex(f->sha, img->sha256, NULL))
		return ENOMEM;
	ret = dir_link(img, dir, f);
	if (ret)
		return ret;
	*ret_f = f;
	return 0;
}

errcode_t dir_create(struct img *img, struct img_file *parent, const char *name,
		     struct img_file **ret_d)
{
	struct img_file *d;
	errcode_t ret;

	ret = new_inode(img, parent, name, 1, &d);
	if (ret)
		return ret;
	d->dir = calloc(1, sizeof(*d->dir));
	if (!d->dir)
		return ENOMEM;
	/* mkdir takes the directory's first block before linking its name. */
	ret = dir_new_block(img, d);
	if (ret)
		return ret;
	d->dir->used[0] = rec_len(1) + rec_len(2);	/* "." and ".." */
	ret = dir_link(img, parent, d);
	if (ret)
		return ret;
	*ret_d = d;
	return 0;
}

/* Feed F's digest up to byte UPTO, making the blocks again from scratch. */
static errcode_t hash_upto(struct img *img, struct img_file *f, uint64_t upto)
{
	uint64_t off, n;

	while (f->hashed < upto) {
		off = f->hashed % img->bs;
		n = img->bs - off;
		if (n > upto - f->hashed)
			n = upto - f->hashed;
		data_fill(img, f, f->hashed / img->bs, 1, img->scratch);
		if (!EVP_DigestUpdate(f->sha, img->scratch + off, n))
			return ENOMEM;
		f->hashed += n;
	}
	return 0;
}

errcode_t file_append(struct img *img, struct img_file *f, uint64_t nbytes)
{
	uint64_t new_size = f->size + nbytes, bs = img->bs;
	blk64_t need = (new_size + bs - 1) / bs, whole = new_size / bs;
	blk64_t lblk, start, len, done, got, n;
	errcode_t ret;
	char *buf;

	if (f->flags & (IMGF_DIR | IMGF_CLOSED) || new_size < f->size)
		return EINVAL;
	/* A block left partial by the last append may be whole now. */
	ret = hash_upto(img, f, (whole < f->map.nblocks ? whole : f->map.nblocks) * bs);
	if (ret)
		return ret;
	while (f->map.nblocks < need) {
		lblk = f->map.nblocks;
		ret = map_extend(img, &f->map, need - lblk, &start, &len);
		if (ret)
			return ret;
		for (done = 0; done < len; done += got) {
			ret = data_reserve(img, start + done, len - done, &buf, &got);
			if (ret)
				return ret;
			data_fill(img, f, lblk + done, got, buf);
			/* Whole blocks in file order are hashed straight from the buffer. */
			if (f->hashed == (lblk + done) * bs && whole > lblk + done) {
				n = whole - (lblk + done);
				if (n > got)
					n = got;
				if (!EVP_DigestUpdate(f->sha, buf, n * bs))
					return ENOMEM;
				f->hashed += n * bs;
			}
		}
	}
	f->size = new_size;
	return 0;
}

errcode_t file_close(struct img *img, struct img_file *f)
{
	errcode_t ret;

	if (f->flags & (IMGF_CLOSED | IMGF_DIR))
		return 0;
	ret = hash_upto(img, f, f->size);
	if (ret)
		return ret;
	if (!EVP_DigestFinal_ex(f->sha, f->digest, NULL))
		return ENOMEM;
	EVP_MD_CTX_free(f->sha);
	f->sha = NULL;
	alloc_drop_window(img, &f->map);
	f->mtime = img->clock++;
	f->flags |= IMGF_CLOSED;
	return 0;
}

errcode_t file_delete(struct img *img, struct img_file *f)
{
	if ((f->flags & (IMGF_DIR | IMGF_DELETED)) || !(f->flags & IMGF_CLOSED))
		return EINVAL;
	map_release(img, &f->map);
	ext2fs_inode_alloc_stats2(img->fs, f->ino, -1, 0);
	img->clock++;
	dir_unlink(img, f->parent, f);
	f->flags |= IMGF_DELETED;
	return 0;
}

errcode_t files_init(struct img *img)
{
	ext2_filsys fs = img->fs;
	struct img_file *root = NULL, *lpf = NULL;
	blk64_t pblk;
	errcode_t ret = ENOMEM;

	root = calloc(1, sizeof(*root));
	lpf = calloc(1, sizeof(*lpf));
	if (!root || !lpf)
		goto fail;
	root->name = strdup("");
	lpf->name = strdup("lost+found");
	root->dir = calloc(1, sizeof(*root->dir));
	if (!root->name || !lpf->name || !root->dir)
		goto fail;
	root->ino = EXT2_ROOT_INO;
	root->flags = IMGF_DIR | IMGF_ADOPTED;
	root->set = lpf->set = -1;
	root->ctime = root->mtime = img->clock;
	lpf->flags = IMGF_DIR | IMGF_FOREIGN;
	lpf->parent = root;
	ret = ext2fs_lookup(fs, EXT2_ROOT_INO, lpf->name, strlen(lpf->name), 0,
			    &lpf->ino);
	if (ret)
		goto fail;
	/* Root as mkfs left it: one block holding ".", ".." and lost+found. */
	map_init(img, &root->map, 0, 0);
	ret = ext2fs_bmap2(fs, EXT2_ROOT_INO, NULL, NULL, 0, 0, NULL, &pblk);
	if (ret)
		goto fail;
	ret = map_adopt(img, &root->map, pblk);
	if (!ret)
		ret = img_grow(&root->dir->used, &root->dir->used_cap, 1,
			       sizeof(*root->dir->used));
	if (ret)
		goto fail;
	root->dir->nused = 1;
	root->dir->used[0] = rec_len(1) + rec_len(2);
	img->root = root;
	ret = register_file(img, root);
	if (ret) {
		img->root = NULL;
		goto fail;
	}
	root = NULL;
	ret = register_file(img, lpf);
	if (ret)
		goto fail;
	return dir_link(img, img->root, lpf);
fail:
	free_file(root);
	free_file(lpf);
	return ret;
}

void files_free(struct img *img)
{
	uint32_t i;

	for (i = 0; i < img->nfiles; i++)
		free_file(img->files[i]);
	free(img->files);
	for (i = 0; i < img->nsets; i++)
		free(img->sets[i].members);
	free(img->sets);
	free(img->windows);
	img->files = NULL;
	img->sets = NULL;
	img->windows = NULL;
	img->nfiles = img->nsets = img->nwindows = 0;
}

size_t file_path(const struct img_file *f, char *buf, size_t len)
{
	size_t n = 0, name_len;

	if (!f->parent) {
		snprintf(buf, len, "/");
		return 1;
	}
	if (f->parent->parent)
		n = file_path(f->parent, buf, len);
	name_len = strlen(f->name);
	if (n + 1 + name_len < len) {
		buf[n] = '/';
		memcpy(buf + n + 1, f->name, name_len + 1);
	}
	return n + 1 + name_len;
}

errcode_t set_new(struct img *img, int32_t *ret_set)
{
	errcode_t ret;

	ret = img_grow(&img->sets, &img->sets_cap, img->nsets + 1,
		       sizeof(*img->sets));
	if (ret)
		return ret;
	*ret_set = (int32_t)img->nsets++;
	return 0;
}

errcode_t set_add(struct img *img, int32_t set, struct img_file *f)
{
	struct img_set *s = &img->sets[set];
	errcode_t ret;

	ret = img_grow(&s->members, &s->cap, s->n + 1, sizeof(*s->members));
	if (ret)
		return ret;
	s->members[s->n++] = f;
	f->set = set;
	return 0;
}
