/*
 * select.c --- which files e2defrag moves, and which it must never move.
 *
 * A file is a candidate when it needs moving (more pieces than best, or
 * interleaved with others) and passes the user's filters (paths, score,
 * age, interleaved only).  Independently of that, some files must never
 * move, not even out of another file's way: files whose blocks another
 * inode or the fixed metadata also claims (moving them would corrupt the
 * other owner), and files whose map could not be read whole.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "defrag.h"
#include "array.h"
#include "compare.h"

const char *skip_reason_text(enum skip_reason r)
{
	static const char *const text[SKIP_COUNT] = {
		[SKIP_NONE] = "",
		[SKIP_SHARED] = "shares blocks with another inode",
		[SKIP_METADATA] = "blocks overlap filesystem metadata",
		[SKIP_CORRUPT] = "block map is corrupt (run e2fsck)",
		[SKIP_INLINE] = "inline data: no blocks to move",
		[SKIP_NO_BLOCKS] = "owns no blocks",
		[SKIP_RESERVED] = "reserved inode, never moved",
		[SKIP_FLAGS] = "inode flags e2defrag does not handle (compression, snapshot)",
	};

	return r < SKIP_COUNT && text[r] ? text[r] : "unknown";
}

static errcode_t add_extra(struct selection *sel, ext2_ino_t ino,
			   enum skip_reason reason, const char *name)
{
	struct sel_extra *x;

	if (grow_n(&sel->extra, &sel->extra_cap, sel->nextra + 1, sizeof(*sel->extra)))
		return ENOMEM;
	x = &sel->extra[sel->nextra];
	x->name = strdup(name);
	if (!x->name)
		return ENOMEM;
	x->ino = ino;
	x->reason = reason;
	sel->nextra++;
	return 0;
}

/*
 * Runs of every file's stream and extent tree, marked in SEEN; blocks met
 * twice go to DUP, and *ANY_DUP is set.  Returns through the bitmaps only.
 */
static errcode_t mark_run(ext2fs_block_bitmap seen, ext2fs_block_bitmap dup,
			  blk64_t start, blk64_t len, int *any_dup)
{
	blk64_t b, end = start + len, next;

	if (ext2fs_test_block_bitmap_range2(seen, start, len)) {
		ext2fs_mark_block_bitmap_range2(seen, start, len);
		return 0;
	}
	*any_dup = 1;
	/* Some are taken already: mark those in DUP, one run at a time. */
	for (b = start; b < end; b = next) {
		blk64_t z;

		if (ext2fs_find_first_set_block_bitmap2(seen, b, end - 1, &next))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(seen, next, end - 1, &z))
			z = end;
		ext2fs_mark_block_bitmap_range2(dup, next, z - next);
		next = z;
	}
	ext2fs_mark_block_bitmap_range2(seen, start, len);
	return 0;
}

/* Whether any block of [START, START+LEN) is set in BM. */
static int any_set(ext2fs_block_bitmap bm, blk64_t start, blk64_t len)
{
	return !ext2fs_test_block_bitmap_range2(bm, start, len);
}

static errcode_t find_unmovable(struct layout *layout, int checked,
				struct selection *sel)
{
	ext2_filsys fs = layout->fs;
	ext2fs_block_bitmap seen = NULL, dup = NULL, xattr = NULL;
	struct layout_aux *aux = NULL;
	uint64_t i, a;
	uint32_t p;
	errcode_t ret;
	/* Whether DUP and XATTR hold anything: most filesystems share no
	 * block, and an empty bitmap need not be asked per piece. */
	int any_dup = 0, any_xattr = 0;

	if (checked) {
		/* Nothing shared, nothing on metadata (select_opts): only the flags. */
		for (i = 0; i < layout->nfiles; i++)
			if (layout->files[i].flags & LAYOUT_F_CORRUPT) {
				sel->flags[i] |= SEL_UNMOVABLE;
				sel->reason[i] = SKIP_CORRUPT;
			}
		return 0;
	}

	ret = ext2fs_allocate_block_bitmap(fs, "e2defrag seen", &seen);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "e2defrag dup", &dup);
	if (!ret)
		ret = ext2fs_allocate_block_bitmap(fs, "e2defrag xattr", &xattr);
	if (ret)
		goto out;
	aux = malloc((layout->naux ? layout->naux : 1) * sizeof(*aux));
	if (!aux) {
		ret = ENOMEM;
		goto out;
	}
	copy_n(aux, layout->aux, layout->naux * sizeof(*aux));
	sort_n(aux, layout->naux, sizeof(*aux), compare_aux_ino);

	for (i = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];

		for (p = 0; p < layout_file_pieces(layout, f); p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			mark_run(seen, dup, pc.start, pc.len, &any_dup);
		}
	}
	for (a = 0; a < layout->naux; a++) {
		/* EA blocks are shared by design (refcounted); only data may not share them. */
		if (aux[a].kind == LAYOUT_AUX_XATTR) {
			ext2fs_mark_block_bitmap_range2(xattr, aux[a].start, aux[a].len);
			any_xattr = 1;
		} else {
			mark_run(seen, dup, aux[a].start, aux[a].len, &any_dup);
		}
	}

	for (i = 0, a = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		enum skip_reason why = SKIP_NONE;

		if (f->flags & LAYOUT_F_CORRUPT)
			why = SKIP_CORRUPT;
		for (p = 0; p < layout_file_pieces(layout, f) && !why; p++) {
			struct layout_piece pc = layout_file_piece(layout, f, p);

			if (any_set(layout->fixed, pc.start, pc.len))
				why = SKIP_METADATA;
			else if ((any_dup && any_set(dup, pc.start, pc.len)) ||
				 (any_xattr && any_set(xattr, pc.start, pc.len)))
				why = SKIP_SHARED;
		}
		while (a < layout->naux && aux[a].ino < f->ino)
			a++;
		for (; a < layout->naux && aux[a].ino == f->ino; a++) {
			if (why || aux[a].kind != LAYOUT_AUX_ETB)
				continue;
			if (any_set(layout->fixed, aux[a].start, aux[a].len))
				why = SKIP_METADATA;
			else if ((any_dup && any_set(dup, aux[a].start, aux[a].len)) ||
				 (any_xattr && any_set(xattr, aux[a].start, aux[a].len)))
				why = SKIP_SHARED;
		}
		if (why) {
			sel->flags[i] |= SEL_UNMOVABLE;
			sel->reason[i] = why;
		}
	}
out:
	free(aux);
	if (seen)
		ext2fs_free_block_bitmap(seen);
	if (dup)
		ext2fs_free_block_bitmap(dup);
	if (xattr)
		ext2fs_free_block_bitmap(xattr);
	return ret;
}

/* Reserved inodes that own blocks: named among the skipped, never moved. */
static errcode_t note_reserved(struct layout *layout, struct selection *sel)
{
	ext2_filsys fs = layout->fs;
	struct ext2_super_block *sb = fs->super;
	ext2_ino_t ino, extra[] = { sb->s_journal_inum, sb->s_usr_quota_inum,
				    sb->s_grp_quota_inum, sb->s_prj_quota_inum,
				    sb->s_orphan_file_inum };
	struct ext2_inode inode;
	unsigned k;
	errcode_t ret;

	for (ino = 1; ino < EXT2_FIRST_INODE(sb) + sizeof(extra) / sizeof(*extra); ino++) {
		ext2_ino_t n = ino;
		char name[64];
		const char *what;

		if (ino >= EXT2_FIRST_INODE(sb)) {
			n = extra[ino - EXT2_FIRST_INODE(sb)];
			if (n < EXT2_FIRST_INODE(sb))
				continue;	/* 0, or listed already */
			for (k = 0; k < ino - EXT2_FIRST_INODE(sb); k++)
				if (extra[k] == n)
					break;
			if (k < ino - EXT2_FIRST_INODE(sb))
				continue;
		}
		if (n == EXT2_ROOT_INO || n > sb->s_inodes_count)
			continue;
		if (ext2fs_read_inode(fs, n, &inode))
			continue;	/* unreadable: nothing we would touch anyway */
		if (!inode.i_blocks)
			continue;
		what = n == sb->s_journal_inum ? "journal" :
		       n == EXT2_RESIZE_INO ? "resize inode" :
		       n == EXT2_BAD_INO ? "bad blocks inode" :
		       n == sb->s_orphan_file_inum ? "orphan file" :
		       (n == sb->s_usr_quota_inum || n == sb->s_grp_quota_inum ||
			n == sb->s_prj_quota_inum) ? "quota file" : "reserved inode";
		snprintf(name, sizeof(name), "<%s, inode %u>", what, n);
		ret = add_extra(sel, n, SKIP_RESERVED, name);
		if (ret)
			return ret;
	}
	return 0;
}

/* A PATH argument naming an inode the layout does not hold. */
static errcode_t note_blockless(struct layout *layout, struct selection *sel,
				const char *path)
{
	struct ext2_inode inode;
	ext2_ino_t ino;
	errcode_t ret;

	ret = ext2fs_namei(layout->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino);
	if (ret)
		return ret == EXT2_ET_FILE_NOT_FOUND ? ENOENT : ret;
	if (layout_find(layout, ino) >= 0)
		return 0;
	ret = ext2fs_read_inode(layout->fs, ino, &inode);
	if (ret)
		return ret;
	if (LINUX_S_ISDIR(inode.i_mode) && !(inode.i_flags & EXT4_INLINE_DATA_FL))
		return 0;	/* a directory: its files were selected by path */
	return add_extra(sel, ino, inode.i_flags & EXT4_INLINE_DATA_FL ?
			 SKIP_INLINE : SKIP_NO_BLOCKS, path);
}

/* Modification time of INO (seconds, with the extra epoch bits); 0 if unreadable. */
static int64_t mtime_of(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_inode_large inode;
	int64_t t;

	memset(&inode, 0, sizeof(inode));
	if (ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)&inode, sizeof(inode)))
		return 0;
	t = (int32_t)inode.i_mtime;
	/* Large inodes carry two more bits of seconds (years past 2038). */
	if (EXT2_INODE_SIZE(fs->super) > EXT2_GOOD_OLD_INODE_SIZE &&
	    inode.i_extra_isize >= offsetof(struct ext2_inode_large, i_mtime_extra) +
	    sizeof(inode.i_mtime_extra) - EXT2_GOOD_OLD_INODE_SIZE)
		t += (int64_t)(inode.i_mtime_extra & EXT4_EPOCH_MASK) << 32;
	return t;
}

static int wanted(const struct layout *layout, const struct layout_file *f,
		  const struct select_opts *o)
{
	int interleaved = layout_file_interleave(layout, f) != NULL;
	double read, ideal;

	if (!(f->flags & LAYOUT_F_SELECTED))
		return 0;
	if (!interleaved && layout_file_pieces(layout, f) <= layout_file_best(layout, f))
		return 0;	/* nothing to gain */
	if (o->interleaved_only && !interleaved)
		return 0;
	layout_file_times(layout, f, &read, &ideal);
	if (readmodel_score(read, ideal) < o->min_score)
		return 0;
	return o->newer_than == INT64_MIN ||
	       mtime_of(layout->fs, f->ino) >= o->newer_than;
}

errcode_t select_files(struct layout *layout, const struct select_opts *opts,
		       struct selection *sel, const char **bad_path)
{
	uint64_t i;
	int p;
	errcode_t ret;

	memset(sel, 0, sizeof(*sel));
	*bad_path = NULL;
	sel->flags = calloc(layout->nfiles + 1, 1);
	sel->reason = calloc(layout->nfiles + 1, 1);
	if (!sel->flags || !sel->reason) {
		ret = ENOMEM;
		goto errout;
	}
	if (opts->npaths) {
		for (i = 0; i < layout->nfiles; i++)
			layout->files[i].flags &= ~LAYOUT_F_SELECTED;
		for (p = 0; p < opts->npaths; p++) {
			ret = layout_select_path(layout, opts->paths[p]);
			if (!ret)
				ret = note_blockless(layout, sel, opts->paths[p]);
			if (ret) {
				*bad_path = opts->paths[p];
				goto errout;
			}
		}
	}
	ret = find_unmovable(layout, opts->layout_checked, sel);
	if (!ret)
		ret = note_reserved(layout, sel);
	if (ret)
		goto errout;
	for (i = 0; i < layout->nfiles; i++) {
		if (!wanted(layout, &layout->files[i], opts))
			continue;
		sel->flags[i] |= SEL_CANDIDATE;
		if (sel->flags[i] & SEL_UNMOVABLE)
			sel->skipped++;
		else
			sel->candidates++;
	}
	return 0;
errout:
	select_free(sel);
	return ret;
}

void select_free(struct selection *sel)
{
	size_t i;

	for (i = 0; i < sel->nextra; i++)
		free(sel->extra[i].name);
	free(sel->extra);
	free(sel->flags);
	free(sel->reason);
	memset(sel, 0, sizeof(*sel));
}
