/*
 * memory_fs.h --- a filesystem made by ext2fs_initialize and never
 * written, for the unit tests that need its bitmaps: its file is made
 * and removed at once (libext2fs opens the device as it initializes).
 */
#ifndef E2F_TESTS_MEMORY_FS_H
#define E2F_TESTS_MEMORY_FS_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ext2fs/ext2fs.h>

/* BLOCKS blocks of 1024 << LOG_BLOCK_SIZE bytes, 64-bit; NULL if it cannot. */
static ext2_filsys memory_fs(blk64_t blocks, unsigned log_block_size)
{
	struct ext2_super_block param;
	char path[] = "/tmp/e2f-unit-XXXXXX";
	ext2_filsys fs;
	int fd = mkstemp(path);

	if (fd < 0)
		return NULL;
	close(fd);
	memset(&param, 0, sizeof(param));
	ext2fs_blocks_count_set(&param, blocks);
	param.s_log_block_size = log_block_size;
	if (ext2fs_initialize(path, EXT2_FLAG_64BITS, &param, unix_io_manager, &fs))
		fs = NULL;
	unlink(path);
	return fs;
}

#endif
