/*
 * journal_open.c --- find the internal journal, check that its superblock
 * describes a log this writer can write (writer_int.h), and set up the log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "journal_int.h"

struct map_walk {
	blk64_t	*map;
	blk64_t	len;
};

static int map_block(ext2_filsys fs, blk64_t *blocknr, e2_blkcnt_t blockcnt,
		     blk64_t ref_blk, int ref_offset, void *priv)
{
	struct map_walk *w = priv;

	(void)fs;
	(void)ref_blk;
	(void)ref_offset;
	if (blockcnt >= 0 && (blk64_t)blockcnt < w->len)
		w->map[blockcnt] = *blocknr;
	return 0;
}

/* Where each block of the journal inode lives, and journal block 0. */
static errcode_t map_journal(struct journal *j, blk64_t *len)
{
	ext2_filsys fs = j->fs;
	struct ext2_inode inode;
	struct map_walk w;
	errcode_t ret;

	ret = ext2fs_read_inode(fs, fs->super->s_journal_inum, &inode);
	if (ret)
		return ret;
	w.len = EXT2_I_SIZE(&inode) / j->bs;
	if (w.len < 2 || w.len > UINT32_MAX)
		return E2F_ERR_JOURNAL_CORRUPT;
	w.map = calloc(w.len, sizeof(*w.map));
	if (!w.map)
		return EXT2_ET_NO_MEMORY;
	j->map = w.map;
	*len = w.len;
	ret = ext2fs_block_iterate3(fs, fs->super->s_journal_inum,
				    BLOCK_FLAG_READ_ONLY | BLOCK_FLAG_DATA_ONLY,
				    NULL, map_block, &w);
	if (ret)
		return ret;
	if (!j->map[0])
		return E2F_ERR_JOURNAL_CORRUPT;
	return io_channel_read_blk64(fs->io, j->map[0], 1, j->sb_block);
}

/*
 * Turn on what the kernel turns on when it mounts such a filesystem:
 * checksum v3 with metadata_csum, 64-bit tags on a 64bit filesystem.
 */
static void upgrade_features(struct journal *j, uint32_t *incompat,
			     uint32_t *compat)
{
	ext2_filsys fs = j->fs;
	uint32_t want = *incompat;

	if (ext2fs_has_feature_metadata_csum(fs->super) &&
	    !(want & (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3))) {
		want |= JBD2_INCOMPAT_CSUM_V3;
		*compat &= ~JBD2_COMPAT_CHECKSUM;
	}
	if (ext2fs_has_feature_64bit(fs->super))
		want |= JBD2_INCOMPAT_64BIT;
	if (want == *incompat)
		return;
	*incompat = want;
	jfmt_put32(&j->jsb->s_feature_incompat, want);
	jfmt_put32(&j->jsb->s_feature_compat, *compat);
	if (want & (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3))
		j->jsb->s_checksum_type = JBD2_CRC32C_CHKSUM;
	j->jsb_dirty = 1;
}

/* Everything the journal superblock says, checked; the log set up. */
static errcode_t check_super(struct journal *j, blk64_t len)
{
	struct jbd2_super *jsb = j->jsb;
	uint32_t type = jfmt_get32(&jsb->h_blocktype), i;
	uint32_t compat = 0, incompat = 0, rocompat = 0, fc = 0;

	if (jfmt_get32(&jsb->h_magic) != JBD2_MAGIC ||
	    (type != JBD2_SUPERBLOCK_V1 && type != JBD2_SUPERBLOCK_V2))
		return E2F_ERR_JOURNAL_CORRUPT;
	if (type == JBD2_SUPERBLOCK_V2) {
		compat = jfmt_get32(&jsb->s_feature_compat);
		incompat = jfmt_get32(&jsb->s_feature_incompat);
		rocompat = jfmt_get32(&jsb->s_feature_ro_compat);
		if ((incompat & ~JBD2_KNOWN_INCOMPAT) || rocompat ||
		    jfmt_get32(&jsb->s_nr_users) > 1)
			return E2F_ERR_JOURNAL_UNSUPPORTED;
		if ((incompat & JBD2_INCOMPAT_CSUM_V2) &&
		    (incompat & JBD2_INCOMPAT_CSUM_V3))
			return E2F_ERR_JOURNAL_CORRUPT;
		if ((incompat & (JBD2_INCOMPAT_CSUM_V2 | JBD2_INCOMPAT_CSUM_V3)) &&
		    (jsb->s_checksum_type != JBD2_CRC32C_CHKSUM ||
		     (compat & JBD2_COMPAT_CHECKSUM) || !jfmt_super_csum_ok(jsb)))
			return E2F_ERR_JOURNAL_CORRUPT;
	}
	j->maxlen = jfmt_get32(&jsb->s_maxlen);
	j->first = jfmt_get32(&jsb->s_first);
	if (jfmt_get32(&jsb->s_blocksize) != j->bs || j->maxlen > len ||
	    j->first < 1 || j->first >= j->maxlen)
		return E2F_ERR_JOURNAL_CORRUPT;
	/* A hole (0) would send log blocks to block 0: the superblock. */
	for (i = 0; i < j->maxlen; i++)
		if (!j->map[i] || j->map[i] < j->fs->super->s_first_data_block ||
		    j->map[i] >= ext2fs_blocks_count(j->fs->super))
			return E2F_ERR_JOURNAL_CORRUPT;
	if (jfmt_get32(&jsb->s_start))
		return E2F_ERR_NEEDS_RECOVERY;
	if (jsb->s_errno)
		return E2F_ERR_HAS_ERRORS;

	if (type == JBD2_SUPERBLOCK_V2)
		upgrade_features(j, &incompat, &compat);
	j->csum = incompat & JBD2_INCOMPAT_CSUM_V3 ? 3 :
		  incompat & JBD2_INCOMPAT_CSUM_V2 ? 2 : 0;
	j->is64 = !!(incompat & JBD2_INCOMPAT_64BIT);
	if (!j->is64 && ext2fs_blocks_count(j->fs->super) > UINT32_MAX)
		return E2F_ERR_JOURNAL_UNSUPPORTED;
	j->tag_bytes = jfmt_tag_bytes(j);
	if (j->csum)
		j->seed = ext2fs_crc32c_le(~0U, jsb->s_uuid, sizeof(jsb->s_uuid));

	/* The fast-commit area at the end is not ours. */
	j->last = j->maxlen;
	if ((incompat & JBD2_INCOMPAT_FAST_COMMIT) ||
	    ext2fs_has_feature_fast_commit(j->fs->super)) {
		fc = jfmt_get32(&jsb->s_num_fc_blks);
		if (!fc)
			fc = JBD2_DEFAULT_FAST_COMMIT_BLOCKS;
		if (fc >= j->maxlen - j->first)
			return E2F_ERR_JOURNAL_UNSUPPORTED;
		j->last = j->maxlen - fc;
		j->no_wrap = 1;
	}
	if (j->last - j->first < 8)
		return E2F_ERR_JOURNAL_UNSUPPORTED;
	/* An empty log starts again at s_first, as the kernel's does. */
	j->head = j->first;
	j->seq = jfmt_get32(&jsb->s_sequence);
	return 0;
}

errcode_t journal_open(ext2_filsys fs, int flags, struct journal **ret)
{
	struct journal *j;
	blk64_t len = 0;
	errcode_t err;

	*ret = NULL;
	if (ext2fs_has_feature_journal_dev(fs->super) || !fs->super->s_journal_inum)
		return E2F_ERR_EXTERNAL_JOURNAL;
	if (ext2fs_has_feature_journal_needs_recovery(fs->super))
		return E2F_ERR_NEEDS_RECOVERY;
	j = calloc(1, sizeof(*j));
	if (!j)
		return EXT2_ET_NO_MEMORY;
	j->fs = fs;
	j->flags = flags;
	j->bs = fs->blocksize;
	blockpool_init(&j->images, j->bs);
	j->live.images = &j->images;
	err = ext2fs_get_mem(j->bs, &j->sb_block);
	if (!err)
		err = ext2fs_get_mem(j->bs, &j->buf);
	if (err)
		goto errout;
	j->jsb = (struct jbd2_super *)j->sb_block;
	err = map_journal(j, &len);
	if (!err)
		err = check_super(j, len);
	if (err)
		goto errout;
	*ret = j;
	return 0;
errout:
	journal_free(j);
	return err;
}

void journal_free(struct journal *j)
{
	if (!j)
		return;
	jlive_free(&j->live);
	blockpool_free(&j->images);	/* the pending images too */
	free(j->pending);
	blkindex_free(&j->pending_at);
	free(j->revokes);
	free(j->ckpt);
	free(j->lbuf);
	free(j->map);
	ext2fs_free_mem(&j->sb_block);
	ext2fs_free_mem(&j->buf);
	free(j);
}
