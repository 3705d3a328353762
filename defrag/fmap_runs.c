/*
 * fmap_runs.c --- streams as lists of physical runs, and changes to them.
 *
 * The planner and the mover both describe a move as changes to where a
 * file's stream lies (struct plan_seg): the planner to keep its picture
 * of the disk, the mover to turn the map it reads from disk into the
 * target it checks and writes.  Both use these helpers, so they agree.
 */
#include <errno.h>
#include <stdlib.h>

#include "fmap.h"
#include "e2d_err.h"
#include "dutil.h"
#include "compare.h"

static errcode_t push(struct layout_piece **out, size_t *n, size_t *cap,
		      blk64_t start, blk64_t len)
{
	if (!len)
		return 0;
	if (*n && (*out)[*n - 1].start + (*out)[*n - 1].len == start) {
		(*out)[*n - 1].len += len;
		return 0;
	}
	if (grow_n(out, cap, *n + 1, sizeof(**out)))
		return ENOMEM;
	(*out)[*n].start = start;
	(*out)[(*n)++].len = len;
	return 0;
}

errcode_t runs_apply(const struct layout_piece *cur, size_t ncur,
		     const struct plan_seg *ch, size_t nch,
		     struct layout_piece **out, size_t *nout)
{
	struct layout_piece *o = NULL;
	size_t n = 0, cap = 0, i, j = 0;
	blk64_t off = 0, total = 0;
	errcode_t ret = 0;

	for (i = 0; i < ncur; i++)
		total += cur[i].len;
	for (j = 0; j < nch; j++)
		if (ch[j].off + ch[j].len > total ||
		    (j && ch[j].off < ch[j - 1].off + ch[j - 1].len))
			return E2D_ERR_PLAN_CONFLICT;
	j = 0;
	for (i = 0; i < ncur && !ret; off += cur[i].len, i++) {
		blk64_t pos = off, end = off + cur[i].len;

		while (pos < end && !ret) {
			while (j < nch && ch[j].off + ch[j].len <= pos)
				j++;
			if (j < nch && ch[j].off <= pos) {
				blk64_t stop = ch[j].off + ch[j].len < end ?
					ch[j].off + ch[j].len : end;

				ret = push(&o, &n, &cap, ch[j].pblk + (pos - ch[j].off),
					   stop - pos);
				pos = stop;
			} else {
				blk64_t stop = j < nch && ch[j].off < end ? ch[j].off : end;

				ret = push(&o, &n, &cap, cur[i].start + (pos - off),
					   stop - pos);
				pos = stop;
			}
		}
	}
	if (ret) {
		free(o);
		return ret;
	}
	*out = o;
	*nout = n;
	return 0;
}

errcode_t runs_of_fmap(const struct fmap *m, struct layout_piece **out,
		       size_t *nout)
{
	struct layout_piece *o = NULL;
	size_t n = 0, cap = 0;
	uint32_t i;
	errcode_t ret = 0;

	for (i = 0; i < m->nitems && !ret; i++)
		ret = push(&o, &n, &cap, m->items[i].pblk, m->items[i].len);
	if (ret) {
		free(o);
		return ret;
	}
	*out = o;
	*nout = n;
	return 0;
}

blk64_t runs_differ(const struct layout_piece *a, size_t na,
		    const struct layout_piece *b, size_t nb)
{
	size_t i = 0, j = 0;
	blk64_t io = 0, jo = 0, diff = 0;

	while (i < na && j < nb) {
		blk64_t x = a[i].start + io, y = b[j].start + jo;
		blk64_t n = a[i].len - io < b[j].len - jo ? a[i].len - io : b[j].len - jo;

		if (x != y)
			diff += n;
		io += n;
		jo += n;
		if (io == a[i].len) {
			i++;
			io = 0;
		}
		if (jo == b[j].len) {
			j++;
			jo = 0;
		}
	}
	return diff;
}

int runs_cmp_len_desc(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	return compare_piece_start(a, b);
}

int plan_seg_cmp_off(const void *a, const void *b)
{
	const struct plan_seg *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}
