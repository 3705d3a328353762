/*
 * spacemap.c --- the planner's picture of who owns which blocks.
 *
 * A sorted array of segments.  A planned move touches a handful of
 * segments, found by binary search and replaced with one memmove; best-fit
 * searches scan the free segments, which is fast enough for the number of
 * moves a run plans (the planner asks a few times per file).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spacemap.h"
#include "dutil.h"

static errcode_t reserve(struct spacemap *sm, size_t need)
{
	return grow_n(&sm->seg, &sm->cap, need, sizeof(*sm->seg));
}

static errcode_t push(struct spacemap *sm, blk64_t start, blk64_t len,
		      uint32_t owner)
{
	errcode_t ret;

	if (!len)
		return 0;
	if (sm->n && sm->seg[sm->n - 1].owner == owner &&
	    sm->seg[sm->n - 1].start + sm->seg[sm->n - 1].len == start) {
		sm->seg[sm->n - 1].len += len;
		return 0;
	}
	ret = reserve(sm, sm->n + 1);
	if (ret)
		return ret;
	sm->seg[sm->n].start = start;
	sm->seg[sm->n].len = len;
	sm->seg[sm->n++].owner = owner;
	return 0;
}

/* Blocks [START, END) that no run claims: free or pinned per the bitmap. */
static errcode_t push_gap(struct spacemap *sm, blk64_t start, blk64_t end,
			  ext2fs_block_bitmap used)
{
	blk64_t next;
	errcode_t ret;

	while (start < end) {
		if (ext2fs_find_first_set_block_bitmap2(used, start, end - 1, &next))
			next = end;
		ret = push(sm, start, next - start, SM_FREE);
		if (ret || next >= end)
			return ret;
		if (ext2fs_find_first_zero_block_bitmap2(used, next, end - 1, &start))
			start = end;
		ret = push(sm, next, start - next, SM_PINNED);
		if (ret)
			return ret;
	}
	return 0;
}

static int cmp_seg(const void *a, const void *b)
{
	const struct sm_seg *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

errcode_t spacemap_build(struct spacemap *sm, blk64_t first, blk64_t end,
			 struct sm_seg *runs, size_t nruns,
			 ext2fs_block_bitmap used)
{
	blk64_t pos = first;
	size_t i;
	errcode_t ret;

	memset(sm, 0, sizeof(*sm));
	sm->first = first;
	sm->end = end;
	sort_n(runs, nruns, sizeof(*runs), cmp_seg);
	for (i = 0; i < nruns; i++) {
		if (runs[i].start < pos || runs[i].start + runs[i].len > end) {
			ret = E2F_ERR_CORRUPT_INODE;
			goto errout;
		}
		ret = push_gap(sm, pos, runs[i].start, used);
		if (!ret)
			ret = push(sm, runs[i].start, runs[i].len, runs[i].owner);
		if (ret)
			goto errout;
		pos = runs[i].start + runs[i].len;
	}
	ret = push_gap(sm, pos, end, used);
	if (ret)
		goto errout;
	return 0;
errout:
	spacemap_free(sm);
	return ret;
}

void spacemap_free(struct spacemap *sm)
{
	free(sm->seg);
	memset(sm, 0, sizeof(*sm));
}

errcode_t spacemap_copy(struct spacemap *dst, const struct spacemap *src)
{
	*dst = *src;
	dst->seg = malloc((src->n ? src->n : 1) * sizeof(*dst->seg));
	if (!dst->seg)
		return ENOMEM;
	copy_n(dst->seg, src->seg, src->n * sizeof(*dst->seg));
	dst->cap = src->n ? src->n : 1;
	return 0;
}

size_t spacemap_find(const struct spacemap *sm, blk64_t blk)
{
	size_t lo = 0, hi = sm->n;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (sm->seg[mid].start <= blk)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

errcode_t spacemap_assign(struct spacemap *sm, blk64_t start, blk64_t len,
			  uint32_t owner)
{
	struct sm_seg repl[3];
	size_t i, j, nrepl = 0, k;
	blk64_t end = start + len, mstart = start, mend = end;
	errcode_t ret;

	if (!len)
		return 0;
	if (start < sm->first || end > sm->end || !sm->n)
		return EINVAL;
	i = spacemap_find(sm, start);
	j = spacemap_find(sm, end - 1);
	/* What is left of the first and last segments, or absorbed when alike. */
	if (sm->seg[i].owner == owner)
		mstart = sm->seg[i].start;
	else if (sm->seg[i].start < start)
		repl[nrepl++] = (struct sm_seg){ sm->seg[i].start,
						 start - sm->seg[i].start,
						 sm->seg[i].owner };
	if (mstart == sm->seg[i].start && i > 0 && sm->seg[i - 1].owner == owner) {
		i--;
		mstart = sm->seg[i].start;
	}
	k = nrepl;
	repl[nrepl++] = (struct sm_seg){ 0, 0, owner };
	if (sm->seg[j].owner == owner) {
		mend = sm->seg[j].start + sm->seg[j].len;
	} else if (sm->seg[j].start + sm->seg[j].len > end) {
		repl[nrepl++] = (struct sm_seg){ end,
			sm->seg[j].start + sm->seg[j].len - end, sm->seg[j].owner };
	}
	if (mend == sm->seg[j].start + sm->seg[j].len && j + 1 < sm->n &&
	    sm->seg[j + 1].owner == owner) {
		j++;
		mend = sm->seg[j].start + sm->seg[j].len;
	}
	repl[k].start = mstart;
	repl[k].len = mend - mstart;

	/* Replace segments i..j by repl[0..nrepl). */
	if (nrepl > j - i + 1) {
		ret = reserve(sm, sm->n + nrepl - (j - i + 1));
		if (ret)
			return ret;
	}
	move_n(sm->seg + i + nrepl, sm->seg + j + 1,
		(sm->n - j - 1) * sizeof(*sm->seg));
	copy_n(sm->seg + i, repl, nrepl * sizeof(*repl));
	sm->n = sm->n - (j - i + 1) + nrepl;
	return 0;
}

/* Append to OUT (cap *CAP), merging with the last segment when alike. */
static errcode_t emit(struct sm_seg **out, size_t *n, size_t *cap,
		      blk64_t start, blk64_t len, uint32_t owner)
{
	if (!len)
		return 0;
	if (*n && (*out)[*n - 1].owner == owner &&
	    (*out)[*n - 1].start + (*out)[*n - 1].len == start) {
		(*out)[*n - 1].len += len;
		return 0;
	}
	if (grow_n(out, cap, *n + 1, sizeof(**out)))
		return ENOMEM;
	(*out)[(*n)++] = (struct sm_seg){ start, len, owner };
	return 0;
}

errcode_t spacemap_apply(struct spacemap *sm, const struct sm_seg *ch, size_t n)
{
	struct sm_seg *out = NULL;
	size_t on = 0, cap = 0, i, j = 0;
	errcode_t ret = 0;

	if (!n)
		return 0;
	if (n <= 8) {
		for (i = 0; i < n && !ret; i++)
			ret = spacemap_assign(sm, ch[i].start, ch[i].len, ch[i].owner);
		return ret;
	}
	cap = sm->n + 2 * n + 1;
	out = malloc(cap * sizeof(*out));
	if (!out)
		return ENOMEM;
	for (i = 0; i < sm->n && !ret; i++) {
		blk64_t pos = sm->seg[i].start, end = pos + sm->seg[i].len;

		while (pos < end && !ret) {
			while (j < n && ch[j].start + ch[j].len <= pos)
				j++;
			if (j < n && ch[j].start <= pos) {
				blk64_t stop = ch[j].start + ch[j].len < end ?
					ch[j].start + ch[j].len : end;

				ret = emit(&out, &on, &cap, pos, stop - pos, ch[j].owner);
				pos = stop;
			} else {
				blk64_t stop = j < n && ch[j].start < end ? ch[j].start : end;

				ret = emit(&out, &on, &cap, pos, stop - pos,
					   sm->seg[i].owner);
				pos = stop;
			}
		}
	}
	if (ret) {
		free(out);
		return ret;
	}
	free(sm->seg);
	sm->seg = out;
	sm->n = on;
	sm->cap = cap;
	return 0;
}

int spacemap_is(const struct spacemap *sm, blk64_t start, blk64_t len,
		uint32_t owner)
{
	size_t i;

	if (!len)
		return 1;
	if (start < sm->first || start + len > sm->end)
		return 0;
	i = spacemap_find(sm, start);
	return sm->seg[i].owner == owner &&
	       sm->seg[i].start + sm->seg[i].len >= start + len;
}

/* Consider the stretch [S, E) for a best fit of LEN. */
static void consider(blk64_t s, blk64_t e, blk64_t len, int *found,
		     blk64_t *best_s, blk64_t *best_len)
{
	if (e <= s || e - s < len)
		return;
	if (!*found || e - s < *best_len ||
	    (e - s == *best_len && s < *best_s)) {
		*found = 1;
		*best_s = s;
		*best_len = e - s;
	}
}

int spacemap_best_fit(const struct spacemap *sm, blk64_t len, blk64_t limit,
		      blk64_t excl_start, blk64_t excl_end,
		      blk64_t *start, blk64_t *stretch)
{
	blk64_t best_s = 0, best_len = 0;
	int found = 0;
	size_t i;

	for (i = 0; i < sm->n; i++) {
		const struct sm_seg *g = &sm->seg[i];
		blk64_t s = g->start, e = g->start + g->len;

		if (g->owner != SM_FREE || g->len < len)
			continue;
		if (s >= limit)
			break;
		if (e > limit)
			e = limit;
		if (excl_end > excl_start && s < excl_end && e > excl_start) {
			consider(s, excl_start, len, &found, &best_s, &best_len);
			consider(excl_end, e, len, &found, &best_s, &best_len);
		} else {
			consider(s, e, len, &found, &best_s, &best_len);
		}
		if (found && best_len == len)
			break;		/* an exact fit cannot be beaten */
	}
	if (!found)
		return -1;
	*start = best_s;
	*stretch = best_len;
	return 0;
}

void spacemap_free_stats(const struct spacemap *sm, uint64_t *extents,
			 blk64_t *blocks, blk64_t *largest)
{
	size_t i;

	*extents = 0;
	*blocks = 0;
	*largest = 0;
	for (i = 0; i < sm->n; i++) {
		if (sm->seg[i].owner != SM_FREE)
			continue;
		(*extents)++;
		*blocks += sm->seg[i].len;
		if (sm->seg[i].len > *largest)
			*largest = sm->seg[i].len;
	}
}
