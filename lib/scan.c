/*
 * scan.c --- fill a layout from a filesystem: one pass over the inode
 * tables, then the derived figures (zones and best, names, interleaving,
 * read times, free space, summary).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "radix_sort.h"
#include "sanity.h"

#include <ext2fs/ext3_extents.h>	/* needs the types e2frag.h brings */

/* Inode scan buffer; readahead_inode_tables() keeps the reads ahead of it. */
#define SCAN_BUFFER_BLOCKS	64
/* At most this many blocks per read of deferred indirect blocks... */
#define IND_READ_BLOCKS		64
/* ... reading through gaps of at most this many blocks between them. */
#define IND_READ_GAP		8

/*
 * A regular file whose map goes through one indirect block, walked after
 * the inode tables: its file record has its place, its map comes later,
 * when the indirect blocks of all such files are read in physical order,
 * many to a read.  (The kernel puts them side by side, but in the order
 * files were written, not in inode order: read as the inodes come, each
 * would be a read of its own, most of the scan's system calls.)
 */
struct deferred {
	blk64_t			ind;	/* its indirect block: the order they are read in */
	uint64_t		file;	/* index of its record in layout->files */
	ext2_ino_t		ino;
	int			csum_ok;	/* its checksum held (plain_map) */
	struct ext2_inode	inode;
};

struct scan_state {
	struct layout		*layout;
	struct scan_extra	*extra;
	uint64_t		files_cap, pieces_cap, aux_cap, file_etb_cap;
	char			*block_buf;
	struct deferred		*deferred;
	uint64_t		ndeferred, deferred_cap;
};

/* What is being learned about the inode at hand. */
struct file_acc {
	struct scan_state	*s;
	struct layout		*layout;
	struct scan_extra	*extra;
	struct layout_file	*f;	/* its figures below until scan_map sets them */
	blk64_t			stream;		/* stream blocks so far */
	uint32_t		pieces, extents;
	blk64_t			stream_end;	/* one past the last stream block */
	blk64_t			data_seen;	/* data blocks so far */
	blk64_t			data_lend;	/* one past the last data block, logical */
	blk64_t			data_pend;	/* ... and physical */
	blk64_t			init_end;	/* one past the last initialized data block, logical */
	uint32_t		etb;		/* extent tree blocks */
	int			hole;		/* an unmapped logical block before data_lend */
	int			reserved;	/* a reserved inode: blocks are fixed metadata */
};

/* Append LEN stream blocks at PBLK: extends the last piece or starts one. */
static errcode_t acc_stream(struct file_acc *a, blk64_t pblk, blk64_t len)
{
	struct layout *layout = a->layout;
	struct layout_piece *p;
	errcode_t ret;

	a->stream += len;
	if (a->pieces && a->stream_end == pblk) {
		layout->pieces[layout->npieces - 1].len += len;
		a->stream_end += len;
		return 0;
	}
	ret = util_grow(&layout->pieces, &a->s->pieces_cap, layout->npieces + 1,
			  sizeof(*layout->pieces));
	if (ret)
		return ret;
	p = &layout->pieces[layout->npieces++];
	p->start = pblk;
	p->len = len;
	a->pieces++;
	a->stream_end = pblk + len;
	return 0;
}

static errcode_t acc_data(void *priv, blk64_t lblk, blk64_t pblk, blk64_t len,
			  int uninit)
{
	struct file_acc *a = priv;
	struct scan_extra *x = a->extra;
	errcode_t ret;

	if (!a->data_seen || lblk != a->data_lend || pblk != a->data_pend)
		a->extents++;
	if (lblk != a->data_lend)
		a->hole = 1;
	if (!uninit)
		a->init_end = lblk + len;
	a->data_lend = lblk + len;
	a->data_pend = pblk + len;
	a->data_seen += len;
	if (uninit)
		a->f->flags |= LAYOUT_F_UNINIT;
	if (a->f->type == LAYOUT_DIR && !a->reserved) {
		struct dir_run *r;

		if (x->ndir_runs && x->dir_runs[x->ndir_runs - 1].ino == a->f->ino &&
		    x->dir_runs[x->ndir_runs - 1].start +
		    x->dir_runs[x->ndir_runs - 1].len == pblk) {
			x->dir_runs[x->ndir_runs - 1].len += len;
		} else {
			ret = util_grow(&x->dir_runs, &x->dir_runs_cap,
					  x->ndir_runs + 1, sizeof(*x->dir_runs));
			if (ret)
				return ret;
			r = &x->dir_runs[x->ndir_runs++];
			r->start = pblk;
			r->len = len;
			r->ino = a->f->ino;
		}
	}
	return acc_stream(a, pblk, len);
}

static errcode_t acc_ind(void *priv, blk64_t pblk)
{
	return acc_stream(priv, pblk, 1);
}

static errcode_t add_aux(struct layout *layout, uint64_t *cap, blk64_t blk,
			 ext2_ino_t ino, enum layout_aux_kind kind)
{
	struct layout_aux *x;
	errcode_t ret;

	ret = util_grow(&layout->aux, cap, layout->naux + 1, sizeof(*x));
	if (ret)
		return ret;
	x = &layout->aux[layout->naux++];
	x->start = blk;
	x->len = 1;
	x->ino = ino;
	x->kind = kind;
	return 0;
}

static errcode_t acc_etb(void *priv, blk64_t pblk)
{
	struct file_acc *a = priv;

	a->etb++;
	return add_aux(a->layout, &a->s->aux_cap, pblk, a->f->ino, LAYOUT_AUX_ETB);
}

static const struct blockmap_visitor acc_visitor = {
	.data = acc_data, .ind = acc_ind, .etb = acc_etb,
};

static enum layout_type inode_type(const struct ext2_inode *inode)
{
	if (LINUX_S_ISREG(inode->i_mode))
		return LAYOUT_FILE;
	if (LINUX_S_ISDIR(inode->i_mode))
		return LAYOUT_DIR;
	if (LINUX_S_ISLNK(inode->i_mode))
		return LAYOUT_SYMLINK;
	return LAYOUT_OTHER;
}

/* Inodes the superblock names for its own use: never files to report or move. */
static int special_inode(ext2_filsys fs, ext2_ino_t ino)
{
	struct ext2_super_block *sb = fs->super;

	if (ino == EXT2_ROOT_INO)
		return 0;
	if (ino < EXT2_FIRST_INODE(sb))
		return 1;
	return ino == sb->s_journal_inum || ino == sb->s_usr_quota_inum ||
	       ino == sb->s_grp_quota_inum || ino == sb->s_prj_quota_inum ||
	       ino == sb->s_orphan_file_inum;
}

/* Move a reserved inode's pieces out of the file list, into the fixed set. */
static errcode_t take_reserved(struct layout *layout, struct scan_extra *x,
			       const struct file_acc *a, uint64_t first)
{
	const struct layout_file *f = a->f;
	struct layout_reserved *r = NULL;
	uint64_t i;
	errcode_t ret;

	if (f->ino == layout->fs->super->s_journal_inum)
		r = &layout->journal;
	else if (f->ino == EXT2_RESIZE_INO)
		r = &layout->resize;
	if (r) {
		r->ino = f->ino;
		r->blocks = a->stream + a->etb;
		r->pieces = a->pieces;
		free(r->runs);
		r->runs = malloc((a->pieces ? a->pieces : 1) * sizeof(*r->runs));
		if (!r->runs)
			return ENOMEM;
		if (a->pieces)
			memcpy(r->runs, layout->pieces + first,
			       a->pieces * sizeof(*r->runs));
	}
	ret = util_grow(&x->reserved_runs, &x->reserved_runs_cap,
			  x->nreserved_runs + a->pieces, sizeof(*x->reserved_runs));
	if (ret)
		return ret;
	for (i = first; i < layout->npieces; i++)
		x->reserved_runs[x->nreserved_runs++] = layout->pieces[i];
	layout->npieces = first;
	return 0;
}

/*
 * Whether the map the scan just walked is plain (LAYOUT_F_PLAIN_MAP): what
 * e2defrag's planner would read again and refuse (a bad checksum, flags it
 * does not move, an extent header libext2fs does not take) keeps the flag
 * off.
 */
static int plain_map(ext2_filsys fs, const struct ext2_inode *inode,
		     const struct file_acc *a, int csum_ok)
{
	const __u32 odd = EXT2_COMPR_FL | EXT2_COMPRBLK_FL | EXT4_SNAPFILE_FL |
		EXT4_INLINE_DATA_FL;

	if (!csum_ok || a->hole || (inode->i_flags & odd) ||
	    (a->f->flags & (LAYOUT_F_CORRUPT | LAYOUT_F_UNINIT)) ||
	    !ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)inode))
		return 0;
	if (inode->i_flags & EXT4_EXTENTS_FL) {
		const struct ext3_extent_header *eh = (const void *)inode->i_block;
		unsigned max = ext2fs_le16_to_cpu(eh->eh_max);
		unsigned entries = ext2fs_le16_to_cpu(eh->eh_entries);

		/* All extents in the inode, each its own piece; eh_max as
		 * ext2fs_extent_header_verify wants it (2 to 4 in i_block). */
		return ext2fs_le16_to_cpu(eh->eh_magic) == EXT3_EXT_MAGIC &&
		       !eh->eh_depth && max >= 2 && max <= 4 && entries <= max &&
		       entries == a->pieces && !a->etb;
	}
	return a->stream - a->data_seen ==
		blockmap_meta_blocks(a->data_seen, fs->blocksize / 4);
}

/*
 * Whether the map of INODE waits for the deferred pass: a regular file
 * with one indirect block and no deeper ones.  The sanity checks, which
 * report the first problem in inode order, keep the lowest inode's
 * whatever order the maps come in (sanity.c, note_problem).
 */
static int deferrable(const struct layout *layout, struct ext2_inode *inode,
		      int reserved)
{
	ext2_filsys fs = layout->fs;
	blk64_t ind = inode->i_block[EXT2_IND_BLOCK];

	return !reserved && LINUX_S_ISREG(inode->i_mode) &&
	       !(inode->i_flags & EXT4_EXTENTS_FL) && ind &&
	       !inode->i_block[EXT2_DIND_BLOCK] && !inode->i_block[EXT2_TIND_BLOCK] &&
	       ind >= fs->super->s_first_data_block &&
	       ind < ext2fs_blocks_count(fs->super) &&
	       ext2fs_inode_has_valid_blocks2(fs, inode);
}

static errcode_t scan_map(struct scan_state *s, struct layout_file *f,
			  ext2_ino_t ino, struct ext2_inode *inode, int reserved,
			  int csum_ok, const struct blockmap_cache *cache, int *keep);

static errcode_t scan_inode(struct scan_state *s, ext2_ino_t ino,
			    struct ext2_inode *inode, int csum_ok)
{
	struct layout *layout = s->layout;
	ext2_filsys fs = layout->fs;
	struct layout_file *f;
	errcode_t ret;
	int reserved = special_inode(fs, ino), keep = 0;

	if (!inode->i_links_count && !reserved)
		return 0;
	/*
	 * Flags the features forbid: what i_block holds is unknown, so the
	 * inode is corrupt and none of its blocks is read as its own.
	 */
	if (!reserved && sanity_inode_flags(fs, inode)) {
		layout->summary.corrupt_files++;
		return 0;
	}
	if (!ext2fs_inode_has_valid_blocks2(fs, inode)) {
		if (LINUX_S_ISDIR(inode->i_mode) && !reserved) {
			struct scan_extra *x = s->extra;

			ret = util_grow(&x->inline_dirs, &x->inline_dirs_cap,
					  x->ninline_dirs + 1, sizeof(ext2_ino_t));
			if (ret)
				return ret;
			x->inline_dirs[x->ninline_dirs++] = ino;
		}
		if (!ext2fs_file_acl_block(fs, inode))
			return 0;
	}

	ret = util_grow(&layout->files, &s->files_cap, layout->nfiles + 1,
			  sizeof(*layout->files));
	if (ret)
		return ret;
	f = &layout->files[layout->nfiles];
	memset(f, 0, sizeof(*f));
	f->ino = ino;
	f->type = inode_type(inode);
	if (inode->i_flags & EXT4_EXTENTS_FL)
		f->flags |= LAYOUT_F_EXTENTS;
	if (deferrable(layout, inode, reserved)) {
		struct deferred *d;

		ret = util_grow(&s->deferred, &s->deferred_cap, s->ndeferred + 1,
				  sizeof(*s->deferred));
		if (ret)
			return ret;
		d = &s->deferred[s->ndeferred++];
		d->ind = inode->i_block[EXT2_IND_BLOCK];
		d->file = layout->nfiles++;	/* its place, kept in inode order */
		d->ino = ino;
		d->csum_ok = csum_ok;
		d->inode = *inode;
		return 0;
	}
	ret = scan_map(s, f, ino, inode, reserved, csum_ok, NULL, &keep);
	if (!ret && keep)
		layout->nfiles++;
	return ret;
}

/*
 * Walk INODE's map into F (its record, filled but for the map), its
 * pieces at the end of layout->pieces.  *KEEP says whether the record
 * stays: a file with no block of its own is not one.
 */
static errcode_t scan_map(struct scan_state *s, struct layout_file *f,
			  ext2_ino_t ino, struct ext2_inode *inode, int reserved,
			  int csum_ok, const struct blockmap_cache *cache, int *keep)
{
	struct layout *layout = s->layout;
	ext2_filsys fs = layout->fs;
	struct file_acc a;
	uint64_t first_piece = layout->npieces, first_aux = layout->naux, where;
	blk64_t ea;
	errcode_t ret;

	*keep = 0;
	memset(&a, 0, sizeof(a));
	a.s = s;
	a.layout = layout;
	a.extra = s->extra;
	a.f = f;
	a.reserved = reserved;
	ret = blockmap_walk_cached(fs, ino, inode, &acc_visitor, &a, s->block_buf,
				   cache);
	if (ret == E2F_ERR_CORRUPT_INODE || ret == EXT2_ET_SHORT_READ) {
		f->flags |= LAYOUT_F_CORRUPT;
		ret = 0;
	}
	if (ret)
		return ret;
	if (!reserved && plain_map(fs, inode, &a, csum_ok))
		f->flags |= LAYOUT_F_PLAIN_MAP;
	if (layout->sanity && !reserved && !(f->flags & LAYOUT_F_CORRUPT))
		sanity_note_map(layout, ino, inode, a.data_seen, a.data_lend,
				a.init_end, a.hole);
	if (layout->sanity && reserved && (f->flags & LAYOUT_F_CORRUPT))
		sanity_note_corrupt_reserved(layout, ino);

	ea = ext2fs_file_acl_block(fs, inode);
	if (layout->sanity && !(f->flags & LAYOUT_F_CORRUPT))
		/* (A deferred directory kept only the first 128 bytes.) */
		sanity_note_blocks(layout, ino, inode, cache ? sizeof(*inode) :
				   EXT2_INODE_SIZE(fs->super), a.stream + a.etb +
				   (ea && ea >= fs->super->s_first_data_block &&
				    ea < ext2fs_blocks_count(fs->super)));
	if (ea && ea >= fs->super->s_first_data_block &&
	    ea < ext2fs_blocks_count(fs->super)) {
		f->flags |= LAYOUT_F_HAS_XATTR_BLOCK;
		ret = add_aux(layout, &s->aux_cap, ea, ino, LAYOUT_AUX_XATTR);
		if (ret)
			return ret;
	}

	if (reserved) {
		uint64_t i;

		/* Their extent tree and EA blocks are fixed metadata too. */
		for (i = first_aux; i < layout->naux; i++) {
			ret = util_grow(&s->extra->reserved_runs,
					  &s->extra->reserved_runs_cap,
					  s->extra->nreserved_runs + 1,
					  sizeof(struct layout_piece));
			if (ret)
				return ret;
			s->extra->reserved_runs[s->extra->nreserved_runs].start =
				layout->aux[i].start;
			s->extra->reserved_runs[s->extra->nreserved_runs++].len =
				layout->aux[i].len;
		}
		layout->naux = first_aux;
		return take_reserved(layout, s->extra, &a, first_piece);
	}
	if (f->flags & LAYOUT_F_CORRUPT)
		layout->summary.corrupt_files++;
	if (!a.stream && !a.etb) {
		/* Only an EA block: nothing to report, but the map shows it. */
		return 0;
	}
	if (a.etb) {
		/* Inode order: extent files are never deferred (deferrable). */
		ret = util_grow(&layout->file_etb, &s->file_etb_cap,
				  layout->nfile_etb + 1, sizeof(*layout->file_etb));
		if (ret)
			return ret;
		layout->file_etb[layout->nfile_etb].ino = ino;
		layout->file_etb[layout->nfile_etb++].blocks = a.etb;
		f->flags |= LAYOUT_F_ETB;
	}
	where = first_piece;
	if (a.pieces == 1) {
		/* Most files: keep the one piece in the file itself. */
		where = layout->pieces[first_piece].start;
		layout->npieces = first_piece;
	}
	ret = layout_file_set(layout, f, EXT2_I_SIZE(inode), a.stream, where,
			      a.pieces, a.extents);
	if (ret)
		return ret;
	*keep = 1;
	return 0;
}

static int cmp_deferred(const void *a, const void *b)
{
	const struct deferred *x = a, *y = b;
	blk64_t p = x->inode.i_block[EXT2_IND_BLOCK], q = y->inode.i_block[EXT2_IND_BLOCK];

	if (p != q)
		return p < q ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

/*
 * Deferred files FIRST.. whose indirect blocks one read of at most
 * IND_READ_BLOCKS takes in; *SPAN the blocks to read.
 */
static uint64_t ind_batch(const struct scan_state *s, uint64_t first, blk64_t *span)
{
	blk64_t start = s->deferred[first].inode.i_block[EXT2_IND_BLOCK];
	blk64_t end = start + 1;
	uint64_t i;

	for (i = first + 1; i < s->ndeferred; i++) {
		blk64_t b = s->deferred[i].inode.i_block[EXT2_IND_BLOCK];

		if (b >= end + IND_READ_GAP || b + 1 - start > IND_READ_BLOCKS)
			break;
		if (b + 1 > end)
			end = b + 1;
	}
	*span = end - start;
	return i - first;
}

/* Lay the pieces out in file order again, as a scan in inode order leaves them. */
static errcode_t reorder_pieces(struct layout *layout, uint64_t *cap)
{
	struct layout_piece *p;
	uint64_t i, n = 0, room = layout->npieces ? layout->npieces : 1;

	p = malloc(room * sizeof(*p));
	if (!p)
		return ENOMEM;
	util_huge_pages(p, layout->npieces * sizeof(*p));	/* all written */
	for (i = 0; i < layout->nfiles; i++) {
		struct layout_file *f = &layout->files[i];
		uint32_t pieces = layout_file_pieces(layout, f);

		if (pieces < 2)
			continue;
		memcpy(p + n, layout->pieces + layout_file_where(f),
		       pieces * sizeof(*p));
		layout_file_set_where(f, n);
		n += pieces;
	}
	free(layout->pieces);	/* the new array taken, not copied back */
	layout->pieces = p;
	layout->npieces = n;
	*cap = room;
	return 0;
}

/*
 * The deferred files' maps: their indirect blocks in physical order, many
 * to a read; then the records of files with no block dropped and the
 * pieces put back in file order.
 */
static errcode_t scan_deferred(struct scan_state *s)
{
	struct layout *layout = s->layout;
	ext2_filsys fs = layout->fs;
	struct blockmap_cache cache;
	uint64_t i, k, nbatch, kept;
	blk64_t span;
	char *buf = NULL;
	errcode_t ret = 0;
	int keep, dropped = 0;

	if (!s->ndeferred)
		return 0;
	/*
	 * By indirect block, then file: the files come in file order, so a
	 * stable sort by the block alone, in linear time (a comparison sort
	 * moving these large records costs far more).
	 */
	if (radix_sort_by_start(s->deferred, s->ndeferred, sizeof(*s->deferred),
				offsetof(struct deferred, ind),
				ext2fs_blocks_count(fs->super)))
		qsort(s->deferred, s->ndeferred, sizeof(*s->deferred), cmp_deferred);
	ret = ext2fs_get_mem((size_t)IND_READ_BLOCKS * fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < s->ndeferred; i += nbatch) {
		nbatch = ind_batch(s, i, &span);
		cache.start = s->deferred[i].inode.i_block[EXT2_IND_BLOCK];
		cache.count = span;
		cache.data = buf;
		/* A batch that cannot be read whole: each file reads its own. */
		if (io_channel_read_blk64(fs->io, cache.start, span, buf))
			cache.count = 0;
		for (k = i; k < i + nbatch; k++) {
			struct deferred *d = &s->deferred[k];
			struct layout_file *f = &layout->files[d->file];

			ret = scan_map(s, f, d->ino, &d->inode, 0, d->csum_ok, &cache, &keep);
			if (ret)
				goto out;
			if (!keep) {
				f->ino = 0;	/* dropped below */
				dropped = 1;
			}
		}
	}
	if (dropped) {
		for (i = 0, kept = 0; i < layout->nfiles; i++)
			if (layout->files[i].ino)
				layout->files[kept++] = layout->files[i];
		layout->nfiles = kept;
	}
	ret = reorder_pieces(layout, &s->pieces_cap);
out:
	ext2fs_free_mem(&buf);
	return ret;
}

static int cmp_aux(const void *a, const void *b)
{
	const struct layout_aux *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/*
 * Ask the kernel to start reading every group's inode table (the part in
 * use) now, so that the scan finds it in the page cache: the scan itself
 * reads one buffer at a time.
 */
static void readahead_inode_tables(ext2_filsys fs, const ext2_ino_t *last)
{
	unsigned per_block = fs->blocksize / EXT2_INODE_SIZE(fs->super);
	ext2_ino_t ipg = fs->super->s_inodes_per_group;
	dgrp_t g;

	for (g = 0; g < fs->group_desc_count; g++) {
		blk64_t start = ext2fs_inode_table_loc(fs, g);
		blk64_t n = fs->inode_blocks_per_group, used;

		if (ext2fs_has_group_desc_csum(fs)) {
			if (ext2fs_bg_flags_test(fs, g, EXT2_BG_INODE_UNINIT))
				continue;
			n -= ext2fs_bg_itable_unused(fs, g) / per_block;
		}
		if (last) {
			/* Up to the scan buffer holding the last inode in use. */
			used = last[g] ? (last[g] - g * ipg + per_block - 1) / per_block : 0;
			used = (used + SCAN_BUFFER_BLOCKS - 1) / SCAN_BUFFER_BLOCKS *
				SCAN_BUFFER_BLOCKS;
			if (used < n)
				n = used;
		}
		if (start && n && start + n <= ext2fs_blocks_count(fs->super))
			io_channel_cache_readahead(fs->io, start, n);
	}
}

static errcode_t scan_inodes(struct layout *layout, struct scan_extra *extra,
			     const struct layout_opts *opts)
{
	ext2_filsys fs = layout->fs;
	ext2_inode_scan scan = NULL;
	struct scan_state s;
	struct ext2_inode *inode = NULL;
	int isize = EXT2_INODE_SIZE(fs->super);
	uint64_t total = fs->super->s_inodes_count, seen = 0, hint;
	ext2_ino_t ino, ipg = fs->super->s_inodes_per_group, *last = NULL;
	errcode_t ret;
	int csum_ok;

	memset(&s, 0, sizeof(s));
	s.layout = layout;
	s.extra = extra;
	ret = ext2fs_get_mem(3 * fs->blocksize, &s.block_buf);
	if (ret)
		return ret;
	ret = ext2fs_get_memzero(isize, &inode);
	if (ret)
		goto out;
	/*
	 * Room for every inode the superblock says is in use, reserved once:
	 * growing by copies would hold two arrays at the peak.  Only what is
	 * written is ever paged in.
	 */
	hint = fs->super->s_inodes_count - fs->super->s_free_inodes_count + 16;
	ret = util_grow(&layout->files, &s.files_cap,
			  hint < total ? hint : total, sizeof(*layout->files));
	if (ret)
		goto out;
	/*
	 * The reports read a table only as far as the bitmap has inodes in
	 * use (itable_used.c); the sanity checks want every inode.  Without
	 * the bitmap, every inode.
	 */
	if (!opts->sanity && itable_used_limits(fs, &last))
		last = NULL;
	readahead_inode_tables(fs, last);
	ret = ext2fs_open_inode_scan(fs, SCAN_BUFFER_BLOCKS, &scan);
	if (ret)
		goto out;
	ext2fs_inode_scan_flags(scan, EXT2_SF_SKIP_MISSING_ITABLE |
				EXT2_SF_DO_LAZY, 0);
	/* Where it starts and how far it goes, however few the inodes. */
	if (opts->progress &&
	    opts->progress(opts->progress_priv, E2F_PHASE_INODES, 0, total)) {
		ret = E2F_ERR_CANCELLED;
		goto out;
	}
	for (;;) {
		ret = ext2fs_get_next_inode_full(scan, &ino, inode, isize);
		if (ret == EXT2_ET_BAD_BLOCK_IN_INODE_TABLE ||
		    ret == EXT2_ET_INODE_IS_GARBAGE) {
			layout->unreadable_inodes++;
			continue;
		}
		csum_ok = ret != EXT2_ET_INODE_CSUM_INVALID;
		if (!csum_ok)
			ret = 0;	/* read what is there */
		if (ret)
			goto out;
		if (!ino)
			break;
		if (last && ino > last[(ino - 1) / ipg]) {
			/* Past the group's inodes in use: on to the next group with some. */
			dgrp_t g = (ino - 1) / ipg + 1;

			while (g < fs->group_desc_count && !last[g])
				g++;
			if (g >= fs->group_desc_count)
				break;
			ret = ext2fs_inode_scan_goto_blockgroup(scan, g);
			if (ret)
				goto out;
			continue;
		}
		if (opts->sanity) {
			ret = sanity_note_inode(layout, ino, inode);
			if (ret)
				goto out;
		}
		if (++seen % 4096 == 0 && opts->progress &&
		    opts->progress(opts->progress_priv, E2F_PHASE_INODES, ino, total)) {
			ret = E2F_ERR_CANCELLED;
			goto out;
		}
		ret = scan_inode(&s, ino, inode, csum_ok);
		if (ret)
			goto out;
	}
	ret = scan_deferred(&s);
	if (ret)
		goto out;
	/*
	 * The room reserved and not written given back: its huge pages are
	 * not "only what is written" (the one holding the last file is
	 * resident whole while the reservation goes past it), up to 2 MiB
	 * more in every program's peak, depending on where the array lies.
	 */
	util_fit(&layout->files, &s.files_cap, layout->nfiles, sizeof(*layout->files));
	/* The same for the pieces, which grew by doubling (acc_stream). */
	util_fit(&layout->pieces, &s.pieces_cap, layout->npieces,
		 sizeof(*layout->pieces));
	if (layout->naux)	/* qsort wants a real array even for 0 */
		qsort(layout->aux, layout->naux, sizeof(*layout->aux), cmp_aux);
out:
	if (scan)
		ext2fs_close_inode_scan(scan);
	ext2fs_free_mem(&inode);
	ext2fs_free_mem(&s.block_buf);
	free(s.deferred);
	free(last);
	return ret;
}

static void free_extra(struct scan_extra *x)
{
	free(x->dir_runs);
	free(x->inline_dirs);
	free(x->reserved_runs);
}

errcode_t layout_scan(ext2_filsys fs, const struct layout_opts *opts,
		      struct layout **ret_layout)
{
	struct layout *layout;
	struct scan_extra extra;
	uint64_t i;
	errcode_t ret;

	*ret_layout = NULL;
	layout = calloc(1, sizeof(*layout));
	if (!layout)
		return ENOMEM;
	memset(&extra, 0, sizeof(extra));
	layout->fs = fs;
	/*
	 * In use as e2fsck counts them ("N/M files"): the superblock's count,
	 * the reserved inodes 1 to first_ino - 1 included.
	 */
	layout->inodes_used = fs->super->s_free_inodes_count < fs->super->s_inodes_count ?
		fs->super->s_inodes_count - fs->super->s_free_inodes_count : 0;
	layout->model = opts->model;
	layout->partner_counts_only = opts->partner_counts_only;
	layout->no_outlines = opts->no_outlines;

	ret = scan_inodes(layout, &extra, opts);
	if (ret)
		goto errout;
	ret = zones_build(layout, extra.reserved_runs, extra.nreserved_runs);
	if (ret)
		goto errout;
	if (opts->progress &&
	    opts->progress(opts->progress_priv, E2F_PHASE_BITMAPS, 0, 1)) {
		ret = E2F_ERR_CANCELLED;
		goto errout;
	}
	ret = freespace_scan(layout);
	if (ret)
		goto errout;
	ret = interleave_find(layout);
	if (ret)
		goto errout;
	ret = names_build(layout, &extra, opts);
	if (ret)
		goto errout;
	interleave_order_sets(layout);
	for (i = 0; i < layout->nfiles; i++)
		layout->files[i].flags |= LAYOUT_F_SELECTED;
	layout_summarize(layout, 1);
	free_extra(&extra);
	*ret_layout = layout;
	return 0;
errout:
	free_extra(&extra);
	layout_free(layout);
	return ret;
}
