/*
 * output.c --- where e2fragimg puts what it builds: the image and its
 * manifest are built beside OUTPUT under temporary names and renamed
 * over OUTPUT and OUTPUT.json only once the whole build has succeeded.
 * A build that fails or is interrupted removes its temporary files and
 * leaves what was there before as it was (it deleted an earlier image
 * and its manifest).  What may be replaced is checked first: a slip of
 * the keyboard must not cost anybody a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <et/com_err.h>
#include <jansson.h>
#include "e2frag.h"
#include "img.h"

/* Whether the regular file PATH is empty or holds an ext2/3/4 superblock. */
static int empty_or_image(const char *path, const struct stat *st)
{
	unsigned char magic[2];
	int fd, ok;

	if (st->st_size == 0)
		return 1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ok = pread(fd, magic, 2, 1024 + 56) == 2 &&	/* s_magic, 0xEF53 */
		magic[0] == 0x53 && magic[1] == 0xef;
	close(fd);
	return ok;
}

/* Whether the regular file PATH is empty or a manifest (manifest.c's header). */
static int empty_or_manifest(const char *path, const struct stat *st)
{
	json_t *root;
	int ok;

	if (st->st_size == 0)
		return 1;
	root = json_load_file(path, 0, NULL);
	ok = json_is_object(root) && json_is_string(json_object_get(root, "image")) &&
	     json_is_string(json_object_get(root, "workload")) &&
	     json_is_array(json_object_get(root, "files"));
	json_decref(root);
	return ok;
}

/* Whether PATH may be replaced: absent, or a regular file IS_OURS says is. */
static int replaceable(const char *prog, const char *path, const char *what,
		       int (*is_ours)(const char *, const struct stat *))
{
	struct stat st;
	int mount_flags = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT;
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s exists and is not a regular file; not overwriting it\n",
			prog, path);
		return 0;
	}
	if (!is_ours(path, &st)) {
		fprintf(stderr, "%s: %s exists and is not %s; not overwriting it\n",
			prog, path, what);
		return 0;
	}
	if (is_ours == empty_or_image &&
	    ext2fs_check_if_mounted(path, &mount_flags) == 0 &&
	    (mount_flags & EXT2_MF_MOUNTED)) {
		fprintf(stderr, "%s: %s is mounted (as a loop device); not overwriting it\n",
			prog, path);
		return 0;
	}
	return 1;
}

/* A new empty file beside PATH (.NAME.XXXXXX), its name in *TMP: fd or -1. */
static int temp_beside(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	mode_t mask;
	int fd;

	*tmp = malloc(strlen(path) + 16);
	if (!*tmp) {
		errno = ENOMEM;
		return -1;
	}
	sprintf(*tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	fd = mkstemp(*tmp);
	if (fd < 0) {
		free(*tmp);
		*tmp = NULL;
		return -1;
	}
	/* mkstemp makes it 0600; an image is as open() made it before. */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0644 & ~mask);
	return fd;
}

int output_open(struct img_output *out, const char *prog, const char *output,
		uint64_t size)
{
	int fd;

	memset(out, 0, sizeof(*out));
	out->image = output;
	out->manifest = malloc(strlen(output) + 6);
	if (!out->manifest) {
		com_err(prog, ENOMEM, "while starting");
		return -1;
	}
	sprintf(out->manifest, "%s.json", output);
	if (!replaceable(prog, output, "an ext2/3/4 image", empty_or_image) ||
	    !replaceable(prog, out->manifest, "a manifest of e2fragimg's", empty_or_manifest))
		goto fail_quiet;
	fd = temp_beside(output, &out->tmp_image);
	if (fd < 0) {
		com_err(prog, errno, "while creating a file beside %s", output);
		goto fail_quiet;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		com_err(prog, errno, "while extending %s to %llu bytes", out->tmp_image,
			(unsigned long long)size);
		close(fd);
		goto fail;
	}
	if (close(fd) < 0) {
		com_err(prog, errno, "while creating %s", out->tmp_image);
		goto fail;
	}
	fd = temp_beside(out->manifest, &out->tmp_manifest);
	if (fd < 0) {
		com_err(prog, errno, "while creating a file beside %s", out->manifest);
		goto fail;
	}
	close(fd);
	return 0;
fail:
	output_discard(out);
fail_quiet:
	output_free(out);
	return -1;
}

int output_commit(struct img_output *out, const char *prog)
{
	/* The manifest first: an image is never left beside an older one's. */
	if (rename(out->tmp_manifest, out->manifest) < 0) {
		com_err(prog, errno, "while renaming %s to %s", out->tmp_manifest,
			out->manifest);
		return -1;
	}
	if (rename(out->tmp_image, out->image) < 0) {
		com_err(prog, errno, "while renaming %s to %s", out->tmp_image, out->image);
		unlink(out->manifest);
		return -1;
	}
	free(out->tmp_image);
	free(out->tmp_manifest);
	out->tmp_image = out->tmp_manifest = NULL;
	return 0;
}

void output_discard(const struct img_output *out)
{
	/* Only unlink: a signal handler calls it. */
	if (out->tmp_image)
		unlink(out->tmp_image);
	if (out->tmp_manifest)
		unlink(out->tmp_manifest);
}

void output_free(struct img_output *out)
{
	free(out->manifest);
	free(out->tmp_image);
	free(out->tmp_manifest);
	memset(out, 0, sizeof(*out));
}
