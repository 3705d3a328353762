/*
 * journal_format.c --- the JBD2 log blocks: descriptor tags, escaping,
 * revoke records, commit blocks and the checksums of each, as the kernel
 * writes them and e2fsck/recovery.c reads them back.
 */
#include <string.h>

#include "journal_int.h"

uint32_t jfmt_get32(const void *p)
{
	const unsigned char *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

void jfmt_put32(void *p, uint32_t v)
{
	unsigned char *b = p;

	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

static void put16(void *p, uint16_t v)
{
	unsigned char *b = p;

	b[0] = v >> 8;
	b[1] = v;
}

static void put64(void *p, uint64_t v)
{
	jfmt_put32(p, v >> 32);
	jfmt_put32((char *)p + 4, (uint32_t)v);
}

static uint32_t crc32c(uint32_t crc, const void *p, size_t len)
{
	return ext2fs_crc32c_le(crc, (unsigned char const *)p, len);
}

/* A fresh log block: zeroes with the common header. */
void jfmt_header(char *buf, unsigned bs, uint32_t type, uint32_t seq)
{
	memset(buf, 0, bs);
	jfmt_put32(buf, JBD2_MAGIC);
	jfmt_put32(buf + 4, type);
	jfmt_put32(buf + 8, seq);
}

/*
 * Bytes per descriptor tag: the kernel's journal_tag_bytes(), quirk
 * included (v2 adds two bytes to the 12-byte tag whether or not the
 * high block number is there).
 */
unsigned jfmt_tag_bytes(const struct journal *j)
{
	unsigned sz = 12;

	if (j->csum == 3)
		return 16;
	if (j->csum == 2)
		sz += 2;
	return j->is64 ? sz : sz - 4;
}

static unsigned tail_bytes(const struct journal *j)
{
	return j->csum ? JBD2_TAIL_SIZE : 0;
}

/* Tags in one descriptor block: the first is followed by the UUID. */
size_t jfmt_desc_capacity(const struct journal *j)
{
	size_t room = j->bs - tail_bytes(j) - JBD2_HEADER_SIZE;

	return 1 + (room - j->tag_bytes - JBD2_UUID_SIZE) / j->tag_bytes;
}

size_t jfmt_revoke_capacity(const struct journal *j)
{
	return (j->bs - tail_bytes(j) - JBD2_REVOKE_HEADER_SIZE) /
	       (j->is64 ? 8 : 4);
}

/*
 * Copy IMAGE to LOGGED as it goes into the log.  A block that starts with
 * the journal magic would look like a log block of its own to a reader
 * scanning the log: its first four bytes are zeroed in the copy and the
 * tag says so (replay puts the magic back).  Returns whether it did.
 */
int jfmt_escape(const struct journal *j, const char *image, char *logged)
{
	memcpy(logged, image, j->bs);
	if (jfmt_get32(image) != JBD2_MAGIC)
		return 0;
	memset(logged, 0, 4);
	return 1;
}

/* The checksum of a logged copy: crc32c(seed, sequence, block). */
static uint32_t copy_csum(const struct journal *j, const char *logged,
			  uint32_t seq)
{
	unsigned char be_seq[4];

	jfmt_put32(be_seq, seq);
	return crc32c(crc32c(j->seed, be_seq, 4), logged, j->bs);
}

/* Write tag INDEX of descriptor DESC for BLK, logged as LOGGED. */
void jfmt_tag(const struct journal *j, char *desc, size_t index, blk64_t blk,
	      const char *logged, uint32_t seq, int escaped, int last)
{
	char *tag = desc + JBD2_HEADER_SIZE + index * j->tag_bytes +
		    (index ? JBD2_UUID_SIZE : 0);
	uint32_t flags = (index ? JBD2_FLAG_SAME_UUID : 0) |
			 (escaped ? JBD2_FLAG_ESCAPE : 0) |
			 (last ? JBD2_FLAG_LAST_TAG : 0);
	uint32_t csum = j->csum ? copy_csum(j, logged, seq) : 0;

	jfmt_put32(tag, (uint32_t)blk);
	if (j->csum == 3) {
		jfmt_put32(tag + 4, flags);
		jfmt_put32(tag + 8, (uint32_t)(blk >> 32));
		jfmt_put32(tag + 12, csum);
	} else {
		put16(tag + 4, j->csum == 2 ? (uint16_t)csum : 0);
		put16(tag + 6, flags);
		if (j->is64)
			jfmt_put32(tag + 8, (uint32_t)(blk >> 32));
	}
	/* The first tag carries the journal's UUID; the rest say SAME_UUID. */
	if (!index)
		memcpy(tag + j->tag_bytes, j->jsb->s_uuid, JBD2_UUID_SIZE);
}

/* The checksum tail of a descriptor or revoke block (v2/v3). */
void jfmt_tail(const struct journal *j, char *block)
{
	if (!j->csum)
		return;
	jfmt_put32(block + j->bs - JBD2_TAIL_SIZE, 0);
	jfmt_put32(block + j->bs - JBD2_TAIL_SIZE, crc32c(j->seed, block, j->bs));
}

void jfmt_revoke_block(const struct journal *j, char *buf, uint32_t seq,
		       const blk64_t *blks, size_t n)
{
	size_t rec = j->is64 ? 8 : 4, i;
	char *p = buf + JBD2_REVOKE_HEADER_SIZE;

	jfmt_header(buf, j->bs, JBD2_REVOKE_BLOCK, seq);
	for (i = 0; i < n; i++, p += rec) {
		if (j->is64)
			put64(p, blks[i]);
		else
			jfmt_put32(p, (uint32_t)blks[i]);
	}
	/* r_count: bytes used, header included. */
	jfmt_put32(buf + JBD2_HEADER_SIZE, JBD2_REVOKE_HEADER_SIZE + n * rec);
	jfmt_tail(j, buf);
}

/*
 * The commit block.  Checksum v1 (crc32 of the whole transaction in the
 * commit block) is left "unused" (type, size and sum 0), which recovery
 * accepts; v2/v3 checksum the commit block itself.
 */
void jfmt_commit_block(const struct journal *j, char *buf, uint32_t seq,
		       uint64_t sec)
{
	jfmt_header(buf, j->bs, JBD2_COMMIT_BLOCK, seq);
	put64(buf + 48, sec);		/* h_commit_sec */
	jfmt_put32(buf + 56, 0);	/* h_commit_nsec */
	if (j->csum)
		jfmt_put32(buf + 16, crc32c(j->seed, buf, j->bs));
}

static uint32_t super_csum(const struct jbd2_super *jsb)
{
	struct jbd2_super copy = *jsb;

	copy.s_checksum = 0;
	return crc32c(~0U, &copy, sizeof(copy));
}

void jfmt_super_csum_set(struct jbd2_super *jsb)
{
	jfmt_put32(&jsb->s_checksum, super_csum(jsb));
}

int jfmt_super_csum_ok(const struct jbd2_super *jsb)
{
	return jfmt_get32(&jsb->s_checksum) == super_csum(jsb);
}
