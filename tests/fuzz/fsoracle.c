/*
 * fsoracle.c --- the run target's checks (fsoracle.h), through libext2fs
 * reads only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>

#include "fsoracle.h"

/* ------------------------------------------------------------------ files */

struct file_digest {
	ext2_ino_t	ino;
	uint16_t	mode, links;
	uint32_t	uid, gid;
	uint64_t	size;
	uint64_t	digest;		/* FNV-1a over what a reader sees */
};

struct fsoracle_files {
	struct file_digest *d;
	size_t		n, cap;
};

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ s[i]) * FNV_PRIME;
	return h;
}

/* What a reader sees of an inode's blocks, while digesting them. */
struct walk {
	ext2_filsys	fs;
	uint64_t	size;		/* i_size: bytes past it are not seen */
	uint64_t	h;
	char		*buf;
	errcode_t	err;
};

/*
 * Logical block LBLK holds BUF: into the digest when a reader sees
 * anything but zeros there (so that a hole, an unwritten extent and a
 * block of zeros read alike, as they do).
 */
static void digest_block(struct walk *w, blk64_t lblk, const char *buf)
{
	uint64_t off = (uint64_t)lblk * w->fs->blocksize, len;
	uint64_t i;

	if (off >= w->size)
		return;
	len = w->size - off < w->fs->blocksize ? w->size - off : w->fs->blocksize;
	for (i = 0; i < len && !buf[i]; i++)
		;
	if (i == len)
		return;
	w->h = fnv(w->h, &lblk, sizeof(lblk));
	w->h = fnv(w->h, buf, len);
}

static int walk_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
		      blk64_t ref_blk, int ref_offset, void *priv)
{
	struct walk *w = priv;

	(void)ref_blk; (void)ref_offset;
	if (blockcnt < 0)
		return 0;
	w->err = io_channel_read_blk64(fs->io, *blocknr, 1, w->buf);
	if (w->err)
		return BLOCK_ABORT;
	digest_block(w, (blk64_t)blockcnt, w->buf);
	return 0;
}

/* An extent-mapped inode: its leaves in order, unwritten extents unread. */
static errcode_t walk_extents(ext2_filsys fs, ext2_ino_t ino,
			      struct ext2_inode *inode, struct walk *w)
{
	ext2_extent_handle_t h;
	struct ext2fs_extent ext;
	errcode_t ret;
	blk64_t i;

	ret = ext2fs_extent_open2(fs, ino, inode, &h);
	if (ret)
		return ret;
	for (ret = ext2fs_extent_get(h, EXT2_EXTENT_ROOT, &ext); !ret;
	     ret = ext2fs_extent_get(h, EXT2_EXTENT_NEXT, &ext)) {
		if (!(ext.e_flags & EXT2_EXTENT_FLAGS_LEAF) ||
		    (ext.e_flags & (EXT2_EXTENT_FLAGS_SECOND_VISIT |
				    EXT2_EXTENT_FLAGS_UNINIT)))
			continue;
		for (i = 0; i < ext.e_len; i++) {
			ret = io_channel_read_blk64(fs->io, ext.e_pblk + i, 1, w->buf);
			if (ret)
				goto out;
			digest_block(w, ext.e_lblk + i, w->buf);
		}
	}
	if (ret == EXT2_ET_EXTENT_NO_NEXT)
		ret = 0;
out:
	ext2fs_extent_free(h);
	return ret;
}

static errcode_t digest_inode(ext2_filsys fs, ext2_ino_t ino,
			      struct ext2_inode_large *inode, uint64_t *digest)
{
	struct ext2_inode *in = (struct ext2_inode *)inode;
	struct walk w;
	errcode_t ret = 0;

	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.size = EXT2_I_SIZE(in);
	w.h = FNV_OFFSET;
	if (in->i_flags & EXT4_INLINE_DATA_FL) {
		size_t n = 0;
		char *data;

		ret = ext2fs_inline_data_size(fs, ino, &n);
		if (ret)
			return ret;
		data = calloc(1, n + 1);
		if (!data)
			return EXT2_ET_NO_MEMORY;
		ret = ext2fs_inline_data_get(fs, ino, in, data, &n);
		if (!ret)
			w.h = fnv(w.h, data, n < w.size ? n : w.size);
		free(data);
		*digest = w.h;
		return ret;
	}
	if (LINUX_S_ISLNK(in->i_mode) && ext2fs_is_fast_symlink(in)) {
		*digest = fnv(w.h, in->i_block, w.size < sizeof(in->i_block) ?
			      w.size : sizeof(in->i_block));
		return 0;
	}
	if (!ext2fs_inode_has_valid_blocks2(fs, in)) {
		*digest = w.h;
		return 0;
	}
	w.buf = malloc(fs->blocksize);
	if (!w.buf)
		return EXT2_ET_NO_MEMORY;
	if (in->i_flags & EXT4_EXTENTS_FL)
		ret = walk_extents(fs, ino, in, &w);
	else
		ret = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY |
					    BLOCK_FLAG_DATA_ONLY, NULL,
					    walk_block, &w);
	if (!ret)
		ret = w.err;
	free(w.buf);
	*digest = w.h;
	return ret;
}

/*
 * Files the run must leave as they were: the root and every inode from
 * the first ordinary one on, save the journal and the quota files, whose
 * contents a run rewrites (its transactions, the usage of the blocks a
 * move frees or gains).
 */
static int is_file(ext2_filsys fs, ext2_ino_t ino)
{
	const struct ext2_super_block *sb = fs->super;

	if (ino == EXT2_ROOT_INO)
		return 1;
	return ino >= EXT2_FIRST_INODE(sb) && ino != sb->s_journal_inum &&
	       ino != sb->s_usr_quota_inum && ino != sb->s_grp_quota_inum &&
	       ino != sb->s_prj_quota_inum;
}

errcode_t fsoracle_files(ext2_filsys fs, struct fsoracle_files **ret)
{
	struct fsoracle_files *f;
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	errcode_t err;

	*ret = NULL;
	err = ext2fs_read_inode_bitmap(fs);
	if (err)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return EXT2_ET_NO_MEMORY;
	for (ino = 1; ino <= fs->super->s_inodes_count; ino++) {
		struct file_digest *d;

		if (!ext2fs_test_inode_bitmap2(fs->inode_map, ino) || !is_file(fs, ino))
			continue;
		memset(&inode, 0, sizeof(inode));
		err = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)&inode,
					     sizeof(inode));
		if (err)
			goto fail;
		if (f->n == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 64;
			void *p = realloc(f->d, cap * sizeof(*f->d));

			if (!p) {
				err = EXT2_ET_NO_MEMORY;
				goto fail;
			}
			f->d = p;
			f->cap = cap;
		}
		d = &f->d[f->n++];
		d->ino = ino;
		d->mode = inode.i_mode;
		d->links = inode.i_links_count;
		d->uid = inode_uid(inode);
		d->gid = inode_gid(inode);
		d->size = EXT2_I_SIZE(&inode);
		err = digest_inode(fs, ino, &inode, &d->digest);
		if (err)
			goto fail;
	}
	*ret = f;
	return 0;
fail:
	fsoracle_files_free(f);
	return err;
}

void fsoracle_files_free(struct fsoracle_files *f)
{
	if (!f)
		return;
	free(f->d);
	free(f);
}

int fsoracle_files_differ(const struct fsoracle_files *a,
			  const struct fsoracle_files *b, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < a->n && i < b->n; i++) {
		const struct file_digest *x = &a->d[i], *y = &b->d[i];

		if (x->ino != y->ino) {
			snprintf(why, len, "inode %u is %s after the run",
				 x->ino < y->ino ? x->ino : y->ino,
				 x->ino < y->ino ? "gone" : "new");
			return 1;
		}
		if (x->mode != y->mode || x->links != y->links || x->uid != y->uid ||
		    x->gid != y->gid || x->size != y->size) {
			snprintf(why, len, "inode %u: mode, links, owner or size changed",
				 x->ino);
			return 1;
		}
		if (x->digest != y->digest) {
			snprintf(why, len, "inode %u: its contents changed (%s)", x->ino,
				 LINUX_S_ISLNK(x->mode) ? "symlink target" :
				 LINUX_S_ISDIR(x->mode) ? "directory" : "file");
			return 1;
		}
	}
	if (a->n != b->n) {
		snprintf(why, len, "inode %u is %s after the run",
			 a->n > b->n ? a->d[i].ino : b->d[i].ino,
			 a->n > b->n ? "gone" : "new");
		return 1;
	}
	return 0;
}

/* ----------------------------------------------------------------- blocks */

struct owners {
	ext2_filsys		fs;
	ext2fs_block_bitmap	owned;
	ext2_ino_t		ino;	/* the inode walked */
	char			*why;
	size_t			len;
	int			bad;
};

static int own(struct owners *o, blk64_t blk, const char *what)
{
	if (blk < o->fs->super->s_first_data_block ||
	    blk >= ext2fs_blocks_count(o->fs->super)) {
		snprintf(o->why, o->len, "inode %u: %s block %llu outside the filesystem",
			 o->ino, what, (unsigned long long)blk);
		return o->bad = 1;
	}
	if (ext2fs_test_block_bitmap2(o->owned, blk)) {
		snprintf(o->why, o->len, "block %llu owned twice (again by inode %u, %s)",
			 (unsigned long long)blk, o->ino, what);
		return o->bad = 1;
	}
	ext2fs_mark_block_bitmap2(o->owned, blk);
	return 0;
}

static int own_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
		     blk64_t ref_blk, int ref_offset, void *priv)
{
	(void)fs; (void)ref_blk; (void)ref_offset;
	return own(priv, *blocknr, blockcnt < 0 ? "mapping" : "data") ?
		BLOCK_ABORT : 0;
}

/* The fixed metadata of every group, into O->owned. */
static errcode_t own_metadata(struct owners *o)
{
	ext2_filsys fs = o->fs;
	ext2fs_block_bitmap meta;
	dgrp_t g;
	blk64_t b, blk;
	errcode_t ret;

	ret = ext2fs_allocate_block_bitmap(fs, "metadata", &meta);
	if (ret)
		return ret;
	for (g = 0; g < fs->group_desc_count; g++) {
		ext2fs_reserve_super_and_bgd(fs, g, meta);
		ext2fs_mark_block_bitmap2(meta, ext2fs_block_bitmap_loc(fs, g));
		ext2fs_mark_block_bitmap2(meta, ext2fs_inode_bitmap_loc(fs, g));
		blk = ext2fs_inode_table_loc(fs, g);
		for (b = 0; b < fs->inode_blocks_per_group; b++)
			ext2fs_mark_block_bitmap2(meta, blk + b);
	}
	for (blk = fs->super->s_first_data_block; blk < ext2fs_blocks_count(fs->super);
	     blk++)
		if (ext2fs_test_block_bitmap2(meta, blk))
			ext2fs_mark_block_bitmap2(o->owned, blk);
	ext2fs_free_block_bitmap(meta);
	return 0;
}

/* Every in-use inode's blocks, and attribute blocks (shared ones once). */
static errcode_t own_files(struct owners *o)
{
	ext2_filsys fs = o->fs;
	ext2fs_block_bitmap ea_seen;
	struct ext2_inode_large inode;
	ext2_ino_t ino;
	blk64_t acl;
	errcode_t ret;

	ret = ext2fs_allocate_block_bitmap(fs, "attribute blocks", &ea_seen);
	if (ret)
		return ret;
	for (ino = 1; ino <= fs->super->s_inodes_count && !o->bad; ino++) {
		struct ext2_inode *in = (struct ext2_inode *)&inode;

		if (!ext2fs_test_inode_bitmap2(fs->inode_map, ino))
			continue;
		o->ino = ino;
		ret = ext2fs_read_inode_full(fs, ino, in, sizeof(inode));
		if (ret)
			break;
		acl = ext2fs_file_acl_block(fs, in);
		if (acl && (acl < fs->super->s_first_data_block ||
			    acl >= ext2fs_blocks_count(fs->super) ||
			    !ext2fs_test_block_bitmap2(ea_seen, acl))) {
			if (own(o, acl, "attribute"))
				break;
			ext2fs_mark_block_bitmap2(ea_seen, acl);
		}
		if (ino == EXT2_RESIZE_INO) {
			/* Its other blocks are the reserved descriptors. */
			if (in->i_block[EXT2_DIND_BLOCK])
				own(o, in->i_block[EXT2_DIND_BLOCK], "resize");
			continue;
		}
		if (ino != EXT2_BAD_INO && !ext2fs_inode_has_valid_blocks2(fs, in))
			continue;
		ret = ext2fs_block_iterate3(fs, ino, BLOCK_FLAG_READ_ONLY, NULL,
					    own_block, o);
		if (ret)
			break;
	}
	ext2fs_free_block_bitmap(ea_seen);
	return ret;
}

int fsoracle_super_counts_agree(ext2_filsys fs)
{
	uint64_t blocks = 0, inodes = 0;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		blocks += ext2fs_bg_free_blocks_count(fs, g);
		inodes += ext2fs_bg_free_inodes_count(fs, g);
	}
	return blocks == ext2fs_free_blocks_count(fs->super) &&
	       inodes == fs->super->s_free_inodes_count;
}

/* Each group's free counts as its bitmaps say, the superblock's sums. */
static int counts_differ(ext2_filsys fs, int count_super, char *why, size_t len)
{
	uint64_t blocks = 0, inodes = 0;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		blk64_t first = ext2fs_group_first_block2(fs, g);
		blk64_t last = ext2fs_group_last_block2(fs, g), b;
		ext2_ino_t ino = g * fs->super->s_inodes_per_group + 1, i;
		uint64_t free_b = 0, free_i = 0;

		for (b = first; b <= last; b++)
			free_b += !ext2fs_test_block_bitmap2(fs->block_map, b);
		for (i = 0; i < fs->super->s_inodes_per_group; i++)
			free_i += !ext2fs_test_inode_bitmap2(fs->inode_map, ino + i);
		if (free_b != ext2fs_bg_free_blocks_count(fs, g)) {
			snprintf(why, len, "group %u: %u free blocks recorded, %llu in the bitmap",
				 g, ext2fs_bg_free_blocks_count(fs, g),
				 (unsigned long long)free_b);
			return 1;
		}
		if (free_i != ext2fs_bg_free_inodes_count(fs, g)) {
			snprintf(why, len, "group %u: %u free inodes recorded, %llu in the bitmap",
				 g, ext2fs_bg_free_inodes_count(fs, g),
				 (unsigned long long)free_i);
			return 1;
		}
		blocks += free_b;
		inodes += free_i;
	}
	if (count_super && (blocks != ext2fs_free_blocks_count(fs->super) ||
			    inodes != fs->super->s_free_inodes_count)) {
		snprintf(why, len, "superblock: %llu free blocks, %u free inodes recorded; the groups' sums %llu, %llu",
			 (unsigned long long)ext2fs_free_blocks_count(fs->super),
			 fs->super->s_free_inodes_count, (unsigned long long)blocks,
			 (unsigned long long)inodes);
		return 1;
	}
	return 0;
}

int fsoracle_blocks_differ(ext2_filsys fs, int count_super, char *why,
			   size_t len)
{
	struct owners o;
	blk64_t blk;
	errcode_t ret;

	ret = ext2fs_read_bitmaps(fs);
	if (ret) {
		snprintf(why, len, "reading the bitmaps: %s", error_message(ret));
		return 1;
	}
	memset(&o, 0, sizeof(o));
	o.fs = fs;
	o.why = why;
	o.len = len;
	ret = ext2fs_allocate_block_bitmap(fs, "owned", &o.owned);
	if (!ret)
		ret = own_metadata(&o);
	if (!ret)
		ret = own_files(&o);
	if (ret || o.bad) {
		if (ret)
			snprintf(why, len, "walking the inodes: %s", error_message(ret));
		if (o.owned)
			ext2fs_free_block_bitmap(o.owned);
		return 1;
	}
	for (blk = fs->super->s_first_data_block; blk < ext2fs_blocks_count(fs->super);
	     blk++) {
		int used = !!ext2fs_test_block_bitmap2(fs->block_map, blk);

		if (used != !!ext2fs_test_block_bitmap2(o.owned, blk)) {
			snprintf(why, len, "block %llu: %s in the bitmap, %s",
				 (unsigned long long)blk, used ? "in use" : "free",
				 used ? "owned by nothing" : "yet owned");
			ext2fs_free_block_bitmap(o.owned);
			return 1;
		}
	}
	ext2fs_free_block_bitmap(o.owned);
	return counts_differ(fs, count_super, why, len);
}
