/*
 * iolog.c --- log every write and flush to a file; see writer.h.  A hook
 * set on a stacked io channel (iowrap.c), so that it sees exactly what
 * libext2fs and the switch hand to the device, whatever the manager below.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"

static errcode_t put(FILE *f, uint32_t type, uint64_t offset, uint64_t length,
		     const void *data)
{
	struct iolog_record r = { type, 0, offset, length };

	if (fwrite(&r, sizeof(r), 1, f) != 1 ||
	    (data && length && fwrite(data, length, 1, f) != 1))
		return errno ? errno : EIO;
	return 0;
}

static errcode_t log_write(void *priv, uint64_t offset, uint64_t len,
			   const void *data)
{
	return put(priv, IOLOG_WRITE, offset, len, data);
}

static errcode_t log_zero(void *priv, uint64_t offset, uint64_t len)
{
	return put(priv, IOLOG_ZERO, offset, len, NULL);
}

/* The log itself is flushed at each barrier: a crash of the run loses
 * nothing that reached the disk. */
static errcode_t log_flush(void *priv)
{
	errcode_t ret = put(priv, IOLOG_FLUSH, 0, 0, NULL);

	if (!ret && fflush(priv))
		ret = errno ? errno : EIO;
	return ret;
}

static void log_close(void *priv)
{
	fclose(priv);
}

static const struct iowrap_hooks iolog_hooks = {
	.wrote = log_write,
	.zeroed = log_zero,
	.flushed = log_flush,
	.closed = log_close,
};

errcode_t iolog_attach(ext2_filsys fs, const char *path)
{
	FILE *f = fopen(path, "ab");
	errcode_t ret;

	if (!f)
		return errno;
	if (ftell(f) == 0 && fwrite(IOLOG_MAGIC, 8, 1, f) != 1) {
		ret = errno ? errno : EIO;
		goto errout;
	}
	ret = iowrap_push(fs, &iolog_hooks, f);
	if (ret)
		goto errout;
	return 0;
errout:
	fclose(f);
	return ret;
}

#ifdef ENABLE_IOLOG
errcode_t iolog_attach_env(ext2_filsys fs)
{
	const char *path = getenv(IOLOG_ENV);

	return path && *path ? iolog_attach(fs, path) : 0;
}
#else
/* A default build: the environment never makes a program log its writes. */
errcode_t iolog_attach_env(ext2_filsys fs)
{
	(void)fs;
	return 0;
}
#endif
