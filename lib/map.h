/*
 * map.h --- the block map: the layout's block space cut into cells, each
 * showing the worst state of the blocks in it.
 *
 * One model, two consumers: e2fragmap draws it on a terminal, e2frag --svg
 * writes it as a picture.  Both ask the same questions: what state is each
 * cell of a zoom level in, who owns a range of blocks, which cells hold a
 * given file (and the files it interleaves with).
 *
 * Zoom level K puts 2^K blocks in a cell; cell C of level K covers blocks
 * [C * 2^K, (C + 1) * 2^K), clipped to the filesystem.  Cells start at
 * block 0, so on a 1 KiB-block filesystem the boot block (before
 * s_first_data_block) shows as fixed metadata.  Levels coarse enough to
 * have at most MAP_CACHED_CELLS cells are computed once, when the map is
 * built, in one pass over the runs of blocks; finer levels are computed
 * on request for the window asked for, from the runs inside it (found by
 * binary search).  Either way a request costs about the cells and runs
 * asked for, not the size of the filesystem.
 *
 * Like the rest of the core, this never prints; errors are errcode_t.
 */
#ifndef E2FRAG_MAP_H
#define E2FRAG_MAP_H

#include "e2frag.h"

/*
 * The states of a block, from least to most worth seeing: a cell with
 * blocks in several states shows the highest.  Files are FILE when they
 * have no more pieces than they could have (doc/design.md: best), FRAGMENTED
 * when they have more, INTERLEAVED when they interleave with other files
 * (whatever their pieces).  Directories are DIR however they lie.
 */
enum map_state {
	MAP_FREE,
	MAP_FIXED,		/* superblocks, descriptors, bitmaps, inode tables, reserved inodes */
	MAP_JOURNAL,		/* the journal inode's blocks */
	MAP_UNKNOWN,		/* in use in the block bitmap, but no inode owns it */
	MAP_DIR,
	MAP_FILE,
	MAP_FRAGMENTED,
	MAP_INTERLEAVED,
	MAP_NSTATES,
	MAP_PAST_END = MAP_NSTATES	/* a cell beyond the last block */
};

/* Short name for a legend ("free", "metadata", ...) and a one-line description. */
const char *map_state_name(enum map_state state);
const char *map_state_description(enum map_state state);

/* Levels coarser than this many cells are kept in memory (one byte per cell). */
#define MAP_CACHED_CELLS	((uint64_t)1 << 22)

struct map;

/*
 * Build the map of LAYOUT (which must outlive it and stay unchanged).
 * Reads nothing from disk: everything comes from the layout, its fixed
 * metadata bitmap and the filesystem's block bitmap loaded by the scan.
 */
errcode_t map_build(const struct layout *layout, struct map **ret);

/*
 * The same, keeping in memory only the levels of at most CACHED_CELLS
 * cells (map_build uses MAP_CACHED_CELLS).  The answers do not depend on
 * it, only the memory and the time they take; tests use it to check both
 * ways of computing cells against each other.
 */
errcode_t map_build_cached(const struct layout *layout, uint64_t cached_cells,
			   struct map **ret);
void map_free(struct map *map);

const struct layout *map_layout(const struct map *map);
/*
 * The partners index (layout_partners_of) of a layout that keeps no
 * lists, into *RET (NULL when it keeps them or no file interleaves).
 * Built on the first call, which a highlight of an interleaved file
 * makes, not with the map: most maps are looked at without one.  Not to
 * be called from two threads at once.
 */
errcode_t map_partners(const struct map *map, struct layout_partners **ret);

/*
 * Give the map PARTNERS, from layout_partners_open(map_layout(MAP)) built
 * elsewhere (e2fragmap builds it in a thread of its own once the first
 * screen is up); the map closes it when it has one already.
 */
void map_partners_give(struct map *map, struct layout_partners *partners);

/* Blocks the map covers: the filesystem's block count. */
blk64_t map_blocks(const struct map *map);

/* Zoom levels 0 .. map_levels() - 1; the last one has a single cell. */
unsigned map_levels(const struct map *map);

/* Cells of LEVEL: ceil(map_blocks / 2^LEVEL). */
uint64_t map_cells(const struct map *map, unsigned level);

/* The finest level with at most MAX_CELLS cells (the last level if none). */
unsigned map_level_fit(const struct map *map, uint64_t max_cells);

/* State of one block (MAP_PAST_END beyond the filesystem). */
enum map_state map_block_state(const struct map *map, blk64_t block);

/*
 * States of cells FIRST .. FIRST + COUNT - 1 of LEVEL, one byte each
 * (enum map_state) into STATES; cells beyond the last are MAP_PAST_END.
 */
void map_cell_states(const struct map *map, unsigned level, uint64_t first,
		     uint64_t count, uint8_t *states);

/*
 * How many of the blocks START .. START + LEN - 1 are in each state
 * (each block counted once, in its worst state).  Blocks beyond the
 * filesystem are not counted.
 */
void map_range_counts(const struct map *map, blk64_t start, blk64_t len,
		      blk64_t counts[MAP_NSTATES]);

/*
 * The inodes owning blocks in START .. START + LEN - 1 (data, indirect,
 * extent tree and EA blocks; not the reserved inodes, which are fixed
 * metadata), ascending, each once.  *INOS is malloc'd (NULL when none).
 */
errcode_t map_range_owners(const struct map *map, blk64_t start, blk64_t len,
			   ext2_ino_t **inos, uint64_t *n);

/*
 * For cells FIRST .. FIRST + COUNT - 1 of LEVEL (COUNT entries each): the
 * inode owning the cell's lowest owned block, and the one owning its
 * highest; 0 where no inode owns a block in the cell.  Where two cells
 * meet, LAST_INO of the one and FIRST_INO of the next say whether one
 * file's blocks end there and another's begin (a picture draws that as a
 * boundary).  Owned blocks are those of map_range_owners.  Time: the
 * runs in the window and the cells they reach.  ENOMEM, else 0.
 */
errcode_t map_cell_owner_ends(const struct map *map, unsigned level, uint64_t first,
			      uint64_t count, ext2_ino_t *first_ino, ext2_ino_t *last_ino);

/* ---------------------------------------------------------------- highlight */

/* What a cell holds of a highlighted file, from least to most. */
enum map_mark { MAP_MARK_NONE, MAP_MARK_PARTNER, MAP_MARK_FILE };

struct map_highlight;

/*
 * Highlight the file layout->files[FILE_INDEX]: every block it owns
 * (its pieces and its extent tree and EA blocks) and, as partners, every
 * block of the files it interleaves with.
 */
errcode_t map_highlight_new(const struct map *map, uint64_t file_index,
			    struct map_highlight **ret);
void map_highlight_free(struct map_highlight *hl);

/* The file it highlights (index into layout->files). */
uint64_t map_highlight_file(const struct map_highlight *hl);

/*
 * Marks (enum map_mark) of cells FIRST .. FIRST + COUNT - 1 of LEVEL:
 * MAP_MARK_FILE when the cell holds a block of the file, else
 * MAP_MARK_PARTNER when it holds a block of a partner.
 */
void map_highlight_cells(const struct map_highlight *hl, unsigned level,
			 uint64_t first, uint64_t count, uint8_t *marks);

/*
 * How many blocks of the highlighted file itself (not its partners) each
 * of cells FIRST .. FIRST + COUNT - 1 of LEVEL holds, into BLOCKS; a
 * picture draws a cell the file only partly fills as partial.  It looks
 * at every run of the highlight: for a whole picture, not a redraw.
 */
void map_highlight_file_blocks(const struct map_highlight *hl, unsigned level,
			       uint64_t first, uint64_t count, blk64_t *blocks);

/* ------------------------------------------------------------- finding */

struct map_find_index;

/*
 * An index of the named files of LAYOUT, for map_find_files(): every
 * file with a name, grouped by directory (in path order), each group by
 * name, and each directory's path.  About 12 bytes a file.  LAYOUT's
 * names must be read (not LAYOUT_NAMES_NONE, or map_names_read() first)
 * and outlive it.
 */
errcode_t map_find_index_build(const struct layout *layout, struct map_find_index **ret);
void map_find_index_free(struct map_find_index *index);

/*
 * The files whose name matches PATTERN, with fnmatch() semantics: a
 * pattern without '/' is matched against each file's own name (its last
 * path component: "rec0016.ts", "*.ts"); one with a '/' against its
 * whole path, taken from the root when it does not start with '/', with
 * FNM_PATHNAME ('*' and '?' never match a '/': "/tv/rec*").  Only files
 * that own blocks (the layout's files) and that the scan named are found;
 * a hard-linked file under the first name the scan found.  *FILES
 * (malloc'd, NULL when none) gets indexes into layout->files, by
 * directory path, then by name.
 */
errcode_t map_find_files(const struct map_find_index *index, const char *pattern,
			 uint32_t **files, uint64_t *n);

/*
 * The same search, its matches kept as they were found (a bit for each
 * file of INDEX, some 0.2 bytes a file): map_find_count() says how many,
 * map_find_file() gives the K-th (0-based, the order of map_find_files)
 * in time logarithmic in the files.  For a search that matches millions
 * of files of which a screenful is shown.  *RESULT must be freed with
 * map_find_result_free() before INDEX is.
 */
struct map_find_result;

errcode_t map_find(const struct map_find_index *index, const char *pattern,
		   struct map_find_result **result);
uint64_t map_find_count(const struct map_find_result *result);	/* 0 for NULL */
uint32_t map_find_file(const struct map_find_result *result, uint64_t k);
void map_find_result_free(struct map_find_result *result);

/* --------------------------------------------------------------- names */

/*
 * Whether the names of FS can be read after a scan without them
 * (LAYOUT_NAMES_NONE): not with inline directories, which only the
 * inode scan finds.
 */
int map_names_can_wait(ext2_filsys fs);

/*
 * Read the names of LAYOUT, scanned with LAYOUT_NAMES_NONE, as a scan
 * with LAYOUT_NAMES_ALL would have, then order its interleave sets (their
 * members by path).  Reads the directories through layout->fs.  It may
 * run in a thread of its own while another reads the layout, the map and
 * its highlights, provided nothing reads the layout's names (layout_path
 * and map_find_files), its sets or set_members, or uses layout->fs's I/O
 * or inode cache until it has returned.  PROGRESS (may be NULL) is
 * called as the directories are read (E2F_PHASE_DIRS); when it returns
 * nonzero the reading stops with E2F_ERR_CANCELLED, the layout's names
 * partial but usable.
 */
errcode_t map_names_read(struct layout *layout, e2f_progress_fn progress, void *priv);

#endif /* E2FRAG_MAP_H */
