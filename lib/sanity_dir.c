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
	struct sanity_finding	*found;
	ext2_icount_t		refs;	/* entries naming each inode, . and .. included */
	struct dir_names	names;
	errcode_t		err;
};

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
		sanity_found(w->found, &f);
		return 0;
	}
	w->err = ext2fs_icount_increment(w->refs, ino, NULL);
	if (!w->err && entry == DIRENT_OTHER_FILE)
		w->err = add_name(&w->names, de->name, len);
	return w->err ? DIRENT_ABORT : 0;
}

/* Names met twice in the directory just walked. */
static void find_dup_names(struct dir_walk *w, ext2_ino_t dir)
{
	struct dir_names *d = &w->names;
	size_t i;

	if (d->n < 2)
		return;
	qsort_r(d->v, d->n, sizeof(*d->v), cmp_dir_name, d->pool);
	for (i = 1; i < d->n; i++)
		if (!cmp_dir_name(&d->v[i - 1], &d->v[i], d->pool)) {
			struct sanity_finding f;

			memset(&f, 0, sizeof(f));
			f.what = SANITY_DUP_ENTRY;
			f.ino = dir;
			printable_name(d->pool + d->v[i].off, d->v[i].len,
					 f.name, sizeof(f.name));
			sanity_found(w->found, &f);
			return;
		}
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
 * Every directory's entries, as e2fsck's pass 2 reads them: blocks that
 * parse and whose checksums match, no name twice, no entry naming an
 * inode not in use; then the entries naming each inode against its link
 * count (pass 4).  A directory in pieces would be rebuilt by e2fsck and
 * inodes found or lost with it.
 */
errcode_t sanity_check_dirs(struct layout *layout, struct sanity_notes *n,
			    struct sanity_finding *found)
{
	ext2_filsys fs = layout->fs;
	int saved = fs->flags & EXT2_FLAG_IGNORE_CSUM_ERRORS;
	struct dir_walk w;
	ext2_ino_t last = fs->super->s_inodes_count, i, e;
	uint64_t k;
	errcode_t ret;

	memset(&w, 0, sizeof(w));
	w.layout = layout;
	w.notes = n;
	w.found = found;
	ret = ext2fs_create_icount2(fs, EXT2_ICOUNT_OPT_INCREMENT, 0, NULL, &w.refs);
	if (ret)
		return ret;
	fs->flags &= ~EXT2_FLAG_IGNORE_CSUM_ERRORS;	/* checksums are the point */
	for (k = 0; k < n->ndir_list; k++) {
		ext2_ino_t dir = n->dir_list[k];

		w.names.n = w.names.pool_len = 0;
		ret = ext2fs_dir_iterate2(fs, dir, 0, NULL, dir_entry, &w);
		if (w.err) {
			ret = w.err;
			goto out;
		}
		if (ret == EXT2_ET_DIR_CSUM_INVALID) {
			sanity_found_simple(found, SANITY_DIR_CSUM, dir, 0, 0);
		} else if (ret) {
			sanity_found_simple(found, SANITY_DIR_CORRUPT, dir, 0, 0);
		} else {
			int bad;

			ret = check_htree(fs, dir, &bad);
			if (ret)
				goto out;
			if (bad)
				sanity_found_simple(found, SANITY_HTREE, dir, 0, 0);
		}
		ret = 0;
		find_dup_names(&w, dir);
	}
	/* Link counts, when every directory could be read whole. */
	for (i = 1; i <= last && !found->problems; i = e) {
		ext2_ino_t j;

		if (ext2fs_find_first_set_inode_bitmap2(n->in_use, i, last, &i))
			break;
		if (ext2fs_find_first_zero_inode_bitmap2(n->in_use, i, last, &e))
			e = last + 1;
		for (j = i; j < e; j++) {
			__u16 links = 0, refs = 0;

			ext2fs_icount_fetch(n->links, j, &links);
			if (!links)
				continue;	/* not counted (reserved, attribute inode) */
			ext2fs_icount_fetch(w.refs, j, &refs);
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
	ext2fs_free_icount(w.refs);
	free(w.names.pool);
	free(w.names.v);
	return ret;
}
