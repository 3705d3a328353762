/*
 * fsopen.c --- find and open a filesystem, and decide whether it is safe
 * to write to.
 *
 * Every program opens through here so that bad input gets the same clear
 * refusal everywhere: a directory, an empty or truncated image, something
 * that is not ext2/3/4, corrupt group descriptors.  For writing (e2defrag)
 * the checks are those of doc/design.md, Safety: they run on a read-only open,
 * and only when all pass is the filesystem opened read-write.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <blkid/blkid.h>
#include <e2p/e2p.h>

#include "layout_int.h"

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_octal(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = 0;
}

/*
 * A mountinfo line: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] -
 * FSTYPE SOURCE SUPEROPTS".  The later of two mounts on one directory
 * hides the earlier, so the last match wins.
 */
errcode_t fsopen_mount_source(const char *mountinfo, const char *dir,
			      char **device)
{
	char *line = NULL, *found = NULL, *fields[6], *save, *dash, *fstype, *src;
	size_t cap = 0;
	int ext = 0, n;
	FILE *f = fopen(mountinfo, "re");

	*device = NULL;
	if (!f)
		return errno;
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = 0;
		for (n = 0, fields[0] = strtok_r(line, " ", &save); n < 5 && fields[n];
		     fields[++n] = strtok_r(NULL, " ", &save))
			;
		if (n < 5)
			continue;
		unescape_octal(fields[4]);
		if (strcmp(fields[4], dir))
			continue;
		fstype = strtok_r(dash + 3, " ", &save);
		src = fstype ? strtok_r(NULL, " ", &save) : NULL;
		free(found);
		found = NULL;
		ext = fstype && src && src[0] == '/' &&
		      (!strcmp(fstype, "ext2") || !strcmp(fstype, "ext3") ||
		       !strcmp(fstype, "ext4"));
		if (src) {
			unescape_octal(src);
			found = strdup(src);
			if (!found)
				break;
		}
	}
	free(line);
	fclose(f);
	if (!found)
		return E2F_ERR_NOT_MOUNT_POINT;
	if (!ext) {
		free(found);
		return E2F_ERR_MOUNT_NOT_EXT;
	}
	*device = found;
	return 0;
}

/* SPEC is a directory: the device mounted on it. */
static errcode_t resolve_mount_point(const char *spec, char **device)
{
	char *dir = realpath(spec, NULL);
	errcode_t ret;

	if (!dir)
		return errno;
	ret = fsopen_mount_source("/proc/self/mountinfo", dir, device);
	free(dir);
	if (ret == ENOENT)	/* no /proc: say what was given */
		ret = E2F_ERR_IS_DIR;
	return ret;
}

errcode_t fsopen_resolve(const char *spec, char **device)
{
	struct stat st;
	char *dev;

	*device = NULL;
	if (!spec || !*spec)
		return E2F_ERR_NOT_FOUND;
	if (!strncmp(spec, "LABEL=", 6) || !strncmp(spec, "UUID=", 5) ||
	    !strncmp(spec, "PARTLABEL=", 10) || !strncmp(spec, "PARTUUID=", 9)) {
		dev = blkid_evaluate_spec(spec, NULL);
		if (!dev)
			return E2F_ERR_NOT_FOUND;
	} else if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
		return resolve_mount_point(spec, device);
	} else {
		dev = strdup(spec);
		if (!dev)
			return ENOMEM;
	}
	*device = dev;
	return 0;
}

/* Reject what cannot hold a filesystem before libext2fs sees it. */
static errcode_t check_file_kind(const char *device, struct stat *st)
{
	if (stat(device, st) < 0)
		return errno;
	if (S_ISDIR(st->st_mode))
		return E2F_ERR_IS_DIR;
	if (!S_ISREG(st->st_mode) && !S_ISBLK(st->st_mode))
		return E2F_ERR_NOT_BLOCK_OR_FILE;	/* a FIFO would hang the open */
	if (S_ISREG(st->st_mode) && st->st_size == 0)
		return E2F_ERR_EMPTY;
	return 0;
}

const char *fsopen_fs_type(ext2_filsys fs)
{
	if (ext2fs_has_feature_extents(fs->super) ||
	    ext2fs_has_feature_64bit(fs->super) ||
	    ext2fs_has_feature_flex_bg(fs->super) ||
	    ext2fs_has_feature_huge_file(fs->super) ||
	    ext2fs_has_feature_metadata_csum(fs->super) ||
	    ext2fs_has_feature_gdt_csum(fs->super) ||
	    ext2fs_has_feature_inline_data(fs->super))
		return "ext4";
	if (ext2fs_has_feature_journal(fs->super))
		return "ext3";
	return "ext2";
}

/*
 * Features e2defrag knows how to move files on.  Everything else set in
 * the superblock makes it refuse the filesystem; moving blocks under a
 * feature we do not understand could corrupt it.
 */
static const __u32 known_compat =
	EXT2_FEATURE_COMPAT_DIR_PREALLOC | EXT3_FEATURE_COMPAT_HAS_JOURNAL |
	EXT2_FEATURE_COMPAT_EXT_ATTR | EXT2_FEATURE_COMPAT_RESIZE_INODE |
	EXT2_FEATURE_COMPAT_DIR_INDEX | EXT4_FEATURE_COMPAT_SPARSE_SUPER2 |
	EXT4_FEATURE_COMPAT_FAST_COMMIT | EXT4_FEATURE_COMPAT_STABLE_INODES |
	EXT4_FEATURE_COMPAT_ORPHAN_FILE;
static const __u32 known_ro_compat =
	EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE |
	EXT4_FEATURE_RO_COMPAT_HUGE_FILE | EXT4_FEATURE_RO_COMPAT_GDT_CSUM |
	EXT4_FEATURE_RO_COMPAT_DIR_NLINK | EXT4_FEATURE_RO_COMPAT_EXTRA_ISIZE |
	EXT4_FEATURE_RO_COMPAT_QUOTA | EXT4_FEATURE_RO_COMPAT_METADATA_CSUM |
	EXT4_FEATURE_RO_COMPAT_PROJECT | EXT4_FEATURE_RO_COMPAT_VERITY |
	EXT4_FEATURE_RO_COMPAT_ORPHAN_PRESENT;	/* refused as "orphans" instead */
static const __u32 known_incompat =
	EXT2_FEATURE_INCOMPAT_FILETYPE | EXT3_FEATURE_INCOMPAT_RECOVER |
	EXT2_FEATURE_INCOMPAT_META_BG | EXT3_FEATURE_INCOMPAT_EXTENTS |
	EXT4_FEATURE_INCOMPAT_64BIT | EXT4_FEATURE_INCOMPAT_FLEX_BG |
	EXT4_FEATURE_INCOMPAT_EA_INODE | EXT4_FEATURE_INCOMPAT_CSUM_SEED |
	EXT4_FEATURE_INCOMPAT_LARGEDIR | EXT4_FEATURE_INCOMPAT_INLINE_DATA |
	EXT4_FEATURE_INCOMPAT_ENCRYPT | EXT4_FEATURE_INCOMPAT_CASEFOLD;

/* The first feature of superblock SB that this project does not know. */
static const char *unknown_feature(const struct ext2_super_block *sb)
{
	static const struct { int type; const __u32 *known; } sets[] = {
		{ E2P_FEATURE_COMPAT, &known_compat },
		{ E2P_FEATURE_INCOMPAT, &known_incompat },
		{ E2P_FEATURE_RO_INCOMPAT, &known_ro_compat },
	};
	const __u32 have[] = { sb->s_feature_compat, sb->s_feature_incompat,
			       sb->s_feature_ro_compat };
	unsigned i, bit;

	for (i = 0; i < 3; i++) {
		__u32 unknown = have[i] & ~*sets[i].known;
		for (bit = 0; bit < 32; bit++)
			if (unknown & (1U << bit))
				return e2p_feature2string(sets[i].type, 1U << bit);
	}
	return NULL;
}

const char *fsopen_unsupported_feature(ext2_filsys fs)
{
	return unknown_feature(fs->super);
}

/*
 * A feature libext2fs itself refuses to open (EXT2_ET_UNSUPP_FEATURE,
 * EXT2_ET_RO_UNSUPP_FEATURE: one newer than it), named from DEVICE's
 * primary superblock into INFO, as the ones it opens and this project
 * does not handle are: 1 if named.
 */
static int name_refused_feature(const char *device, struct fsopen_info *info)
{
	struct ext2_super_block sb;
	const char *feature;
	ssize_t n;
	int fd;

	fd = open(device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = pread(fd, &sb, sizeof(sb), SUPERBLOCK_OFFSET);
	close(fd);
	if (n != (ssize_t)sizeof(sb))
		return 0;
	sb.s_feature_compat = ext2fs_le32_to_cpu(sb.s_feature_compat);
	sb.s_feature_incompat = ext2fs_le32_to_cpu(sb.s_feature_incompat);
	sb.s_feature_ro_compat = ext2fs_le32_to_cpu(sb.s_feature_ro_compat);
	if (ext2fs_le16_to_cpu(sb.s_magic) != EXT2_SUPER_MAGIC ||
	    !(feature = unknown_feature(&sb)))
		return 0;
	snprintf(info->unsupported, sizeof(info->unsupported), "%s", feature);
	return 1;
}

/*
 * What an image file is, from its first bytes: e2image's normal format
 * (its header's magic, lib/ext2fs/e2image.h; stored little-endian) holds
 * no indirect, extent-tree or directory blocks, so nothing here can be
 * shown from it; a qcow2 dump is read through its tables.
 */
static errcode_t dump_kind(const char *device, const struct stat *st,
			   enum fsopen_dump *kind)
{
	unsigned char head[20];
	__u32 magic;
	ssize_t n;
	int fd;

	*kind = FSOPEN_DUMP_NONE;
	if (!S_ISREG(st->st_mode))
		return 0;
	fd = open(device, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = pread(fd, head, sizeof(head), 0);
	close(fd);
	if (n < 0)
		return errno;
	if (qcow2_io_is_dump(head, n)) {
		*kind = FSOPEN_DUMP_QCOW2;
		return 0;
	}
	memcpy(&magic, head, sizeof(magic));
	if (n >= 18 && ext2fs_le32_to_cpu(magic) == (__u32)EXT2_ET_MAGIC_E2IMAGE &&
	    !memcmp(head + 4, "Ext2 Image", 10))
		return E2F_ERR_E2IMAGE_NORMAL;
	return 0;
}

/* Size of the image or device, in bytes. */
static errcode_t device_bytes(const char *device, const struct stat *st,
			      ext2_filsys fs, enum fsopen_dump kind,
			      uint64_t *bytes)
{
	blk64_t blocks;
	errcode_t ret;

	if (kind == FSOPEN_DUMP_QCOW2)
		return qcow2_io_dump_size(device, bytes);
	if (S_ISREG(st->st_mode)) {
		*bytes = st->st_size;
		return 0;
	}
	ret = ext2fs_get_device_size2(device, fs->blocksize, &blocks);
	if (ret)
		return ret;
	*bytes = blocks * fs->blocksize;
	return 0;
}

static void fill_state(ext2_filsys fs, struct fsopen_info *info)
{
	const char *feature;

	info->needs_recovery = ext2fs_has_feature_journal_needs_recovery(fs->super);
	info->has_errors = !!(fs->super->s_state & EXT2_ERROR_FS);
	info->not_clean = !(fs->super->s_state & EXT2_VALID_FS);
	feature = fsopen_unsupported_feature(fs);
	snprintf(info->unsupported, sizeof(info->unsupported), "%s",
		 feature ? feature : "");
}

/* The order matters: the most fundamental reason is the one reported. */
errcode_t fsopen_write_refusal(ext2_filsys fs, const struct fsopen_info *info,
			       int flags)
{
	struct ext2_super_block *sb = fs->super;

	if (info->mount_flags & (EXT2_MF_MOUNTED | EXT2_MF_SWAP))
		return E2F_ERR_MOUNTED;
	if (info->mount_flags & EXT2_MF_BUSY)
		return E2F_ERR_BUSY;
	if (info->needs_recovery)
		return E2F_ERR_NEEDS_RECOVERY;
	if (ext2fs_has_feature_journal_dev(sb))
		return EXT2_ET_UNSUPP_FEATURE;
	if (info->unsupported[0])
		return E2F_ERR_UNSUPPORTED_FEATURE;
	if (ext2fs_has_feature_journal(sb) && sb->s_journal_inum == 0)
		return E2F_ERR_EXTERNAL_JOURNAL;
	if (info->has_errors)
		return E2F_ERR_HAS_ERRORS;
	if (info->not_clean)
		return E2F_ERR_NOT_CLEAN;
	if (sb->s_last_orphan || ext2fs_has_feature_orphan_present(sb))
		return E2F_ERR_ORPHANS;
	if (!(flags & FSOPEN_FORCE) && sb->s_lastcheck < sb->s_mtime)
		return E2F_ERR_NOT_CHECKED;
	return 0;
}

errcode_t fsopen_check_opened(ext2_filsys fs, uint64_t bytes,
			      struct fsopen_info *info)
{
	if (bytes < ext2fs_blocks_count(fs->super) * (uint64_t)fs->blocksize)
		return E2F_ERR_TRUNCATED;
	if (ext2fs_check_desc(fs))
		return E2F_ERR_BAD_DESC;
	fill_state(fs, info);
	return 0;
}

/*
 * A bitmap as a bit array costs blocks / 8 bytes, zeroed whenever one is
 * made, whatever the disk holds: 32 MiB for 256 GiB of 1 KiB blocks, 512
 * MiB at 2^32 blocks, and the scan and the planner make several.  As
 * trees of free and used runs (e2fsck's kind) they cost what the disk
 * holds, but a test of one bit is slower.  So: an array while it is small
 * beside what the programs keep per file anyway (16 bytes per inode in
 * use, within the 200 the programs allow themselves per inode), trees
 * above that.
 */
static int bitarray_is_small(struct ext2_super_block *sb)
{
	uint64_t used = sb->s_inodes_count - sb->s_free_inodes_count;

	return ext2fs_blocks_count(sb) / 8 <= 16 * used + (1u << 20);
}

static errcode_t open_checked(const char *device, int flags, io_manager io,
			      ext2_filsys *ret_fs, struct fsopen_info *info)
{
	struct stat st;
	ext2_filsys fs = NULL;
	uint64_t have;
	errcode_t ret;
	int oflags = EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP;

	ret = check_file_kind(device, &st);
	if (!ret)
		ret = dump_kind(device, &st, &info->dump);
	if (ret)
		return ret;
	if (info->dump == FSOPEN_DUMP_QCOW2) {
		if (flags & FSOPEN_WRITE)	/* fsopen_open refuses it first */
			return E2F_ERR_DUMP_READONLY;
		io = qcow2_io_manager;
	}
	if (flags & FSOPEN_WRITE) {
		oflags |= EXT2_FLAG_RW;
		if (S_ISBLK(st.st_mode))
			oflags |= EXT2_FLAG_EXCLUSIVE;
	} else {
		/* Analysis reads what is there, checksums or not. */
		oflags |= EXT2_FLAG_IGNORE_CSUM_ERRORS;
	}
	ret = ext2fs_open2(device, NULL, oflags, 0, 0,
			   io ? io : unix_io_manager, &fs);
	if (ret == EXT2_ET_BAD_MAGIC || ret == EXT2_ET_SHORT_READ ||
	    ret == EXT2_ET_UNEXPECTED_BLOCK_SIZE)
		ret = E2F_ERR_NOT_EXT;
	if (ret == EBUSY)
		ret = E2F_ERR_BUSY;
	if ((ret == EXT2_ET_UNSUPP_FEATURE || ret == EXT2_ET_RO_UNSUPP_FEATURE) &&
	    info->dump == FSOPEN_DUMP_NONE && name_refused_feature(device, info))
		ret = E2F_ERR_UNSUPPORTED_FEATURE;
	if (ret)
		return ret;
	/*
	 * See bitarray_is_small(): large filesystems with few files get
	 * their bitmaps as red-black trees of runs.
	 */
	if (!bitarray_is_small(fs->super))
		fs->default_bitmap_type = EXT2FS_BMAP64_RBTREE;

	ret = device_bytes(device, &st, fs, info->dump, &have);
	if (!ret)
		ret = fsopen_check_opened(fs, have, info);
	if (ret) {
		ext2fs_close_free(&fs);
		return ret;
	}
	*ret_fs = fs;
	return 0;
}

errcode_t fsopen_open(const char *spec, int flags, io_manager io,
		      ext2_filsys *ret_fs, struct fsopen_info *info)
{
	ext2_filsys fs = NULL;
	errcode_t ret;

	memset(info, 0, sizeof(*info));
	*ret_fs = NULL;
	ret = fsopen_resolve(spec, &info->device);
	if (ret)
		return ret;
	ret = ext2fs_check_mount_point(info->device, &info->mount_flags,
				       info->mount_point,
				       sizeof(info->mount_point));
	if (ret)
		return ret;
	if ((flags & FSOPEN_WRITE) &&
	    (info->mount_flags & (EXT2_MF_MOUNTED | EXT2_MF_SWAP)))
		return E2F_ERR_MOUNTED;

	/* Decide on a read-only open; only then open for writing. */
	ret = open_checked(info->device, flags & ~FSOPEN_WRITE, NULL, &fs, info);
	if (ret || !(flags & FSOPEN_WRITE)) {
		*ret_fs = fs;
		return ret;
	}
	if (info->dump == FSOPEN_DUMP_QCOW2 &&
	    (flags & (FSOPEN_CHECK | FSOPEN_DRY_RUN)) != (FSOPEN_CHECK | FSOPEN_DRY_RUN)) {
		ext2fs_close_free(&fs);
		return E2F_ERR_DUMP_READONLY;
	}
	ret = fsopen_write_refusal(fs, info, flags);
	if (!ret && (flags & FSOPEN_CHECK)) {
		*ret_fs = fs;	/* a dry run: checked as for writing, kept read-only */
		return 0;
	}
	ext2fs_close_free(&fs);
	if (ret)
		return ret;
	ret = open_checked(info->device, flags, io, &fs, info);
	if (ret)
		return ret;
	/* The state may have changed between the two opens. */
	ret = fsopen_write_refusal(fs, info, flags);
	if (ret) {
		fs->flags &= ~EXT2_FLAG_DIRTY;
		ext2fs_close_free(&fs);
		return ret;
	}
	*ret_fs = fs;
	return 0;
}

errcode_t fsopen_close(ext2_filsys fs, struct fsopen_info *info)
{
	errcode_t ret = 0;

	if (fs)
		ret = ext2fs_close_free(&fs);
	if (info) {
		free(info->device);
		info->device = NULL;
	}
	return ret;
}
