/*
 * names.c --- give every inode in the layout the name it is found under.
 *
 * Directory blocks are read once, in physical order and in large reads,
 * the way e2fsck's pass 2 does; every entry names its inode if nothing
 * named it before (so a hard-linked file keeps the first name found).
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

static errcode_t set_name(struct layout *layout, ext2_ino_t parent,
			  ext2_ino_t ino, const char *name, unsigned len)
{
	struct layout_name *n = find_name(layout, ino);
	errcode_t ret;

	if (!n || n->parent || !len || ino == EXT2_ROOT_INO || ino == parent)
		return 0;
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
	return 0;
}

errcode_t names_add(struct layout *layout, struct scan_extra *x,
		    int (*want)(void *priv, uint64_t file), void *priv)
{
	struct layout_opts opts;
	struct layout_name *v;
	uint64_t i, j = 0, o = 0, more = 0;

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
	return read_dir_runs(layout, x, &opts);
}

void names_free(struct layout *layout)
{
	free(layout->names);
	free(layout->name_pool);
	free(layout->name_index);
	layout->names = NULL;
	layout->name_pool = NULL;
	layout->name_index = NULL;
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

errcode_t layout_select_path(struct layout *layout, const char *path)
{
	ext2_ino_t ino;
	uint64_t i;
	errcode_t ret;

	ret = ext2fs_namei(layout->fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino);
	if (ret)
		return ret == EXT2_ET_FILE_NOT_FOUND ? ENOENT : ret;
	for (i = 0; i < layout->nfiles; i++)
		if (is_below(layout, layout->files[i].ino, ino))
			layout->files[i].flags |= LAYOUT_F_SELECTED;
	return 0;
}
