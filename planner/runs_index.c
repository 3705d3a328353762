/*
 * runs_index.c --- where each run of a file's stream starts, kept from
 * move to move of that file.
 *
 * Finding a stream position's run takes its runs' offsets.  Worked out
 * afresh at every move, they would make each move of a file cost as much
 * as the file has pieces, and compaction moves a recording in many
 * pieces a chunk at a time, thousands of moves.  The planner keeps
 * them for one file, the one it moves now (moves of a file come one after
 * another), and a move's commit shifts them where it splices the runs
 * (filestate.c); anything else that changes or frees a file's runs
 * forgets them.
 */
#include <errno.h>
#include <string.h>

#include "planner_int.h"
#include "array.h"

/* Fewer runs than this are summed each time: nothing worth keeping. */
#define RUNS_INDEX_MIN	64

errcode_t planner_run_offsets(struct planner *p, uint32_t file,
			      const struct layout_piece *runs, uint32_t n,
			      const blk64_t **off)
{
	struct runs_index *x = &p->runs_index;

	if (runs_index_holds(x, file, runs, n)) {
		*off = x->off;
		return 0;
	}
	x->valid = 0;
	if (grow_n(&x->off, &x->cap, (size_t)n + 1, sizeof(*x->off)))
		return ENOMEM;
	runs_offsets(runs, n, x->off);
	/* (One run is the caller's SOLE, on its stack: never kept.) */
	if (n >= RUNS_INDEX_MIN) {
		x->valid = 1;
		x->file = file;
		x->runs = runs;
		x->n = n;
	}
	*off = x->off;
	return 0;
}

void planner_run_offsets_forget(struct planner *p)
{
	p->runs_index.valid = 0;
}

void planner_run_offsets_free(struct planner *p)
{
	free(p->runs_index.off);
	memset(&p->runs_index, 0, sizeof(p->runs_index));
	piece_vec_free(&p->commit.span);
}
