/*
 * readthrough.h --- which gaps between the sources of a pass the mover
 * reads through (readthrough.c): its rule, and its model's (iomodel.c).
 */
#ifndef DEFRAG_READTHROUGH_H
#define DEFRAG_READTHROUGH_H

#include <stddef.h>

#include <ext2fs/ext2fs.h>

#include "e2frag.h"

/*
 * A gap between two sources this short is read through: one request
 * costs less than two (a repositioning waits half a rotation; 64 KiB
 * pass under the head in about as long) and holds little of the buffer.
 */
#define READ_THROUGH_BYTES	(64u << 10)

/*
 * A longer gap (as long as the buffer allows) is read through too where
 * it holds data a later move reads (the plan's sources, units.h): read
 * once now, in the pass, that comes from the page cache then.  Where
 * files lie interleaved, or a recording's pieces between others', reading
 * each file on its own costs a seek a piece across the whole span, again
 * for each file; so the span is read once.  The rest of the gap (free
 * blocks, files that stay) is read for nothing: at most this much for
 * each seek saved, one a run of later data in the gap and one for the
 * jump over it (about what passes under the head while it repositions:
 * some 8 ms at 120 MB/s).
 */
#define READ_THROUGH_OTHER_BYTES	(1u << 20)

/*
 * Whether the gap of LEN blocks at START between two sources of a pass is
 * read through, LATER the blocks the plan's moves read (NULL: none), HELD
 * those the run has read or written (the page cache holds them: they
 * cost a copy, not a seek or a transfer, and count neither way, so that
 * LATER need not forget what was read; NULL: none), blocks of BLOCKSIZE
 * bytes.  The caller checks that the buffer
 * holds it.
 */
int read_through(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
		 blk64_t start, blk64_t len, unsigned blocksize);

/*
 * A group that copies at most this share of the buffer (1/N) reads ahead
 * too.  On a tree whose files fill each other's places the moves go in
 * chains, a file a group after the one holding its place, and a group of
 * a few moves reads its sources a seek each: reading the later moves'
 * sources in its pass, in block order, leaves them in the page cache for
 * the groups to come.  A group of recordings reads enough of its own.
 */
#define READ_AHEAD_SMALL_GROUP	8

/*
 * The read-ahead of a pass that copies COPIED blocks with a buffer of
 * BUDGET blocks: none (*N 0) unless it is small (READ_AHEAD_SMALL_GROUP)
 * and LATER is known; else up to BUDGET blocks of LATER
 * (the plan's sources) not in HELD (read or written by the run), in
 * block order from *FROM (0: the start of the disk; moved past them, so
 * that the next pass goes on from there: all of LATER before it is held
 * once this pass is done), into *RUNS (*N of them, *CAP grown), two runs
 * within READ_THROUGH_BYTES of each other joined (the gap read through).
 * The pass issues them in its order (read_ahead_to).  ENOMEM, else 0.
 */
errcode_t read_ahead_runs(ext2fs_block_bitmap later, ext2fs_block_bitmap held,
			  blk64_t *from, blk64_t copied, blk64_t budget,
			  unsigned blocksize, struct layout_piece **runs, size_t *n,
			  size_t *cap);

/*
 * The runs of RUNS[*AT, N) due before a read of [BLK, END): those before
 * BLK (trimmed at it) are handed to ISSUE(PRIV, start, len) in order;
 * what [BLK, END) covers is dropped, a run's part past END left for the
 * next read.  *AT and RUNS move past them.  ISSUE's error stops it.
 */
errcode_t read_ahead_to(struct layout_piece *runs, size_t n, size_t *at,
			blk64_t blk, blk64_t end,
			errcode_t (*issue)(void *priv, blk64_t start, blk64_t len),
			void *priv);

#endif /* DEFRAG_READTHROUGH_H */
