/*
 * readthrough.h --- which gaps between the sources of a pass the mover
 * reads through (readthrough.c): its rule, and its model's (iomodel.c).
 */
#ifndef DEFRAG_READTHROUGH_H
#define DEFRAG_READTHROUGH_H

#include <ext2fs/ext2fs.h>

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

#endif /* DEFRAG_READTHROUGH_H */
