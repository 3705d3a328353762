/*
 * supersector.c --- keep the superblock's checksum across a write so that
 * the write changes one sector; see writer_int.h.
 */
#include <string.h>

#include "e2frag.h"
#include "writer_int.h"

#define SECTOR		512
#define CSUM_OFFSET	0x3fc	/* s_checksum */
#define FREE_OFFSET	0x1fc	/* the last 4 bytes of s_last_error_func */
#define LAST_ERR_TIME	0x1cc	/* s_last_error_time */

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static uint32_t crc(uint32_t seed, const unsigned char *p, size_t len)
{
	return ext2fs_crc32c_le(seed, p, len);
}

static int csum_sb(const unsigned char *sb)
{
	const struct ext2_super_block *s = (const void *)sb;

	return s->s_magic == EXT2_SUPER_MAGIC &&
	       (s->s_feature_ro_compat & EXT4_FEATURE_RO_COMPAT_METADATA_CSUM) &&
	       s->s_checksum_type == EXT2_CRC32C_CHKSUM;
}

/*
 * The register before BYTE was fed, given the register AFTER it.  A step
 * of the reflected CRC is after = (before >> 8) ^ T[(before ^ byte) & 0xff],
 * and the top bytes of T's 256 entries are all different: the top byte of
 * AFTER names the entry, and the entry gives back the rest.
 */
static uint32_t crc_unstep(uint32_t after, unsigned char byte)
{
	unsigned k;

	for (k = 0; k < 256; k++) {
		unsigned char b = k;
		uint32_t t = crc(0, &b, 1);	/* T[k] */

		if (t >> 24 == after >> 24)
			return (after ^ t) << 8 | ((k ^ byte) & 0xff);
	}
	return 0;	/* not reached: T's top bytes cover 0..255 */
}

int supersector_keep_checksum(const unsigned char *old, unsigned char *new)
{
	unsigned char saved[4];
	uint32_t target, before, after;
	size_t i;

	if (!csum_sb(old) || !csum_sb(new) || get_le32(new + LAST_ERR_TIME))
		return 0;
	target = get_le32(old + CSUM_OFFSET);
	if (crc(~0U, old, CSUM_OFFSET) != target ||
	    memcmp(old + SECTOR, new + SECTOR, CSUM_OFFSET - SECTOR))
		return 0;
	/*
	 * The register must be TARGET after byte CSUM_OFFSET: walk back over
	 * the second sector to the register it needs after the four free
	 * bytes, then over four zero bytes.  Feeding four bytes X from a
	 * register R is feeding four zeroes from R ^ X (little-endian), so X
	 * is what turns the register before them into that one.
	 */
	after = target;
	for (i = CSUM_OFFSET; i > FREE_OFFSET + 4; i--)
		after = crc_unstep(after, new[i - 1]);
	for (i = 0; i < 4; i++)
		after = crc_unstep(after, 0);
	before = crc(~0U, new, FREE_OFFSET);
	memcpy(saved, new + FREE_OFFSET, 4);
	put_le32(new + FREE_OFFSET, before ^ after);
	if (crc(~0U, new, CSUM_OFFSET) != target) {
		memcpy(new + FREE_OFFSET, saved, 4);	/* not reached */
		return 0;
	}
	put_le32(new + CSUM_OFFSET, target);
	return 1;
}
