/*
 * finish.c --- write out what the workload made: every live inode, its
 * mapping blocks and, for directories, the directory blocks.
 *
 * This runs once, after the last data block went out, so no metadata
 * write can be overtaken by a stale data write to a block that was freed
 * and taken again (aged disks do that all the time).  A file's inode goes
 * first: the checksums of its extent and directory blocks are seeded
 * with the generation number libext2fs reads back from it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "img.h"

#define INODE_BUF 1024

/* Bytes a directory entry with a NAME_LEN-byte name takes. */
static uint32_t rec_len(size_t name_len)
{
	return ext2fs_dir_rec_len((__u8)name_len, 0);
}

static uint16_t links_of(const struct img *img, const struct img_file *f)
{
	uint64_t n;

	if (!(f->flags & IMGF_DIR))
		return 1;
	n = 2 + (uint64_t)f->dir->subdirs;
	if (n >= EXT2_LINK_MAX && ext2fs_has_feature_dir_nlink(img->fs->super))
		return 1;	/* "many": what dir_nlink means by 1 */
	return (uint16_t)(n < EXT2_LINK_MAX ? n : EXT2_LINK_MAX);
}

/* Append one entry at *OFF of BUF; returns the entry for rec_len fixing. */
static struct ext2_dir_entry *put_entry(struct img *img, char *buf, uint32_t *off,
					ext2_ino_t ino, const char *name, int type)
{
	struct ext2_dir_entry *de = (struct ext2_dir_entry *)(buf + *off);
	size_t len = strlen(name);

	de->inode = ino;
	ext2fs_dirent_set_name_len(de, (int)len);
	ext2fs_dirent_set_file_type(de, type);
	memcpy(de->name, name, len);
	ext2fs_set_rec_len(img->fs, rec_len(len), de);
	*off += rec_len(len);
	return de;
}

/*
 * Lay out each directory block from the entries counted into it, in the
 * order they were made; the last entry of a block reaches to its end
 * (or to the checksum tail), an empty block holds one empty entry.
 */
static errcode_t write_dir_blocks(struct img *img, struct img_file *d)
{
	uint32_t room = img->bs - (img->csum ? sizeof(struct ext2_dir_entry_tail) : 0);
	struct img_dir *dir = d->dir;
	uint32_t *first = NULL, *order = NULL, b, i, off;
	struct ext2_dir_entry *de, *last;
	char *buf = img->scratch;
	errcode_t ret = 0;

	if (d->map.nblocks != dir->nused)
		return EXT2_ET_DIR_CORRUPTED;	/* a bookkeeping bug */
	/* Counting sort of the entries by block, keeping their order. */
	first = calloc(dir->nused + 1, sizeof(*first));
	order = calloc(dir->nents + 1, sizeof(*order));
	if (!first || !order) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < dir->nents; i++)
		first[dir->ents[i].block + 1]++;
	for (b = 0; b < dir->nused; b++)
		first[b + 1] += first[b];
	for (i = 0; i < dir->nents; i++)
		order[first[dir->ents[i].block]++] = i;
	/* first[b] now ends block b's entries; recompute the starts. */
	for (b = dir->nused; b > 0; b--)
		first[b] = first[b - 1];
	first[0] = 0;

	for (b = 0; b < dir->nused; b++) {
		memset(buf, 0, img->bs);
		off = 0;
		last = NULL;
		if (b == 0) {
			put_entry(img, buf, &off, d->ino, ".", EXT2_FT_DIR);
			last = put_entry(img, buf, &off,
					 d->parent ? d->parent->ino : d->ino,
					 "..", EXT2_FT_DIR);
		}
		for (i = first[b]; i < first[b + 1]; i++) {
			struct img_file *f = dir->ents[order[i]].file;

			last = put_entry(img, buf, &off, f->ino, f->name,
					 f->flags & IMGF_DIR ? EXT2_FT_DIR :
					 EXT2_FT_REG_FILE);
		}
		if (off > room) {
			ret = EXT2_ET_DIR_CORRUPTED;
			goto out;
		}
		if (!last) {
			de = (struct ext2_dir_entry *)buf;
			de->inode = 0;
			ext2fs_dirent_set_name_len(de, 0);
			ext2fs_dirent_set_file_type(de, 0);
			last = de;
			off = 0;
			ext2fs_set_rec_len(img->fs, room, de);
		} else {
			ext2fs_set_rec_len(img->fs, room - ((char *)last - buf), last);
		}
		if (img->csum)
			ext2fs_initialize_dirent_tail(img->fs,
				(struct ext2_dir_entry_tail *)(buf + room));
		ret = ext2fs_write_dir_block4(img->fs, map_pblk(&d->map, b), buf,
					      0, d->ino);
		if (ret)
			goto out;
	}
out:
	free(first);
	free(order);
	return ret;
}

static errcode_t write_one(struct img *img, struct img_file *f, char *ibuf)
{
	struct ext2_inode_large *inode = (struct ext2_inode_large *)ibuf;
	int isize = EXT2_INODE_SIZE(img->fs->super);
	int is_dir = !!(f->flags & IMGF_DIR);
	uint64_t size;
	errcode_t ret;

	memset(ibuf, 0, INODE_BUF);
	if (f->flags & IMGF_ADOPTED) {
		ret = ext2fs_read_inode_full(img->fs, f->ino,
					     (struct ext2_inode *)inode, isize);
		if (ret)
			return ret;
		inode->i_mtime = inode->i_ctime = f->mtime;
	} else {
		inode->i_mode = is_dir ? LINUX_S_IFDIR | 0755 : LINUX_S_IFREG | 0644;
		inode->i_atime = inode->i_ctime = inode->i_mtime = f->mtime;
		inode->i_generation = (__u32)rng_mix64(img->opts->seed ^
						       ((uint64_t)f->ino << 20));
		if (isize > EXT2_GOOD_OLD_INODE_SIZE) {
			inode->i_extra_isize = sizeof(struct ext2_inode_large) -
				EXT2_GOOD_OLD_INODE_SIZE;
			inode->i_crtime = f->ctime;
		}
	}
	inode->i_links_count = links_of(img, f);
	size = is_dir ? f->map.nblocks * img->bs : f->size;
	ret = ext2fs_inode_size_set(img->fs, (struct ext2_inode *)inode, size);
	if (ret)
		return ret;
	if (img->csum) {
		/* The generation must be on disk before the block checksums. */
		ret = ext2fs_write_inode_full(img->fs, f->ino,
					      (struct ext2_inode *)inode, isize);
		if (ret)
			return ret;
	}
	ret = map_write(img, &f->map, f->ino, (struct ext2_inode *)inode);
	if (ret)
		return ret;
	ret = ext2fs_write_inode_full(img->fs, f->ino, (struct ext2_inode *)inode,
				      isize);
	if (ret)
		return ret;
	return is_dir ? write_dir_blocks(img, f) : 0;
}

errcode_t files_finish(struct img *img)
{
	char ibuf[INODE_BUF];
	errcode_t ret;
	uint32_t i;

	if (EXT2_INODE_SIZE(img->fs->super) > INODE_BUF)
		return EXT2_ET_INVALID_ARGUMENT;
	for (i = 0; i < img->nfiles; i++) {
		ret = file_close(img, img->files[i]);
		if (ret)
			return ret;
	}
	ret = data_flush(img);
	if (ret)
		return ret;
	for (i = 0; i < img->nfiles; i++) {
		struct img_file *f = img->files[i];

		if (f->flags & (IMGF_DELETED | IMGF_FOREIGN))
			continue;
		ret = write_one(img, f, ibuf);
		if (ret)
			return ret;
	}
	return 0;
}
