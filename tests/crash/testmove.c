/*
 * testmove.c --- a minimal, test-only file mover that drives switch_file
 * (writer/writer.h), so that the metadata writer and the power-cut harness
 * can be tested without e2defrag.
 *
 *   testmove [-n] [-r N] [-t RUNS] IMAGE PATH...
 *
 * Each PATH is copied to new blocks (the first free run that holds its data
 * and mapping blocks, or the blocks RUNS names, "a-b,c,d-e": the Nth -t
 * for the Nth PATH, one -t per PATH), its new map
 * is written (extent blocks or IND/DIND/TIND blocks, into new blocks),
 * everything is flushed, and switch_file switches the file over.  -r N
 * moves every file N times; -n commits journal transactions without
 * checkpointing them (SWITCH_NO_CHECKPOINT).  -u (a test of switch_file's
 * own checks) skips the copy and the mover's checks of the target and
 * hands switch_file the target as gained blocks, whatever they hold.
 * -b moves in one batch (switch_add), the copies written through
 * switch_write (so that blocks a move of the batch released are logged,
 * writer.h), for files that need no mapping blocks; its PATHs may also be
 *   +PATH   copy PATH to its target, do not switch it (the target kept)
 *   -PATH   switch_forget the kept target: the copy is abandoned
 *   ~PATH   drop the kept target without switch_forget (a control: the
 *           logged images stay in the journal)
 *   :commit switch_commit
 * (+PATH takes a -t as PATH does; the others none).
 * Prints one line per move.
 * Extent files end with depth 0 or 1; block-mapped files keep holes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2frag.h"
#include "writer.h"
#include "testmove.h"

static const char *prog = "testmove";

errcode_t runs_push(struct runs *r, blk64_t start, blk64_t len)
{
	if (r->n && r->v[r->n - 1].start + r->v[r->n - 1].len == start) {
		r->v[r->n - 1].len += len;
		return 0;
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct layout_piece *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n].start = start;
	r->v[r->n].len = len;
	r->n++;
	return 0;
}

errcode_t maps_push(struct maps *m, blk64_t lblk, blk64_t pblk, blk64_t len,
		    int uninit)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct map *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n].lblk = lblk;
	m->v[m->n].pblk = pblk;
	m->v[m->n].len = len;
	m->v[m->n].uninit = uninit;
	m->n++;
	return 0;
}

/* What the walk of the old map finds. */
struct old_map {
	struct maps	data;
	struct runs	released;	/* data and mapping blocks, walk order */
	blk64_t		mapping;	/* IND/DIND/TIND or extent tree blocks */
};

static errcode_t old_data(void *priv, blk64_t lblk, blk64_t pblk, blk64_t len,
			  int uninit)
{
	struct old_map *o = priv;
	errcode_t ret = maps_push(&o->data, lblk, pblk, len, uninit);

	return ret ? ret : runs_push(&o->released, pblk, len);
}

static errcode_t old_meta(void *priv, blk64_t pblk)
{
	struct old_map *o = priv;

	o->mapping++;
	return runs_push(&o->released, pblk, 1);
}

blk64_t cursor_next(struct cursor *c)
{
	blk64_t b;

	if (c->i >= c->t->n)
		return 0;
	b = c->t->v[c->i].start + c->off;
	if (++c->off == c->t->v[c->i].len) {
		c->i++;
		c->off = 0;
	}
	return b;
}

static blk64_t runs_total(const struct runs *r)
{
	blk64_t n = 0;
	size_t i;

	for (i = 0; i < r->n; i++)
		n += r->v[i].len;
	return n;
}

/* Copy the data blocks to the target, in large reads and writes (through
 * SW's switch_write when SW is set: a batch). */
static errcode_t copy_data(ext2_filsys fs, struct switch_ctx *sw,
			   const struct maps *old, struct cursor *cur,
			   struct maps *new_map)
{
	enum { CHUNK = 256 };
	char *buf = NULL;
	size_t i;
	errcode_t ret;

	ret = ext2fs_get_mem((size_t)CHUNK * fs->blocksize, &buf);
	if (ret)
		return ret;
	for (i = 0; i < old->n && !ret; i++) {
		const struct map *m = &old->v[i];
		blk64_t done = 0;

		while (done < m->len && !ret) {
			blk64_t dst = cursor_next(cur), n = 1, next;

			if (!dst) {
				ret = E2F_ERR_NO_SPACE;
				break;
			}
			/* Extend while the destination stays contiguous. */
			while (done + n < m->len && n < CHUNK) {
				struct cursor save = *cur;

				next = cursor_next(cur);
				if (next != dst + n) {
					*cur = save;
					break;
				}
				n++;
			}
			ret = io_channel_read_blk64(fs->io, m->pblk + done, n, buf);
			if (!ret)
				ret = sw ? switch_write(sw, dst, n, buf) :
					   io_channel_write_blk64(fs->io, dst, n, buf);
			if (!ret)
				ret = maps_push(new_map, m->lblk + done, dst, n,
						m->uninit);
			done += n;
		}
	}
	ext2fs_free_mem(&buf);
	return ret;
}

static errcode_t parse_runs(const char *s, struct runs *r)
{
	char *end;

	while (*s) {
		unsigned long long a = strtoull(s, &end, 0), b = a;

		if (end == s)
			return EINVAL;
		if (*end == '-')
			b = strtoull(end + 1, &end, 0);
		if (b < a || (*end && *end != ','))
			return EINVAL;
		if (runs_push(r, a, b - a + 1))
			return ENOMEM;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static void runs_print(const struct runs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		printf("%s%llu-%llu", i ? "," : "",
		       (unsigned long long)r->v[i].start,
		       (unsigned long long)(r->v[i].start + r->v[i].len - 1));
}

/* Whether every block of R is free: the mover must not copy over data. */
static int runs_free(ext2_filsys fs, const struct runs *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->v[i].start < fs->super->s_first_data_block ||
		    r->v[i].start + r->v[i].len > ext2fs_blocks_count(fs->super) ||
		    !ext2fs_test_block_bitmap_range2(fs->block_map, r->v[i].start,
						     r->v[i].len))
			return 0;
	return 1;
}

enum how {
	MOVE_SWITCH,	/* copy, flush, switch_file */
	MOVE_ADD,	/* -b: copy through switch_write, switch_add */
	MOVE_COPY,	/* -b +PATH: copy through switch_write, keep the target */
};

/* The target of the last +PATH, for -PATH or ~PATH. */
static struct runs kept;

static errcode_t move_one(ext2_filsys fs, struct switch_ctx *sw,
			  const char *path, const struct runs *fixed, int unsafe,
			  enum how how)
{
	struct old_map old = { { 0 }, { 0 }, 0 };
	struct maps new_map = { 0 };
	struct runs target = { 0 };
	struct ext2_inode_large inode;
	struct blockmap_visitor v = { old_data, old_meta, old_meta };
	struct cursor cur;
	ext2_ino_t ino;
	blk64_t data = 0, mapping, start, len;
	char *buf = NULL;
	size_t i;
	errcode_t ret;

	ret = ext2fs_namei(fs, EXT2_ROOT_INO, EXT2_ROOT_INO, path, &ino);
	if (ret)
		return ret;
	memset(&inode, 0, sizeof(inode));
	ret = ext2fs_read_inode_full(fs, ino, (struct ext2_inode *)&inode,
				     sizeof(inode));
	if (ret)
		return ret;
	if ((inode.i_flags & EXT4_INLINE_DATA_FL) ||
	    !ext2fs_inode_has_valid_blocks2(fs, (struct ext2_inode *)&inode)) {
		printf("skip %s: no blocks\n", path);
		return 0;
	}
	ret = ext2fs_get_mem(3 * fs->blocksize, &buf);
	if (ret)
		return ret;
	ret = blockmap_walk(fs, ino, (struct ext2_inode *)&inode, &v, &old, buf);
	if (ret)
		goto errout;
	for (i = 0; i < old.data.n; i++)
		data += old.data.v[i].len;

	/* How many mapping blocks the new map needs depends on where it goes. */
	if (fixed) {
		target = *fixed;
		target.v = malloc(fixed->n * sizeof(*target.v));
		if (!target.v) {
			ret = ENOMEM;
			goto errout;
		}
		memcpy(target.v, fixed->v, fixed->n * sizeof(*target.v));
		mapping = runs_total(&target) - data;
		if (unsafe) {
			ret = switch_file(sw, ino, &inode, target.v, target.n,
					  old.released.v, old.released.n);
			goto errout;
		}
		if (runs_total(&target) < data || !runs_free(fs, &target)) {
			ret = E2F_ERR_NO_SPACE;
			goto errout;
		}
	} else {
		mapping = testmove_mapping_blocks(fs, &inode, &old.data);
		ret = ext2fs_new_range(fs, EXT2_NEWRANGE_MIN_LENGTH,
				       fs->super->s_first_data_block,
				       data + mapping, NULL, &start, &len);
		if (ret == EXT2_ET_BLOCK_ALLOC_FAIL) {
			printf("skip %s: no free run of %llu blocks\n", path,
			       (unsigned long long)(data + mapping));
			ret = 0;
			goto errout;
		}
		if (ret)
			goto errout;
		ret = runs_push(&target, start, data + mapping);
		if (ret)
			goto errout;
	}
	/* Mapping blocks first, then the data, as one run when possible. */
	memset(&cur, 0, sizeof(cur));
	cur.t = &target;
	for (i = 0; i < mapping; i++)
		cursor_next(&cur);
	if (how != MOVE_SWITCH && mapping) {
		ret = E2F_ERR_UNSUPPORTED_FEATURE;	/* -b: no mapping blocks */
		goto errout;
	}
	ret = copy_data(fs, how == MOVE_SWITCH ? NULL : sw, &old.data, &cur,
			&new_map);
	if (ret)
		goto errout;
	if (how == MOVE_COPY) {
		free(kept.v);
		kept = target;
		target.v = NULL;
		printf("copied %s ino %u\n", path, ino);
		goto errout;
	}
	memset(&cur, 0, sizeof(cur));
	cur.t = &target;
	ret = testmove_build_map(fs, ino, &inode, &new_map,
				 &cur, mapping);
	if (ret)
		goto errout;
	ext2fs_iblk_sub_blocks(fs, (struct ext2_inode *)&inode, old.mapping);
	ext2fs_iblk_add_blocks(fs, (struct ext2_inode *)&inode, mapping);
	/* The contract: data and new map durable before the switch (a
	 * batch's commit flushes it). */
	ret = how == MOVE_ADD ? 0 : io_channel_flush(fs->io);
	if (ret)
		goto errout;
	ret = (how == MOVE_ADD ? switch_add : switch_file)(sw, ino, &inode,
			target.v, target.n, old.released.v, old.released.n);
	if (ret)
		goto errout;
	printf("moved %s ino %u blocks %llu+%llu to ", path, ino,
	       (unsigned long long)data, (unsigned long long)mapping);
	runs_print(&target);
	putchar('\n');
errout:
	free(old.data.v);
	free(old.released.v);
	free(new_map.v);
	free(target.v);
	ext2fs_free_mem(&buf);
	return ret;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s [-n] [-r N] [-t RUNS... [-u]] IMAGE PATH...\n"
		"       %s -b [-n] [-t RUNS...] IMAGE {PATH|+PATH|-PATH|~PATH|:commit}...\n",
		prog, prog);
	exit(16);
}

int main(int argc, char **argv)
{
	struct fsopen_info info;
	struct switch_ctx *sw = NULL;
	struct runs *fixed = NULL;
	ext2_filsys fs = NULL;
	int opt, flags = 0, repeat = 1, unsafe = 0, nfixed = 0, r, i, rc = 0;
	int batch = 0, ntargets = 0, t;
	errcode_t ret;

	initialize_e2f_error_table();
	initialize_ext2_error_table();
	while ((opt = getopt(argc, argv, "+bnr:t:u")) != -1) {
		switch (opt) {
		case 'b':
			batch = 1;
			break;
		case 'n':
			flags |= SWITCH_NO_CHECKPOINT;
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		case 't':
			fixed = realloc(fixed, (nfixed + 1) * sizeof(*fixed));
			if (!fixed)
				return 8;
			memset(&fixed[nfixed], 0, sizeof(*fixed));
			if (parse_runs(optarg, &fixed[nfixed++]))
				usage();
			break;
		case 'u':
			unsafe = 1;
			break;
		default:
			usage();
		}
	}
	for (i = optind + 1; i < argc; i++)
		ntargets += !batch || argv[i][0] == '/' || argv[i][0] == '+';
	if (argc - optind < 2 || repeat < 1 ||
	    (nfixed && ntargets != nfixed) || (unsafe && (!nfixed || batch)) ||
	    (batch && repeat != 1))
		usage();
	ret = fsopen_open(argv[optind], FSOPEN_WRITE | FSOPEN_FORCE, NULL, &fs,
			  &info);
	if (ret) {
		com_err(prog, ret, "while opening %s", argv[optind]);
		fsopen_close(fs, &info);
		rc = 8;
		goto out;
	}
	/* Logged for the power-cut harness, as e2defrag's writes are. */
	ret = iolog_attach_env(fs);
	if (ret) {
		com_err(prog, ret, "while logging the writes to %s", argv[optind]);
		fsopen_close(fs, &info);
		rc = 8;
		goto out;
	}
	ret = ext2fs_read_block_bitmap(fs);
	if (!ret)
		ret = switch_open(fs, flags, &sw);
	if (ret) {
		com_err(prog, ret, "while preparing %s", argv[optind]);
		fsopen_close(fs, &info);
		return 8;
	}
	for (r = 0; r < repeat && !rc; r++) {
		for (i = optind + 1, t = 0; i < argc; i++) {
			const char *a = argv[i];

			ret = 0;
			if (batch && !strcmp(a, ":commit")) {
				ret = switch_commit(sw);
			} else if (batch && (a[0] == '-' || a[0] == '~')) {
				if (a[0] == '-')
					ret = switch_forget(sw, kept.v, kept.n);
				printf("%s %s\n", a[0] == '-' ? "forgot" : "dropped",
				       a + 1);
				kept.n = 0;
			} else {
				enum how how = !batch ? MOVE_SWITCH :
					a[0] == '+' ? MOVE_COPY : MOVE_ADD;

				ret = move_one(fs, sw, a + (a[0] == '+'),
					       nfixed ? &fixed[t] : NULL, unsafe,
					       how);
				t++;
			}
			if (ret) {
				com_err(prog, ret, "while moving %s", argv[i]);
				rc = 4;
				break;
			}
		}
	}
	ret = switch_close(sw);
	if (ret) {
		com_err(prog, ret, "while closing the switch");
		rc = 8;
	}
	ret = fsopen_close(fs, &info);
	if (ret) {
		com_err(prog, ret, "while closing %s", argv[optind]);
		rc = 8;
	}
out:
	for (i = 0; i < nfixed; i++)
		free(fixed[i].v);
	free(fixed);
	free(kept.v);
	return rc;
}
