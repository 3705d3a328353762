/*
 * jtool.c --- drive the journal writer (writer/writer_int.h) directly, for what
 * a file switch never does on its own: a block logged by one transaction
 * and freed by the next, then reused for data.  Test-only.
 *
 *   jtool IMAGE revoke BLOCK     T1 logs BLOCK (filled with 'J'); T2
 *                                revokes it; then BLOCK is written in
 *                                place with 'D' (its new use as data).
 *   jtool IMAGE norevoke BLOCK   the same without the revoke (the control:
 *                                replay then brings the 'J' back).
 *   jtool IMAGE clobber BLOCK    zero BLOCK in place, through the logged
 *                                channel: the power-cut harness's control
 *                                (an unsafe write it must catch).
 *   jtool IMAGE stamp TIME       record a last error at TIME in the
 *                                superblock: a write that changes both of
 *                                its sectors (the checksum follows), which
 *                                writer/supersector.c leaves alone because an
 *                                error is recorded: the harness's control
 *                                for torn writes (it must catch the tear).
 *   jtool IMAGE fill BLOCK       on a journal with a fast-commit area (the
 *                                log never wraps): transactions of one
 *                                block each, BLOCK+k filled with byte k+1,
 *                                then one sized to end exactly at the end
 *                                of the log, then one more.  Prints the
 *                                number of blocks logged.
 * No transaction is checkpointed by jtool itself: the log is left for
 * e2fsck to replay (the writer checkpoints when it needs room).  BLOCK
 * should start a run of free blocks, so that either content is
 * consistent for e2fsck.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "writer.h"
#include "writer_int.h"
#include "journal_int.h"

static const char *prog = "jtool";

static errcode_t run(ext2_filsys fs, blk64_t blk, int revoke)
{
	struct journal *j = NULL;
	struct layout_piece run = { blk, 1 };
	char *buf = NULL;
	errcode_t ret;

	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (!ret)
		ret = journal_open(fs, JOURNAL_NO_CHECKPOINT, &j);
	if (ret)
		goto errout;
	memset(buf, 'J', fs->blocksize);
	ret = journal_start(j);
	if (!ret)
		ret = journal_add(j, blk, buf);
	if (!ret)
		ret = journal_commit(j);
	if (!ret && revoke) {
		ret = journal_revoke(j, &run, 1);
		if (!ret)
			ret = journal_commit(j);
	}
	/* The block's next life, outside the journal. */
	memset(buf, 'D', fs->blocksize);
	if (!ret)
		ret = io_channel_write_blk64(fs->io, blk, 1, buf);
	if (!ret)
		ret = io_channel_flush(fs->io);
	if (!ret)
		ret = journal_close(j);
errout:
	journal_free(j);
	ext2fs_free_mem(&buf);
	return ret;
}

/* One transaction logging N blocks from BLK + *next on, each filled with its index + 1. */
static errcode_t log_blocks(struct journal *j, blk64_t blk, unsigned *next,
			    unsigned n, char *buf)
{
	errcode_t ret = journal_start(j);

	for (; !ret && n; n--, (*next)++) {
		memset(buf, (*next + 1) & 0xff, j->bs);
		ret = journal_add(j, blk + *next, buf);
	}
	return ret ? ret : journal_commit(j);
}

static errcode_t fill(ext2_filsys fs, blk64_t blk)
{
	struct journal *j = NULL;
	char *buf = NULL;
	unsigned next = 0;
	size_t cap;
	errcode_t ret;

	ret = ext2fs_get_mem(fs->blocksize, &buf);
	if (!ret)
		ret = journal_open(fs, JOURNAL_NO_CHECKPOINT, &j);
	if (ret)
		goto errout;
	if (!j->no_wrap) {
		ret = EXT2_ET_INVALID_ARGUMENT;	/* wants a fast-commit area */
		goto errout;
	}
	/* A descriptor, its copies and the commit block fill the log exactly. */
	cap = jfmt_desc_capacity(j);
	while (!ret && j->last - j->head > cap + 2)
		ret = log_blocks(j, blk, &next, 1, buf);
	if (!ret && j->last - j->head >= 3)
		ret = log_blocks(j, blk, &next, j->last - j->head - 2, buf);
	if (!ret)
		ret = log_blocks(j, blk, &next, 1, buf);
	if (!ret)
		ret = journal_close(j);
	if (!ret)
		printf("%u\n", next);
errout:
	journal_free(j);
	ext2fs_free_mem(&buf);
	return ret;
}

/*
 * Write one block at BLK in place and flush: zeroes (clobber), or the
 * primary superblock with a last error recorded at BLK seconds (stamp).
 */
static errcode_t write_in_place(ext2_filsys fs, blk64_t blk, int stamp)
{
	char *buf = NULL;
	errcode_t ret = ext2fs_get_memzero(fs->blocksize, &buf);

	if (!ret && stamp) {
		fs->super->s_last_error_time = (uint32_t)blk;
		memcpy(fs->super->s_last_error_func, "jtool", 6);
		ret = metawrite_super_block(fs, &blk, buf);
	}
	if (!ret)
		ret = io_channel_write_blk64(fs->io, blk, 1, buf);
	if (!ret)
		ret = io_channel_flush(fs->io);
	ext2fs_free_mem(&buf);
	return ret;
}

int main(int argc, char **argv)
{
	struct fsopen_info info;
	ext2_filsys fs = NULL;
	errcode_t ret;
	const char *mode = argc == 4 ? argv[2] : "";
	blk64_t blk;

	initialize_e2f_error_table();
	initialize_ext2_error_table();
	if (strcmp(mode, "revoke") && strcmp(mode, "norevoke") &&
	    strcmp(mode, "clobber") && strcmp(mode, "fill") &&
	    strcmp(mode, "stamp")) {
		fprintf(stderr, "usage: %s IMAGE revoke|norevoke|clobber|fill|stamp BLOCK\n",
			prog);
		return 16;
	}
	blk = strtoull(argv[3], NULL, 0);
	ret = fsopen_open(argv[1], FSOPEN_WRITE | FSOPEN_FORCE, NULL, &fs, &info);
	/* Logged for the power-cut harness, as e2defrag's writes are. */
	if (!ret)
		ret = iolog_attach_env(fs);
	if (ret) {
		com_err(prog, ret, "while opening %s", argv[1]);
		return 8;
	}
	/* As switch_open does: superblocks go out whole. */
	ret = iowrap_push(fs, NULL, NULL);
	fs->flags |= EXT2_FLAG_MASTER_SB_ONLY;
	if (!ret && (!strcmp(mode, "clobber") || !strcmp(mode, "stamp")))
		ret = write_in_place(fs, blk, !strcmp(mode, "stamp"));
	else if (!ret && !strcmp(mode, "fill"))
		ret = fill(fs, blk);
	else if (!ret)
		ret = run(fs, blk, !strcmp(mode, "revoke"));
	if (ret)
		com_err(prog, ret, "while writing the journal");
	fs->flags &= ~EXT2_FLAG_DIRTY;
	fsopen_close(fs, &info);
	return ret ? 4 : 0;
}
