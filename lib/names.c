/*
 * names.c --- give every inode in the layout the name it is found under.
 *
 * Directory blocks are read once, in physical order and in large reads,
 * the way e2fsck's pass 2 does; every entry names its inode if nothing
 * named it before (so a hard-linked file keeps the first name found), and
 * the directory of every other entry is kept beside (layout->links), for
 * a PATH argument to find a hard link under any of its names.
 * Paths are put together on demand by walking parents up to the root.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layout_int.h"
#include "lower_bound.h"

/* At most this many blocks per read of directory data. */
#define DIR_READ_BLOCKS 64
/* Deeper than any real tree: a longer parent chain is a loop. */
#define MAX_DEPTH 4096

static int cmp_name_ino(const void *a, const void *b)
{
	const struct layout_name *x = a, *y = b;

	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int name_before(const void *names, uint64_t i, const void *ino)
{
	return ((const struct layout_name *)names)[i].ino < *(const ext2_ino_t *)ino;
}

/*
 * INO's name: a binary search of its bucket of the index (a few names),
 * not of all of them (asked for every entry of every directory and every
 * path printed, where a search of all names misses the cache at nearly
 * every step).
 */
static struct layout_name *find_name(const struct layout *layout, ext2_ino_t ino)
{
	uint64_t lo = 0, hi = layout->nnames, i;

	if (layout->name_index) {
		uint64_t b = (uint64_t)ino >> layout->name_shift;

		if (b >= layout->name_buckets)
			return NULL;
		lo = layout->name_index[b];
		hi = layout->name_index[b + 1];
	}
	i = lower_bound(lo, hi, name_before, layout->names, &ino);
	return i < hi && layout->names[i].ino == ino ? &layout->names[i] : NULL;
}

/*
 * The index of the names (sorted by inode): buckets of 2^shift inode
 * numbers, about one for every two names.  Without it (no memory)
 * find_name searches them all.
 */
static void index_names(struct layout *layout)
{
	uint64_t n = layout->nnames, b, i;
	ext2_ino_t last;
	unsigned shift = 0;

	free(layout->name_index);
	layout->name_index = NULL;
	if (!n || n > UINT32_MAX)
		return;
	last = layout->names[n - 1].ino;
	while (((uint64_t)last >> shift) + 1 > n / 2 + 1)
		shift++;
	layout->name_buckets = ((uint64_t)last >> shift) + 1;
	layout->name_index = malloc((layout->name_buckets + 1) *
				    sizeof(*layout->name_index));
	if (!layout->name_index)
		return;
	layout->name_shift = shift;
	for (b = 0, i = 0; b <= layout->name_buckets; b++) {
		while (i < n && ((uint64_t)layout->names[i].ino >> shift) < b)
			i++;
		layout->name_index[b] = (uint32_t)i;
	}
}

/* N named NAME (LEN bytes, 1 to 255) in directory PARENT. */
static errcode_t put_name(struct layout *layout, struct layout_name *n,
			  ext2_ino_t parent, const char *name, unsigned len)
{
	errcode_t ret;

	ret = util_grow(&layout->name_pool, &layout->name_pool_size,
			  layout->name_pool_len + 1 + len, 1);
	if (ret)
		return ret;
	layout->name_pool[layout->name_pool_len] = (char)len;	/* at most 255 */
	memcpy(layout->name_pool + layout->name_pool_len + 1, name, len);
	n->parent = parent;
	n->name = layout->name_pool_len;
	layout->name_pool_len += 1 + len;
	return 0;
}

static int name_is(const struct layout *layout, const struct layout_name *n,
		   ext2_ino_t parent, const char *name, unsigned len)
{
	return n->parent == parent && layout_name_len(layout, n) == len &&
	       !memcmp(layout_name_text(layout, n), name, len);
}

static errcode_t set_name(struct layout *layout, ext2_ino_t parent,
			  ext2_ino_t ino, const char *name, unsigned len)
{
	struct layout_name *n = find_name(layout, ino);
	errcode_t ret;

	if (!n || !len || ino == EXT2_ROOT_INO || ino == parent)
		return 0;
	if (!n->parent)
		return put_name(layout, n, parent, name, len);
	/* Its own entry read a second time (names_add) is no other name. */
	if (name_is(layout, n, parent, name, len))
		return 0;
	ret = util_grow(&layout->links, &layout->links_size, layout->nlinks + 1,
			sizeof(*layout->links));
	if (ret)
		return ret;
	layout->links[layout->nlinks++] = (struct layout_link){ ino, parent };
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct layout_link *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->parent < y->parent ? -1 : x->parent > y->parent;
}

/*
 * The other names in inode order, each directory once: a second reading
 * (names_add) finds the links of the first again, and two links in one
 * directory are one place to look.
 */
static void sort_links(struct layout *layout)
{
	uint64_t i, o = 0;

	if (!layout->nlinks)
		return;
	qsort(layout->links, layout->nlinks, sizeof(*layout->links), cmp_link);
	for (i = 0; i < layout->nlinks; i++)
		if (!o || cmp_link(&layout->links[o - 1], &layout->links[i]))
			layout->links[o++] = layout->links[i];
	layout->nlinks = o;
}

/* Every well-formed entry of one directory block. */
static errcode_t parse_dir_block(struct layout *layout, ext2_ino_t dir,
				 char *buf)
{
	ext2_filsys fs = layout->fs;
	unsigned offset = 0, rec_len, name_len;
	errcode_t ret;

	while (offset + 8 <= fs->blocksize) {
		struct ext2_dir_entry *de = (struct ext2_dir_entry *)(buf + offset);

		if (ext2fs_get_rec_len(fs, de, &rec_len) || rec_len < 8 ||
		    rec_len % 4 || offset + rec_len > fs->blocksize)
			break;
		name_len = ext2fs_dirent_name_len(de);
		if (name_len + 8 > rec_len)
			break;
		if (de->inode && !(name_len == 1 && de->name[0] == '.') &&
		    !(name_len == 2 && de->name[0] == '.' && de->name[1] == '.')) {
			ret = set_name(layout, dir, de->inode, de->name, name_len);
			if (ret)
				return ret;
		}
		offset += rec_len;
	}
	return 0;
}

static int cmp_dir_run(const void *a, const void *b)
{
	const struct dir_run *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Runs FIRST.. that one read of at most DIR_READ_BLOCKS covers: each
 * starting at or after the end of the one before and at most
 * DIR_READ_GAP blocks after it.  Directories written one after another
 * sit side by side, one block each: read one by one they would be a
 * system call each.  Returns how many runs, at least one; *SPAN is the
 * blocks to read (0 when the first run alone is too long for one read).
 */
#define DIR_READ_GAP 8
static uint64_t dir_batch(const struct scan_extra *x, uint64_t first,
			  blk64_t *span)
{
	const struct dir_run *r = &x->dir_runs[first];
	blk64_t end = r->start + r->len;
	uint64_t i;

	*span = 0;
	if (r->len > DIR_READ_BLOCKS)
		return 1;
	for (i = first + 1; i < x->ndir_runs; i++) {
		const struct dir_run *n = &x->dir_runs[i];

		if (n->start < end || n->start - end > DIR_READ_GAP ||
		    n->start + n->len - r->start > DIR_READ_BLOCKS)
			break;
		end = n->start + n->len;
	}
	*span = end - r->start;
	return i - first;
}

/* Every block of run R, read DIR_READ_BLOCKS at a time into BUF. */
static errcode_t read_one_run(struct layout *layout, const struct dir_run *r,
			      char *buf, uint64_t *done)
{
	ext2_filsys fs = layout->fs;
	blk64_t off, n, b;
	errcode_t ret;

	for (off = 0; off < r->len; off += n) {
		n = r->len - off < DIR_READ_BLOCKS ? r->len - off : DIR_READ_BLOCKS;
		if (io_channel_read_blk64(fs->io, r->start + off, n, buf))
			continue;	/* unreadable: its entries stay nameless */
		for (b = 0; b < n; b++) {
			ret = parse_dir_block(layout, r->ino, buf + b * fs->blocksize);
			if (ret)
				return ret;
		}
		*done += n;
	}
	return 0;
}

static errcode_t read_dir_runs(struct layout *layout, struct scan_extra *x,
			       const struct layout_opts *opts)
{
	ext2_filsys fs = layout->fs;
	uint64_t i, k, nrun, done = 0, total = 0;
	blk64_t span;
	char *buf;
	errcode_t ret = 0;

	if (x->ndir_runs)
		qsort(x->dir_runs, x->ndir_runs, sizeof(*x->dir_runs), cmp_dir_run);
	for (i = 0; i < x->ndir_runs; i++)
		total += x->dir_runs[i].len;
	/* Read ahead what the batches below read, one request per batch. */
	for (i = 0; i < x->ndir_runs; i += nrun) {
		nrun = dir_batch(x, i, &span);
		io_channel_cache_readahead(fs->io, x->dir_runs[i].start,
					   span ? span : x->dir_runs[i].len);
	}
	ret = ext2fs_get_mem((size_t)DIR_READ_BLOCKS * fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < x->ndir_runs; i += nrun) {
		nrun = dir_batch(x, i, &span);
		/* One read for the batch; run by run if it fails, as before. */
		if (span && !io_channel_read_blk64(fs->io, x->dir_runs[i].start,
						   span, buf)) {
			for (k = i; k < i + nrun; k++) {
				const struct dir_run *r = &x->dir_runs[k];
				char *at = buf + (r->start - x->dir_runs[i].start) *
					fs->blocksize;
				blk64_t b;

				for (b = 0; b < r->len; b++) {
					ret = parse_dir_block(layout, r->ino,
							      at + b * fs->blocksize);
					if (ret)
						goto out;
				}
				done += r->len;
			}
		} else {
			for (k = i; k < i + nrun; k++) {
				ret = read_one_run(layout, &x->dir_runs[k], buf, &done);
				if (ret)
					goto out;
			}
		}
		if (opts->progress && opts->progress(opts->progress_priv,
						     E2F_PHASE_DIRS, done, total)) {
			ret = E2F_ERR_CANCELLED;
			goto out;
		}
	}
out:
	ext2fs_free_mem(&buf);
	return ret;
}

struct inline_ctx {
	struct layout	*layout;
	ext2_ino_t	dir;
	errcode_t	ret;
};

static int inline_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *de,
			int offset, int blocksize, char *buf, void *priv)
{
	struct inline_ctx *c = priv;
	unsigned len = ext2fs_dirent_name_len(de);

	(void)dir; (void)entry; (void)offset; (void)blocksize; (void)buf;
	if (!de->inode || (len == 1 && de->name[0] == '.') ||
	    (len == 2 && de->name[0] == '.' && de->name[1] == '.'))
		return 0;
	c->ret = set_name(c->layout, c->dir, de->inode, de->name, len);
	return c->ret ? DIRENT_ABORT : 0;
}

/* Whether INDEX gets a name in LAYOUT_NAMES_LOSSY mode. */
static int wants_name(const struct layout *layout, const struct layout_file *f)
{
	double read, ideal;

	if (f->type == LAYOUT_DIR || layout_file_interleave(layout, f))
		return 1;
	if (layout_file_pieces(layout, f) < 2)
		return 0;	/* one piece: nothing lost */
	layout_file_times(layout, f, &read, &ideal);
	return read > ideal;
}

errcode_t names_build(struct layout *layout, struct scan_extra *x,
		      const struct layout_opts *opts)
{
	uint64_t i, n = 0;
	errcode_t ret;

	layout->names = calloc(layout->nfiles + x->ninline_dirs + 1,
			       sizeof(*layout->names));
	if (!layout->names)
		return ENOMEM;
	/* Every file named: all of it is written, huge pages cost no memory. */
	if (opts->names == LAYOUT_NAMES_ALL)
		util_huge_pages(layout->names, (layout->nfiles + x->ninline_dirs + 1) *
				sizeof(*layout->names));
	for (i = 0; i < layout->nfiles; i++)
		if (opts->names == LAYOUT_NAMES_ALL ||
		    wants_name(layout, &layout->files[i]))
			layout->names[n++].ino = layout->files[i].ino;
	for (i = 0; i < x->ninline_dirs; i++)
		layout->names[n++].ino = x->inline_dirs[i];
	layout->nnames = n;
	/* Files come in inode order: sort only when inline directories follow. */
	for (i = 1; i < n && layout->names[i - 1].ino <= layout->names[i].ino; i++)
		;
	if (i < n)
		qsort(layout->names, n, sizeof(*layout->names), cmp_name_ino);
	index_names(layout);
	if (opts->names == LAYOUT_NAMES_NONE)
		return 0;

	ret = read_dir_runs(layout, x, opts);
	if (ret)
		return ret;
	for (i = 0; i < x->ninline_dirs; i++) {
		struct inline_ctx c = { layout, x->inline_dirs[i], 0 };

		/* A corrupt inline directory just leaves its entries nameless. */
		ext2fs_dir_iterate2(layout->fs, c.dir, 0, NULL, inline_entry, &c);
		if (c.ret)
			return c.ret;
	}
	sort_links(layout);
	return 0;
}

errcode_t names_add(struct layout *layout, struct scan_extra *x,
		    int (*want)(void *priv, uint64_t file), void *priv)
{
	struct layout_opts opts;
	struct layout_name *v;
	uint64_t i, j = 0, o = 0, more = 0;
	errcode_t ret;

	for (i = 0; i < layout->nfiles; i++)
		more += (!want || want(priv, i)) &&
			!find_name(layout, layout->files[i].ino);
	if (!more)
		return 0;
	v = calloc(layout->nnames + more, sizeof(*v));
	if (!v)
		return ENOMEM;
	/* Both in inode order: merged, the new ones nameless until read. */
	for (i = 0; i < layout->nfiles; i++) {
		ext2_ino_t ino = layout->files[i].ino;

		if ((want && !want(priv, i)) || find_name(layout, ino))
			continue;
		while (j < layout->nnames && layout->names[j].ino < ino)
			v[o++] = layout->names[j++];
		v[o++].ino = ino;
	}
	while (j < layout->nnames)
		v[o++] = layout->names[j++];
	free(layout->names);
	layout->names = v;
	layout->nnames = o;
	index_names(layout);	/* the buckets pointed into the old array */
	/* Named files keep their names: set_name gives one only once. */
	memset(&opts, 0, sizeof(opts));
	ret = read_dir_runs(layout, x, &opts);
	sort_links(layout);
	return ret;
}

void names_free(struct layout *layout)
{
	free(layout->names);
	free(layout->name_pool);
	free(layout->name_index);
	free(layout->links);
	layout->names = NULL;
	layout->name_pool = NULL;
	layout->name_index = NULL;
	layout->links = NULL;
	layout->nlinks = layout->links_size = 0;
}

ext2_ino_t layout_parent(const struct layout *layout, ext2_ino_t ino)
{
	const struct layout_name *n = find_name(layout, ino);

	return n ? n->parent : 0;
}

size_t layout_path(const struct layout *layout, ext2_ino_t ino,
		   char *buf, size_t len)
{
	const struct layout_name *chain[MAX_DEPTH];
	const struct layout_name *n;
	ext2_ino_t top = ino;
	size_t need = 0, pos = 0;
	int depth = 0, i;

	if (ino == EXT2_ROOT_INO)
		return snprintf(buf, len, "/");
	/* Collect the names from INO up to the root or a nameless ancestor. */
	while (top != EXT2_ROOT_INO && depth < MAX_DEPTH) {
		n = find_name(layout, top);
		if (!n || !n->parent)
			break;
		chain[depth++] = n;
		top = n->parent;
	}
	if (top != EXT2_ROOT_INO) {
		need = snprintf(buf, len, "<ino %u>", top);
		pos = need < len ? need : (len ? len - 1 : 0);
	} else if (len) {
		buf[0] = 0;
	}
	for (i = depth - 1; i >= 0; i--) {
		n = chain[i];
		unsigned nlen = layout_name_len(layout, n);

		need += 1 + nlen;
		/* Once a component does not fit, the path stays cut there. */
		if (need < len) {
			buf[pos++] = '/';
			memcpy(buf + pos, layout_name_text(layout, n), nlen);
			pos += nlen;
			buf[pos] = 0;
		}
	}
	return need;
}

/* Whether ANCESTOR is INO or one of its parents. */
static int is_below(const struct layout *layout, ext2_ino_t ino,
		    ext2_ino_t ancestor)
{
	int depth;

	for (depth = 0; depth < MAX_DEPTH; depth++) {
		const struct layout_name *n;

		if (ino == ancestor)
			return 1;
		if (ino == EXT2_ROOT_INO)
			return 0;
		n = find_name(layout, ino);
		if (!n || !n->parent)
			return 0;
		ino = n->parent;
	}
	return 0;
}

/* Show INO under link L's entry, NAME (LEN bytes): its old name becomes the link. */
static errcode_t show_link(struct layout *layout, uint64_t l,
			   const char *name, unsigned len)
{
	struct layout_link *k = &layout->links[l];
	struct layout_name *n = find_name(layout, k->ino);
	ext2_ino_t old;
	errcode_t ret;

	if (!n || !n->parent)
		return 0;
	old = n->parent;
	ret = put_name(layout, n, k->parent, name, len);
	/* Still in inode order: only the directories of one inode swap. */
	if (!ret)
		k->parent = old;
	return ret;
}

/* Index in layout->links of INO's name in directory DIR, or -1. */
static int64_t find_link(const struct layout *layout, ext2_ino_t ino,
			 ext2_ino_t dir)
{
	uint64_t lo = 0, hi = layout->nlinks, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (layout->links[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < layout->nlinks && layout->links[lo].ino == ino; lo++)
		if (layout->links[lo].parent == dir)
			return (int64_t)lo;
	return -1;
}

/*
 * PATH names the file INO, selected by no PATH before: show it under the
 * entry PATH ends in when that is one of its other names.
 */
static errcode_t show_path_name(struct layout *layout, const char *path,
				ext2_ino_t ino)
{
	struct layout_name *n = find_name(layout, ino);
	size_t end = strlen(path), start;
	ext2_ino_t dir = EXT2_ROOT_INO, found;
	const char *name;
	unsigned len;
	int64_t l;
	errcode_t ret;

	while (end > 1 && path[end - 1] == '/')
		end--;
	for (start = end; start && path[start - 1] != '/'; start--)
		;
	name = path + start;
	len = (unsigned)(end - start);
	if (!n || !n->parent || !len || len > EXT2_NAME_LEN ||
	    (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (start) {
		char *d = strndup(path, start);

		if (!d)
			return ENOMEM;
		ret = ext2fs_namei(layout->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, d, &dir);
		free(d);
		if (ret)
			return 0;	/* found as a whole but not in parts: as it was */
	}
	if (name_is(layout, n, dir, name, len) || (l = find_link(layout, ino, dir)) < 0)
		return 0;
	/* Two entries of one directory are one link: the very one PATH means. */
	if (ext2fs_lookup(layout->fs, dir, name, (int)len, NULL, &found) ||
	    found != ino)
		return 0;
	return show_link(layout, (uint64_t)l, name, len);
}

/* A file selected by a name other than the one it is shown under. */
struct shown {
	ext2_ino_t	ino;
	ext2_ino_t	parent;		/* the directory of that name */
	uint64_t	link;		/* its entry in layout->links */
};

static int cmp_shown(const void *a, const void *b)
{
	const struct shown *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

struct shown_ctx {
	struct layout	*layout;
	struct shown	*s;		/* one directory's, by inode */
	uint64_t	n;
	errcode_t	ret;
};

static int shown_entry(ext2_ino_t dir, int entry, struct ext2_dir_entry *de,
		       int offset, int blocksize, char *buf, void *priv)
{
	struct shown_ctx *c = priv;
	unsigned len = ext2fs_dirent_name_len(de);
	uint64_t lo = 0, hi = c->n, mid;

	(void)dir; (void)entry; (void)offset; (void)blocksize; (void)buf;
	if (!de->inode || !len || (len == 1 && de->name[0] == '.') ||
	    (len == 2 && de->name[0] == '.' && de->name[1] == '.'))
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (c->s[mid].ino < de->inode)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->n || c->s[lo].ino != de->inode || !c->s[lo].ino)
		return 0;
	c->s[lo].ino = 0;	/* its first entry here: shown once */
	c->ret = show_link(c->layout, c->s[lo].link, de->name, len);
	return c->ret ? DIRENT_ABORT : 0;
}

/*
 * Show the N files of S under the names they were selected by: the name
 * is not kept with the link, so each of their directories is read once.
 */
static errcode_t show_names(struct layout *layout, struct shown *s, uint64_t n)
{
	uint64_t i, j;

	qsort(s, n, sizeof(*s), cmp_shown);
	for (i = 0; i < n; i = j) {
		struct shown_ctx c = { layout, s + i, 0, 0 };

		for (j = i; j < n && s[j].parent == s[i].parent; j++)
			c.n++;
		/* An unreadable directory leaves the names as they were. */
		ext2fs_dir_iterate2(layout->fs, s[i].parent, 0, NULL, shown_entry, &c);
		if (c.ret)
			return c.ret;
	}
	return 0;
}

errcode_t layout_select_path(struct layout *layout, const char *path)
{
	struct shown *s = NULL;
	uint64_t i, ns = 0, s_size = 0;
	int64_t fi;
	ext2_ino_t ino;
	errcode_t ret;

	ret = ext2fs_namei(layout->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino);
	if (ret)
		return ret == EXT2_ET_FILE_NOT_FOUND ? ENOENT : ret;
	fi = layout_find(layout, ino);
	if (fi >= 0 && layout->files[fi].type != LAYOUT_DIR &&
	    !(layout->files[fi].flags & LAYOUT_F_SELECTED)) {
		ret = show_path_name(layout, path, ino);
		if (ret)
			return ret;
	}
	for (i = 0; i < layout->nfiles; i++)
		if (is_below(layout, layout->files[i].ino, ino))
			layout->files[i].flags |= LAYOUT_F_SELECTED;
	/*
	 * A hard link is under a directory by any of its names, and the one
	 * it is shown under may lie elsewhere: look at the others too.
	 */
	for (i = 0; i < layout->nlinks; i++) {
		const struct layout_link *k = &layout->links[i];
		struct layout_file *f;

		if (!is_below(layout, k->parent, ino) ||
		    (fi = layout_find(layout, k->ino)) < 0)
			continue;
		f = &layout->files[fi];
		if (f->flags & LAYOUT_F_SELECTED)
			continue;	/* keeps the name it was selected by */
		f->flags |= LAYOUT_F_SELECTED;
		if (f->type == LAYOUT_DIR)
			continue;	/* a damaged tree: its subtree is its name's */
		ret = util_grow(&s, &s_size, ns + 1, sizeof(*s));
		if (ret)
			goto out;
		s[ns++] = (struct shown){ k->ino, k->parent, i };
	}
	if (ns)
		ret = show_names(layout, s, ns);
out:
	free(s);
	return ret;
}
