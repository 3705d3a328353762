/*
 * move.h --- moving one file to its planned blocks (move.c).
 */
#ifndef DEFRAG_MOVE_H
#define DEFRAG_MOVE_H

#include "defrag.h"
#include "fmap.h"

/*
 * Copy buffer, and the data a batch of moves writes before its commit
 * flushes it: 32 MiB makes the flushes (a commit's two or three) cost
 * little beside the data on a rotating disk (a flush waits for the
 * platter, tens of ms; 32 MiB take a quarter of a second to write).
 */
#define MOVE_DEFAULT_BUFFER	(32u << 20)

struct move_ctx {
	ext2_filsys	fs;
	struct switch_ctx *sw;
	char		*buf;
	blk64_t		buf_blocks;
	e2f_progress_fn	progress;	/* E2F_PHASE_MOVE; nonzero cancels before the switch */
	void		*progress_priv;
	blk64_t		done, total;	/* progress, blocks */
	blk64_t		copied, written;	/* so far, blocks */
	struct verify	*verify;	/* --verify: read back before each switch; owned */
	blk64_t		batch_blocks;	/* written since the batch opened */
	uint64_t	reuse_commits;	/* batches ended for a reuse of freed blocks */
};

struct move_stats {
	int		switched;
	int		switch_failed;	/* a write of switch_file() failed: stop, run e2fsck */
	blk64_t		copied;		/* data blocks copied */
	blk64_t		written;	/* data and mapping blocks written */
};

errcode_t move_init(struct move_ctx *c, ext2_filsys fs, struct switch_ctx *sw,
		    size_t buffer_bytes);
void move_fini(struct move_ctx *c);

/*
 * Move INO: its stream as it is on disk now, with CHANGES (stream ranges
 * to new blocks), and its extent tree (extent files) in META.
 * E2F_ERR_CANCELLED when the progress callback asked to stop before the
 * switch: the file is untouched.  Any other error also leaves the file as
 * it was, unless a write of the switch itself failed (st->switch_failed:
 * the switch context refuses further work).  A move switched is in the
 * open batch (writer.h): durable when it commits.
 */
errcode_t move_file(struct move_ctx *c, ext2_ino_t ino,
		    const struct runs_change *changes, size_t nchanges,
		    const struct layout_piece *meta, size_t nmeta,
		    struct move_stats *st);

#endif /* DEFRAG_MOVE_H */
