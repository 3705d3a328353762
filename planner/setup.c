/*
 * setup.c --- the planner's starting point: every file's blocks in the
 * space map (pinned when it must not move), the candidates' maps read and
 * checked (skipped, with the reason, when e2defrag must not move them),
 * and the units to place (interleave sets in path order, single files),
 * largest first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"
#include "compare.h"

/* Sort RUNS and clip overlaps among unmovable owners (EA blocks shared by inodes). */
static errcode_t resolve_overlaps(struct sm_run *runs, size_t *n)
{
	size_t i, o = 0;
	errcode_t ret = spacemap_sort(runs, *n);

	if (ret)
		return ret;
	for (i = 0; i < *n; i++) {
		struct sm_run r = runs[i];

		if (o) {
			struct sm_run *prev = &runs[o - 1];
			blk64_t pend = prev->start + prev->len;

			if (r.start < pend) {
				/* Only owners that never move may overlap. */
				if (r.owner >= SM_FILE0 || prev->owner >= SM_FILE0)
					return E2F_ERR_CORRUPT_INODE;
				if (r.start + r.len <= pend)
					continue;
				r.len -= pend - r.start;
				r.start = pend;
			}
		}
		runs[o++] = r;
	}
	*n = o;
	return 0;
}

static errcode_t add_seg(struct sm_run **runs, size_t *n, size_t *cap,
			 blk64_t start, blk64_t len, uint32_t owner)
{
	do {
		/* Runs hold less than 2^32 blocks: a longer one in parts. */
		uint32_t part = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;

		if (grow_n(runs, cap, *n + 1, sizeof(**runs)))
			return ENOMEM;
		(*runs)[*n].start = start;
		(*runs)[*n].len = part;
		(*runs)[(*n)++].owner = owner;
		start += part;
		len -= part;
	} while (len);
	return 0;
}

/* Extent tree blocks per file, and the space map. */
errcode_t planner_build_space(struct planner *p)
{
	struct layout *layout = p->layout;
	ext2_filsys fs = p->fs;
	struct layout_aux *aux;
	struct sm_run *runs = NULL;
	size_t nruns = 0, cap = 0;
	blk64_t first = fs->super->s_first_data_block;
	blk64_t end = ext2fs_blocks_count(fs->super), s, e;
	uint64_t i, a;
	errcode_t ret = 0;

	aux = malloc((layout->naux ? layout->naux : 1) * sizeof(*aux));
	p->tree_blocks = malloc((layout->naux ? layout->naux : 1) * sizeof(*p->tree_blocks));
	if (!aux || !p->tree_blocks) {
		ret = ENOMEM;
		goto out;
	}
	copy_n(aux, layout->aux, layout->naux * sizeof(*aux));
	sort_n(aux, layout->naux, sizeof(*aux), compare_aux_ino);
	/*
	 * Room for every run at once: grown by doubling, the array (more
	 * runs than files) would be copied and paged in again and again.
	 */
	cap = layout->naux + 1;
	for (i = 0; i < layout->nfiles; i++)
		cap += layout_file_pieces(layout, &layout->files[i]);
	for (s = first; s < end; s = e) {	/* the fixed metadata's runs */
		if (ext2fs_find_first_set_block_bitmap2(layout->fixed, s, end - 1, &s))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, s, end - 1, &e))
			e = end;
		cap++;
	}
	runs = alloc_written(cap * sizeof(*runs));
	if (!runs) {
		ret = ENOMEM;
		goto out;
	}
	for (i = 0, a = 0; i < layout->nfiles; i++) {
		const struct layout_file *f = &layout->files[i];
		uint32_t owner = p->pf[i].flags & PF_UNMOVABLE ? SM_PINNED : SM_FILE0 + i;
		struct file_state *st = NULL;
		struct file_state_more *more = NULL;
		uint32_t k;

		/* A million files take a while: progress (and a cancel) now and then. */
		if (!(i & 0xffff) && i && (ret = planner_check(p)))
			goto out;
		while (a < layout->naux && aux[a].ino < f->ino)
			a++;
		for (; a < layout->naux && aux[a].ino == f->ino; a++) {
			if (aux[a].kind != LAYOUT_AUX_ETB)
				continue;
			/* A file with a tree has a state from the start: where it is. */
			if (!st) {
				ret = planner_state(p, i, &st);
				if (!ret)
					ret = planner_more(p, st, &more);
				if (ret)
					goto out;
				more->meta_off = p->ntree_blocks;
				more->had_tree = 1;
			}
			p->tree_blocks[p->ntree_blocks].start = aux[a].start;
			p->tree_blocks[p->ntree_blocks++].len = aux[a].len;
			more->nmeta++;
			ret = add_seg(&runs, &nruns, &cap, aux[a].start, aux[a].len, owner);
			if (ret)
				goto out;
		}
		for (k = 0; k < layout_file_pieces(layout, f); k++) {
			struct layout_piece pc = layout_file_piece(layout, f, k);

			ret = add_seg(&runs, &nruns, &cap, pc.start, pc.len, owner);
			if (ret)
				goto out;
		}
	}
	for (a = 0; a < layout->naux; a++) {
		if (aux[a].kind == LAYOUT_AUX_XATTR) {
			ret = add_seg(&runs, &nruns, &cap, aux[a].start, aux[a].len,
				      SM_PINNED);
			if (ret)
				goto out;
		}
	}
	for (s = first; s < end; s = e) {
		if (ext2fs_find_first_set_block_bitmap2(layout->fixed, s, end - 1, &s))
			break;
		if (ext2fs_find_first_zero_block_bitmap2(layout->fixed, s, end - 1, &e))
			e = end;
		ret = add_seg(&runs, &nruns, &cap, s, e - s, SM_META);
		if (ret)
			goto out;
	}
	ret = resolve_overlaps(runs, &nruns);
	if (!ret)
		ret = spacemap_build(&p->sm, first, end, runs, nruns, fs->block_map);
out:
	free(aux);
	free(runs);
	return ret;
}

/* Check each candidate's map; skip those e2defrag must not or cannot move. */
errcode_t planner_check_candidates(struct planner *p)
{
	uint64_t i;
	errcode_t ret;

	for (i = 0; i < p->layout->nfiles; i++) {
		struct planner_file *f = &p->pf[i];
		struct file_state *st;
		struct fmap *m;
		uint8_t skip = SKIP_NONE;

		if (!(f->flags & PF_PENDING))
			continue;
		ret = planner_check(p);
		if (ret)
			return ret;
		/* (No map made for a plain block map: its flags are clear.) */
		ret = planner_map_figures(p, i, &m);
		if (ret == E2F_ERR_CORRUPT_INODE || ret == PLAN_ERR_CHANGED ||
		    ret == EXT2_ET_INLINE_DATA_NO_BLOCK) {
			skip = SKIP_CORRUPT;
		} else if (ret) {
			return ret;
		} else {
			if (m && m->i_flags & (EXT2_COMPR_FL | EXT2_COMPRBLK_FL |
					       EXT4_SNAPFILE_FL))
				skip = SKIP_FLAGS;
		}
		if (skip) {
			ret = planner_state(p, i, &st);	/* made by planner_fmap */
			if (ret)
				return ret;
			st->skip = skip;
			f->flags &= ~PF_PENDING;
			f->flags |= PF_UNMOVABLE;
		}
	}
	return 0;
}

static int cmp_unit(const void *a, const void *b, void *arg)
{
	const struct unit *x = a, *y = b;
	const uint32_t *members = arg;

	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return members[x->first] < members[y->first] ? -1 :
	       members[x->first] > members[y->first];
}

static int cmp_member_key(const void *a, const void *b)
{
	const struct member_key *x = a, *y = b;

	return x->file < y->file ? -1 : x->file > y->file;
}

uint32_t planner_member_at(const struct planner *p, uint32_t file)
{
	struct member_key key = { file, 0 };
	const struct member_key *k = p->nmembers ?
		bsearch(&key, p->member_keys, p->nmembers, sizeof(key),
			cmp_member_key) : NULL;

	return k ? k->at : NO_MEMBER;
}

errcode_t planner_build_units(struct planner *p)
{
	struct layout *layout = p->layout;
	uint64_t i, cap = 1;
	uint8_t *in_unit;
	uint32_t m;

	/* Units and members are the pending files: few of a large filesystem. */
	for (i = 0; i < layout->nfiles; i++)
		cap += !!(p->pf[i].flags & PF_PENDING);
	p->members = malloc(cap * sizeof(*p->members));
	p->units = malloc(cap * sizeof(*p->units));
	p->member_keys = malloc(cap * sizeof(*p->member_keys));
	in_unit = calloc(layout->nfiles + 1, 1);
	if (!p->members || !p->units || !p->member_keys || !in_unit) {
		free(in_unit);
		return ENOMEM;
	}
	/* Interleave sets first: their pending members, in path order. */
	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];
		struct unit *u = &p->units[p->nunits];

		u->first = p->nmembers;
		u->n = 0;
		u->blocks = 0;
		for (m = 0; m < s->members; m++) {
			uint32_t fi = layout->set_members[s->first_member + m];

			if (!(p->pf[fi].flags & PF_PENDING) || in_unit[fi])
				continue;
			in_unit[fi] = 1;
			p->members[p->nmembers++] = fi;
			u->n++;
			u->blocks += layout_stream_blocks(layout, &layout->files[fi]);
		}
		if (u->n > 1)
			for (m = 0; m < u->n; m++)
				p->pf[p->members[u->first + m]].flags |= PF_IN_SET;
		if (u->n)
			p->nunits++;
	}
	for (i = 0; i < layout->nfiles; i++) {
		struct unit *u;

		if (!(p->pf[i].flags & PF_PENDING) || in_unit[i])
			continue;
		u = &p->units[p->nunits++];
		u->first = p->nmembers;
		u->n = 1;
		u->blocks = layout_stream_blocks(layout, &layout->files[i]);
		p->members[p->nmembers++] = i;
	}
	free(in_unit);
	for (i = 0; i < p->nmembers; i++) {
		p->member_keys[i].file = p->members[i];
		p->member_keys[i].at = i;
	}
	sort_n(p->member_keys, p->nmembers, sizeof(*p->member_keys), cmp_member_key);
	sort_n_r(p->units, p->nunits, sizeof(*p->units), cmp_unit, p->members);
	return 0;
}

