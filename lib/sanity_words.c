/*
 * sanity_words.c --- a sanity finding (sanity.h) in words, for the one
 * line a front end prints.
 */
#include <stdio.h>

#include "sanity_int.h"

static void inode_words(const struct layout *layout, ext2_ino_t ino,
			char *buf, size_t len)
{
	char path[256];

	if (!ino) {
		snprintf(buf, len, "the filesystem's metadata");
		return;
	}
	if (layout) {
		layout_path(layout, ino, path, sizeof(path));
		if (path[0] == '/') {
			snprintf(buf, len, "inode %u (%s)", ino, path);
			return;
		}
	}
	snprintf(buf, len, "inode %u", ino);
}

size_t sanity_describe(const struct layout *layout,
		       const struct sanity_finding *f, char *buf, size_t len)
{
	char a[300], b[300];
	unsigned long long blk = f->blk, rec = f->recorded, cnt = f->counted;
	int n;

	inode_words(layout, f->ino, a, sizeof(a));
	inode_words(layout, f->ino2, b, sizeof(b));
	switch (f->what) {
	case SANITY_NONE:
		n = snprintf(buf, len, "no problem found");
		break;
	case SANITY_QUOTA_INODE:
		n = snprintf(buf, len, "the superblock's %s quota inode %u cannot be one",
			     f->detail ? f->detail : "", f->ino);
		break;
	case SANITY_SB_CSUM:
		n = snprintf(buf, len, "the superblock's checksum does not match");
		break;
	case SANITY_GD_CSUM:
		n = snprintf(buf, len, "the checksum of group %u's descriptor does not match", f->group);
		break;
	case SANITY_BBITMAP_CSUM:
		n = snprintf(buf, len, "the checksum of group %u's block bitmap does not match", f->group);
		break;
	case SANITY_IBITMAP_CSUM:
		n = snprintf(buf, len, "the checksum of group %u's inode bitmap does not match", f->group);
		break;
	case SANITY_INODE_CSUM:
		n = snprintf(buf, len, "the checksum of %s does not match", a);
		break;
	case SANITY_EXTENT_CSUM:
		n = snprintf(buf, len, "the checksum of extent tree block %llu of %s does not match", blk, a);
		break;
	case SANITY_BAD_FLAGS:
		n = snprintf(buf, len, "%s %s", a, f->detail ? f->detail : "has bad flags");
		break;
	case SANITY_BAD_EA_BLOCK:
		n = snprintf(buf, len, "%s has its attribute block %llu outside the filesystem", a, blk);
		break;
	case SANITY_BAD_EA_HEADER:
		n = snprintf(buf, len, "the header of attribute block %llu of %s is bad "
			     "(magic, block count or checksum)", blk, a);
		break;
	case SANITY_CORRUPT_MAP:
		n = f->ino ? snprintf(buf, len, "the block map of %s is corrupt (a block outside the filesystem, a loop or disorder)", a)
			   : snprintf(buf, len, "an inode's block map is corrupt (a block outside the filesystem, a loop or disorder)");
		break;
	case SANITY_BAD_IBLOCKS:
		n = snprintf(buf, len, "%s records %llu sectors in use (i_blocks) but maps %llu", a, rec, cnt);
		break;
	case SANITY_BAD_SIZE:
		n = snprintf(buf, len, "%s has a size of %llu %s but blocks up to %llu", a, rec,
			     util_plural(rec, "byte", "bytes"), cnt);
		break;
	case SANITY_DIR_HOLE:
		n = snprintf(buf, len, "directory %s has a hole in its blocks", a);
		break;
	case SANITY_BAD_SYMLINK:
		n = snprintf(buf, len, "symlink %s has a size or blocks no symlink has", a);
		break;
	case SANITY_DIR_CSUM:
		n = snprintf(buf, len, "a block of directory %s fails its checksum", a);
		break;
	case SANITY_DIR_CORRUPT:
		n = snprintf(buf, len, "directory %s has a corrupt block", a);
		break;
	case SANITY_HTREE:
		n = snprintf(buf, len, "the hash index of directory %s disagrees with its names", a);
		break;
	case SANITY_DUP_ENTRY:
		n = snprintf(buf, len, "directory %s has the name '%s' twice", a, f->name);
		break;
	case SANITY_BAD_ENTRY:
		n = snprintf(buf, len, "entry '%s' of directory %s names inode %u, which is not in use", f->name, a, f->ino2);
		break;
	case SANITY_LINK_COUNT:
		n = snprintf(buf, len, "%s has %llu %s but %llu %s it", a,
			     rec, util_plural(rec, "link", "links"),
			     cnt, util_plural(cnt, "entry names", "entries name"));
		break;
	case SANITY_DUP_BLOCK:
		if (f->detail)
			n = snprintf(buf, len, "block %llu is owned by %s and %s", blk, a, f->detail);
		else if (f->ino == f->ino2)
			n = snprintf(buf, len, "block %llu is owned twice by %s", blk, a);
		else
			n = snprintf(buf, len, "block %llu is owned by inodes %u and %u", blk, f->ino, f->ino2);
		break;
	case SANITY_USED_FREE:
		n = snprintf(buf, len, "block %llu is in use by %s but free in the block bitmap", blk, a);
		break;
	case SANITY_FREE_USED:
		n = snprintf(buf, len, "block %llu is in use in the block bitmap but nothing owns it", blk);
		break;
	case SANITY_INODE_NOT_MARKED:
		n = snprintf(buf, len, "inode %u is in use but free in the inode bitmap", f->ino);
		break;
	case SANITY_INODE_MARKED:
		n = snprintf(buf, len, "inode %u is free but in use in the inode bitmap", f->ino);
		break;
	case SANITY_GROUP_FREE_BLOCKS:
		n = snprintf(buf, len, "group %u records %llu free %s, its bitmap %llu", f->group, rec,
			     util_plural(rec, "block", "blocks"), cnt);
		break;
	case SANITY_GROUP_FREE_INODES:
		n = snprintf(buf, len, "group %u records %llu free %s, its bitmap %llu", f->group, rec,
			     util_plural(rec, "inode", "inodes"), cnt);
		break;
	case SANITY_GROUP_DIRS:
		n = snprintf(buf, len, "group %u records %llu %s, its inodes %llu", f->group, rec,
			     util_plural(rec, "directory", "directories"), cnt);
		break;
	case SANITY_QUOTA_SPACE:
		n = snprintf(buf, len, "the %s quota file (inode %u) counts %llu bytes for id %u, "
			     "its files hold %llu", f->detail, f->ino, rec, f->id, cnt);
		break;
	case SANITY_QUOTA_INODES:
		n = snprintf(buf, len, "the %s quota file (inode %u) counts %llu %s for id %u, "
			     "it has %llu", f->detail, f->ino, rec,
			     util_plural(rec, "inode", "inodes"), f->id, cnt);
		break;
	case SANITY_QUOTA_MISSING:
		n = snprintf(buf, len, "the %s quota file (inode %u) has no entry for id %u, "
			     "whose files hold %llu bytes", f->detail, f->ino, f->id, cnt);
		break;
	default:
		n = snprintf(buf, len, "the metadata disagree");
		break;
	}
	return n < 0 ? 0 : (size_t)n;
}
