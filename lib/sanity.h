/*
 * sanity.h --- read-only checks that a filesystem's metadata agree with
 * themselves, for a program that is about to move blocks.
 *
 * e2defrag must never write a filesystem whose metadata disagree: a block
 * owned twice, a block in use but free in the bitmap (the allocator would
 * hand it out again), counts or checksums that do not match.  e2fsck finds
 * all that and more; these checks find what matters to moving blocks, in
 * seconds, from what the scan (scan.c) reads anyway.  They never write and
 * never print: the first problem found comes back as a sanity_finding,
 * which sanity_describe() puts in words.
 *
 * Two passes:
 *   sanity_check_fs()      before the scan: superblock, group descriptor
 *                          and bitmap checksums (the scan reads the bitmaps
 *                          and would trust them);
 *   sanity_check_layout()  after a scan made with layout_opts.sanity: inode
 *                          and extent block checksums, flags the features
 *                          do not allow, corrupt block maps, blocks owned
 *                          twice or outside the bitmap's idea of use, the
 *                          inode bitmap, the free counts, the directories
 *                          and the quota files' usage.
 */
#ifndef SANITY_H
#define SANITY_H

#include "e2frag.h"

enum sanity_what {
	SANITY_NONE = 0,
	SANITY_SB_CSUM,		/* superblock checksum */
	SANITY_QUOTA_INODE,	/* the superblock's quota inode cannot be one (ino, detail: which) */
	SANITY_GD_CSUM,		/* group descriptor checksum (group) */
	SANITY_BBITMAP_CSUM,	/* block bitmap checksum (group) */
	SANITY_IBITMAP_CSUM,	/* inode bitmap checksum (group) */
	SANITY_INODE_CSUM,	/* inode checksum (ino) */
	SANITY_EXTENT_CSUM,	/* extent tree block checksum (ino, blk) */
	SANITY_BAD_FLAGS,	/* flags the features do not allow (ino, detail) */
	SANITY_BAD_EA_BLOCK,	/* extended attribute block outside the fs (ino, blk) */
	SANITY_BAD_EA_HEADER,	/* an attribute block's magic, block count or checksum (ino, blk) */
	SANITY_CORRUPT_MAP,	/* block map unreadable: outside the fs, loop, disorder (ino) */
	SANITY_BAD_SIZE,	/* i_size disagrees with the blocks (ino, recorded, counted: bytes) */
	SANITY_BAD_IBLOCKS,	/* i_blocks vs the blocks mapped (ino, recorded, counted: 512-byte units) */
	SANITY_DIR_HOLE,	/* a directory with a hole in its blocks (ino) */
	SANITY_BAD_SYMLINK,	/* a slow symlink's size or blocks (ino) */
	SANITY_DIR_CSUM,	/* a directory block's checksum (ino) */
	SANITY_DIR_CORRUPT,	/* a directory block e2fsck would salvage (ino) */
	SANITY_HTREE,		/* a hash index that disagrees with its names (ino) */
	SANITY_DUP_ENTRY,	/* a name twice in one directory (ino, detail: the name) */
	SANITY_BAD_ENTRY,	/* an entry naming an unused or reserved inode (ino: dir, ino2) */
	SANITY_LINK_COUNT,	/* i_links_count vs the entries (ino, recorded, counted) */
	SANITY_DUP_BLOCK,	/* owned twice (blk, ino, ino2; 0 = fixed metadata) */
	SANITY_USED_FREE,	/* owned, free in the block bitmap (blk, ino) */
	SANITY_FREE_USED,	/* in use in the block bitmap, owned by nothing (blk) */
	SANITY_INODE_NOT_MARKED, /* in use, free in the inode bitmap (ino) */
	SANITY_INODE_MARKED,	/* free, in use in the inode bitmap (ino) */
	SANITY_GROUP_FREE_BLOCKS, /* group's free block count vs bitmap (group, recorded, counted) */
	SANITY_GROUP_FREE_INODES, /* same for inodes */
	SANITY_GROUP_DIRS,	/* group's directory count vs inodes (group, recorded, counted) */
	SANITY_QUOTA_SPACE,	/* a quota entry's bytes vs its inodes' (ino: the quota file, detail: type, id, recorded, counted) */
	SANITY_QUOTA_INODES,	/* a quota entry's inode count vs the inodes' (same) */
	SANITY_QUOTA_MISSING,	/* an id charged by inodes without an entry (ino, detail, id, counted: bytes) */
};

struct sanity_finding {
	enum sanity_what what;
	ext2_ino_t	ino, ino2;	/* inodes concerned; 0 for none or fixed metadata */
	blk64_t		blk;
	dgrp_t		group;
	uint64_t	recorded, counted;
	uint32_t	id;		/* a user, group or project id (SANITY_QUOTA_*) */
	const char	*detail;	/* static text (SANITY_BAD_FLAGS) */
	char		name[64];	/* a name, printable (SANITY_DUP_ENTRY) */
	uint64_t	problems;	/* problems found in all, this one included */
};

/* What the scan noted for the layout checks (opaque; sanity.c). */
struct sanity_notes;

/*
 * Why INODE's flags are not allowed on FS (static text such as "has the
 * extents flag but the filesystem lacks the extent feature"), or NULL.
 * e2fsck's pass 1 clears such inodes or their flags; their blocks cannot
 * be trusted.
 */
const char *sanity_inode_flags(ext2_filsys fs, const struct ext2_inode *inode);

/*
 * Note inode INO (as the inode scan returned it, EXT2_INODE_SIZE bytes)
 * in LAYOUT's sanity notes, creating them.  Called by the scan for every
 * inode when layout_opts.sanity is set.
 */
errcode_t sanity_note_inode(struct layout *layout, ext2_ino_t ino,
			    const struct ext2_inode *inode);

/*
 * Note what the scan's walk of INO's map found: DATA data blocks, the last
 * ending at logical block LEND, the last initialized one at INIT_END (one
 * past), HOLE when a logical block before LEND is unmapped.
 */
void sanity_note_map(struct layout *layout, ext2_ino_t ino,
		     const struct ext2_inode *inode, blk64_t data,
		     blk64_t lend, blk64_t init_end, int hole);
/*
 * Whether an attribute in INODE's body (EXT2_INODE_SIZE bytes) keeps its
 * value in an attribute inode: its blocks count in INODE's i_blocks too.
 */
int sanity_inode_ea_values(ext2_filsys fs, const struct ext2_inode *inode);
/*
 * Note that INO's map, as the scan walked it, holds BLOCKS blocks (data,
 * indirect and extent tree blocks, its attribute block): i_blocks must
 * say so (e2fsck's pass 1 sets it, and a move adjusts it by what it
 * frees and gains, which keeps a wrong count wrong).  EA_VALUES: what
 * sanity_inode_ea_values said (then it is not checked).
 */
void sanity_note_blocks(struct layout *layout, ext2_ino_t ino,
			const struct ext2_inode *inode, int ea_values,
			blk64_t blocks);
/*
 * Note that the scan could not walk reserved inode INO's map (the resize
 * inode's or the journal's: a block outside the filesystem, a loop):
 * e2fsck clears such an inode, and its blocks are unknown.  Files' corrupt
 * maps are the layout's own (LAYOUT_F_CORRUPT).
 */
void sanity_note_corrupt_reserved(struct layout *layout, ext2_ino_t ino);
void sanity_notes_free(struct sanity_notes *notes);

/* The checks; 0 with FOUND->what == SANITY_NONE when all agree. */
errcode_t sanity_check_fs(ext2_filsys fs, struct sanity_finding *found);
errcode_t sanity_check_layout(struct layout *layout, struct sanity_finding *found);

/*
 * FOUND in words, without a trailing period ("block 1234 is owned by
 * inodes 12 and 13"); paths from LAYOUT when it is not NULL.  Returns the
 * length written, like snprintf.
 */
size_t sanity_describe(const struct layout *layout,
		       const struct sanity_finding *found, char *buf, size_t len);

#endif /* SANITY_H */
