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
 *   0. direct: every block (anywhere) whose final place is free goes
 *      there, round after round while that frees others' final places,
 *      so that a block whose chain of moves ends in free space moves once;
 *   1. clear: blocks in the chunk that are not already in their final
 *      place are moved out, into free space outside it (where free space
 *      will remain at the end, if possible, so they need not move again);
 *   2. fill: the parts of the files whose final place is in the chunk are
 *      moved there.
 * Each of these is an ordinary crash-safe move of one file; a file in
 * the middle of this is in more pieces than before for a while, never
 * incomplete.  A block-mapped file's indirect blocks move with every part
 * of it whose addresses they hold (fmap_close.c); one whose final place is
 * already behind the frontier while it still maps blocks ahead of it is
 * kept elsewhere, its final place reserved, until the file's last part
 * is filled in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compact_int.h"
#include "array.h"

static int is_member(const struct compact *c, uint32_t owner)
{
	return owner >= SM_FILE0 && c->member[owner - SM_FILE0];
}

/*
 * Gaps: runs of free blocks and members' blocks, within a zone, or (span)
 * on across the metadata between zones.
 */
static errcode_t find_gaps(struct compact *c)
{
	const struct spacemap *sm = &c->p->sm;
	size_t i, cap = 0;
	blk64_t last_end = 0;	/* where the last gap ends (past metadata, span) */

	for (i = 0; i < sm->n; i++) {
		const struct sm_seg sv = SM_SEG(sm, i), *s = &sv;
		int in = s->owner == SM_FREE || is_member(c, s->owner);

		if (c->span && s->owner == SM_META && c->ngaps && s->start == last_end) {
			last_end = s->start + s->len;
			continue;
		}
		if (!in)
			continue;
		if (c->ngaps && last_end == s->start) {
			c->gaps[c->ngaps - 1].len += s->len;
			last_end = s->start + s->len;
			continue;
		}
		if (grow_n(&c->gaps, &cap, c->ngaps + 1, sizeof(*c->gaps)))
			return ENOMEM;
		c->gaps[c->ngaps++] = (struct gap){ s->start, s->len, 0 };
		last_end = s->start + s->len;
	}
	return 0;
}

struct compact_unit {
	uint32_t	first, n;	/* planner->members[...] */
	blk64_t		need;
};

static int cmp_cunit(const void *a, const void *b)
{
	const struct compact_unit *x = a, *y = b;

	if (x->need != y->need)
		return x->need > y->need ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

static blk64_t file_need(const struct compact *c, uint32_t f)
{
	return compact_need(c, f);
}

/*
 * Where in gap G, from offset *AT on, F goes: the first offset whose
 * place crosses no more zone boundaries than its best allows (a file
 * that fits a zone stays in one).  *AT is moved there and past it; -1
 * when it does not fit.
 */
static int fit_file(const struct compact *c, const struct gap *g, uint32_t f,
		    blk64_t *at)
{
	blk64_t need = file_need(c, f), pos = *at, left;
	uint32_t best = planner_best(c->p, f) ? planner_best(c->p, f) : 1;
	uint32_t most = best - 1 + (c->cross ? c->cross[f] : 0);

	while (pos + need <= g->len) {
		blk64_t b = zonewalk_blk(c->p, g->start, pos, &left);

		if (!c->span || zonewalk_cross(c->p, b, need) <= most) {
			*at = pos + need;
			return 0;
		}
		if (!left)
			break;
		pos += left;	/* on at the next zone's start */
	}
	return -1;
}

/* Whether FILES[0..N) fit one after another in gap I; *END where they end. */
static int fit_files(const struct compact *c, size_t i, const uint32_t *files,
		     uint32_t n, blk64_t *end)
{
	blk64_t at = c->gaps[i].used;
	uint32_t k;

	for (k = 0; k < n; k++)
		if (fit_file(c, &c->gaps[i], files[k], &at))
			return -1;
	*end = at;
	return 0;
}

/* First gap (address order) with room for FILES[0..N) after what it holds, or -1. */
static int64_t first_fit(struct compact *c, const uint32_t *files, uint32_t n)
{
	blk64_t end;
	size_t i;

	for (i = 0; i < c->ngaps; i++)
		if (!fit_files(c, i, files, n, &end)) {
			c->gaps[i].used = end;
			return i;
		}
	return -1;
}

int64_t compact_first_fit(struct compact *c, uint32_t f)
{
	return first_fit(c, &f, 1);
}

/* F after what gap G holds (fit_file found room): its final place. */
static int assign(struct compact *c, size_t g, uint32_t f)
{
	blk64_t at = c->gaps[g].used, start;

	start = at;
	if (fit_file(c, &c->gaps[g], f, &at))
		return -1;
	start = at - file_need(c, f);
	c->final[f] = zonewalk_blk(c->p, c->gaps[g].start, start, NULL);
	c->gaps[g].used = at;
	return 0;
}

/* Mean block address of the streams of FILES[0..N). */
static double centroid(const struct compact *c, const uint32_t *files, uint32_t n)
{
	double sum = 0, blocks = 0;
	struct layout_piece sole;
	uint32_t nr, i, k;

	for (k = 0; k < n; k++) {
		const struct layout_piece *r = planner_runs(c->p, files[k], &nr, &sole);

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
	size_t		order;		/* when first fit placed it */
};

static int cmp_item_order(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->gap != y->gap)
		return x->gap < y->gap ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->gap != y->gap)
		return x->gap < y->gap ? -1 : 1;
	if (x->centroid != y->centroid)
		return x->centroid < y->centroid ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

int compact_cmp_need(const void *a, const void *b, void *arg)
{
	const struct compact *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	blk64_t nx = file_need(c, x), ny = file_need(c, y);

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Packing across zones, first fit can leave a file with no place though
 * the room is there: each place it could take crosses one zone boundary
 * more than its best allows, and a gap's fill point only moves on.  (Such
 * files are then staged out of the way bit by bit, left in many pieces,
 * and free space is cut into many runs.)  So try once more with
 * those files allowed one boundary more, each one first fit right after
 * a file that has its place, so that it straddles the boundary where that
 * one ends and the next whole file follows it.  Kept when every file
 * placed before still is and more are; the items IT[0..*NIT) then come in
 * the order they were placed.  MEM[0..NMEM) are the files taking part.
 */
static int retry_across(struct compact *c, const uint32_t *mem, uint32_t nmem,
			struct item *it, size_t *nit)
{
	uint32_t *placed = NULL, *left = NULL, np = 0, nl = 0, got = 0, q, k, t;
	struct item *save = NULL;
	size_t e, n = 0;
	int keep = 0;

	for (k = 0; k < nmem; k++)
		nl += c->member[mem[k]] == 2;
	if (!nl)
		return 0;
	placed = malloc((nmem + 1) * sizeof(*placed));
	left = malloc((nmem + 1) * sizeof(*left));
	save = malloc((*nit + 1) * sizeof(*save));
	if (!placed || !left || !save)
		goto out;	/* first fit's places stand */
	memcpy(save, it, *nit * sizeof(*it));
	sort_n(it, *nit, sizeof(*it), cmp_item_order);
	for (e = 0; e < *nit; e++)
		for (k = 0; k < it[e].n; k++)
			placed[np++] = it[e].first + k;	/* positions in MEM */
	nl = 0;
	for (k = 0; k < nmem; k++)
		if (c->member[mem[k]] == 2) {
			left[nl++] = k;
			c->member[mem[k]] = 1;
			c->cross[mem[k]] = 1;
		}
	for (e = 0; e < c->ngaps; e++)
		c->gaps[e].used = 0;
	for (q = 0; q < np || q < nl; q++) {
		uint32_t two[2], nt = 0;

		if (q < np)
			two[nt++] = placed[q];
		if (q < nl)
			two[nt++] = left[q];
		for (t = 0; t < nt; t++) {
			uint32_t f = mem[two[t]];
			int64_t g = first_fit(c, &f, 1);

			if (g < 0) {
				c->member[f] = 2;
				continue;
			}
			it[n] = (struct item){ two[t], 1, g, (double)n, n };
			n++;
			got++;
		}
	}
	keep = got > np;
	for (q = 0; q < np && keep; q++)
		keep = c->member[mem[placed[q]]] == 1;
	if (keep) {
		*nit = n;
		for (q = 0; q < nl; q++)
			if (c->member[mem[left[q]]] == 2)
				c->cross[mem[left[q]]] = 0;
	} else {
		for (q = 0; q < np; q++)
			c->member[mem[placed[q]]] = 1;
		for (q = 0; q < nl; q++) {
			c->member[mem[left[q]]] = 2;
			c->cross[mem[left[q]]] = 0;
		}
		memcpy(it, save, *nit * sizeof(*it));
	}
out:
	free(placed);
	free(left);
	free(save);
	return keep;
}

/*
 * Final places.  Which gap: first fit, largest first, a set whole if it
 * fits anywhere, else file by file.  Where in the gap: those whose blocks
 * lie first come first, so that fewer blocks must move out of the way
 * twice.
 */
static errcode_t pack(struct compact *c, const struct unit *units, size_t nunits,
		      const uint32_t *extra, size_t nextra)
{
	struct compact_unit *cu;
	struct item *it;
	uint32_t *mem, nmem = 0;
	size_t i, n = 0, nit = 0;
	uint32_t k;

	cu = malloc((nunits + nextra + 1) * sizeof(*cu));
	mem = malloc((c->p->nmembers + nextra + 1) * sizeof(*mem));
	it = malloc((c->p->nmembers + nextra + 1) * sizeof(*it));
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
	for (i = 0; i < nextra; i++) {
		if (c->member[extra[i]] != 1)
			continue;
		cu[n].first = nmem;
		cu[n].n = 1;
		cu[n++].need = file_need(c, extra[i]);
		mem[nmem++] = extra[i];
	}
	if (c->cross)
		for (k = 0; k < nmem; k++)
			c->cross[mem[k]] = 0;	/* a retry's allowance is for its own packing */
	sort_n(cu, n, sizeof(*cu), cmp_cunit);
	for (i = 0; i < n; i++) {
		int64_t g = first_fit(c, mem + cu[i].first, cu[i].n);

		if (g >= 0) {
			it[nit] = (struct item){ cu[i].first, cu[i].n, g, 0, nit };
			nit++;
			continue;
		}
		sort_n_r(mem + cu[i].first, cu[i].n, sizeof(*mem), compact_cmp_need, c);
		for (k = 0; k < cu[i].n; k++) {
			uint32_t f = mem[cu[i].first + k];

			g = first_fit(c, &f, 1);
			if (g < 0) {
				c->member[f] = 2;	/* takes part, but has no place */
				continue;
			}
			it[nit] = (struct item){ cu[i].first + k, 1, g, 0, nit };
			nit++;
		}
	}
	if (!(c->span && c->cross && retry_across(c, mem, nmem, it, &nit)))
		for (i = 0; i < nit; i++)
			it[i].centroid = centroid(c, mem + it[i].first, it[i].n);
	sort_n(it, nit, sizeof(*it), cmp_item);
	for (i = 0; i < c->ngaps; i++)
		c->gaps[i].used = 0;
	/*
	 * A gap whose items do not fit in that order (zone boundaries fall
	 * elsewhere) takes them in the order first fit found room for them.
	 */
	for (i = 0; i < nit;) {
		size_t j = i, e;
		int bad = 0;

		while (j < nit && it[j].gap == it[i].gap)
			j++;
		for (e = i; e < j && !bad; e++)
			for (k = 0; k < it[e].n && !bad; k++)
				bad = assign(c, it[e].gap, mem[it[e].first + k]);
		if (bad) {
			c->gaps[it[i].gap].used = 0;
			sort_n(it + i, j - i, sizeof(*it), cmp_item_order);
			for (e = i; e < j; e++)
				for (k = 0; k < it[e].n; k++)
					assign(c, it[e].gap, mem[it[e].first + k]);
		}
		i = j;
	}
	free(cu);
	free(mem);
	free(it);
	/* Across zones: the room the fill point skipped, for files that fit a zone. */
	return c->span ? compact_holes_refill(c) : 0;
}

/* Gaps found afresh (in ZONE only, when one is given) and packed. */
static errcode_t gaps_and_pack(struct compact *c, int64_t zone,
			       const struct unit *units, size_t nunits,
			       const uint32_t *extra, size_t nextra)
{
	errcode_t ret;
	size_t i;

	free(c->gaps);
	c->gaps = NULL;
	c->ngaps = 0;
	memset(c->final, 0, (c->p->layout->nfiles + 1) * sizeof(*c->final));
	ret = find_gaps(c);
	/* Making room in one zone: only its gaps. */
	for (i = 0; !ret && zone >= 0 && i < c->ngaps; i++)
		if (planner_zone_of(c->p, c->gaps[i].start) != zone)
			c->gaps[i].len = 0;
	if (!ret)
		ret = pack(c, units, nunits, extra, nextra);
	return ret;
}

/*
 * Whether packing the whole disk must run on across zones: a member's
 * best is more than one piece, or it is larger than every zone.  If not,
 * each zone is packed as a bin of its own.  One gap running on across
 * zones has one fill point: a file that is whole only in the last zone
 * pushes it past every zone before, the files that would fit those get
 * no place, and the frontier stages them out of zones that hold no final
 * place, writing far more than what needed moving.
 */
static int must_span(const struct compact *c)
{
	uint64_t i;

	for (i = 0; i < c->p->layout->nfiles; i++)
		if (c->member[i] && (planner_best(c->p, i) > 1 ||
				     file_need(c, i) > c->p->largest_zone))
			return 1;
	return 0;
}

static uint64_t count_placed(const struct compact *c)
{
	uint64_t i, n = 0;

	for (i = 0; i < c->p->layout->nfiles; i++)
		n += c->member[i] == 1;
	return n;
}

/*
 * Pack (gaps_and_pack); packed zone by zone, files left with no place are
 * tried across zones (with pack's retry_across) and that is kept when it
 * places more (files that fit no zone's rest, but a boundary's two sides).
 */
static errcode_t pack_all_zones(struct compact *c, int64_t zone,
				const struct unit *units, size_t nunits,
				const uint32_t *extra, size_t nextra)
{
	uint64_t placed, i;
	errcode_t ret;
	int k;

	ret = gaps_and_pack(c, zone, units, nunits, extra, nextra);
	if (ret || zone >= 0 || c->span)
		return ret;
	placed = count_placed(c);
	for (i = 0; i < c->p->layout->nfiles; i++)
		if (c->member[i] == 2)
			break;
	if (i == c->p->layout->nfiles)
		return 0;	/* every one has its place */
	for (k = 1; k >= 0; k--) {
		for (i = 0; i < c->p->layout->nfiles; i++)
			if (c->member[i] == 2)
				c->member[i] = 1;
		c->span = k;
		ret = gaps_and_pack(c, zone, units, nunits, extra, nextra);
		if (ret || !k || count_placed(c) > placed)
			return ret;
	}
	return ret;
}

/* Where the packed part of the gap holding BLK ends (BLK's gap: none, 0). */
static blk64_t packed_end(const struct compact *c, blk64_t blk)
{
	size_t i;

	for (i = 0; i < c->ngaps; i++) {
		const struct gap *g = &c->gaps[i];

		if (blk >= g->start && zonewalk_off(c->p, g->start, blk) < g->len)
			return g->used ? zonewalk_blk(c->p, g->start, g->used - 1, NULL) + 1 :
					 g->start;
	}
	return 0;
}

/*
 * Packing a zone to make room for the selected files: its other files
 * (EXTRA) need move only where they are in the selected files' way.  So
 * the selected files are packed first alone; the extras lying wholly past
 * where they end stay where they are (out of the packing), and the rest
 * is packed around them.  Unless that leaves a selected file without the
 * place it had: then every extra is packed, as the zone's files all move.
 */
static errcode_t pack_leaving_extras(struct compact *c, int64_t zone,
				     const struct unit *units, size_t nunits,
				     const uint32_t *extra, size_t nextra)
{
	struct planner *p = c->p;
	uint8_t *had = NULL;
	size_t i, nstay = 0;
	blk64_t moving = 0, placed = 0;
	uint32_t k;
	errcode_t ret;

	/* The extras' blocks are in the gaps, but only the selected files packed. */
	ret = gaps_and_pack(c, zone, units, nunits, NULL, 0);
	if (!ret && !(had = calloc(p->layout->nfiles + 1, 1)))
		ret = ENOMEM;
	for (i = 0; !ret && i < nunits; i++)
		for (k = 0; k < units[i].n; k++) {
			uint32_t f = p->members[units[i].first + k];

			had[f] = c->member[f];
		}
	for (i = 0; !ret && i < nextra; i++) {
		const struct layout_piece *r;
		struct layout_piece sole;
		uint32_t n, j;
		int stay = 1;

		r = planner_runs(p, extra[i], &n, &sole);
		for (j = 0; j < n && stay; j++) {
			blk64_t end = packed_end(c, r[j].start);

			stay = end && r[j].start >= end;
		}
		had[extra[i]] = stay ? 3 : 0;
		nstay += stay;
		if (!stay)
			moving += layout_stream_blocks(p->layout, &p->layout->files[extra[i]]);
	}
	/*
	 * Within the write budget only: the extras in the way are moved for
	 * the selected files' sake, and may take at most half as much again
	 * as those (a packing that finds room only by moving far more than
	 * it places is not made; every extra then takes part, as before).
	 */
	for (i = 0; !ret && i < nunits; i++)
		for (k = 0; k < units[i].n; k++) {
			uint32_t f = p->members[units[i].first + k];

			if (had[f] == 1)
				placed += layout_stream_blocks(p->layout, &p->layout->files[f]);
		}
	if (moving > (blk64_t)(placed * (CONSOLIDATE_AMPLIFICATION - 1)))
		nstay = 0;
	/* Only the extras in the way take part now. */
	for (i = 0; !ret && i < nextra; i++)
		if (had[extra[i]] == 3)
			c->member[extra[i]] = 0;
	for (i = 0; !ret && i < nunits; i++)
		for (k = 0; k < units[i].n; k++) {
			uint32_t f = p->members[units[i].first + k];

			if (c->member[f] == 2)
				c->member[f] = 1;
		}
	if (!ret && nstay)
		ret = gaps_and_pack(c, zone, units, nunits, extra, nextra);
	for (i = 0; !ret && nstay && i < nunits; i++)
		for (k = 0; k < units[i].n && nstay; k++) {
			uint32_t f = p->members[units[i].first + k];

			if (had[f] == 1 && c->member[f] != 1)
				nstay = 0;	/* it lost its place: all move */
		}
	if (!ret && !nstay) {
		for (i = 0; i < nextra; i++)
			c->member[extra[i]] = 1;
		for (i = 0; i < nunits; i++)
			for (k = 0; k < units[i].n; k++) {
				uint32_t f = p->members[units[i].first + k];

				if (c->member[f] == 2)
					c->member[f] = 1;
			}
		ret = gaps_and_pack(c, zone, units, nunits, extra, nextra);
	}
	free(had);
	return ret;
}

/* Files taking part, but not JOINED, with a place at their best; *ALL: taking part. */
static uint64_t count_at_best(const struct compact *c, const uint8_t *joined,
			      uint64_t *all)
{
	uint64_t i, n = 0;

	*all = 0;
	for (i = 0; i < c->p->layout->nfiles; i++) {
		uint32_t best = planner_best(c->p, i);

		if (!c->member[i] || (joined && joined[i]))
			continue;
		++*all;
		n += c->member[i] == 1 &&
		     zonewalk_cross(c->p, c->final[i], compact_need(c, i)) + 1 <=
		     (best ? best : 1);
	}
	return n;
}

/*
 * Packed (pack_all_zones) with files short of a place at their best: once
 * more with the settled files that part a zone's gaps taking part
 * (compact_bridge.c), those the packing finds out of its way staying
 * (pack_leaving_extras), kept when more of the files have a place at their
 * best, else packed again without.  At most half as many blocks join as
 * the files have (the write target).  Only in a plan that packs files in
 * pieces (p->splitting), which plan_search.c keeps only when it brings more files
 * to best within the free-space and write bounds: in every plan, moving
 * the small files would cost some disks a file at best, or the write
 * target.
 */
static errcode_t pack_bridged(struct compact *c, const struct unit *units,
			      size_t nunits)
{
	struct planner *p = c->p;
	uint64_t all, before = count_at_best(c, NULL, &all), i;
	uint8_t *joined = NULL;
	uint32_t *x = NULL;
	blk64_t blocks = 0;
	size_t nx = 0, k;
	errcode_t ret;

	if (before == all)
		return 0;
	for (i = 0; i < p->layout->nfiles; i++)
		if (c->member[i])
			blocks += layout_stream_blocks(p->layout, &p->layout->files[i]);
	ret = compact_bridge_files(c, (blk64_t)(blocks * (CONSOLIDATE_AMPLIFICATION - 1)),
			    &x, &nx);
	if (ret || !nx)
		goto out;
	joined = calloc(p->layout->nfiles + 1, 1);
	if (!joined) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < p->layout->nfiles; i++)
		if (c->member[i] == 2)
			c->member[i] = 1;
	for (k = 0; k < nx; k++) {
		c->member[x[k]] = 1;
		joined[x[k]] = 1;
	}
	ret = pack_leaving_extras(c, -1, units, nunits, x, nx);
	if (ret || count_at_best(c, joined, &all) > before)
		goto out;
	/* No better: as it was. */
	for (i = 0; i < p->layout->nfiles; i++)
		if (joined[i])
			c->member[i] = 0;
		else if (c->member[i] == 2)
			c->member[i] = 1;
	ret = pack_all_zones(c, -1, units, nunits, NULL, 0);
out:
	free(joined);
	free(x);
	return ret;
}

/*
 * Pack_all_zones; then, when the planner asks for it (a packing without
 * was taken back), once more with the settled files parting a zone's
 * gaps if that leaves files short of a place at their best (pack_bridged),
 * and the files still with no place get the room left at the gaps' ends,
 * in pieces (compact_split.c):
 * else the frontier may stage them out of the way bit by bit and the
 * packing, leaving them worse, is taken back whole.
 */
static errcode_t pack_whole(struct compact *c, int64_t zone,
			    const struct unit *units, size_t nunits,
			    const uint32_t *extra, size_t nextra)
{
	errcode_t ret = pack_all_zones(c, zone, units, nunits, extra, nextra);

	if (!ret && zone < 0 && c->p->splitting)
		ret = pack_bridged(c, units, nunits);
	if (!ret && zone < 0 && c->p->splitting)
		ret = compact_split_leftovers(c);
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

	for (i = spacemap_find(sm, lo); i < sm->n && SM_SEG(sm, i).start < hi; i++) {
		uint32_t w = SM_SEG(sm, i).owner;

		if (w < SM_FILE0 || c->p->owner_count[w])
			continue;
		c->p->owner_count[w] = 1;
		if (grow_n(&o, &cap, n + 1, sizeof(*o))) {
			free(o);
			return ENOMEM;
		}
		o[n++] = w - SM_FILE0;
	}
	for (i = 0; i < n; i++)
		c->p->owner_count[o[i] + SM_FILE0] = 0;
	*out = o;
	*nout = n;
	return 0;
}

/* Rounds of direct moves before a chunk is cleared. */
#define DIRECT_PASSES	64

/* Walk one gap's packed part chunk by chunk.  *stuck: ran out of room. */
static errcode_t run_gap(struct compact *c, const struct gap *g, int *stuck)
{
	struct planner *p = c->p;
	blk64_t front = g->start;
	blk64_t end = g->used ? zonewalk_blk(p, g->start, g->used - 1, NULL) + 1 : front;
	errcode_t ret = 0;

	while (front < end && !*stuck) {
		blk64_t avail = total_free(&p->sm), slack, len;
		uint32_t *own = NULL;
		size_t nown = 0, i;
		uint64_t f;
		int ok = 1, pass;

		/* Little free space makes many small chunks: a long walk. */
		ret = planner_check(p);
		if (ret)
			break;
		slack = avail / 8 + TREE_SLACK_MIN;
		if (avail <= slack + 1) {
			*stuck = 1;
			break;
		}
		len = (avail - slack) / (p->chunk_div > 1 ? (blk64_t)p->chunk_div : 1);
		if (len > end - front)
			len = end - front;
		if (!len) {
			*stuck = 1;
			break;
		}
		/* Never end a chunk inside a file's tree blocks: take them all. */
		for (i = 0; i < c->nplaced; i++) {
			blk64_t s, tree;

			f = c->placed[i];

			if (c->member[f] != 1 || !c->final[f])
				continue;
			tree = file_need(c, f) - layout_stream_blocks(p->layout, &p->layout->files[f]);
			s = compact_fin(c, f, layout_stream_blocks(p->layout, &p->layout->files[f]), NULL);
			if (s <= front + len && s + tree > front + len)
				len = s + tree - front;
		}
		c->chunk_start = front;
		ret = stage_gather(c, front, front + len);
		/*
		 * First every block whose final place is free goes there
		 * directly, again while that frees others' final places: only
		 * what is left (on a cycle, or behind one) is staged below.
		 */
		for (pass = 0; !ret && !p->variant->no_direct && pass < DIRECT_PASSES; pass++) {
			blk64_t moved = 0, m;

			for (i = 0; !ret && i < c->nplaced; i++) {
				ret = compact_move_direct(c, c->placed[i], &m);
				moved += m;
				p->plan->direct_moves += !!m;
			}
			if (!ret && moved)
				ret = stage_gather(c, front, front + len);
			if (!moved)
				break;
		}
		if (!ret)
			ret = owners_in(c, front, front + len, &own, &nown);
		for (i = 0; !ret && ok && i < nown; i++)
			ret = compact_move_clear(c, own[i], front, front + len, &ok);
		free(own);
		for (i = 0; !ret && ok && i < c->nplaced; i++)
			if (c->member[f = c->placed[i]] == 1 && c->final[f] < front + len &&
			    compact_fin(c, f, layout_stream_blocks(p->layout, &p->layout->files[f]) - 1,
					NULL) >= front)
				ret = compact_move_fill(c, f, front, front + len, &ok);
		if (!ok)
			*stuck = 1;
		front += len;
	}
	return ret;
}

int compact_within_zone(const struct planner *p, uint32_t file, int64_t z)
{
	const struct layout_piece *r;
	struct layout_piece sole;
	uint32_t n, i;

	r = planner_runs(p, file, &n, &sole);
	for (i = 0; i < n; i++)
		if (planner_zone_of(p, r[i].start) != z ||
		    planner_zone_of(p, r[i].start + r[i].len - 1) != z)
			return 0;
	r = planner_meta(p, file, &n);
	for (i = 0; i < n; i++)
		if (planner_zone_of(p, r[i].start) != z)
			return 0;
	return 1;
}

/* Files of zone Z that are fine where they are but may move to make room. */
static errcode_t zone_files(struct compact *c, int64_t z, uint32_t **out,
			    size_t *nout)
{
	struct planner *p = c->p;
	uint32_t *x;
	uint64_t f;
	size_t n = 0;
	blk64_t need;

	x = malloc((p->layout->nfiles + 1) * sizeof(*x));
	if (!x)
		return ENOMEM;
	for (f = 0; f < p->layout->nfiles; f++) {
		if (c->member[f] || (p->pf[f].flags & (PF_UNMOVABLE | PF_PENDING)) ||
		    planner_best(p, f) > 1 || !compact_within_zone(p, f, z))
			continue;
		/* A file whose tree would shrink is in pieces: not one of these. */
		if (place_need(p, f, 0, &need) ||
		    planner_etb_contig(p, f) != planner_etb_now(p, f))
			continue;
		c->member[f] = 1;
		x[n++] = f;
	}
	*out = x;
	*nout = n;
	return 0;
}

errcode_t compact_place(struct planner *p, const struct unit *units, size_t nunits,
			int64_t zone, int *complete)
{
	struct compact c;
	uint32_t *extra = NULL;
	size_t i, nextra = 0;
	uint32_t k;
	int stuck = 0;
	errcode_t ret = 0;

	*complete = 1;
	if (!nunits && zone < 0)
		return 0;
	ret = planner_owner_count(p);
	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.member = calloc(p->layout->nfiles + 1, 1);
	c.final = calloc(p->layout->nfiles + 1, sizeof(*c.final));
	c.need = calloc(p->layout->nfiles + 1, sizeof(*c.need));
	c.cross = calloc(p->layout->nfiles + 1, sizeof(*c.cross));	/* NULL: no retry */
	c.span = zone < 0;
	if (!c.member || !c.final || !c.need) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0; i < nunits; i++)
		for (k = 0; k < units[i].n; k++) {
			uint32_t file = p->members[units[i].first + k];
			const struct layout_file *lf = &p->layout->files[file];
			blk64_t need;

			/*
			 * Files with a readable map (block-mapped ones where
			 * any block is addressable) that fit in a zone, or,
			 * packing across zones, in as many as their best.
			 */
			if (((lf->flags & LAYOUT_F_EXTENTS) ||
			     ext2fs_blocks_count(p->fs->super) <= (1ULL << 32)) &&
			    (planner_best(p, file) <= 1 || c.span) &&
			    (p->pf[file].flags & PF_PENDING) &&
			    !place_need(p, file, planner_best(p, file) > 1 ?
					(int)planner_best(p, file) - 1 : 0, &need)) {
				c.member[file] = 1;
				if (planner_best(p, file) > 1)
					c.need[file] = need;
			}
		}
	if (zone < 0 && !must_span(&c))
		c.span = 0;	/* each zone a bin of its own */
	if (zone >= 0)
		ret = zone_files(&c, zone, &extra, &nextra);
	if (!ret && zone >= 0 && nextra && nunits)
		ret = pack_leaving_extras(&c, zone, units, nunits, extra, nextra);
	else if (!ret)
		ret = pack_whole(&c, zone, units, nunits, extra, nextra);
	/* The files packed, listed once: each chunk looks at them, not at every file. */
	if (!ret && !(c.placed = malloc((p->layout->nfiles + 1) * sizeof(*c.placed))))
		ret = ENOMEM;
	for (i = 0; !ret && i < p->layout->nfiles; i++)
		if (c.member[i] == 1)
			c.placed[c.nplaced++] = i;
	for (i = 0; !ret && i < c.ngaps && !stuck; i++)
		if (c.gaps[i].used)
			ret = run_gap(&c, &c.gaps[i], &stuck);
	if (!ret)
		ret = stage_unreserve(&c, UINT32_MAX);
	*complete = !stuck;
out:
	compact_split_free(&c);
	free(extra);
	free(c.member);
	free(c.placed);
	free(c.final);
	free(c.need);
	free(c.cross);
	free(c.gaps);
	piece_vec_free(&c.cand);
	free(c.res);
	blk_vec_free(&c.want);
	piece_vec_free(&c.held);
	return ret;
}
