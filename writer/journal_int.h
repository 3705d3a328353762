/*
 * journal_int.h --- the JBD2 on-disk format and the writer's state, shared
 * by journal.c (the log) and journal_format.c (the blocks).
 *
 * Everything on disk in the journal is big-endian.  The constants and the
 * superblock layout are the kernel's (include/linux/jbd2.h).
 */
#ifndef JOURNAL_INT_H
#define JOURNAL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "blkindex.h"
#include "blockpool.h"
#include "writer_int.h"

#define JBD2_MAGIC		0xc03b3998U

/* h_blocktype */
#define JBD2_DESCRIPTOR_BLOCK	1
#define JBD2_COMMIT_BLOCK	2
#define JBD2_SUPERBLOCK_V1	3
#define JBD2_SUPERBLOCK_V2	4
#define JBD2_REVOKE_BLOCK	5

/* Tag flags */
#define JBD2_FLAG_ESCAPE	1	/* the copy's first 4 bytes were the magic */
#define JBD2_FLAG_SAME_UUID	2	/* no UUID follows this tag */
#define JBD2_FLAG_LAST_TAG	8	/* last tag of the descriptor block */

/* Features */
#define JBD2_COMPAT_CHECKSUM		0x00000001	/* v1: crc32 in commit */
#define JBD2_INCOMPAT_REVOKE		0x00000001
#define JBD2_INCOMPAT_64BIT		0x00000002
#define JBD2_INCOMPAT_ASYNC_COMMIT	0x00000004
#define JBD2_INCOMPAT_CSUM_V2		0x00000008
#define JBD2_INCOMPAT_CSUM_V3		0x00000010
#define JBD2_INCOMPAT_FAST_COMMIT	0x00000020
#define JBD2_KNOWN_INCOMPAT	(JBD2_INCOMPAT_REVOKE | JBD2_INCOMPAT_64BIT | \
				 JBD2_INCOMPAT_ASYNC_COMMIT | JBD2_INCOMPAT_CSUM_V2 | \
				 JBD2_INCOMPAT_CSUM_V3 | JBD2_INCOMPAT_FAST_COMMIT)

#define JBD2_CRC32C_CHKSUM		4
#define JBD2_DEFAULT_FAST_COMMIT_BLOCKS	256

/* Sizes of the fixed parts of the log blocks. */
#define JBD2_HEADER_SIZE	12	/* magic, blocktype, sequence */
#define JBD2_REVOKE_HEADER_SIZE	16	/* header + r_count */
#define JBD2_TAIL_SIZE		4	/* block checksum, v2/v3 */
#define JBD2_UUID_SIZE		16

/* The journal superblock: the first 1024 bytes of journal block 0. */
struct jbd2_super {
	uint32_t h_magic, h_blocktype, h_sequence;
	uint32_t s_blocksize, s_maxlen, s_first;
	uint32_t s_sequence, s_start;
	int32_t	 s_errno;
	uint32_t s_feature_compat, s_feature_incompat, s_feature_ro_compat;
	uint8_t	 s_uuid[16];
	uint32_t s_nr_users, s_dynsuper;
	uint32_t s_max_transaction, s_max_trans_data;
	uint8_t	 s_checksum_type, s_padding2[3];
	uint32_t s_num_fc_blks;
	uint32_t s_padding[41];
	uint32_t s_checksum;
	uint8_t	 s_users[16 * 48];
};

_Static_assert(sizeof(struct jbd2_super) == 1024, "journal superblock size");
_Static_assert(offsetof(struct jbd2_super, s_uuid) == 0x30, "s_uuid offset");
_Static_assert(offsetof(struct jbd2_super, s_checksum_type) == 0x50, "csum type");
_Static_assert(offsetof(struct jbd2_super, s_checksum) == 0xfc, "s_checksum");

/* A block and its image (one filesystem block, from the journal's images). */
struct jblock {
	blk64_t	blk;
	char	*image;
	int	revoked;	/* live: the open transaction revokes it */
};

/*
 * Blocks logged by live transactions (committed, not yet checkpointed):
 * the latest image of each, sorted by block number.
 */
struct jlive {
	struct jblock	*slot;
	uint64_t	cap, n;
	struct blockpool *images;	/* where the images come from: the journal's */
};

struct journal {
	ext2_filsys	fs;
	int		flags;		/* JOURNAL_* */
	unsigned	bs;

	/* Where the log is: journal block i lives at fs block map[i]. */
	blk64_t		*map;
	uint32_t	maxlen;		/* s_maxlen */
	uint32_t	first, last;	/* the log is [first, last) */
	int		no_wrap;	/* fast-commit area: see journal.c */

	/* Journal block 0, the superblock at its start, in disk order. */
	char		*sb_block;
	struct jbd2_super *jsb;
	int		jsb_dirty;	/* features to write with the next jsb */
	int		csum;		/* 0, 2 or 3: checksum version */
	int		is64;		/* 64-bit block numbers in tags */
	unsigned	tag_bytes;
	uint32_t	seed;		/* crc32c of the journal UUID (v2/v3) */

	/* The log. */
	uint32_t	head;		/* where the next block goes */
	uint32_t	tail;		/* start of the oldest live transaction */
	uint32_t	tail_seq;	/* ... and its sequence */
	uint32_t	seq;		/* sequence of the transaction being built */
	size_t		nlive_trans;
	uint64_t	last_commit_sec;
	int		recover_on_disk;	/* needs_recovery written by us */
	struct jlive	live;
	struct blockpool images;	/* every image of live and pending */

	/* The transaction being built. */
	struct jblock	*pending;
	uint64_t	npending, pending_cap;
	struct blkindex	pending_at;	/* block -> its slot in pending */
	blk64_t		*revokes;
	uint64_t	nrevokes, revokes_cap;

	char		*buf;		/* a scratch block */
	char		*ckpt;		/* CKPT_BLOCKS: consecutive live blocks */
	char		*lbuf;		/* a descriptor block and its copies */
};

/* journal.c */
void jlive_free(struct jlive *l);

/* journal_format.c */
uint32_t jfmt_get32(const void *p);
void jfmt_put32(void *p, uint32_t v);
void jfmt_header(char *buf, unsigned bs, uint32_t type, uint32_t seq);
unsigned jfmt_tag_bytes(const struct journal *j);
size_t jfmt_desc_capacity(const struct journal *j);
size_t jfmt_revoke_capacity(const struct journal *j);
int jfmt_escape(const struct journal *j, const char *image, char *logged);
void jfmt_tag(const struct journal *j, char *desc, size_t index, blk64_t blk,
	      const char *logged, uint32_t seq, int escaped, int last);
void jfmt_tail(const struct journal *j, char *block);
void jfmt_revoke_block(const struct journal *j, char *buf, uint32_t seq,
		       const blk64_t *blks, size_t n);
void jfmt_commit_block(const struct journal *j, char *buf, uint32_t seq,
		       uint64_t sec);
void jfmt_super_csum_set(struct jbd2_super *jsb);
int jfmt_super_csum_ok(const struct jbd2_super *jsb);

#endif /* JOURNAL_INT_H */
