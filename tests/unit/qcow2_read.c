/*
 * qcow2_read.c --- the qcow2 io_manager (lib/qcow2_io.c) on a dump built
 * here byte by byte after QEMU's format: blocks inside the image read as
 * written, and a block past its virtual size is an error, also when the
 * block number is so large that block * block size wraps to the start.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout_int.h"
#include "../lib/tap.h"

#define CLUSTER		512		/* cluster_bits 9, the smallest */
#define IMAGE_BYTES	4096		/* 4 blocks of 1 KiB */
#define BLOCK		1024

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, (uint32_t)v);
}

/*
 * Clusters of the file: 0 the header, 1 the L1 table, 2 the L2 table,
 * 3 the data of the image's first cluster (bytes 0-511, all 0xA5); the
 * image's other clusters are unallocated and read as zeros.
 */
static int write_dump(const char *path)
{
	unsigned char f[4 * CLUSTER];
	FILE *out;
	int ok;

	memset(f, 0, sizeof(f));
	put32(f, 0x514649fbU);			/* magic "QFI\xfb" */
	put32(f + 4, 2);			/* version */
	put32(f + 20, 9);			/* cluster_bits */
	put64(f + 24, IMAGE_BYTES);		/* size */
	put32(f + 36, 1);			/* l1_size */
	put64(f + 40, 1 * CLUSTER);		/* l1_table_offset */
	put64(f + CLUSTER, (1ULL << 63) | 2 * CLUSTER);		/* L1[0] */
	put64(f + 2 * CLUSTER, (1ULL << 63) | 3 * CLUSTER);	/* L2[0] */
	memset(f + 3 * CLUSTER, 0xA5, CLUSTER);
	out = fopen(path, "wb");
	if (!out)
		return 0;
	ok = fwrite(f, sizeof(f), 1, out) == 1;
	return fclose(out) == 0 && ok;
}

/* Whether LEN bytes at P all equal C. */
static int all(const unsigned char *p, size_t len, unsigned char c)
{
	while (len--)
		if (*p++ != c)
			return 0;
	return 1;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096];
	unsigned char buf[2 * BLOCK];
	unsigned long long huge;
	io_channel ch;
	errcode_t ret;
	int fd;

	snprintf(path, sizeof(path), "%s/e2frag-qcow2.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return 99;
	close(fd);
	if (!write_dump(path))
		return 99;
	initialize_e2f_error_table();
	tap_plan(9);
	ret = qcow2_io_manager->open(path, 0, &ch);
	if (!tap_ok(!ret, "the dump opens (error %ld)", (long)ret)) {
		unlink(path);
		return tap_done();
	}
	io_channel_set_blksize(ch, BLOCK);

	memset(buf, 0x11, sizeof(buf));
	ret = io_channel_read_blk64(ch, 0, 1, buf);
	tap_ok(!ret && all(buf, CLUSTER, 0xA5) && all(buf + CLUSTER, CLUSTER, 0),
	       "block 0: the data cluster, then zeros (error %ld)", (long)ret);
	memset(buf, 0x11, sizeof(buf));
	ret = io_channel_read_blk64(ch, 3, 1, buf);
	tap_ok(!ret && all(buf, BLOCK, 0), "block 3, the last, reads as zeros (error %ld)",
	       (long)ret);
	ret = io_channel_read_blk64(ch, 4, 1, buf);
	tap_ok(ret != 0, "block 4, just past the end, is an error (error %ld)", (long)ret);
	ret = io_channel_read_blk64(ch, 3, 2, buf);
	tap_ok(ret != 0, "blocks 3-4, running past the end, are an error (error %ld)",
	       (long)ret);

	/* 2^54 blocks of 2^10 bytes: 2^64, which wraps to byte 0. */
	huge = 1ULL << 54;
	memset(buf, 0x11, sizeof(buf));
	ret = io_channel_read_blk64(ch, huge, 1, buf);
	tap_ok(ret != 0 && all(buf, BLOCK, 0x11),
	       "block 2^54 (offset wraps to 0) is an error, not block 0's data (error %ld)",
	       (long)ret);
	memset(buf, 0x11, sizeof(buf));
	ret = io_channel_read_blk64(ch, huge + 1, 1, buf);
	tap_ok(ret != 0 && all(buf, BLOCK, 0x11),
	       "block 2^54 + 1 (offset wraps to 1024) is an error (error %ld)", (long)ret);
	ret = io_channel_read_blk64(ch, ~0ULL, 1, buf);
	tap_ok(ret != 0, "the largest block number is an error (error %ld)", (long)ret);

	/* A negative count is bytes: INT_MIN must not overflow when negated. */
	ret = io_channel_read_blk64(ch, 0, INT_MIN, buf);
	tap_ok(ret != 0, "a count of INT_MIN (2 GiB) is an error (error %ld)", (long)ret);

	io_channel_close(ch);
	unlink(path);
	return tap_done();
}
