/*
 * compact.c --- defragmenting a nearly full filesystem: when the files
 * left over by place.c have no free run to go to, not even after smaller
 * files move out of the way (typically recordings interleaved all over a
 * disk that is 90% full), pack them instead.
 *
 * A gap is a maximal run of blocks that hold nothing but free space and
 * blocks of these files.  The files are assigned places in the gaps,
 * packed from each gap's start (first fit, largest first, an interleave
 * set one file after another); what remains of each gap is where free
 * space will be at the end.  Then a frontier walks each gap from its
 * start, one chunk at a time, the chunk no larger than the free space:
 *   1. clear: blocks in the chunk that are not already in their final
 *      place are moved out, into free space outside it (where free space
 *      will remain at the end, if possible, so they need not move again);
 *   2. fill: the parts of the files whose final place is in the chunk are
 *      moved there.
 * Each of these is an ordinary crash-safe move of one file; a file in
 * the middle of this is in more pieces than before for a while, never
 * incomplete.  A block-mapped file's indirect blocks move with every part
 * of it whose addresses they hold (mapclose.c); one whose final place is
 * already behind the frontier while it still maps blocks ahead of it is
 * kept elsewhere, its final place reserved, until the file's last part
 * is filled in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/* Free space kept back from a chunk for the new extent trees of staged files. */
#define TREE_SLACK_MIN	64

struct gap {
	blk64_t		start, len;
	blk64_t		used;		/* packed from start */
};

/* Final places of indirect blocks, kept free until their file is complete. */
struct reserved {
	uint32_t	file;
	blk64_t		blk;
};

struct compact {
	struct planner	*p;
	uint8_t		*member;	/* per file: takes part */
	blk64_t		*final;		/* per file: where its stream goes, or 0 */
	struct reserved	*res;		/* reserved slots */
	size_t		nres, res_cap;
	blk64_t		*want;		/* slots to reserve after the move at hand */
	size_t		nwant, want_cap;
	struct layout_piece *held;	/* final places the move at hand takes directly */
	size_t		nheld, held_cap;
	blk64_t		chunk_start;	/* the chunk at hand */
	struct gap	*gaps;
	size_t		ngaps;
	/* Staging candidates for the chunk at hand: free runs, best first. */
	struct layout_piece *cand;
	size_t		ncand, cand_cap, cand_next;
	blk64_t		cand_off;
};

static int is_member(const struct compact *c, uint32_t owner)
{
	return owner >= SM_FILE0 && c->member[owner - SM_FILE0];
}

/* Gaps: runs of free blocks and members' blocks, within a zone. */
static errcode_t find_gaps(struct compact *c)
{
	const struct spacemap *sm = &c->p->sm;
	size_t i, cap = 0;
	struct gap *g;

	for (i = 0; i < sm->n; i++) {
		const struct sm_seg *s = &sm->seg[i];
		int in = s->owner == SM_FREE || is_member(c, s->owner);

		if (!in)
			continue;
		if (c->ngaps && c->gaps[c->ngaps - 1].start +
		    c->gaps[c->ngaps - 1].len == s->start) {
			c->gaps[c->ngaps - 1].len += s->len;
			continue;
		}
		if (c->ngaps == cap) {
			cap = cap ? 2 * cap : 64;
			g = realloc(c->gaps, cap * sizeof(*g));
			if (!g)
				return ENOMEM;
			c->gaps = g;
		}
		c->gaps[c->ngaps++] = (struct gap){ s->start, s->len, 0 };
	}
	return 0;
}

struct cunit {
	uint32_t	first, n;	/* planner->members[...] */
	blk64_t		need;
};

static int cmp_cunit(const void *a, const void *b)
{
	const struct cunit *x = a, *y = b;

	if (x->need != y->need)
		return x->need > y->need ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static blk64_t file_need(const struct compact *c, uint32_t f)
{
	return c->p->layout->files[f].stream_blocks + c->p->pf[f].etb_contig;
}

/* First gap (address order) with room for NEED blocks, or -1. */
static int64_t first_fit(const struct compact *c, blk64_t need)
{
	size_t i;

	for (i = 0; i < c->ngaps; i++)
		if (c->gaps[i].len - c->gaps[i].used >= need)
			return i;
	return -1;
}

static void assign(struct compact *c, size_t g, uint32_t f)
{
	c->final[f] = c->gaps[g].start + c->gaps[g].used;
	c->gaps[g].used += file_need(c, f);
}

/* Mean block address of the streams of FILES[0..N). */
static double centroid(const struct compact *c, const uint32_t *files, uint32_t n)
{
	double sum = 0, blocks = 0;
	uint32_t nr, i, k;

	for (k = 0; k < n; k++) {
		const struct layout_piece *r = planner_runs(c->p, files[k], &nr);

		for (i = 0; i < nr; i++) {
			sum += ((double)r[i].start + r[i].len / 2.0) * r[i].len;
			blocks += r[i].len;
		}
	}
	return blocks ? sum / blocks : 0;
}

/* What goes into a gap as one: a whole set (path order) or one file. */
struct item {
	uint32_t	first, n;	/* mem[...] */
	int64_t		gap;
	double		centroid;
};

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->gap != y->gap)
		return x->gap < y->gap ? -1 : 1;
	if (x->centroid != y->centroid)
		return x->centroid < y->centroid ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int cmp_need_desc(const void *a, const void *b, void *arg)
{
	const struct compact *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	blk64_t nx = file_need(c, x), ny = file_need(c, y);

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Final places.  Which gap: first fit, largest first, a set whole if it
 * fits anywhere, else file by file.  Where in the gap: those whose blocks
 * lie first come first, so that fewer blocks must move out of the way
 * twice.
 */
static errcode_t pack(struct compact *c, const struct unit *units, size_t nunits)
{
	struct cunit *cu;
	struct item *it;
	uint32_t *mem, nmem = 0;
	size_t i, n = 0, nit = 0;
	uint32_t k;

	cu = malloc((nunits + 1) * sizeof(*cu));
	mem = malloc((c->p->nmembers + 1) * sizeof(*mem));
	it = malloc((c->p->nmembers + 1) * sizeof(*it));
	if (!cu || !mem || !it) {
		free(cu);
		free(mem);
		free(it);
		return ENOMEM;
	}
	/* Only the files that take part. */
	for (i = 0; i < nunits; i++) {
		cu[n].first = nmem;
		cu[n].n = 0;
		cu[n].need = 0;
		for (k = 0; k < units[i].n; k++) {
			uint32_t f = c->p->members[units[i].first + k];

			if (c->member[f] != 1)
				continue;
			mem[nmem++] = f;
			cu[n].n++;
			cu[n].need += file_need(c, f);
		}
		if (cu[n].n)
			n++;
	}
	qsort(cu, n, sizeof(*cu), cmp_cunit);
	for (i = 0; i < n; i++) {
		int64_t g = first_fit(c, cu[i].need);

		if (g >= 0) {
			c->gaps[g].used += cu[i].need;
			it[nit++] = (struct item){ cu[i].first, cu[i].n, g, 0 };
			continue;
		}
		qsort_r(mem + cu[i].first, cu[i].n, sizeof(*mem), cmp_need_desc, c);
		for (k = 0; k < cu[i].n; k++) {
			uint32_t f = mem[cu[i].first + k];

			g = first_fit(c, file_need(c, f));
			if (g < 0) {
				c->member[f] = 2;	/* takes part, but has no place */
				continue;
			}
			c->gaps[g].used += file_need(c, f);
			it[nit++] = (struct item){ cu[i].first + k, 1, g, 0 };
		}
	}
	for (i = 0; i < nit; i++)
		it[i].centroid = centroid(c, mem + it[i].first, it[i].n);
	qsort(it, nit, sizeof(*it), cmp_item);
	for (i = 0; i < c->ngaps; i++)
		c->gaps[i].used = 0;
	for (i = 0; i < nit; i++)
		for (k = 0; k < it[i].n; k++)
			assign(c, it[i].gap, mem[it[i].first + k]);
	free(cu);
	free(mem);
	free(it);
	return 0;
}

static errcode_t push_piece(struct layout_piece **arr, size_t *n, size_t *cap,
			    blk64_t a, blk64_t b)
{
	if (b <= a)
		return 0;
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct layout_piece *q = realloc(*arr, nc * sizeof(*q));

		if (!q)
			return ENOMEM;
		*arr = q;
		*cap = nc;
	}
	(*arr)[(*n)++] = (struct layout_piece){ a, b - a };
	return 0;
}

/* Index of the first gap ending after BLK. */
static size_t gap_at(const struct compact *c, blk64_t blk)
{
	size_t lo = 0, hi = c->ngaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->gaps[mid].start + c->gaps[mid].len <= blk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sort [A, B) into where free space stays (*OUT) and packed areas (*IN). */
static errcode_t split_packed(struct compact *c, blk64_t a, blk64_t b,
			      struct layout_piece **in, size_t *nin, size_t *incap)
{
	size_t g = gap_at(c, a);
	errcode_t ret = 0;

	while (a < b && !ret) {
		blk64_t ps, pe;

		if (g >= c->ngaps || c->gaps[g].start >= b)
			return push_piece(&c->cand, &c->ncand, &c->cand_cap, a, b);
		ps = c->gaps[g].start;
		pe = ps + c->gaps[g].used;
		if (a < ps) {
			ret = push_piece(&c->cand, &c->ncand, &c->cand_cap, a,
					 ps < b ? ps : b);
			a = ps;
			continue;
		}
		if (a < pe) {
			ret = push_piece(in, nin, incap, a, pe < b ? pe : b);
			a = pe;
		}
		if (a < b) {
			blk64_t ge = c->gaps[g].start + c->gaps[g].len;

			ret = push_piece(&c->cand, &c->ncand, &c->cand_cap, a,
					 ge < b ? ge : b);
			a = ge;
		}
		g++;
	}
	return ret;
}

static int cmp_piece_desc(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	return x->start > y->start ? -1 : x->start < y->start;
}

/*
 * Free runs outside [LO, HI) to stage into: first those where free space
 * will stay (outside every packed area), then the rest, highest first
 * (the frontier reaches them last).
 */
static errcode_t gather_candidates(struct compact *c, blk64_t lo, blk64_t hi)
{
	const struct spacemap *sm = &c->p->sm;
	struct layout_piece *in = NULL;
	size_t nin = 0, incap = 0, i;
	errcode_t ret = 0;

	c->ncand = 0;
	c->cand_next = 0;
	c->cand_off = 0;
	for (i = 0; i < sm->n && !ret; i++) {
		blk64_t s = sm->seg[i].start, e = s + sm->seg[i].len;

		if (sm->seg[i].owner != SM_FREE)
			continue;
		ret = split_packed(c, s, e < lo ? e : (s < lo ? lo : s), &in, &nin, &incap);
		if (!ret)
			ret = split_packed(c, s > hi ? s : hi, e, &in, &nin, &incap);
	}
	qsort(in, nin, sizeof(*in), cmp_piece_desc);
	for (i = 0; i < nin && !ret; i++)
		ret = push_piece(&c->cand, &c->ncand, &c->cand_cap, in[i].start,
				 in[i].start + in[i].len);
	free(in);
	return ret;
}

/*
 * Take LEN staging blocks, appended to *OUT as runs.  -1 when there are
 * too few.  The candidates were listed when the chunk began; blocks taken
 * since by a direct move to a final place are skipped.
 */
static int take_staging(struct compact *c, blk64_t len, struct layout_piece **out,
			size_t *nout, size_t *cap)
{
	const struct spacemap *sm = &c->p->sm;

	while (len) {
		struct layout_piece *r;
		const struct sm_seg *g;
		blk64_t n, at;

		if (c->cand_next >= c->ncand)
			return -1;
		r = &c->cand[c->cand_next];
		at = r->start + c->cand_off;
		n = r->len - c->cand_off < len ? r->len - c->cand_off : len;
		g = &sm->seg[spacemap_find(sm, at)];
		if (g->start + g->len - at < n)
			n = g->start + g->len - at;
		if (g->owner == SM_FREE) {
			if (*nout && (*out)[*nout - 1].start + (*out)[*nout - 1].len == at)
				(*out)[*nout - 1].len += n;
			else if (push_piece(out, nout, cap, at, at + n))
				return -1;
			len -= n;
		}
		c->cand_off += n;
		if (c->cand_off == r->len) {
			c->cand_next++;
			c->cand_off = 0;
		}
	}
	return 0;
}

static int cmp_seg_off(const void *a, const void *b)
{
	const struct plan_seg *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static errcode_t push_seg(struct plan_seg **ch, size_t *n, size_t *cap,
			  blk64_t off, blk64_t len, blk64_t pblk)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct plan_seg *q = realloc(*ch, nc * sizeof(*q));

		if (!q)
			return ENOMEM;
		*ch = q;
		*cap = nc;
	}
	(*ch)[(*n)++] = (struct plan_seg){ off, len, pblk };
	return 0;
}

static int cmp_piece_start(const void *a, const void *b)
{
	const struct layout_piece *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Mark the held final places (c->held) as taken, or give them back. */
static errcode_t mark_held(struct compact *c, uint32_t owner)
{
	struct sm_seg *ch;
	size_t i;
	errcode_t ret;

	if (!c->nheld)
		return 0;
	ch = malloc(c->nheld * sizeof(*ch));
	if (!ch)
		return ENOMEM;
	qsort(c->held, c->nheld, sizeof(*c->held), cmp_piece_start);
	for (i = 0; i < c->nheld; i++)
		ch[i] = (struct sm_seg){ c->held[i].start, c->held[i].len, owner };
	ret = spacemap_apply(&c->p->sm, ch, c->nheld);
	free(ch);
	return ret;
}

/* Give the final places held for the move at hand back to the free space. */
static errcode_t release_held(struct compact *c)
{
	errcode_t ret = mark_held(c, SM_FREE);

	c->nheld = 0;
	return ret;
}

/*
 * Where LEN stream positions of F from SO on go when they leave [LO, HI):
 * their final places where those are free (they never move again), to
 * *CH, held; what remains, to *REST for staging.
 */
static errcode_t split_direct(struct compact *c, uint32_t f, blk64_t so,
			      blk64_t len, blk64_t lo, blk64_t hi,
			      struct plan_seg **ch, size_t *nch, size_t *chcap,
			      struct plan_seg **rest, size_t *nrest, size_t *restcap)
{
	const struct spacemap *sm = &c->p->sm;
	errcode_t ret = 0;

	while (len && !ret) {
		blk64_t n = len, fin = c->final[f] + so;
		int direct = 0;

		if (c->member[f] == 1) {
			const struct sm_seg *g = &sm->seg[spacemap_find(sm, fin)];

			if (g->start + g->len - fin < n)
				n = g->start + g->len - fin;
			if (fin < hi && fin + n > lo) {
				/* Final place inside the chunk: up to its edge. */
				if (fin < lo)
					n = lo - fin;
				else
					n = (hi - fin < n ? hi - fin : n);
			} else {
				direct = g->owner == SM_FREE;
			}
		}
		if (direct) {
			ret = push_seg(ch, nch, chcap, so, n, fin);
			if (!ret)
				ret = push_piece(&c->held, &c->nheld, &c->held_cap, fin,
						 fin + n);
		} else {
			ret = push_seg(rest, nrest, restcap, so, n, 0);
		}
		so += n;
		len -= n;
	}
	return ret;
}

/* Extent tree blocks FILE needs with CHANGES applied. */
static errcode_t tree_blocks_after(struct compact *c, uint32_t f,
				   const struct plan_seg *ch, size_t nch,
				   uint32_t *need)
{
	struct planner *p = c->p;
	const struct layout_piece *cur;
	struct layout_piece *runs = NULL;
	struct target t;
	struct fmap *m;
	size_t nruns, ext;
	uint32_t ncur;
	errcode_t ret;

	ret = planner_fmap(p, f, &m);
	if (ret)
		return ret;
	*need = 0;
	if (!m->extents)
		return 0;	/* indirect blocks are in the stream */
	cur = planner_runs(p, f, &ncur);
	ret = runs_apply(cur, ncur, ch, nch, &runs, &nruns);
	if (ret)
		return ret;
	t.runs = runs;
	t.nruns = nruns;
	ret = mapbuild_extents(m, &t, NULL, &ext);
	free(runs);
	if (!ret)
		*need = mapbuild_tree_blocks(p->fs, ext);
	return ret;
}

static errcode_t want_slot(struct compact *c, blk64_t blk)
{
	if (c->nwant == c->want_cap) {
		size_t cap = c->want_cap ? 2 * c->want_cap : 64;
		blk64_t *q = realloc(c->want, cap * sizeof(*q));

		if (!q)
			return ENOMEM;
		c->want = q;
		c->want_cap = cap;
	}
	c->want[c->nwant++] = blk;
	return 0;
}

/*
 * mapclose_alloc_fn: an indirect block whose contents change goes to
 * staging; if its final place is behind the chunk, that place is
 * reserved for it.
 */
static int stage_mapping(void *priv, uint32_t f, blk64_t pos, blk64_t *pblk)
{
	struct compact *c = priv;
	struct layout_piece *one = NULL;
	size_t n = 0, cap = 0;
	int ret;

	ret = take_staging(c, 1, &one, &n, &cap);
	if (!ret)
		*pblk = one[0].start;
	free(one);
	/*
	 * A final place behind the chunk would be taken as free space; one
	 * inside it is the fill's to deal with.
	 */
	if (!ret && c->member[f] == 1 && c->final[f] + pos < c->chunk_start)
		ret = want_slot(c, c->final[f] + pos) ? -1 : 0;
	return ret;
}

/* After a move of F: reserve the slots it asked for. */
static errcode_t reserve_wanted(struct compact *c, uint32_t f)
{
	size_t i;
	errcode_t ret = 0;

	for (i = 0; i < c->nwant && !ret; i++) {
		if (!spacemap_is(&c->p->sm, c->want[i], 1, SM_FREE))
			continue;	/* taken by its own block: nothing to keep */
		if (c->nres == c->res_cap) {
			size_t cap = c->res_cap ? 2 * c->res_cap : 64;
			struct reserved *q = realloc(c->res, cap * sizeof(*q));

			if (!q)
				return ENOMEM;
			c->res = q;
			c->res_cap = cap;
		}
		c->res[c->nres++] = (struct reserved){ f, c->want[i] };
		ret = spacemap_assign(&c->p->sm, c->want[i], 1, SM_RESERVED);
	}
	c->nwant = 0;
	return ret;
}

/* Give back F's reserved slots (all files' when F is UINT32_MAX). */
static errcode_t unreserve(struct compact *c, uint32_t f)
{
	size_t i, o = 0;
	errcode_t ret = 0;

	for (i = 0; i < c->nres; i++) {
		if (f != UINT32_MAX && c->res[i].file != f) {
			c->res[o++] = c->res[i];
			continue;
		}
		if (!ret)
			ret = spacemap_assign(&c->p->sm, c->res[i].blk, 1, SM_FREE);
	}
	c->nres = o;
	return ret;
}

/*
 * Commit CH for F, with the indirect blocks it changes moved too and a
 * tree in staging space (or at TREE_AT when nonzero).  *ok 0: no room.
 */
static errcode_t commit_with_tree(struct compact *c, uint32_t f,
				  enum plan_move_kind kind, struct plan_seg *ch0,
				  size_t nch0, blk64_t tree_at, int *ok)
{
	struct layout_piece *meta = NULL;
	struct plan_seg *ch = NULL;
	size_t nmeta = 0, cap = 0, nch = 0;
	uint32_t need;
	errcode_t ret;

	*ok = 0;
	ret = mapclose_changes(c->p, f, ch0, nch0, stage_mapping, c, &ch, &nch);
	if (ret == E2F_ERR_NO_SPACE) {
		c->nwant = 0;
		return 0;
	}
	if (!ret)
		ret = tree_blocks_after(c, f, ch, nch, &need);
	if (ret)
		goto out;
	if (need && tree_at) {
		ret = push_piece(&meta, &nmeta, &cap, tree_at, tree_at + need);
		if (ret)
			goto out;
	} else if (need && take_staging(c, need, &meta, &nmeta, &cap)) {
		goto out;
	}
	ret = release_held(c);
	if (!ret)
		ret = planner_commit_changes(c->p, f, kind, ch, nch, meta, nmeta);
	if (ret == E2D_ERR_PLAN_CONFLICT) {
		ret = 0;
		goto out;
	}
	if (!ret)
		ret = reserve_wanted(c, f);
	if (!ret)
		*ok = 1;
out:
	if (!ret)
		ret = release_held(c);
	c->nwant = 0;
	free(meta);
	free(ch);
	return ret;
}

/* Step 1: move out of [LO, HI) every block of F not in its final place. */
static errcode_t clear_file(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
			    int *ok)
{
	const struct layout_piece *cur, *meta;
	struct plan_seg *ch = NULL, *rest = NULL;
	struct layout_piece *st = NULL;
	size_t nch = 0, chcap = 0, nrest = 0, restcap = 0, stcap = 0, k, j;
	uint32_t ncur, nmeta, i;
	blk64_t off = 0;
	int meta_inside = 0;
	errcode_t ret = 0;

	*ok = 1;
	cur = planner_runs(c->p, f, &ncur);
	for (i = 0; i < ncur && !ret; off += cur[i].len, i++) {
		blk64_t a = cur[i].start > lo ? cur[i].start : lo;
		blk64_t b = cur[i].start + cur[i].len < hi ? cur[i].start + cur[i].len : hi;
		blk64_t *pos = NULL;
		size_t npos = 0;

		if (a >= b)
			continue;
		if (!(c->member[f] == 1 && cur[i].start - off == c->final[f])) {
			ret = split_direct(c, f, off + (a - cur[i].start), b - a, lo, hi,
					   &ch, &nch, &chcap, &rest, &nrest, &restcap);
			continue;
		}
		/*
		 * In its final place already: stays, but for indirect blocks,
		 * whose contents will change when the blocks they map are
		 * filled in: the fill puts them back.
		 */
		ret = mapclose_positions(c->p, f, off + (a - cur[i].start),
					 off + (b - cur[i].start), 0, &pos, &npos);
		for (k = 0; !ret && k < npos; k++)
			ret = push_seg(&rest, &nrest, &restcap, pos[k], 1, 0);
		free(pos);
	}
	/* Hold the direct places first, so that staging does not hand them out too. */
	if (!ret)
		ret = mark_held(c, SM_RESERVED);
	for (j = 0; !ret && j < nrest; j++) {
		blk64_t so = rest[j].off;

		if (take_staging(c, rest[j].len, &st, &(size_t){ 0 }, &stcap)) {
			*ok = 0;
			break;
		}
		/* take_staging appended from index 0: walk what it gave. */
		for (k = 0; !ret && so < rest[j].off + rest[j].len; k++) {
			ret = push_seg(&ch, &nch, &chcap, so, st[k].len, st[k].start);
			so += st[k].len;
		}
	}
	if (ret || !*ok)
		goto out;
	qsort(ch, nch, sizeof(*ch), cmp_seg_off);
	meta = planner_meta(c->p, f, &nmeta);
	for (i = 0; i < nmeta; i++)
		if (meta[i].start < hi && meta[i].start + meta[i].len > lo)
			meta_inside = 1;
	if (nch || meta_inside)
		ret = commit_with_tree(c, f, MOVE_STAGE, ch, nch, 0, ok);
out:
	if (c->nheld) {
		errcode_t r2 = release_held(c);

		if (!ret)
			ret = r2;
	}
	free(ch);
	free(rest);
	free(st);
	return ret;
}

/*
 * Step 2: the part of F's stream whose final place is in [LO, HI); the
 * whole of it once that part is its last.
 */
static errcode_t fill_file(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
			   int *ok)
{
	blk64_t n = c->p->layout->files[f].stream_blocks;
	blk64_t a = c->final[f] > lo ? c->final[f] : lo;
	blk64_t b = c->final[f] + n < hi ? c->final[f] + n : hi;
	struct plan_seg *ch = NULL;
	blk64_t *inc = NULL, s, e;
	size_t ninc = 0, nch = 0, k;
	errcode_t ret;

	*ok = 1;
	if (a >= b)
		return 0;
	if (b == c->final[f] + n) {
		struct plan_seg all = { 0, n, c->final[f] };

		/* Its last part: everything to its final place, reserved slots too. */
		ret = unreserve(c, f);
		if (!ret)
			ret = commit_with_tree(c, f, MOVE_PLACE, &all, 1,
					       c->final[f] + n, ok);
		return ret;
	}
	/*
	 * Indirect blocks still mapping blocks ahead wait where they are (the
	 * clearing moved them out of the chunk), their final places reserved.
	 */
	ret = mapclose_positions(c->p, f, a - c->final[f], b - c->final[f], 1,
				 &inc, &ninc);
	if (ret)
		return ret;
	ch = malloc((2 * ninc + 2) * sizeof(*ch));
	if (!ch) {
		free(inc);
		return ENOMEM;
	}
	s = a - c->final[f];
	e = b - c->final[f];
	for (k = 0; k <= ninc; k++) {
		blk64_t stop = k < ninc ? inc[k] : e;

		if (stop > s)
			ch[nch++] = (struct plan_seg){ s, stop - s, c->final[f] + s };
		if (k < ninc) {
			if (want_slot(c, c->final[f] + inc[k])) {
				ret = ENOMEM;
				goto out;
			}
			s = inc[k] + 1;
		}
	}
	ret = commit_with_tree(c, f, MOVE_FILL, ch, nch, 0, ok);
out:
	c->nwant = 0;
	free(ch);
	free(inc);
	return ret;
}

static blk64_t total_free(const struct spacemap *sm)
{
	uint64_t ext;
	blk64_t blocks, largest;

	spacemap_free_stats(sm, &ext, &blocks, &largest);
	return blocks;
}

/* Owners of blocks in [LO, HI), each once, in order of first appearance. */
static errcode_t owners_in(struct compact *c, blk64_t lo, blk64_t hi,
			   uint32_t **out, size_t *nout)
{
	const struct spacemap *sm = &c->p->sm;
	uint32_t *o = NULL;
	size_t n = 0, cap = 0, i;

	for (i = spacemap_find(sm, lo); i < sm->n && sm->seg[i].start < hi; i++) {
		uint32_t w = sm->seg[i].owner;

		if (w < SM_FILE0 || c->p->owner_count[w])
			continue;
		c->p->owner_count[w] = 1;
		if (n == cap) {
			uint32_t *q;

			cap = cap ? 2 * cap : 64;
			q = realloc(o, cap * sizeof(*q));
			if (!q) {
				free(o);
				return ENOMEM;
			}
			o = q;
		}
		o[n++] = w - SM_FILE0;
	}
	for (i = 0; i < n; i++)
		c->p->owner_count[o[i] + SM_FILE0] = 0;
	*out = o;
	*nout = n;
	return 0;
}

/* Walk one gap's packed part chunk by chunk.  *stuck: ran out of room. */
static errcode_t run_gap(struct compact *c, const struct gap *g, int *stuck)
{
	struct planner *p = c->p;
	blk64_t front = g->start, end = g->start + g->used;
	errcode_t ret = 0;

	while (front < end && !*stuck) {
		blk64_t avail = total_free(&p->sm), slack, len;
		uint32_t *own = NULL;
		size_t nown = 0, i;
		uint64_t f;
		int ok = 1;

		slack = avail / 8 + TREE_SLACK_MIN;
		if (avail <= slack + 1) {
			*stuck = 1;
			break;
		}
		len = end - front < avail - slack ? end - front : avail - slack;
		/* Never end a chunk inside a file's tree blocks: take them all. */
		for (f = 0; f < p->layout->nfiles; f++) {
			blk64_t s = c->final[f] + p->layout->files[f].stream_blocks;

			if (c->member[f] == 1 && c->final[f] && s <= front + len &&
			    s + p->pf[f].etb_contig > front + len)
				len = s + p->pf[f].etb_contig - front;
		}
		c->chunk_start = front;
		ret = gather_candidates(c, front, front + len);
		if (!ret)
			ret = owners_in(c, front, front + len, &own, &nown);
		for (i = 0; !ret && ok && i < nown; i++)
			ret = clear_file(c, own[i], front, front + len, &ok);
		free(own);
		for (f = 0; !ret && ok && f < p->layout->nfiles; f++)
			if (c->member[f] == 1 && c->final[f] < front + len &&
			    c->final[f] + p->layout->files[f].stream_blocks > front)
				ret = fill_file(c, f, front, front + len, &ok);
		if (!ok)
			*stuck = 1;
		front += len;
	}
	return ret;
}

errcode_t compact_place(struct planner *p, const struct unit *units, size_t nunits)
{
	struct compact c;
	size_t i;
	uint32_t k;
	int stuck = 0;
	errcode_t ret;

	if (!nunits || p->quota)
		return 0;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.member = calloc(p->layout->nfiles + 1, 1);
	c.final = calloc(p->layout->nfiles + 1, sizeof(*c.final));
	if (!c.member || !c.final) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < nunits; i++)
		for (k = 0; k < units[i].n; k++) {
			uint32_t f = p->members[units[i].first + k];
			const struct layout_file *lf = &p->layout->files[f];
			blk64_t need;

			/*
			 * Files that fit in a zone, with a readable map;
			 * block-mapped ones where any block is addressable.
			 */
			if (((lf->flags & LAYOUT_F_EXTENTS) ||
			     ext2fs_blocks_count(p->fs->super) <= (1ULL << 32)) &&
			    lf->best <= 1 && (p->pf[f].flags & PF_PENDING) &&
			    !place_need(p, f, 0, &need))
				c.member[f] = 1;
		}
	ret = find_gaps(&c);
	if (!ret)
		ret = pack(&c, units, nunits);
	for (i = 0; !ret && i < c.ngaps && !stuck; i++)
		if (c.gaps[i].used)
			ret = run_gap(&c, &c.gaps[i], &stuck);
	/* Stuck: files not complete keep their staged indirect blocks; free the slots. */
	if (!ret)
		ret = unreserve(&c, UINT32_MAX);
out:
	free(c.member);
	free(c.final);
	free(c.gaps);
	free(c.cand);
	free(c.res);
	free(c.want);
	free(c.held);
	return ret;
}
