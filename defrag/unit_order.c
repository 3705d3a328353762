/*
 * unit_order.c --- under a limit, the units that save the most read time
 * per second go first.
 *
 * A run that --max-time or --max-units will cut does the most good in
 * its window when the units that save the most modeled read time per
 * modeled second of their own go first.  The plan's order is the order
 * its moves can go in: a move takes blocks an earlier one freed, a file's
 * moves go in turn.  So only a *free-standing* unit changes place: every
 * block it gains (its moves' new places and mapping blocks) is free
 * before the run and gained by no earlier unit, and no earlier unit moves
 * a file it moves.  Such a unit needs nothing of those before it, and
 * they need nothing of it: what it frees was its files' from the start,
 * which no earlier unit could take; so it may go at any point before its
 * place in the plan.
 *
 * The other units keep the plan's order between them, a chain: a unit
 * that saves much comes after those before it, so the chain is cut into
 * blocks that each save no more per second than the one before (a unit
 * joins the block after it while that block saves more per second).
 * Each step takes the free-standing unit or the chain's next block,
 * whichever saves more per second; a free-standing unit still waiting
 * when a chain unit after it in the plan comes goes before that one (the
 * later unit may take the blocks it frees).  Units of distinct files
 * change the pieces and read time by the same in any order, so each
 * still leaves the filesystem no worse.
 *
 * Most per second first is not always most within the limit: a window
 * that closes after a chain block saving much would have held that
 * block in the plan's order, and held less of it in this one (on the
 * kernel-written tree of bench/iocost.sh, kmanifest, a window of half
 * the run).  So the order is taken only where the model says it saves
 * more within the limit than the plan's order does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fmap.h"
#include "units.h"

struct order_ctx {
	const struct units *u;
	uint64_t	*fs;		/* free-standing units that gain, plan order */
	uint64_t	nfs;
	uint64_t	*out;		/* the order (the caller's) */
	uint64_t	nout;
	uint8_t		*taken;		/* per unit */
	uint8_t		*is_fs;		/* per unit: one of fs[] */
};

static double per_second(const struct units *u, uint64_t k)
{
	double s = u->seconds[k] > 1e-9 ? u->seconds[k] : 1e-9;

	return u->gain[k] / s;
}

/* The units cmp_density compares (qsort passes no context). */
static const struct units *sort_units;

/* Most saved per second first, then the plan's order. */
static int cmp_density(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	double dx = per_second(sort_units, x), dy = per_second(sort_units, y);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The blocks a unit gains, as one move's runs are walked. */
struct gains {
	ext2_filsys	fs;
	ext2fs_block_bitmap gained;	/* by the units before */
	int		mark;		/* add the runs to GAINED, else check them */
	int		free_standing;	/* so far every run free before the run
					 * and not in GAINED */
};

/* Check or mark the run [START, START + LEN), clipped to the filesystem
 * (plan_move_gains' FN). */
static int gain_run(void *priv, blk64_t start, blk64_t len)
{
	struct gains *g = priv;
	blk64_t first = g->fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(g->fs->super);

	if (!len)
		return 0;
	if (start < first || start >= end || len > end - start) {
		/* Not a run of this filesystem: a damaged plan stays put. */
		g->free_standing = 0;
		if (start >= end)
			return 0;
		if (start < first) {
			len = start + len > first ? start + len - first : 0;
			start = first;
		}
		if (len > end - start)
			len = end - start;
	}
	while (len) {
		unsigned n = len > (1u << 30) ? 1u << 30 : (unsigned)len;

		if (g->mark)
			ext2fs_mark_block_bitmap_range2(g->gained, start, n);
		else if (!ext2fs_test_block_bitmap_range2(g->fs->block_map, start, n) ||
			 !ext2fs_test_block_bitmap_range2(g->gained, start, n))
			g->free_standing = 0;
		start += n;
		len -= n;
	}
	return 0;
}

/*
 * Whether the moves [FIRST, END) of a unit stand free: they gain only
 * blocks free before the run that no earlier unit gains (G->gained) and
 * move no file an earlier unit moves (MOVED).  Then their blocks and
 * files are added to those.
 */
static int free_standing(struct gains *g, const struct layout *layout,
			 const struct plan *plan, uint64_t first, uint64_t end,
			 const uint64_t *seg_at, const uint64_t *meta_at, uint8_t *moved)
{
	uint64_t m;
	int ok;

	g->free_standing = 1;
	g->mark = 0;
	for (m = first; m < end && g->free_standing; m++) {
		if (moved[plan->moves[m].file])
			g->free_standing = 0;
		else
			plan_move_gains(layout, plan, m, seg_at, meta_at, gain_run, g);
	}
	ok = g->free_standing;
	g->mark = 1;
	for (m = first; m < end; m++) {
		moved[plan->moves[m].file] = 1;
		plan_move_gains(layout, plan, m, seg_at, meta_at, gain_run, g);
	}
	return ok;
}

/* Take unit K. */
static void take(struct order_ctx *c, uint64_t k)
{
	c->taken[k] = 1;
	c->out[c->nout++] = k;
}

/*
 * The units that keep their order are a chain: reaching a unit that saves
 * much means doing the ones before it.  So they go in blocks (Sidney's
 * decomposition of a chain): a unit joins the block after it while that
 * saves more per second than it does, and a block is worth what it saves
 * over what it takes.  The blocks' worth never rises along the chain.
 * BLOCK_END[i]: the end (a unit index) of the block starting at rest
 * unit i, and WORTH[i] its worth; for the other units, unset.
 */
static errcode_t chain_blocks(struct order_ctx *c, uint64_t *block_end, double *worth)
{
	const struct units *u = c->u;
	uint64_t *start = NULL, *endu = NULL, top = 0, i;
	double *g = NULL, *t = NULL;

	start = malloc(u->n * sizeof(*start));
	endu = malloc(u->n * sizeof(*endu));
	g = malloc(u->n * sizeof(*g));
	t = malloc(u->n * sizeof(*t));
	if (!start || !endu || !g || !t) {
		free(start);
		free(endu);
		free(g);
		free(t);
		return ENOMEM;
	}
	for (i = u->n; i-- > 0;) {
		uint64_t s0 = i, e0 = i + 1;
		double g0, t0;

		if (c->is_fs[i])
			continue;
		g0 = u->gain[i] > 0 ? u->gain[i] : 0;
		t0 = u->seconds[i] > 1e-9 ? u->seconds[i] : 1e-9;
		while (top && g0 / t0 < g[top - 1] / t[top - 1]) {
			top--;
			g0 += g[top];
			t0 += t[top];
			e0 = endu[top];
		}
		start[top] = s0;
		endu[top] = e0;
		g[top] = g0;
		t[top] = t0;
		top++;
	}
	for (i = 0; i < top; i++) {
		block_end[start[i]] = endu[i];
		worth[start[i]] = g[i] / t[i];
	}
	free(start);
	free(endu);
	free(g);
	free(t);
	return 0;
}

/* Take unit R after the free-standing ones before it in the plan (DUE). */
static void take_rest(struct order_ctx *c, uint64_t r, uint64_t *due, uint64_t *f)
{
	uint64_t n = 0, i;

	for (; *f < c->nfs && c->fs[*f] < r; (*f)++)
		if (!c->taken[c->fs[*f]])
			due[n++] = c->fs[*f];
	qsort(due, n, sizeof(*due), cmp_density);
	for (i = 0; i < n; i++)
		take(c, due[i]);
	take(c, r);
}

/* The order (c->out) from the free-standing units (c->fs). */
static errcode_t merge(struct order_ctx *c)
{
	const struct units *u = c->u;
	uint64_t *by = NULL, *due = NULL, *block_end = NULL, nby = c->nfs, b = 0, r = 0, f = 0;
	double *worth = NULL;
	errcode_t ret = ENOMEM;

	by = malloc((nby + 1) * sizeof(*by));
	due = malloc((nby + 1) * sizeof(*due));
	block_end = malloc(u->n * sizeof(*block_end));
	worth = malloc(u->n * sizeof(*worth));
	if (!by || !due || !block_end || !worth)
		goto out;
	ret = chain_blocks(c, block_end, worth);
	if (ret)
		goto out;
	memcpy(by, c->fs, nby * sizeof(*by));
	sort_units = u;
	qsort(by, nby, sizeof(*by), cmp_density);
	while (c->nout < u->n) {
		uint64_t e;

		/* The next block of the chain, if any. */
		while (r < u->n && (c->taken[r] || c->is_fs[r]))
			r++;
		while (b < nby && c->taken[by[b]])
			b++;
		if (b < nby && (r == u->n || per_second(u, by[b]) > worth[r])) {
			take(c, by[b]);
			continue;
		}
		if (r == u->n)
			break;
		for (e = block_end[r]; r < e; r++)
			if (!c->is_fs[r])
				take_rest(c, r, due, &f);
	}
out:
	free(by);
	free(due);
	free(block_end);
	free(worth);
	return ret;
}

/*
 * The order of U's units (OUT), that of the plan when nothing can go
 * earlier (*SAME).
 */
static errcode_t order_of(const struct layout *layout, const struct plan *plan,
			  const struct units *u, uint64_t *out, int *same)
{
	struct order_ctx c;
	uint64_t *seg_at = NULL, *meta_at = NULL, k;
	uint8_t *moved = NULL;
	struct gains g;
	errcode_t ret = ENOMEM;

	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	c.u = u;
	c.out = out;
	g.fs = layout->fs;
	seg_at = malloc((plan->nmoves + 1) * sizeof(*seg_at));
	meta_at = malloc((plan->nmoves + 1) * sizeof(*meta_at));
	moved = calloc(layout->nfiles + 1, 1);
	c.fs = malloc(u->n * sizeof(*c.fs));
	c.taken = calloc(u->n, 1);
	c.is_fs = calloc(u->n, 1);
	if (!seg_at || !meta_at || !moved || !c.fs || !c.taken || !c.is_fs)
		goto out;
	plan_move_offsets(plan, seg_at, meta_at);
	ret = ext2fs_allocate_block_bitmap(layout->fs, "blocks units gain", &g.gained);
	if (ret)
		goto out;
	for (k = 0; k < u->n; k++) {
		uint64_t a = k ? u->end[k - 1] : 0;

		if (free_standing(&g, layout, plan, a, u->end[k], seg_at, meta_at, moved) &&
		    u->gain[k] > 1e-9) {
			c.fs[c.nfs++] = k;
			c.is_fs[k] = 1;
		}
	}
	ret = merge(&c);
	if (ret)
		goto out;
	for (k = 0; k < u->n && out[k] == k; k++)
		;
	*same = k == u->n;
out:
	if (g.gained)
		ext2fs_free_block_bitmap(g.gained);
	free(seg_at);
	free(meta_at);
	free(moved);
	free(c.fs);
	free(c.taken);
	free(c.is_fs);
	return ret;
}

/*
 * Put PLAN's units in the order OUT of units U, or back (INVERSE: OUT
 * was applied, U is the plan's units before).
 */
static errcode_t apply(struct plan *plan, const struct units *u, const uint64_t *out,
		       int inverse)
{
	uint64_t *first, *end, *at, k;
	errcode_t ret = ENOMEM;

	first = malloc(u->n * sizeof(*first));
	end = malloc(u->n * sizeof(*end));
	at = malloc(u->n * sizeof(*at));
	if (!first || !end || !at)
		goto out;
	if (!inverse) {
		for (k = 0; k < u->n; k++) {
			first[k] = out[k] ? u->end[out[k] - 1] : 0;
			end[k] = u->end[out[k]];
		}
	} else {
		uint64_t pos = 0;

		/* Where each old unit now starts: the reordered plan's spans. */
		for (k = 0; k < u->n; k++) {
			uint64_t len = u->end[out[k]] - (out[k] ? u->end[out[k] - 1] : 0);

			at[out[k]] = pos;
			pos += len;
		}
		for (k = 0; k < u->n; k++) {
			first[k] = at[k];
			end[k] = at[k] + u->end[k] - (k ? u->end[k - 1] : 0);
		}
	}
	ret = plan_reorder(plan, first, end, u->n);
out:
	free(first);
	free(end);
	free(at);
	return ret;
}

errcode_t units_by_gain(const struct units_model *m, struct plan *plan, struct units *u,
			const struct units_limit *limit)
{
	struct units v = { 0 };
	double saved_u = 0, saved_v = 0;
	uint64_t *out;
	int same = 1;
	errcode_t ret;

	/* Where the limit lets every unit run, the order changes nothing. */
	if (u->n < 2 || !m->layout->fs->block_map || units_within(u, limit, &saved_u) == u->n)
		return 0;
	out = malloc(u->n * sizeof(*out));
	if (!out)
		return ENOMEM;
	ret = order_of(m->layout, plan, u, out, &same);
	if (ret || same)
		goto out;
	ret = apply(plan, u, out, 0);
	if (ret)
		goto out;
	/* Each order as a run under the limit takes it (units_fit). */
	ret = units_make(m->layout, plan, m->model, m->buffer_bytes, &m->log, &v);
	if (!ret)
		ret = units_fit(m, &v, limit, &saved_v);
	if (!ret)
		ret = units_fit(m, u, limit, &saved_u);
	if (!ret && saved_v > saved_u + 1e-9) {
		units_free(u);
		*u = v;
		u->by_gain = 1;
		u->plan_order_saved = saved_u;
		goto out;
	}
	/* No more saved within the limit: the plan's order, as it was. */
	units_free(&v);
	if (apply(plan, u, out, 1) && !ret)
		ret = ENOMEM;
out:
	free(out);
	return ret;
}
