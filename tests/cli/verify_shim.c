/*
 * verify_shim.c --- an LD_PRELOAD library for tests/cli/defrag-verify.sh:
 * it watches the reads e2defrag --verify makes on the descriptor it opens
 * with O_DIRECT, and can spoil them, so that the test sees both what the
 * verification reads and what it does when the disk returns other bytes
 * than were written.  Only the test loads it; no program links it.
 *
 *   E2F_SHIM_FLIPS=N   spoil (invert the first byte of) the first N reads
 *   E2F_SHIM_LOG=PATH  at exit, append "reads R bytes B spoiled S" there
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 1024

static unsigned char direct_fd[MAX_FD];
static unsigned long long reads, bytes, spoiled;

static void note_open(int fd, int flags)
{
	if (fd >= 0 && fd < MAX_FD)
		direct_fd[fd] = !!(flags & O_DIRECT);
}

int open(const char *path, int flags, ...)
{
	int (*real)(const char *, int, ...) =
		(int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	mode_t mode = 0;
	va_list ap;
	int fd;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	fd = real(path, flags, mode);
	note_open(fd, flags);
	return fd;
}

/* On 64-bit glibc open64 and pread64 are open and pread under other names. */
int open64(const char *path, int flags, ...) __attribute__((alias("open")));

static ssize_t watch(int fd, void *buf, ssize_t n)
{
	const char *e = getenv("E2F_SHIM_FLIPS");

	if (n <= 0 || fd < 0 || fd >= MAX_FD || !direct_fd[fd])
		return n;
	reads++;
	bytes += (unsigned long long)n;
	if (e && spoiled < strtoull(e, NULL, 10)) {
		((unsigned char *)buf)[0] ^= 0xff;
		spoiled++;
	}
	return n;
}

ssize_t pread(int fd, void *buf, size_t count, off_t off)
{
	ssize_t (*real)(int, void *, size_t, off_t) =
		(ssize_t (*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");

	return watch(fd, buf, real(fd, buf, count, off));
}

ssize_t pread64(int fd, void *buf, size_t count, off_t off)
	__attribute__((alias("pread")));

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("E2F_SHIM_LOG");
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	fprintf(f, "reads %llu bytes %llu spoiled %llu\n", reads, bytes, spoiled);
	fclose(f);
}
