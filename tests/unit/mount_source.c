/*
 * mount_source.c --- fsopen_mount_source (lib/fsopen.c) on mountinfo files
 * written here, as the kernel writes them (proc(5)): the device of an
 * ext2/3/4 mount, the last of two mounts on one directory, escaped
 * spaces, optional tags before the " - ", and the refusals of a directory
 * that is no mount point or a mount of something else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2frag.h"
#include "../lib/tap.h"

static const char mountinfo[] =
"21 26 0:20 / /proc rw,relatime - proc proc rw\n"
"24 23 0:22 / /dev/shm rw,relatime - tmpfs tmpfs rw\n"
"30 26 8:1 / /srv/recordings rw,relatime shared:7 - ext4 /dev/sdb1 rw\n"
"31 26 8:2 / /srv/two\\040words rw - ext3 /dev/sdc1 rw\n"
"32 26 7:0 / /srv/over rw - ext2 /dev/loop0 rw\n"
"33 32 7:1 / /srv/over rw master:3 - ext4 /dev/loop1 rw\n"
"34 26 7:2 / /srv/hidden rw - ext4 /dev/loop2 rw\n"
"35 34 0:40 / /srv/hidden rw - tmpfs tmpfs rw\n"
"36 26 0:41 / /srv/srv rw - ext4 /dev/odd\\134name rw\n";

/* Whether DIR resolves to WANT (a device), or fails with WANT_ERR. */
static void check(const char *path, const char *dir, const char *want,
		  errcode_t want_err)
{
	char *dev = NULL;
	errcode_t ret = fsopen_mount_source(path, dir, &dev);

	if (want)
		tap_ok(!ret && dev && !strcmp(dev, want), "%s -> %s (got %s, error %ld)",
		       dir, want, dev ? dev : "nothing", (long)ret);
	else
		tap_ok(ret == want_err && !dev, "%s refused (error %ld)", dir, (long)ret);
	free(dev);
}

int main(void)
{
	char path[] = "/tmp/e2frag-mountinfo.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, mountinfo, sizeof(mountinfo) - 1) != (ssize_t)sizeof(mountinfo) - 1)
		return 99;
	close(fd);
	initialize_e2f_error_table();
	tap_plan(9);
	check(path, "/srv/recordings", "/dev/sdb1", 0);
	check(path, "/srv/two words", "/dev/sdc1", 0);
	check(path, "/srv/over", "/dev/loop1", 0);
	check(path, "/srv/odd", NULL, E2F_ERR_NOT_MOUNT_POINT);
	check(path, "/srv/srv", "/dev/odd\\name", 0);
	check(path, "/srv/hidden", NULL, E2F_ERR_MOUNT_NOT_EXT);
	check(path, "/dev/shm", NULL, E2F_ERR_MOUNT_NOT_EXT);
	check(path, "/srv", NULL, E2F_ERR_NOT_MOUNT_POINT);
	check("/nonexistent/mountinfo", "/srv", NULL, ENOENT);
	unlink(path);
	return tap_done();
}
