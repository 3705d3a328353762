/*
 * sanity_dir.c --- the directories' part of the sanity checks (sanity.h):
 * what e2fsck's passes 2 and 4 would repair by dropping or renaming
 * entries, rebuilding a directory or changing link counts, which changes
 * the set of inodes a filesystem holds.  Read-only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sanity_int.h"

/* LEN bytes of NAME, printable, into OUT. */
static void printable_name(const char *name, unsigned len, char *out, size_t outlen)
{
	char tmp[256];

	if (len >= sizeof(tmp))
		len = sizeof(tmp) - 1;
	memcpy(tmp, name, len);
	tmp[len] = 0;
	util_printable(tmp, out, outlen);
}

struct dir_names {
	char		*pool;		/* the names, back to back */
	uint64_t	pool_len, pool_cap;
	struct dir_name { size_t off; unsigned len; } *v;
	uint64_t	n, cap;
};

struct dir_walk {
	struct layout		*layout;
	struct sanity_notes	*notes;
	/*
	 * What the directories found: the first finding of the directory
	 * first in inode order (its index in notes->dir_list: at), and how
	 * many in all.  Directories are not walked in inode order (those
	 * read in batches come in physical order), so findings are kept the
	 * way sanity_found keeps them in a walk in inode order.
	 */
	struct sanity_finding	first;
	uint64_t		first_at, at, problems;
	struct sanity_count	refs;	/* entries naming each inode, . and .. included */
	struct dir_names	names;
	uint32_t		*slots;	/* any_dup_name's hash table, reused */
	uint64_t		nslots;
	errcode_t		err;
};

/* A finding of the directory at hand (w->at). */
static void dir_found(struct dir_walk *w, const struct sanity_finding *f)
{
	if (!w->problems || w->at < w->first_at) {
		w->first = *f;
		w->first_at = w->at;
	}
	w->problems++;
}

static void dir_found_simple(struct dir_walk *w, enum sanity_what what,
			     ext2_ino_t ino)
{
	struct sanity_finding f;

	memset(&f, 0, sizeof(f));
	f.what = what;
	f.ino = ino;
	dir_found(w, &f);
}

static int cmp_dir_name(const void *a, const void *b, void *arg)
{
	const struct dir_name *x = a, *y = b;
	const char *pool = arg;
	int c = memcmp(pool + x->off, pool + y->off, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static errcode_t add_name(struct dir_names *d, const char *name, unsigned len)
{
	if (util_grow(&d->v, &d->cap, d->n + 1, sizeof(*d->v)) ||
	    util_grow(&d->pool, &d->pool_cap, d->pool_len + len, 1))
		return ENOMEM;
	if (len)	/* an empty name: POOL may still be NULL */
		memcpy(d->pool + d->pool_len, name, len);
	d->v[d->n].off = d->pool_len;
	d->v[d->n].len = len;
	d->n++;
	d->pool_len += len;
	return 0;
}

static int dir_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *de,
		     int offset, int blocksize, char *buf, void *priv)
{
	struct dir_walk *w = priv;
	ext2_filsys fs = w->layout->fs;
	ext2_ino_t ino = de->inode;
	unsigned len = ext2fs_dirent_name_len(de);

	(void)offset; (void)blocksize; (void)buf;
	if (!ino)
		return 0;
	if (ino > fs->super->s_inodes_count ||
	    (ino < EXT2_FIRST_INODE(fs->super) && ino != EXT2_ROOT_INO) ||
	    !ext2fs_test_inode_bitmap2(w->notes->in_use, ino)) {
		struct sanity_finding f;

		memset(&f, 0, sizeof(f));
		f.what = SANITY_BAD_ENTRY;
		f.ino = dir;
		f.ino2 = ino;
		printable_name(de->name, len, f.name, sizeof(f.name));
		dir_found(w, &f);
		return 0;
	}
	w->err = sanity_count_increment(&w->refs, ino);
	if (!w->err && entry == DIRENT_OTHER_FILE)
		w->err = add_name(&w->names, de->name, len);
	return w->err ? DIRENT_ABORT : 0;
}

/*
 * Whether a name is met twice in the directory just walked: a hash table
 * of the names, linear in them, where sorting every directory's names
 * only to find none twice would cost a sort a directory; only a
 * directory with a name twice is sorted, to report the least such name.
 */
static errcode_t any_dup_name(struct dir_walk *w, int *dup)
{
	struct dir_names *d = &w->names;
	uint64_t want = 4, mask, i, h;
	unsigned k;

	*dup = 0;
	while (want < 2 * d->n)
		want *= 2;
	if (want > w->nslots) {
		free(w->slots);
		w->slots = malloc(want * sizeof(*w->slots));
		w->nslots = w->slots ? want : 0;
		if (!w->slots)
			return ENOMEM;
	}
	memset(w->slots, 0, want * sizeof(*w->slots));
	mask = want - 1;
	for (i = 0; i < d->n; i++) {
		const char *name = d->pool + d->v[i].off;
		unsigned len = d->v[i].len;
		uint64_t word;

		/* Eight bytes a step (names are short: a step or two), then mixed. */
		h = 14695981039346656037ULL ^ len;
		for (k = 0; k + 8 <= len; k += 8) {
			memcpy(&word, name + k, 8);
			h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
		}
		if (k < len) {
			for (word = 0; k < len; k++)
				word = word << 8 | (unsigned char)name[k];
			h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
		}
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 32;
		for (h &= mask; w->slots[h]; h = (h + 1) & mask)
			if (!cmp_dir_name(&d->v[w->slots[h] - 1], &d->v[i], d->pool)) {
				*dup = 1;
				return 0;
			}
		w->slots[h] = (uint32_t)(i + 1);
	}
	return 0;
}

/* Names met twice in the directory just walked: the least, in sorted order. */
static errcode_t find_dup_names(struct dir_walk *w, ext2_ino_t dir)
{
	struct dir_names *d = &w->names;
	size_t i;
	int dup;
	errcode_t ret;

	if (d->n < 2)
		return 0;
	ret = any_dup_name(w, &dup);
	if (ret || !dup)
		return ret;
	qsort_r(d->v, d->n, sizeof(*d->v), cmp_dir_name, d->pool);
	for (i = 1; i < d->n; i++)
		if (!cmp_dir_name(&d->v[i - 1], &d->v[i], d->pool)) {
			struct sanity_finding f;

			memset(&f, 0, sizeof(f));
			f.what = SANITY_DUP_ENTRY;
			f.ino = dir;
			printable_name(d->pool + d->v[i].off, d->v[i].len,
					 f.name, sizeof(f.name));
			dir_found(w, &f);
			return 0;
		}
	return 0;
}

/* ------------------------------------------------------------ hash index */

struct htree_walk {
	ext2_filsys	fs;
	ext2_ino_t	dir;
	struct ext2_inode *inode;
	char		*buf;		/* one block per level, the leaf's last */
	int		hash_alg;
	int		bad;
};

/* Read logical block LBLK of the directory into BUF; nonzero on failure. */
static int read_dir_lblk(struct htree_walk *h, blk64_t lblk, char *buf)
{
	blk64_t pblk = 0;

	if (ext2fs_bmap2(h->fs, h->dir, h->inode, NULL, 0, lblk, NULL, &pblk) ||
	    !pblk || io_channel_read_blk64(h->fs->io, pblk, 1, buf))
		return 1;
	return 0;
}

/* Every name of the leaf block in BUF hashes into [LO, HI]. */
static void check_leaf(struct htree_walk *h, const char *buf,
		       ext2_dirhash_t lo, ext2_dirhash_t hi)
{
	unsigned bs = h->fs->blocksize, off = 0, rec_len;

	while (off + 8 <= bs && !h->bad) {
		const struct ext2_dir_entry *de = (const void *)(buf + off);
		unsigned len = ext2fs_dirent_name_len(de);
		ext2_dirhash_t hash = 0, minor;

		if (ext2fs_get_rec_len(h->fs, (struct ext2_dir_entry *)de, &rec_len) ||
		    rec_len < 8 || off + rec_len > bs || len + 8 > rec_len) {
			h->bad = 1;	/* dir_iterate would have said so */
			break;
		}
		if (de->inode &&
		    !ext2fs_dirhash(h->hash_alg, de->name, len,
				    h->fs->super->s_hash_seed, &hash, &minor) &&
		    (hash < lo || hash > hi))
			h->bad = 1;
		off += rec_len;
	}
}

/*
 * An index node's entries at ENTRIES (a count/limit header first, in
 * BUF): hashes ascending, each child's names within its range, LEVELS
 * more index levels below.
 */
static void check_node(struct htree_walk *h, char *buf, unsigned offset,
		       int levels, ext2_dirhash_t lo, ext2_dirhash_t hi)
{
	const struct ext2_dx_countlimit *cl = (const void *)(buf + offset);
	const struct ext2_dx_entry *ent = (const void *)(buf + offset);
	unsigned count = ext2fs_le16_to_cpu(cl->count);
	unsigned limit = ext2fs_le16_to_cpu(cl->limit), i;
	char *child = buf + h->fs->blocksize;

	if (!count || count > limit ||
	    limit > (h->fs->blocksize - offset) / sizeof(*ent)) {
		h->bad = 1;
		return;
	}
	for (i = 0; i < count && !h->bad; i++) {
		ext2_dirhash_t clo = i ? ext2fs_le32_to_cpu(ent[i].hash) & ~1U : lo;
		ext2_dirhash_t chi = i + 1 < count ?
			ext2fs_le32_to_cpu(ent[i + 1].hash) & ~1U : hi;

		if (clo < lo || clo > chi ||
		    read_dir_lblk(h, ext2fs_le32_to_cpu(ent[i].block) & 0x0fffffffU, child)) {
			h->bad = 1;
			break;
		}
		if (levels)
			check_node(h, child, 8, levels - 1, clo, chi);
		else
			check_leaf(h, child, clo, chi);
	}
}

/*
 * A hashed directory's index against its names, as e2fsck's pass 2 holds
 * them ("bad min hash", "bad max hash": it would rebuild the directory).
 * Casefolded and encrypted names hash otherwise: not checked.
 */
static errcode_t check_htree(ext2_filsys fs, ext2_ino_t dir, int *bad)
{
	struct ext2_inode inode;
	const struct ext2_dx_root_info *root;
	struct htree_walk h;
	errcode_t ret;

	*bad = 0;
	ret = ext2fs_read_inode(fs, dir, &inode);
	if (ret)
		return ret;
	if (!(inode.i_flags & EXT2_INDEX_FL) || !ext2fs_has_feature_dir_index(fs->super) ||
	    (inode.i_flags & (EXT4_ENCRYPT_FL | EXT4_CASEFOLD_FL | EXT4_INLINE_DATA_FL)))
		return 0;
	memset(&h, 0, sizeof(h));
	h.fs = fs;
	h.dir = dir;
	h.inode = &inode;
	ret = ext2fs_get_mem(5 * fs->blocksize, &h.buf);
	if (ret)
		return ret;
	root = (const void *)(h.buf + 24);	/* after "." and ".."'s header */
	if (read_dir_lblk(&h, 0, h.buf) || root->info_length != 8 ||
	    root->indirect_levels > (ext2fs_has_feature_largedir(fs->super) ? 2 : 1)) {
		*bad = 1;
	} else if (root->hash_version <= EXT2_HASH_TEA) {
		h.hash_alg = root->hash_version;
		if (fs->super->s_flags & EXT2_FLAGS_UNSIGNED_HASH)
			h.hash_alg += EXT2_HASH_LEGACY_UNSIGNED;
		check_node(&h, h.buf, 24 + 8, root->indirect_levels, 0, 0xffffffffU);
		*bad = h.bad;
	}
	ext2fs_free_mem(&h.buf);
	return 0;
}

/*
 * Directory DIR's entries from its NBLOCKS blocks in BUF (logical order),
 * as ext2fs_dir_iterate2 (flags 0) hands them to dir_entry: the same
 * checks of each block (its checksum, then entries whose lengths hold),
 * entries before a bad one handed on, none after it.  Returns what
 * ext2fs_dir_iterate2 would.
 */
static errcode_t iterate_blocks(struct dir_walk *w, ext2_ino_t dir, char *buf,
				blk64_t nblocks)
{
	ext2_filsys fs = w->layout->fs;
	unsigned bs = fs->blocksize, offset, rec_len;
	blk64_t b;

	for (b = 0; b < nblocks; b++) {
		char *blk = buf + b * bs;
		int entry = b ? DIRENT_OTHER_FILE : DIRENT_DOT_FILE;

		if (!ext2fs_dir_block_csum_verify(fs, dir, (struct ext2_dir_entry *)blk))
			return EXT2_ET_DIR_CSUM_INVALID;
		for (offset = 0; offset < bs - 8; offset += rec_len) {
			struct ext2_dir_entry *de = (struct ext2_dir_entry *)(blk + offset);

			if (ext2fs_get_rec_len(fs, de, &rec_len))
				return 0;
			if (offset + rec_len > bs || rec_len < 8 || rec_len % 4 ||
			    (unsigned)ext2fs_dirent_name_len(de) + 8 > rec_len)
				return EXT2_ET_DIR_CORRUPTED;
			if (!de->inode)
				continue;	/* empty, or the checksum's tail */
			/* e2fsck clears an entry with no name (pass 2). */
			if (!ext2fs_dirent_name_len(de))
				return EXT2_ET_DIR_CORRUPTED;
			if (dir_entry(dir, entry, de, offset, bs, blk, w) & DIRENT_ABORT)
				return 0;
			if (entry < DIRENT_OTHER_FILE)
				entry++;
		}
	}
	return 0;
}

/* What follows reading directory DIR's entries (ITER: how that ended). */
static errcode_t dir_done(struct dir_walk *w, ext2_ino_t dir, errcode_t iter,
			  int htree)
{
	errcode_t ret;
	int bad;

	if (iter == EXT2_ET_DIR_CSUM_INVALID) {
		dir_found_simple(w, SANITY_DIR_CSUM, dir);
	} else if (iter) {
		dir_found_simple(w, SANITY_DIR_CORRUPT, dir);
	} else if (htree) {
		ret = check_htree(w->layout->fs, dir, &bad);
		if (ret)
			return ret;
		if (bad)
			dir_found_simple(w, SANITY_HTREE, dir);
	}
	return find_dup_names(w, dir);
}

/*
 * A directory read in a batch: one piece, its blocks its data alone
 * (extents: the one in the inode; a block map: no mapping block), as
 * the scan found them (a plain map) and e2fsck's pass 2 would walk them.
 */
struct dir_batched {
	blk64_t		start;
	uint64_t	at;		/* index in notes->dir_list */
	uint32_t	len;
	uint32_t	htree;		/* the hash index flag: check_htree */
};

/* At most this many blocks to a read of directories, ... */
#define DIR_READ_BLOCKS	64
/* ... reading through gaps of at most this many blocks between them. */
#define DIR_READ_GAP	8

static int cmp_batched(const void *a, const void *b)
{
	const struct dir_batched *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Whether layout file F (directory DIR) may be read in a batch. */
static int batchable(const struct layout *layout, const struct layout_file *f)
{
#ifdef WORDS_BIGENDIAN
	(void)layout;
	(void)f;
	return 0;	/* the blocks would want ext2fs_dirent_swab_in */
#else
	return f->type == LAYOUT_DIR && (f->flags & LAYOUT_F_PLAIN_MAP) &&
	       !(f->flags & LAYOUT_F_CORRUPT) && layout_file_pieces(layout, f) == 1 &&
	       layout_stream_blocks(layout, f) <= DIR_READ_BLOCKS && !(f->flags & LAYOUT_F_ETB) &&
	       ((f->flags & LAYOUT_F_EXTENTS) || layout_stream_blocks(layout, f) <= EXT2_NDIR_BLOCKS);
#endif
}

/* One directory through ext2fs_dir_iterate2, as it comes. */
static errcode_t walk_one(struct dir_walk *w, ext2_ino_t dir, int htree)
{
	errcode_t ret;

	w->names.n = w->names.pool_len = 0;
	ret = ext2fs_dir_iterate2(w->layout->fs, dir, 0, NULL, dir_entry, w);
	if (w->err)
		return w->err;
	return dir_done(w, dir, ret, htree);
}

/*
 * The batchable directories B[0..N), sorted by where they lie, read up
 * to DIR_READ_BLOCKS to a read (a tree of small directories would
 * otherwise be a read of a block for each, and one of its inode); a
 * batch that cannot be read goes through ext2fs_dir_iterate2 directory
 * by directory.
 */
static errcode_t walk_batched(struct dir_walk *w, struct dir_batched *b, size_t n)
{
	ext2_filsys fs = w->layout->fs;
	ext2_ino_t *dirs = w->notes->dir_list;
	size_t i, k, nb;
	blk64_t end;
	char *buf;
	errcode_t ret = 0;

	if (!n)
		return 0;
	qsort(b, n, sizeof(*b), cmp_batched);
	ret = ext2fs_get_mem((size_t)DIR_READ_BLOCKS * fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < n; i += nb) {
		end = b[i].start + b[i].len;
		for (nb = 1; i + nb < n; nb++) {
			const struct dir_batched *x = &b[i + nb];

			if (x->start < end || x->start - end > DIR_READ_GAP ||
			    x->start + x->len - b[i].start > DIR_READ_BLOCKS)
				break;
			end = x->start + x->len;
		}
		if (io_channel_read_blk64(fs->io, b[i].start, end - b[i].start, buf)) {
			for (k = i; k < i + nb && !ret; k++) {
				w->at = b[k].at;
				ret = walk_one(w, dirs[b[k].at], b[k].htree);
			}
		} else {
			for (k = i; k < i + nb && !ret; k++) {
				errcode_t iter;

				w->at = b[k].at;
				w->names.n = w->names.pool_len = 0;
				iter = iterate_blocks(w, dirs[b[k].at], buf +
					(b[k].start - b[i].start) * fs->blocksize,
					b[k].len);
				ret = w->err ? w->err :
					dir_done(w, dirs[b[k].at], iter, b[k].htree);
			}
		}
		if (ret)
			break;
	}
	ext2fs_free_mem(&buf);
	return ret;
}

/*
 * Every directory's entries, as e2fsck's pass 2 reads them: blocks that
 * parse and whose checksums match, no name twice, no entry naming an
 * inode not in use; then the entries naming each inode against its link
 * count (pass 4).  A directory in pieces would be rebuilt by e2fsck and
 * inodes found or lost with it.  Directories of one piece the scan
 * mapped whole are read in batches, in physical order; the others one by
 * one with ext2fs_dir_iterate2; the finding kept is that of the first
 * directory in inode order all the same.
 */
errcode_t sanity_check_dirs(struct layout *layout, struct sanity_notes *n,
			    struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	int saved = fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS;
	struct dir_walk w;
	struct dir_batched *batched = NULL;
	ext2_ino_t last = fs->super->s_inodes_count, i, e;
	uint64_t k, fi = 0, h = 0, nbatched = 0;
	errcode_t ret;

	memset(&w, 0, sizeof(w));
	w.layout = layout;
	w.notes = n;
	ret = sanity_count_init(fs, &w.refs);
	if (ret)
		return ret;
	batched = malloc((n->ndir_list ? n->ndir_list : 1) * sizeof(*batched));
	if (!batched) {
		ret = ENOMEM;
		goto out;
	}
	fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;	/* checksums are the point */
	/* dir_list, files and htree_list all come in inode order. */
	for (k = 0; k < n->ndir_list; k++) {
		ext2_ino_t dir = n->dir_list[k];
		const struct layout_file *f = NULL;
		int htree;

		while (h < n->nhtree_list && n->htree_list[h] < dir)
			h++;
		htree = h < n->nhtree_list && n->htree_list[h] == dir;
		while (fi < layout->nfiles && layout->files[fi].ino < dir)
			fi++;
		if (fi < layout->nfiles && layout->files[fi].ino == dir)
			f = &layout->files[fi];
		if (f && batchable(layout, f)) {
			struct layout_piece pc = layout_file_piece(layout, f, 0);

			batched[nbatched].start = pc.start;
			batched[nbatched].len = (uint32_t)pc.len;
			batched[nbatched].at = k;
			batched[nbatched++].htree = htree;
			continue;
		}
		w.at = k;
		ret = walk_one(&w, dir, htree);
		if (ret)
			goto out;
	}
	ret = walk_batched(&w, batched, nbatched);
	if (ret)
		goto out;
	if (w.problems) {
		w.first.problems = w.problems;
		sanity_found(found, &w.first);
	}
	/* Link counts, when every directory could be read whole. */
	for (i = 1; i <= last && !found->problems; i = e) {
		ext2_ino_t j;

		if (ext2fs_find_first_set_inode_bitmap2(n->in_use, i, last, &i))
			break;
		if (ext2fs_find_first_zero_inode_bitmap2(n->in_use, i, last, &e))
			e = last + 1;
		for (j = i; j < e; j++) {
			uint16_t links = sanity_count_fetch(&n->links, j), refs;

			if (!links)
				continue;	/* not counted (reserved, attribute inode) */
			refs = sanity_count_fetch(&w.refs, j);
			if (links != refs) {
				sanity_found_simple(found, SANITY_LINK_COUNT, j, 0, 0);
				found->recorded = links;
				found->counted = refs;
				break;
			}
		}
	}
out:
	fs->flags |= saved;
	sanity_count_free(&w.refs);
	free(w.names.pool);
	free(w.names.v);
	free(w.slots);
	free(batched);
	return ret;
}
