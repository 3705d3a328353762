/*
 * compact_int.h --- what the files of compaction (compact.c,
 * compact_stage.c, compact_move.c) share.
 */
#ifndef PLANNER_COMPACT_INT_H
#define PLANNER_COMPACT_INT_H

#include "planner_int.h"

/* Free space kept back from a chunk for the new extent trees of staged files. */
#define TREE_SLACK_MIN	64

/*
 * A gap starts at a physical block; its length and what is packed in it
 * count blocks as zonewalk.c walks them (a gap of a whole-space packing
 * runs on past the metadata between zones).
 */
struct gap {
	blk64_t		start, len;
	blk64_t		used;		/* packed from start */
};

/* Final places of indirect blocks, kept free until their file is complete. */
struct reserved {
	uint32_t	file;
	blk64_t		blk;
};

/* A file packed in pieces (compact_split.c): its final place, address order. */
struct compact_split {
	uint32_t	file, n;
	struct layout_piece *runs;
};

struct compact {
	struct planner	*p;
	uint8_t		*member;	/* per file: takes part */
	uint32_t	*placed;	/* files with member 1 once packed, in order */
	size_t		nplaced;
	blk64_t		*final;		/* per file: where its stream goes, or 0 */
	blk64_t		*need;		/* per file: blocks it takes packed, or 0: its own */
	int		span;		/* gaps run on across zones (zonewalk.c) */
	uint8_t		*cross;		/* per file: zone boundaries allowed past best - 1
					 * (pack's retry_across) */
	struct reserved	*res;		/* reserved slots */
	size_t		nres, res_cap;
	struct blk_vec	want;		/* slots to reserve after the move at hand */
	struct piece_vec held;		/* final places the move at hand takes directly */
	blk64_t		chunk_start;	/* the chunk at hand */
	struct gap	*gaps;
	size_t		ngaps;
	struct compact_split	*splits;	/* files whose final place is in pieces */
	size_t		nsplits, splits_cap;
	/* Staging candidates for the chunk at hand: free runs, best first. */
	struct piece_vec cand;
	size_t		cand_next;
	size_t		cand_out;	/* the first cand_out are where free space stays */
	blk64_t		cand_off;
};


/* compact_split.c */
/* F's place in pieces, or NULL. */
const struct compact_split *compact_split_of(const struct compact *c, uint32_t f);
/* Block of position OFF in S's runs; *LEFT to the end of its run. */
blk64_t compact_split_blk(const struct compact_split *s, blk64_t off, blk64_t *left);
/*
 * Files the packing left with no place get the room left at the ends of
 * the fewest gaps that hold them, in fewer pieces than they have.
 */
errcode_t compact_split_leftovers(struct compact *c);
void compact_split_free(struct compact *c);

/*
 * Block of F's stream position OFF in its final place; *LEFT to its
 * zone's end (a split file: to its run's end).
 */
static inline blk64_t compact_fin(const struct compact *c, uint32_t f,
				  blk64_t off, blk64_t *left)
{
	const struct compact_split *s = c->nsplits ? compact_split_of(c, f) : NULL;

	return s ? compact_split_blk(s, off, left) : zonewalk_blk(c->p, c->final[f], off, left);
}

/* Stream position of BLK in F's final place (zonewalk_off's answer). */
blk64_t compact_off(const struct compact *c, uint32_t f, blk64_t blk);
/*
 * Positions [S, E) of F as changes to their final blocks, one per zone (a
 * split file: one per run), appended to OUT.
 */
errcode_t compact_segs(const struct compact *c, uint32_t f, blk64_t s,
		       blk64_t e, struct change_vec *out);

/* compact_stage.c */
/* List the free runs outside [LO, HI) to stage into, best first. */
errcode_t stage_gather(struct compact *c, blk64_t lo, blk64_t hi);
/*
 * A free run of LEN blocks where free space will stay (best fit), for a
 * whole file that has no place of its own; -1 when there is none.
 */
int stage_whole(struct compact *c, blk64_t len, blk64_t *at);
/*
 * The fewest (at most MAX_RUNS) free runs where free space will stay that
 * hold LEN blocks, largest first, the last a best fit, in address order;
 * *NOUT 0 when they do not.
 */
errcode_t stage_fewest(struct compact *c, blk64_t len, uint32_t max_runs,
		       struct layout_piece **out, size_t *nout);
/* Take LEN staging blocks, appended to OUT as runs; -1: too few. */
int stage_take(struct compact *c, blk64_t len, struct piece_vec *out);
/*
 * Split LEN positions of F from SO on, leaving [LO, HI), into direct moves
 * to their free final places (appended to MOVES, the places held) and
 * the rest (appended to REST).
 */
errcode_t stage_split_direct(struct compact *c, uint32_t f, blk64_t so,
			     blk64_t len, blk64_t lo, blk64_t hi,
			     struct change_vec *moves, struct change_vec *rest);
/* Mark the held final places with OWNER; give them back (and forget them). */
errcode_t stage_hold(struct compact *c, uint32_t owner);
errcode_t stage_release(struct compact *c);
errcode_t stage_want_slot(struct compact *c, blk64_t blk);
/*
 * A new place for F's indirect block at POS, in staging (the
 * fmap_close_alloc_fn of compact_move.c).
 */
int stage_mapping(struct compact *c, uint32_t f, blk64_t pos, blk64_t *pblk);
errcode_t stage_reserve_wanted(struct compact *c, uint32_t f);
errcode_t stage_unreserve(struct compact *c, uint32_t f);

/* compact_move.c */
errcode_t compact_move_clear(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
		      int *ok);
errcode_t compact_move_fill(struct compact *c, uint32_t f, blk64_t lo, blk64_t hi,
		     int *ok);
/*
 * Every part of F not in its final place whose final place is free now
 * goes there, in one move; *MOVED the blocks it moved (0: none, or no
 * room for the blocks the move needs besides).
 */
errcode_t compact_move_direct(struct compact *c, uint32_t f, blk64_t *moved);

/* compact.c */
/* Whether every block FILE owns lies in zone Z. */
int compact_within_zone(const struct planner *p, uint32_t file, int64_t z);

/* compact_bridge.c */
/*
 * The settled files that part two gaps of one zone (each whole in it, in
 * one run, movable), each stretch of them taken whole while they come to
 * at most BUDGET blocks: *OUT (malloc'd), *NOUT of them; their c->member
 * is left as it was (0).
 */
errcode_t compact_bridge_files(struct compact *c, blk64_t budget, uint32_t **out,
			size_t *nout);

/* compact.c, compact_holes.c */
/* Blocks F takes packed: its stream and the extent tree it needs (c->need). */
static inline blk64_t compact_need(const struct compact *c, uint32_t f)
{
	if (c->need[f])
		return c->need[f];
	return layout_stream_blocks(c->p->layout, &c->p->layout->files[f]) + planner_etb_contig(c->p, f);
}

/* Largest compact_need first, then by file index (sort_n_r, ARG the compact). */
int compact_cmp_need(const void *a, const void *b, void *arg);

/*
 * First gap (address order) with room for F after what it holds, its
 * final place then at the gap's fill point (c->gaps[].used moved past it);
 * -1: none.  F's final place is not set (the caller sets it).
 */
int64_t compact_first_fit(struct compact *c, uint32_t f);

/*
 * compact_holes.c: packed across zones, the files that fit a zone laid
 * out again, best fit, in what the files spanning zones leave of each
 * zone, when that gives every file taking part a place at its best.
 */
errcode_t compact_holes_refill(struct compact *c);

/* Room left in one zone of gap GAP (physically contiguous). */
struct hole {
	blk64_t		start, len;
	size_t		gap;
};

/*
 * The room of every gap, zone by zone, less every packed file's final
 * place: *OUT in address order (the caller frees it).
 */
errcode_t compact_holes_room(struct compact *c, struct hole **out, size_t *nout);

#endif /* PLANNER_COMPACT_INT_H */
