/*
 * sanity_quota.c --- the quota files' usage against the inodes in use.
 *
 * A move that changes a file's block count changes its user's, group's
 * and project's usage by as much (writer/quotawrite.c): a usage that was
 * wrong before the run stays wrong by as much after it, and e2fsck -f
 * would report it then as if the run had made it.  So the usage every
 * quota file records must be what e2fsck computes before anything is
 * moved: per id, the bytes (i_blocks) and the number of the inodes in
 * use charged to it, the root's and those past the reserved ones
 * (e2fsck's pass 1 and e2fsprogs' lib/support/mkquota.c).  Every entry
 * of the quota file is compared, and every id the inodes charge must
 * have one.
 *
 * The quota file's format (the kernel's fs/quota/quota_tree.c and
 * quotaio_v2.h, e2fsprogs' lib/support/quotaio_tree.c): 1 KiB blocks;
 * block 0 holds the magic, the version (0 or 1) and the info (grace
 * times, flags, blocks in use); block 1 is the root of a tree of four
 * levels of 256 little-endian block references, indexed by the id's
 * bytes from the highest; the last level's references lead to data
 * blocks of a 16-byte header and entries (48 bytes in version 0, 72 in
 * version 1), an entry of zeros being a free slot.
 *
 * With the ea_inode feature e2fsck charges the attribute inodes' space
 * and count to the inodes whose values they hold: not checked then (as
 * i_blocks is not, sanity.c).
 */
#include <stdlib.h>
#include <string.h>

#include "sanity_int.h"

#define QBLOCK		1024u
#define QROOT		1u
#define QDEPTH		4
#define QDATA_HEADER	16u
#define QINFO_BLOCKS	(8u + 12u)	/* dqi_blocks after magic, version, 3 fields */

static const __u32 qmagic[SANITY_QUOTA_TYPES] = {
	0xd9c01f11, 0xd9c01927, 0xd9c03f14,	/* user, group, project */
};

/* Where an entry keeps its id and usage, per format version. */
static const struct {
	unsigned size, curinodes, inodes_bytes, curspace;
} qformat[2] = {
	{ 48, 12, 4, 24 },	/* v2r0_disk_dqblk */
	{ 72, 24, 8, 48 },	/* v2r1_disk_dqblk */
};

/* One id's usage as the inodes say; SEEN once the quota file had it. */
struct qusage {
	__u32	id;
	int	used, seen;
	__u64	space, inodes;
};

struct qtable {
	struct qusage	*slot;
	size_t		cap, n;		/* cap: a power of two, or 0 */
};

struct sanity_quota {
	struct qtable	type[SANITY_QUOTA_TYPES];
};

static __u32 le32(const unsigned char *p)
{
	return (__u32)p[0] | (__u32)p[1] << 8 | (__u32)p[2] << 16 |
	       (__u32)p[3] << 24;
}

static __u64 le64(const unsigned char *p)
{
	return le32(p) | (__u64)le32(p + 4) << 32;
}

static struct qusage *qt_find(struct qtable *t, __u32 id)
{
	size_t i;

	if (!t->cap)
		return NULL;
	for (i = (id * 2654435761u) & (t->cap - 1); t->slot[i].used;
	     i = (i + 1) & (t->cap - 1))
		if (t->slot[i].id == id)
			return &t->slot[i];
	return &t->slot[i];
}

static errcode_t qt_grow(struct qtable *t)
{
	struct qtable bigger;
	size_t i;

	bigger.cap = t->cap ? 2 * t->cap : 64;
	bigger.n = t->n;
	bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
	if (!bigger.slot)
		return ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].used)
			*qt_find(&bigger, t->slot[i].id) = t->slot[i];
	free(t->slot);
	*t = bigger;
	return 0;
}

/* The id INODE is charged to in quota TYPE (e2fsprogs' get_qid). */
static __u32 qid(ext2_filsys fs, const struct ext2_inode *inode, int type)
{
	const struct ext2_inode_large *l = (const struct ext2_inode_large *)inode;

	if (type == 0)
		return inode_uid(*inode);
	if (type == 1)
		return inode_gid(*inode);
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    inode_includes(EXT2_GOOD_OLD_INODE_SIZE + l->i_extra_isize, i_projid))
		return l->i_projid;
	return 0;
}

static __u32 quota_ino(ext2_filsys fs, int type)
{
	const struct ext2_super_block *sb = fs->super;

	return type == 0 ? sb->s_usr_quota_inum :
	       type == 1 ? sb->s_grp_quota_inum : sb->s_prj_quota_inum;
}

static int checked(ext2_filsys fs)
{
	return ext2fs_has_feature_quota(fs->super) &&
	       !ext2fs_has_feature_ea_inode(fs->super);
}

errcode_t sanity_quota_note(ext2_filsys fs, struct sanity_quota **qp,
			    const struct ext2_inode *inode)
{
	struct sanity_quota *q = *qp;
	int type;

	if (!checked(fs))
		return 0;
	if (!q) {
		q = calloc(1, sizeof(*q));
		if (!q)
			return ENOMEM;
		*qp = q;
	}
	for (type = 0; type < SANITY_QUOTA_TYPES; type++) {
		struct qtable *t = &q->type[type];
		struct qusage *u;
		errcode_t ret;

		if (!quota_ino(fs, type))
			continue;
		if (2 * (t->n + 1) > t->cap) {
			ret = qt_grow(t);
			if (ret)
				return ret;
		}
		u = qt_find(t, qid(fs, inode, type));
		if (!u->used) {
			u->used = 1;
			u->id = qid(fs, inode, type);
			t->n++;
		}
		u->space += (__u64)ext2fs_get_stat_i_blocks(fs,
				(struct ext2_inode *)inode) * 512;
		u->inodes++;
	}
	return 0;
}

void sanity_quota_free(struct sanity_quota *q)
{
	int type;

	if (!q)
		return;
	for (type = 0; type < SANITY_QUOTA_TYPES; type++)
		free(q->type[type].slot);
	free(q);
}

/* One quota file being read. */
struct qfile {
	ext2_filsys	fs;
	ext2_ino_t	ino;
	struct ext2_inode inode;
	__u32		nblocks;	/* dqi_blocks */
	unsigned	version;
	char		*buf;		/* a filesystem block */
	unsigned char	*tree_seen;	/* a byte per quota block */
};

/* Quota block QBLK of F, into F->buf; its bytes are returned. */
static errcode_t qread(struct qfile *f, __u32 qblk, const unsigned char **out)
{
	ext2_filsys fs = f->fs;
	__u64 byte = (__u64)qblk * QBLOCK;
	blk64_t pblk = 0;
	errcode_t ret;

	if (byte + QBLOCK > EXT2_I_SIZE(&f->inode))
		return EXT2_ET_BAD_BLOCK_NUM;
	ret = ext2fs_bmap2(fs, f->ino, &f->inode, NULL, 0,
			   byte / fs->blocksize, NULL, &pblk);
	if (ret)
		return ret;
	if (!pblk || pblk < fs->super->s_first_data_block ||
	    pblk >= ext2fs_blocks_count(fs->super))
		return EXT2_ET_BAD_BLOCK_NUM;
	ret = io_channel_read_blk64(fs->io, pblk, 1, f->buf);
	if (ret)
		return ret;
	*out = (const unsigned char *)f->buf + byte % fs->blocksize;
	return 0;
}

static void found_quota(struct sanity_finding *found, enum sanity_what what,
			ext2_ino_t ino, int type, __u32 id,
			uint64_t recorded, uint64_t counted)
{
	static const char *const names[SANITY_QUOTA_TYPES] = {
		"user", "group", "project",
	};
	struct sanity_finding f;

	memset(&f, 0, sizeof(f));
	f.what = what;
	f.ino = ino;
	f.detail = names[type];
	f.id = id;
	f.recorded = recorded;
	f.counted = counted;
	sanity_found(found, &f);
}

/* The entries of data block QBLK against T. */
static errcode_t check_data(struct qfile *f, struct qtable *t, int type,
			    __u32 qblk, struct sanity_finding *found)
{
	static const struct qusage none;
	unsigned size = qformat[f->version].size, i, k;
	const unsigned char *b, *e;
	errcode_t ret;

	ret = qread(f, qblk, &b);
	if (ret)
		return ret;
	for (i = 0; i < (QBLOCK - QDATA_HEADER) / size; i++) {
		const struct qusage *u;
		struct qusage *slot;
		__u64 space, inodes;

		e = b + QDATA_HEADER + i * size;
		for (k = 0; k < size && !e[k]; k++)
			;
		if (k == size)
			continue;	/* a free slot */
		space = le64(e + qformat[f->version].curspace);
		inodes = qformat[f->version].inodes_bytes == 8 ?
			 le64(e + qformat[f->version].curinodes) :
			 le32(e + qformat[f->version].curinodes);
		slot = qt_find(t, le32(e));
		u = slot && slot->used ? slot : &none;
		if (slot && slot->used)
			slot->seen = 1;
		if (space != u->space)
			found_quota(found, SANITY_QUOTA_SPACE, f->ino, type,
				    le32(e), space, u->space);
		else if (inodes != u->inodes)
			found_quota(found, SANITY_QUOTA_INODES, f->ino, type,
				    le32(e), inodes, u->inodes);
	}
	return 0;
}

/* Tree block QBLK at DEPTH and all below it. */
static errcode_t check_tree(struct qfile *f, struct qtable *t, int type,
			    __u32 qblk, int depth, struct sanity_finding *found)
{
	__u32 ref[QBLOCK / 4];
	const unsigned char *b;
	unsigned i;
	errcode_t ret;

	/* Every block once: a reference twice is damage. */
	if (qblk < QROOT || qblk >= f->nblocks || f->tree_seen[qblk])
		return EXT2_ET_BAD_BLOCK_NUM;
	f->tree_seen[qblk] = 1;
	ret = qread(f, qblk, &b);
	if (ret)
		return ret;
	for (i = 0; i < QBLOCK / 4; i++)
		ref[i] = le32(b + 4 * i);
	for (i = 0; i < QBLOCK / 4 && !ret; i++) {
		if (!ref[i])
			continue;
		if (depth < QDEPTH - 1) {
			ret = check_tree(f, t, type, ref[i], depth + 1, found);
			continue;
		}
		/* Data blocks hold many ids: reached from many references. */
		if (ref[i] < QROOT || ref[i] >= f->nblocks)
			return EXT2_ET_BAD_BLOCK_NUM;
		if (f->tree_seen[ref[i]] == 2)
			continue;
		if (f->tree_seen[ref[i]])
			return EXT2_ET_BAD_BLOCK_NUM;
		f->tree_seen[ref[i]] = 2;
		ret = check_data(f, t, type, ref[i], found);
	}
	return ret;
}

static errcode_t check_type(ext2_filsys fs, struct qtable *t, int type,
			    struct sanity_finding *found)
{
	struct qfile f;
	const unsigned char *b;
	size_t i;
	errcode_t ret;

	memset(&f, 0, sizeof(f));
	f.fs = fs;
	f.ino = quota_ino(fs, type);
	ret = ext2fs_read_inode(fs, f.ino, &f.inode);
	if (ret)
		return ret;
	ret = ext2fs_get_mem(fs->blocksize, &f.buf);
	if (ret)
		return ret;
	ret = qread(&f, 0, &b);
	if (!ret && (le32(b) != qmagic[type] || le32(b + 4) > 1))
		ret = EXT2_ET_BAD_MAGIC;
	if (!ret) {
		f.version = le32(b + 4);
		f.nblocks = le32(b + QINFO_BLOCKS);
		if ((__u64)f.nblocks * QBLOCK > EXT2_I_SIZE(&f.inode))
			ret = EXT2_ET_BAD_BLOCK_NUM;
	}
	if (!ret) {
		f.tree_seen = calloc(f.nblocks ? f.nblocks : 1, 1);
		ret = f.tree_seen ? check_tree(&f, t, type, QROOT, 0, found) : ENOMEM;
	}
	/*
	 * A file that cannot be read as one (magic, version, a reference
	 * out of it) is not compared: e2fsck -f neither reports nor
	 * rewrites it, and the writer moves no file whose block count would
	 * change its usage.
	 */
	if (ret && ret != ENOMEM) {
		ret = 0;
	} else if (!ret) {
		for (i = 0; i < t->cap; i++)
			if (t->slot[i].used && !t->slot[i].seen)
				found_quota(found, SANITY_QUOTA_MISSING, f.ino, type,
					    t->slot[i].id, 0, t->slot[i].space);
	}
	free(f.tree_seen);
	ext2fs_free_mem(&f.buf);
	return ret;
}

errcode_t sanity_check_quota(ext2_filsys fs, struct sanity_quota *q,
			     struct sanity_finding *found)
{
	static struct qtable empty;
	int type;
	errcode_t ret;

	if (!checked(fs))
		return 0;
	for (type = 0; type < SANITY_QUOTA_TYPES; type++) {
		if (!quota_ino(fs, type))
			continue;
		ret = check_type(fs, q ? &q->type[type] : &empty, type, found);
		if (ret)
			return ret;
	}
	return 0;
}
