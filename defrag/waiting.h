/*
 * waiting.h --- what units kept waiting hold back from later ones
 * (waiting.c): the mover's marks for unit_walk.c.
 */
#ifndef DEFRAG_WAITING_H
#define DEFRAG_WAITING_H

#include "defrag.h"

struct waiting {
	const struct layout *layout;
	const struct plan *plan;
	const struct run_opts *opts;
	blk64_t		first, end;	/* the filesystem's data blocks */
	/* Per layer of marks (unit_walk.h's MARKS_FRONT, MARKS_REST): */
	ext2fs_block_bitmap dst[2];	/* every block its units' moves may gain */
	uint32_t	*file_walk[2];	/* per file: the walk of it a unit moved it in */
	uint32_t	walk[2];	/* its walk's number (from 1) */
	uint64_t	*seg_at, *meta_at;	/* per move: its first of plan->segs, ->meta */
};

errcode_t waiting_init(struct waiting *w, ext2_filsys fs, const struct layout *layout,
		       const struct plan *plan, const struct run_opts *opts);
void waiting_fini(struct waiting *w);

/* The moves of unit U: [*FIRST, *END). */
void waiting_unit_moves(const struct waiting *w, uint64_t u, uint64_t *first,
			uint64_t *end);

/* Forget the files and destinations marked in LAYER. */
void waiting_unmark(struct waiting *w, int layer);

/*
 * Whether unit U (from move FROM on) moves a file a unit marked (in
 * either layer) moves, or may gain a block such a unit may gain: then it
 * waits too, so that each file's moves keep their order and each
 * waiting unit finds its planned blocks free when its turn comes.
 */
int waiting_conflicts(struct waiting *w, uint64_t u, uint64_t from);

/* Mark unit U's files and the blocks its moves may gain in LAYER (it is kept waiting). */
void waiting_mark(struct waiting *w, uint64_t u, int layer);

#endif /* DEFRAG_WAITING_H */
