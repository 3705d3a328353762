/*
 * runs.c --- streams as lists of physical runs, and changes to them.
 *
 * The planner and the mover both describe a move as changes to where a
 * file's stream lies (struct runs_change): the planner to keep its picture
 * of the disk, the mover to turn the map it reads from disk into the
 * target it checks and writes.  Both use these helpers, so they agree.
 */
#include <errno.h>
#include <stdlib.h>

#include "fmap.h"
#include "array.h"
#include "compare.h"
#include "lower_bound.h"

/* Append LEN blocks at START to OUT, joined to its last run when they continue it. */
static errcode_t push(struct piece_vec *out, blk64_t start, blk64_t len)
{
	if (out->n && out->v[out->n - 1].start + out->v[out->n - 1].len == start) {
		out->v[out->n - 1].len += len;
		return 0;
	}
	return piece_vec_add(out, start, start + len);
}

int runs_changes_fit(const struct runs_change *ch, size_t nch, blk64_t total)
{
	size_t j;

	for (j = 0; j < nch; j++)
		if (ch[j].off + ch[j].len > total ||
		    (j && ch[j].off < ch[j - 1].off + ch[j - 1].len))
			return 0;
	return 1;
}

errcode_t runs_apply(const struct layout_piece *cur, size_t ncur,
		     const struct runs_change *ch, size_t nch,
		     struct layout_piece **out, size_t *nout, int *fits)
{
	struct piece_vec o = { 0 };
	errcode_t ret = runs_apply_into(cur, ncur, ch, nch, &o, fits);

	if (ret || !*fits) {
		piece_vec_free(&o);
		*out = NULL;
		*nout = 0;
		return ret;
	}
	*out = o.v;
	*nout = o.n;
	return 0;
}

errcode_t runs_apply_into(const struct layout_piece *cur, size_t ncur,
			  const struct runs_change *ch, size_t nch,
			  struct piece_vec *o, int *fits)
{
	size_t i, j = 0;
	blk64_t off = 0;
	errcode_t ret = 0;

	o->n = 0;
	*fits = runs_changes_fit(ch, nch, layout_pieces_blocks(cur, ncur));
	if (!*fits)
		return 0;
	for (i = 0; i < ncur && !ret; off += cur[i].len, i++) {
		blk64_t pos = off, end = off + cur[i].len;

		while (pos < end && !ret) {
			while (j < nch && ch[j].off + ch[j].len <= pos)
				j++;
			if (j < nch && ch[j].off <= pos) {
				blk64_t stop = ch[j].off + ch[j].len < end ?
					ch[j].off + ch[j].len : end;

				ret = push(o, ch[j].pblk + (pos - ch[j].off), stop - pos);
				pos = stop;
			} else {
				blk64_t stop = j < nch && ch[j].off < end ? ch[j].off : end;

				ret = push(o, cur[i].start + (pos - off), stop - pos);
				pos = stop;
			}
		}
	}
	return ret;
}

void runs_offsets(const struct layout_piece *runs, size_t n, blk64_t *off)
{
	size_t i;

	off[0] = 0;
	for (i = 0; i < n; i++)
		off[i + 1] = off[i] + runs[i].len;
}

size_t runs_at(const blk64_t *off, size_t n, blk64_t pos)
{
	return last_at_or_before(0, n, blk_at_or_before, off, &pos);
}

errcode_t runs_apply_span(const struct layout_piece *cur, const blk64_t *off,
			  size_t ncur, const struct runs_change *ch, size_t nch,
			  size_t *first, size_t *last, struct piece_vec *out,
			  int *fits)
{
	size_t i, j = 0;
	errcode_t ret = 0;

	out->n = 0;
	*first = *last = 0;
	*fits = runs_changes_fit(ch, nch, off[ncur]);
	if (!*fits || !nch)
		return 0;
	*first = runs_at(off, ncur, ch[0].off);
	*last = runs_at(off, ncur, ch[nch - 1].off + ch[nch - 1].len - 1) + 1;
	/* runs_apply's walk, over the runs the changes touch alone. */
	j = 0;
	for (i = *first; i < *last && !ret; i++) {
		blk64_t pos = off[i], end = off[i + 1];

		while (pos < end && !ret) {
			blk64_t stop;

			while (j < nch && ch[j].off + ch[j].len <= pos)
				j++;
			if (j < nch && ch[j].off <= pos) {
				stop = ch[j].off + ch[j].len < end ?
					ch[j].off + ch[j].len : end;
				ret = push(out, ch[j].pblk + (pos - ch[j].off), stop - pos);
			} else {
				stop = j < nch && ch[j].off < end ? ch[j].off : end;
				ret = push(out, cur[i].start + (pos - off[i]), stop - pos);
			}
			pos = stop;
		}
	}
	return ret;
}

static int joins(const struct layout_piece *a, const struct layout_piece *b)
{
	return a->start + a->len == b->start;
}

size_t runs_spliced_count(const struct layout_piece *runs, size_t n,
			  size_t first, size_t last,
			  const struct layout_piece *span, size_t nspan)
{
	size_t k = n - (last - first) + nspan;

	if (nspan && first && joins(&runs[first - 1], &span[0]))
		k--;
	if (nspan && last < n && joins(&span[nspan - 1], &runs[last]))
		k--;
	return k;
}

void runs_splice(struct layout_piece *runs, size_t n, size_t first, size_t last,
		 const struct layout_piece *span, size_t nspan, blk64_t *off)
{
	size_t a = first, tail = n - last, at;
	struct layout_piece join_after = { 0, 0 };
	int after = 0;
	size_t k;

	if (!nspan)
		return;
	/* Where the stretch's runs go: the one before it may take the first. */
	if (first && joins(&runs[first - 1], &span[0])) {
		runs[first - 1].len += span[0].len;
		if (off)
			off[first] += span[0].len;
		span++;
		nspan--;
		a = first - 1;
		if (!nspan) {
			/* All of it joined the run before: that run may take the next. */
			if (last < n && joins(&runs[a], &runs[last])) {
				runs[a].len += runs[last].len;
				last++;
				tail--;
			}
			move_n(runs + a + 1, runs + last, tail * sizeof(*runs));
			if (off) {
				off[a + 1] = off[last];
				move_n(off + a + 2, off + last + 1, tail * sizeof(*off));
			}
			return;
		}
		a = first;
	}
	if (last < n && joins(&span[nspan - 1], &runs[last])) {
		join_after = runs[last];
		after = 1;
		last++;
		tail--;
	}
	move_n(runs + a + nspan, runs + last, tail * sizeof(*runs));
	copy_n(runs + a, span, nspan * sizeof(*runs));
	if (after)
		runs[a + nspan - 1].len += join_after.len;
	if (off) {
		move_n(off + a + nspan + 1, off + last + 1, tail * sizeof(*off));
		for (k = a, at = off[a]; k < a + nspan; k++) {
			at += runs[k].len;
			off[k + 1] = at;
		}
	}
}

errcode_t runs_of_fmap(const struct fmap *m, struct layout_piece **out,
		       size_t *nout)
{
	struct piece_vec o = { 0 };
	uint32_t i;
	errcode_t ret = 0;

	for (i = 0; i < m->nitems && !ret; i++)
		ret = push(&o, m->items[i].pblk, m->items[i].len);
	if (ret) {
		piece_vec_free(&o);
		return ret;
	}
	*out = o.v;
	*nout = o.n;
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

int runs_change_cmp_off(const void *a, const void *b)
{
	const struct runs_change *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}
