/*
 * quotawrite.c --- the quota entries a file switch changes; see
 * writer_int.h for the format.
 *
 * Only what e2fsck checks and the kernel keeps is touched: the entry's
 * space in bytes and, when a block soft limit is set, its grace time
 * (started when the space goes over the soft limit, cleared when it is
 * back under, as the kernel's dquot code does).  Nothing else in the
 * file changes: no entry is added or removed, so the tree, the free
 * lists and the info block stay as they are.
 */
#include <string.h>
#include <time.h>

#include "writer_int.h"

#define QT_BLOCK		1024u	/* the quota file's own block */
#define QT_ROOT			1u	/* tree root: quota block 1 */
#define QT_DEPTH		4
#define QT_DATA_HEADER		16u	/* next, prev free; entries; padding */
#define QT_INFO_OFFSET		8u	/* after magic and version */

/* Where an entry keeps what is changed, per format version. */
struct entry_format {
	unsigned	size;
	unsigned	curspace;	/* le64, bytes */
	unsigned	bsoftlimit;	/* in 1 KiB units */
	unsigned	softlimit_bytes;	/* 4 (v2r0) or 8 (v2r1) */
	unsigned	btime;		/* le64, seconds */
};

static const struct entry_format formats[] = {
	{ 48, 24, 20, 4, 32 },	/* version 0: v2r0_disk_dqblk */
	{ 72, 48, 40, 8, 56 },	/* version 1: v2r1_disk_dqblk */
};

static const __u32 magics[QUOTAWRITE_TYPES] = {
	0xd9c01f11, 0xd9c01927, 0xd9c03f14,	/* user, group, project */
};

static __u32 get_le32(const unsigned char *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 |
	       (__u32)p[3] << 24;
}

static __u64 get_le64(const unsigned char *p)
{
	return get_le32(p) | (__u64)get_le32(p + 4) << 32;
}

static void put_le64(unsigned char *p, __u64 v)
{
	unsigned i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* The id INODE is charged to in quota TYPE (e2fsprogs' get_qid). */
static __u32 inode_qid(ext2_filsys fs, const struct ext2_inode_large *inode,
		       int type)
{
	if (type == 0)
		return inode_uid(*inode);
	if (type == 1)
		return inode_gid(*inode);
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    inode_includes(EXT2_GOOD_OLD_INODE_SIZE + inode->i_extra_isize,
			   i_projid))
		return inode->i_projid;
	return 0;
}

/* One quota file being read: its inode and the block at hand. */
struct qfile {
	ext2_filsys	fs;
	ext2_ino_t	ino;
	struct ext2_inode inode;
	__u32		nblocks;	/* dqi_blocks: quota blocks in use */
	blk64_t		pblk;		/* filesystem block in BUF */
	unsigned	offset;		/* the quota block's byte offset in it */
};

/*
 * Read quota block QBLK of F: the filesystem block holding it into BUF,
 * F->pblk and F->offset saying where it is.
 */
static errcode_t read_qblock(struct qfile *f, __u32 qblk, char *buf)
{
	ext2_filsys fs = f->fs;
	__u64 byte = (__u64)qblk * QT_BLOCK;
	blk64_t pblk = 0;
	errcode_t ret;

	if (byte + QT_BLOCK > EXT2_I_SIZE(&f->inode))
		return E2F_ERR_QUOTA_ENTRY;
	ret = ext2fs_bmap2(fs, f->ino, &f->inode, NULL, 0,
			   byte / fs->blocksize, NULL, &pblk);
	if (ret)
		return ret;
	if (!pblk || pblk < fs->super->s_first_data_block ||
	    pblk >= ext2fs_blocks_count(fs->super))
		return E2F_ERR_QUOTA_ENTRY;
	f->pblk = pblk;
	f->offset = byte % fs->blocksize;
	return io_channel_read_blk64(fs->io, pblk, 1, buf);
}

/*
 * Find ID's entry in quota file F (type TYPE): leaves BUF holding the
 * filesystem block with it, *AT the entry's byte offset in BUF, *FMT its
 * format, *BGRACE the file's grace period for space (seconds).
 * E2F_ERR_QUOTA_ENTRY when there is none.
 */
static errcode_t find_entry(struct qfile *f, int type, __u32 id, char *buf,
			    unsigned *at, const struct entry_format **fmt,
			    __u32 *bgrace)
{
	const unsigned char *b;
	__u32 version, qblk = QT_ROOT;
	unsigned i, n;
	int depth;
	errcode_t ret;

	ret = read_qblock(f, 0, buf);
	if (ret)
		return ret;
	b = (const unsigned char *)buf + f->offset;
	version = get_le32(b + 4);
	if (get_le32(b) != magics[type] || version > 1)
		return E2F_ERR_QUOTA_ENTRY;
	*fmt = &formats[version];
	*bgrace = get_le32(b + QT_INFO_OFFSET);
	f->nblocks = get_le32(b + QT_INFO_OFFSET + 12);

	for (depth = 0; depth < QT_DEPTH; depth++) {
		if (qblk < QT_ROOT || qblk >= f->nblocks)
			return E2F_ERR_QUOTA_ENTRY;
		ret = read_qblock(f, qblk, buf);
		if (ret)
			return ret;
		b = (const unsigned char *)buf + f->offset;
		qblk = get_le32(b + 4 * ((id >> (8 * (QT_DEPTH - 1 - depth))) & 0xff));
	}
	if (qblk < QT_ROOT || qblk >= f->nblocks)
		return E2F_ERR_QUOTA_ENTRY;
	ret = read_qblock(f, qblk, buf);
	if (ret)
		return ret;
	n = (QT_BLOCK - QT_DATA_HEADER) / (*fmt)->size;
	for (i = 0; i < n; i++) {
		unsigned off = f->offset + QT_DATA_HEADER + i * (*fmt)->size;
		const unsigned char *e = (const unsigned char *)buf + off;
		unsigned k;

		/* An entry of zeros is a free slot (id 0's has itime 1). */
		for (k = 0; k < (*fmt)->size && !e[k]; k++)
			;
		if (k < (*fmt)->size && get_le32(e) == id) {
			*at = off;
			return 0;
		}
	}
	return E2F_ERR_QUOTA_ENTRY;
}

/* Add DELTA bytes to the entry at E; what the kernel does to its grace time. */
static errcode_t charge(const struct entry_format *fmt,
			unsigned char *e, __s64 delta, __u32 bgrace)
{
	__u64 space = get_le64(e + fmt->curspace), soft;

	if (delta < 0 && space < (__u64)-delta)
		return E2F_ERR_QUOTA_ENTRY;	/* less than the file holds */
	space += (__u64)delta;
	put_le64(e + fmt->curspace, space);
	soft = fmt->softlimit_bytes == 8 ? get_le64(e + fmt->bsoftlimit) :
					   get_le32(e + fmt->bsoftlimit);
	soft *= QT_BLOCK;
	if (!soft || space <= soft)
		put_le64(e + fmt->btime, 0);
	else if (!get_le64(e + fmt->btime))
		put_le64(e + fmt->btime, (__u64)time(NULL) + bgrace);
	return 0;
}

static errcode_t charge_type(ext2_filsys fs, ext2_ino_t qino, int type,
			     __u32 id, __s64 delta, struct quotawrite *q)
{
	struct qfile f;
	const struct entry_format *fmt;
	unsigned at;
	size_t i;
	__u32 grace = 0;
	char *buf = NULL;
	errcode_t ret;

	memset(&f, 0, sizeof(f));
	f.fs = fs;
	f.ino = qino;
	ret = ext2fs_read_inode(fs, qino, &f.inode);
	if (ret)
		return ret;
	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (ret)
		return ret;
	ret = find_entry(&f, type, id, buf, &at, &fmt, &grace);
	if (!ret)
		ret = charge(fmt, (unsigned char *)buf + at, delta, grace);
	/* Two quota files sharing a block: damage e2fsck must see to. */
	for (i = 0; !ret && i < q->n; i++)
		if (q->blk[i] == f.pblk)
			ret = E2F_ERR_QUOTA_ENTRY;
	if (ret) {
		ext2fs_free_mem(&buf);
		return ret;
	}
	q->blk[q->n] = f.pblk;
	q->img[q->n++] = buf;
	return 0;
}

void quotawrite_free(struct quotawrite *q)
{
	size_t i;

	for (i = 0; i < q->n; i++)
		ext2fs_free_mem(&q->img[i]);
	q->n = 0;
}

errcode_t quotawrite_prepare(ext2_filsys fs, ext2_ino_t ino,
			     const struct ext2_inode_large *old,
			     const struct ext2_inode_large *new,
			     struct quotawrite *q)
{
	struct ext2_super_block *sb = fs->super;
	const ext2_ino_t qino[QUOTAWRITE_TYPES] = {
		sb->s_usr_quota_inum, sb->s_grp_quota_inum, sb->s_prj_quota_inum,
	};
	blk64_t before, after;
	__s64 delta;
	int type;
	errcode_t ret;

	q->n = 0;
	/* The quota files e2fsck checks: those the superblock names. */
	if (!ext2fs_has_feature_quota(sb))
		return 0;
	/* e2fsck charges no space to the reserved inodes. */
	if (ino != EXT2_ROOT_INO && ino < EXT2_FIRST_INODE(sb))
		return 0;
	before = ext2fs_get_stat_i_blocks(fs, (struct ext2_inode *)old);
	after = ext2fs_get_stat_i_blocks(fs, (struct ext2_inode *)new);
	if (before == after)
		return 0;
	delta = ((__s64)after - (__s64)before) * 512;
	for (type = 0; type < QUOTAWRITE_TYPES; type++) {
		__u32 id;

		if (!qino[type])
			continue;
		id = inode_qid(fs, new, type);
		if (id != inode_qid(fs, old, type)) {
			ret = EXT2_ET_INVALID_ARGUMENT;
			goto errout;
		}
		if (qino[type] > sb->s_inodes_count || qino[type] == ino) {
			ret = E2F_ERR_QUOTA_ENTRY;
			goto errout;
		}
		ret = charge_type(fs, qino[type], type, id, delta, q);
		if (ret)
			goto errout;
	}
	return 0;
errout:
	quotawrite_free(q);
	return ret;
}
