/*
 * iomodel.h --- a run's own I/O on the modeled disk (iomodel.c): what
 * units.c charges each move of a plan, following the mover's groups,
 * reads, flushes and commits (move.h, execute.c).
 */
#ifndef DEFRAG_IOMODEL_H
#define DEFRAG_IOMODEL_H

#include "defrag.h"
#include "writer.h"

/* One copy a move makes: LEN blocks from SRC to DST. */
struct io_copy {
	blk64_t		src, dst, len;
};

/* A move as the model sees it: its file and its copies. */
struct io_move {
	uint32_t	file;
	uint64_t	copy_at, ncopies;	/* in the copies array */
	blk64_t		itable;		/* its inode's inode table block (0: none) */
};

/*
 * The modeled seconds of each of the N moves MV (COPIES their copies,
 * SOURCES every block they copy from, UNIT_END[0..NUNITS) where each
 * unit ends) into SECONDS[0..N), on FS (for its block size and bitmaps)
 * and MODEL with BUFFER_BYTES of data per commit and the journal LOG
 * (switch_log_limits, its room 0 with --verify: logged moves, batches
 * and checkpoints), the units taken in the mover's order: WAITING,
 * units that need a commit wait while later ones go ahead (waiting.c);
 * else the plan's, committing where a unit needs it.  ENOMEM or a
 * bitmap error, else 0.
 */
errcode_t iomodel_moves(ext2_filsys fs, const struct readmodel *model,
			size_t buffer_bytes, const struct switch_log_limits *log,
			const struct io_move *mv,
			uint64_t n, const struct io_copy *copies,
			ext2fs_block_bitmap sources,
			const uint64_t *unit_end, uint64_t nunits, int waiting,
			double *seconds);

#endif /* DEFRAG_IOMODEL_H */
