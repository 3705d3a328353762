/*
 * target.c --- the fuzz target: one mutated image through every read-only
 * path of the programs, as they take it.
 *
 *   e2frag        open and check as fsopen_open() does, scan, then the
 *                 text report with and without every section, or the file
 *                 table, the JSON report and the SVG map (MODE_FULL);
 *   e2fragmap     a scan without names, the block map model (every level,
 *                 owners and counts of ranges, a highlight), the names read
 *                 afterwards and a search;
 *   e2defrag -n   the refusals for writing (as with -f), the journal's
 *                 checks, the damage checks before and after a scan, and
 *                 when all pass: the selection, the planner (--pack with
 *                 MODE_PACK) and the plan's text and JSON reports.
 *
 * The image is read through memio (memio.h): nothing touches a file, and a
 * write anywhere aborts.  Reports go to /dev/null: what is checked is that
 * making them neither crashes nor trips a sanitizer.  libFuzzer calls
 * LLVMFuzzerTestOneInput (make fuzz); replay.c calls it on saved inputs
 * in the ordinary build (make check).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memio.h"
#include "map.h"
#include "sanity.h"
#include "writer.h"
#include "fmap_err.h"
#include "../../analyze/report.h"
#include "svg.h"
#include "../../defrag/report.h"

/* Larger inputs are not worth a run: the seeds are 256 KiB to 2 MiB. */
#define MAX_INPUT	(4u << 20)

/*
 * Which options the programs run with is the input's last byte (the end
 * of the last block, in a free block or after the filesystem): each run
 * takes one way, and mutations of that byte try the others.
 */
enum {
	MODE_FULL = 1 << 0,	/* e2frag --json, --svg, --raw; else the summary */
	MODE_PACK = 1 << 1,	/* e2defrag --pack */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static FILE *null_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc; (void)argv;
	initialize_e2f_error_table();
	initialize_fmap_error_table();
	initialize_plan_error_table();
	initialize_e2d_error_table();
	initialize_ext2_error_table();
	null_out = fopen("/dev/null", "w");
	if (!null_out) {
		perror("/dev/null");
		exit(1);
	}
	return 0;
}

/*
 * Whether the superblock claims no more blocks than the image holds.
 * fsopen_check_opened() refuses such an image right after ext2fs_open2();
 * asking first keeps libext2fs from allocating group descriptors for a
 * filesystem of 2^40 blocks, which is its business, not ours.
 */
static int fits(const uint8_t *data, size_t size)
{
	struct ext2_super_block sb;

	if (size < 2048)
		return 0;
	memcpy(&sb, data + 1024, sizeof(sb));
	if (sb.s_magic != EXT2_SUPER_MAGIC || sb.s_log_block_size > 6)
		return 0;
	return ext2fs_blocks_count(&sb) <= size / EXT2_BLOCK_SIZE(&sb);
}

/* The first interleaved file's path, else the first file's, into BUF. */
static void some_path(const struct layout *layout, char *buf, size_t len)
{
	uint64_t i = layout->ninterleaved ? layout->interleaved[0].file : 0;

	buf[0] = 0;
	if (layout->nfiles)
		layout_path(layout, layout->files[i].ino, buf, len);
}

/*
 * e2frag: the summary (twice: as it is, then with -g -F -i), or with
 * FULL the file table, --json and --svg, each on the scan it makes.
 */
static void run_e2frag(ext2_filsys fs, const struct readmodel *model, int full)
{
	struct layout_opts lo;
	struct report_opts ro;
	struct layout *layout = NULL;
	char path[4096];

	memset(&lo, 0, sizeof(lo));
	lo.model = *model;
	lo.names = full ? LAYOUT_NAMES_ALL : LAYOUT_NAMES_LOSSY;
	lo.partner_counts_only = !full;
	if (layout_scan(fs, &lo, &layout))
		return;
	memset(&ro, 0, sizeof(ro));
	ro.program = "e2frag";
	ro.device = ro.spec = "fuzz.img";
	ro.top = 10;
	ro.threshold = 10;
	/* What e2frag's text and JSON say e2defrag could improve. */
	if (layout_count_improvable(layout, 0, &ro.improvable))
		ro.improvable = 0;
	if (!full) {
		text_report(null_out, layout, &ro);
		ro.show_groups = ro.show_free = ro.show_sets = 1;
		text_report(null_out, layout, &ro);
	} else {
		ro.list = 1;
		ro.top = 0;
		ro.format = TABLE_RAW;
		table_print_files(null_out, layout, &ro, 0);
		ro.format = TABLE_JSON;
		table_print_files(null_out, layout, &ro, 0);
		json_report(null_out, layout, &ro);
		some_path(layout, path, sizeof(path));
		svg_report(layout, "fuzz.img", "/dev/null", path[0] ? path : NULL, NULL,
			   "e2frag");
		if (path[0] && !layout_select_path(layout, path))
			layout_summarize(layout, 0);
	}
	layout_free(layout);
}

/* What e2fragmap asks of the map: every level, a few ranges, a highlight. */
static void walk_map(const struct map *map, const struct layout *layout)
{
	blk64_t counts[MAP_NSTATES], blocks = map_blocks(map);
	uint8_t cells[256];
	ext2_ino_t *inos;
	uint64_t n, i;
	unsigned level;
	struct map_highlight *hl;

	for (level = 0; level < map_levels(map); level++) {
		uint64_t ncells = map_cells(map, level);

		map_cell_states(map, level, 0, sizeof(cells), cells);
		if (ncells > sizeof(cells))
			map_cell_states(map, level, ncells - sizeof(cells) / 2,
					sizeof(cells), cells);
	}
	map_level_fit(map, 80 * 24);
	for (i = 0; i < 4; i++) {
		blk64_t start = blocks / 4 * i, len = blocks / 3 + 1;

		map_range_counts(map, start, len, counts);
		map_block_state(map, start);
		if (!map_range_owners(map, start, len, &inos, &n))
			free(inos);
	}
	if (layout->nfiles && !map_highlight_new(map, layout->ninterleaved ?
						 layout->interleaved[0].file : 0, &hl)) {
		for (level = 0; level < map_levels(map); level++)
			map_highlight_cells(hl, level, 0, sizeof(cells), cells);
		map_highlight_free(hl);
	}
}

/* e2fragmap: the map first, the names behind it, then a search. */
static void run_e2fragmap(ext2_filsys fs, const struct readmodel *model)
{
	struct layout_opts lo;
	struct layout *layout = NULL;
	struct map *map = NULL;
	struct map_find_index *index = NULL;
	static const char *const patterns[] = { "*", "/*/*", "lost+found" };
	uint32_t *found;
	uint64_t n;
	unsigned i;

	memset(&lo, 0, sizeof(lo));
	lo.model = *model;
	lo.names = map_names_can_wait(fs) ? LAYOUT_NAMES_NONE : LAYOUT_NAMES_ALL;
	if (layout_scan(fs, &lo, &layout))
		return;
	if (!map_build(layout, &map)) {
		walk_map(map, layout);
		if ((lo.names == LAYOUT_NAMES_ALL ||
		     !map_names_read(layout, NULL, NULL)) &&
		    !map_find_index_build(layout, &index)) {
			for (i = 0; i < sizeof(patterns) / sizeof(*patterns); i++)
				if (!map_find_files(index, patterns[i], &found, &n))
					free(found);
			map_find_index_free(index);
		}
		map_free(map);
	}
	layout_free(layout);
}

/* e2defrag -n -f (with PACK, --pack): refusals, damage checks, plan. */
static void run_e2defrag(ext2_filsys fs, const struct fsopen_info *info,
			 const struct readmodel *model, int pack)
{
	struct sanity_finding found;
	struct layout_opts lo;
	struct layout *layout = NULL;
	struct select_opts so;
	struct selection sel;
	struct plan_opts po;
	struct plan *plan = NULL;
	struct report r;
	const char *bad_path;
	char what[600];

	if (fsopen_write_refusal(fs, info, FSOPEN_WRITE | FSOPEN_FORCE) ||
	    switch_check(fs))
		return;
	if (sanity_check_fs(fs, &found) || found.what != SANITY_NONE) {
		sanity_describe(NULL, &found, what, sizeof(what));
		return;
	}
	memset(&lo, 0, sizeof(lo));
	lo.model = *model;
	lo.names = LAYOUT_NAMES_ALL;
	lo.sanity = 1;
	if (layout_scan(fs, &lo, &layout))
		return;
	if (sanity_check_layout(layout, &found) || found.what != SANITY_NONE) {
		sanity_describe(layout, &found, what, sizeof(what));
		goto out;
	}
	memset(&so, 0, sizeof(so));
	so.newer_than = INT64_MIN;
	if (select_files(layout, &so, &sel, &bad_path))
		goto out;
	memset(&po, 0, sizeof(po));
	po.pack = pack;
	if (!plan_build(layout, &sel, &po, &plan)) {
		memset(&r, 0, sizeof(r));
		r.prog = "e2defrag";
		r.device = "fuzz.img";
		r.verbose = 1;
		r.dry_run = 1;
		r.layout = layout;
		r.sel = &sel;
		r.plan = plan;
		text_plan(null_out, &r);
		json_output(null_out, &r);
		plan_free(plan);
	}
	select_free(&sel);
out:
	layout_free(layout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsopen_info info;
	struct readmodel model;
	ext2_filsys fs = NULL;
	char name[64];
	double bytes;
	uint8_t mode;

	if (size > MAX_INPUT || !fits(data, size))
		return -1;	/* not kept in the corpus */
	mode = data[size - 1];
	memio_name(name, sizeof(name), data, size);
	/* fsopen_open()'s read-only open: the flags it documents. */
	if (ext2fs_open2(name, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP |
			 EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, memio_manager, &fs))
		return 0;
	memset(&info, 0, sizeof(info));
	if (!fsopen_check_opened(fs, size, &info)) {
		readmodel_defaults(&model);
		bytes = (double)ext2fs_blocks_count(fs->super) * fs->blocksize;
		if (model.disk_bytes < bytes)
			model.disk_bytes = bytes;
		run_e2frag(fs, &model, mode & MODE_FULL);
		run_e2fragmap(fs, &model);
		run_e2defrag(fs, &info, &model, mode & MODE_PACK);
	}
	ext2fs_close_free(&fs);
	return 0;
}
