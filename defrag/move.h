/*
 * move.h --- moving one file to its planned blocks (move.c).
 */
#ifndef DEFRAG_MOVE_H
#define DEFRAG_MOVE_H

#include "defrag.h"
#include "fmap.h"
#include "readthrough.h"

/*
 * Copy buffer, and the data a batch of moves writes before its commit
 * flushes it: 64 MiB makes the flushes (a commit's two or three) cost
 * little beside the data on a rotating disk (a flush waits for the
 * platter, tens of ms; 64 MiB take half a second to write), and lets a
 * pass read through the pieces of other files that later moves read
 * (readthrough.h).  On the nearly full recordings disks of
 * bench/iocost.sh the modeled run is 6 to 8% shorter than with 32 MiB
 * (within twice the sequential limit: 1.93 and 1.86 times, where 32 MiB
 * left 2.04 and 2.01); 128 MiB gains 7% more for twice the memory.
 */
#define MOVE_DEFAULT_BUFFER	(64u << 20)

/*
 * A group's bounds (execute.c): its moves, and its data in buffers.  The
 * reads of a group go in one pass in the disk's order, so the larger the
 * group the fewer the seeks; the moves' maps held meanwhile bound it.
 */
#define MOVE_GROUP_MOVES	4096
#define MOVE_GROUP_BUFFERS	32


/*
 * A move into blocks the open batch released writes at most this much
 * of them through the batch's journal transaction (writer.h's logged
 * moves) rather than commit first.  On the modeled disk a commit costs
 * its flushes, each a seek and a rotation (some 50 ms), where a logged
 * MiB costs its second write, about 9 ms: below a MiB the log is much
 * the cheaper, and a chain of small files (a tree) commits once, not
 * once a link.  Larger moves commit, and the data is written once.
 */
#define MOVE_LOG_MAX_BYTES	(1u << 20)

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
	ext2fs_block_bitmap claimed;	/* blocks the open group gains or releases */
	blk64_t		wait_blk;	/* a move that waited for a group: a block
					 * it needs, in use or claimed (0: none) */
	blk64_t		chunk_blocks;	/* a group's reads at a time: half the buffer */
	struct copy_op	*ops;		/* the group's copies, by source */
	struct copy_op	*placed;	/* a chunk's, by destination (src: op_at) */
	size_t		nops, ops_cap;
	blk64_t		*op_at;		/* each op's place in the buffer, blocks */
	size_t		op_at_cap;
	blk64_t		group_logged;	/* blocks the group's members log */
	ext2fs_block_bitmap later;	/* blocks the plan's moves read, or
					 * NULL (not owned; those held are
					 * read already) */
	ext2fs_block_bitmap held;	/* blocks the run read or wrote (the
					 * page cache's), with LATER */
	struct layout_piece *ahead;	/* a small group's read-ahead (readthrough.h) */
	size_t		nahead, ahead_cap, ahead_at;
	blk64_t		ahead_from;	/* where the next one starts */
};

struct move_stats {
	int		switched;
	int		switch_failed;	/* a write of switch_file() failed: stop, run e2fsck */
	blk64_t		copied;		/* data blocks copied */
	blk64_t		written;	/* data and mapping blocks written */
};

/*
 * One move: INO's stream as it is on disk when the move is reserved,
 * with CHANGES (stream ranges to new blocks), and its extent tree
 * (extent files) in META.
 */
struct move_req {
	ext2_ino_t	ino;
	const struct runs_change *changes;
	size_t		nchanges;
	const struct layout_piece *meta;
	size_t		nmeta;
};

struct move_member {
	struct fmap	m;
	struct fmap_rebuild r;
	ext2_ino_t	ino;
	errcode_t	err;		/* failed before its switch: the file as it was */
	int		active;		/* has copies to make and a switch */
	blk64_t		logged;		/* blocks it writes through the batch's
					 * transaction (switch_write) */
	struct move_stats st;
};

struct move_group {
	struct move_member *mem;
	size_t		n, cap;
};

errcode_t move_init(struct move_ctx *c, ext2_filsys fs, struct switch_ctx *sw,
		    size_t buffer_bytes);
void move_fini(struct move_ctx *c);

/*
 * Moves in groups: the data of many moves read once, in the disk's
 * order.  A group's moves are each reserved and checked free, their
 * copies all made (sources read in physical block order, in large
 * requests, a buffer at a time, each buffer written to its destinations
 * at once), and only then is each switched, in order.  Every source is
 * a block its file owns and no member gains (the gained blocks are free
 * and claimed by one member only), so nothing a group reads is written
 * before it is read.  Until its switch a file is untouched on disk, so a
 * cancel (or a crash) before it leaves the old layout whole; a switched
 * move is in the open batch (writer.h), durable when it commits.
 *
 * move_group_reserve: reserve REQ's moves in order into G (which may
 * hold moves already), up to the first that gains a block an earlier
 * member gains or releases (it waits for the next group: its blocks are
 * free only once that move is durable).  Returns how many requests G
 * took: G->mem[k].err is a failed move, .active one that copies and
 * switches.  The caller keeps a file's second move out of the group it
 * is in.  MODE (execute.c says which units take which):
 *   MOVE_RESERVE_PLAN: a move that gains blocks the open batch released
 *     logs them (MOVE_LOG_MAX_BYTES, where the transaction has room) or
 *     commits it first (they are free once it is durable); a failed
 *     commit sets *SWITCH_FAILED and ends the group.
 *   MOVE_RESERVE_WAIT_FIRST: so, but where REQ's first move would commit,
 *     gains a block a member claims, or gains a block not free, G takes
 *     nothing and *WAITS says for what (enum move_wait).
 *   MOVE_RESERVE_WHOLE: where any of the moves would, G takes none of
 *     them and *WAITS says for what: all N or nothing, and no commit.
 * Waiting for a group, C->wait_blk is a block the move needs (taken, or
 * claimed in the group), 0 when it cannot say: the move may go once that
 * block is free and unclaimed, not before.
 * 0 taken with neither flag set: out of memory.
 */
enum move_reserve {
	MOVE_RESERVE_PLAN,
	MOVE_RESERVE_WAIT_FIRST,
	MOVE_RESERVE_WHOLE
};

/* What a move that may not go yet waits for. */
enum move_wait {
	MOVE_WAIT_NONE,
	MOVE_WAIT_GROUP,	/* blocks a member claims, or not free yet:
				 * the moves before it, a later group */
	MOVE_WAIT_COMMIT	/* blocks the open batch released, more than
				 * it may log: the batch's commit */
};

size_t move_group_reserve(struct move_ctx *c, struct move_group *g,
			  const struct move_req *req, size_t n, enum move_reserve mode,
			  enum move_wait *waits, int *switch_failed);

/*
 * Commit the open batch, if it holds moves, so that the blocks it
 * released may be gained (counted as a commit a reuse forced).
 */
errcode_t move_commit_for_reuse(struct move_ctx *c);

/*
 * The group's copies and new mapping blocks.  An error fails every
 * active member (E2F_ERR_CANCELLED: the progress callback asked to
 * stop).
 */
errcode_t move_group_copy(struct move_ctx *c, struct move_group *g);

/* Member K's switch (it is active and the copy succeeded). */
errcode_t move_group_switch(struct move_ctx *c, struct move_group *g, size_t k);

/*
 * After the group's switches: commit when the batch holds --buffer of
 * data; empty G for the next group.  The commit's error, or 0.
 */
errcode_t move_group_end(struct move_ctx *c, struct move_group *g);

/* Empty G without a commit (a stop, a failure). */
void move_group_drop(struct move_ctx *c, struct move_group *g);
void move_group_free(struct move_group *g);

#endif /* DEFRAG_MOVE_H */
