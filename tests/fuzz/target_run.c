/*
 * target_run.c --- the fuzz target for a whole e2defrag run: one mutated
 * image through the refusals and, when accepted, through a real run (the
 * plan and every move, the journal's and the metadata's writes), as
 * e2defrag -f takes it (defrag/main.c), on a writable copy in memory
 * (memimg, memio.h).
 *
 * The promise checked, any break of it an abort:
 *   - refused: the copy is byte for byte the input;
 *   - accepted with nothing to move: the same;
 *   - accepted and run: every file reads as it did, every block is owned
 *     once, the block bitmap is exactly what is owned and the free counts
 *     are the bitmaps' (fsoracle.h: libext2fs reads only, none of the
 *     planner's or the writer's code).  An input accepted although the
 *     oracle finds it inconsistent before the run aborts too: a refusal
 *     e2defrag(8) promises is missing.
 *
 * How the run goes is the input's last byte (MODE_*), the cancelling
 * move its last but one: mutations of them try the other ways.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memio.h"
#include "fsoracle.h"
#include "sanity.h"
#include "writer.h"
#include "fmap_err.h"
#include "../../defrag/defrag.h"
#include "../../defrag/report.h"

#define MAX_INPUT	(4u << 20)

enum {
	MODE_PACK	= 1 << 0,	/* --pack */
	MODE_VERIFY	= 1 << 1,	/* --verify */
	MODE_SMALL_BUF	= 1 << 2,	/* --buffer of a few blocks: copies in batches */
	MODE_CANCEL	= 1 << 3,	/* SIGINT while moving (the last but one byte: when) */
	MODE_NAMES_LATE	= 1 << 4,	/* names read after planning, as without PATHs */
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static FILE *null_out;
static int verbose;	/* FUZZ_RUN_VERBOSE set: a line per input on stderr */

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
	verbose = getenv("FUZZ_RUN_VERBOSE") != NULL;
	return 0;
}

static void broken(const char *what, const char *detail)
{
	fprintf(stderr, "run target: %s%s%s\n", what, detail ? ": " : "",
		detail ? detail : "");
	abort();
}

/* As target.c: no more blocks claimed than the image holds. */
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

/* What damage.c does on a refusal: nothing read may be written back. */
static void keep_clean(ext2_filsys fs)
{
	fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY | EXT2_FLAG_IB_DIRTY);
}

struct cancel {
	unsigned	calls, at;
};

static int cancel_at(void *priv, enum e2f_phase phase, uint64_t done, uint64_t total)
{
	struct cancel *c = priv;

	(void)done; (void)total;
	return phase == E2F_PHASE_MOVE && ++c->calls > c->at;
}

/* Whether the plan lists file I (main.c's, for layout_names_more). */
static int planned(void *priv, uint64_t i)
{
	return plan_has_line(priv, i);
}

/*
 * e2defrag -f's checks on the writable open FS, then its scan, selection
 * and plan; NULL *PLAN when refused (FS then as damage.c leaves it).
 */
static void plan_run(ext2_filsys fs, size_t size, uint8_t mode,
		     struct layout **layout, struct selection *sel,
		     struct plan **plan)
{
	struct fsopen_info info;
	struct sanity_finding found;
	struct layout_opts lo;
	struct select_opts so;
	struct plan_opts po;
	const char *bad_path;

	*layout = NULL;
	*plan = NULL;
	memset(&info, 0, sizeof(info));
	if (fsopen_check_opened(fs, size, &info) ||
	    fsopen_write_refusal(fs, &info, FSOPEN_FORCE) || switch_check(fs))
		return;
	if (sanity_check_fs(fs, &found) || found.what != SANITY_NONE) {
		keep_clean(fs);
		return;
	}
	memset(&lo, 0, sizeof(lo));
	readmodel_defaults(&lo.model);
	lo.model.disk_bytes = (double)ext2fs_blocks_count(fs->super) * fs->blocksize;
	lo.sanity = 1;
	lo.names = (mode & MODE_NAMES_LATE) && !ext2fs_has_feature_inline_data(fs->super) ?
		LAYOUT_NAMES_LOSSY : LAYOUT_NAMES_ALL;
	lo.partner_counts_only = 1;
	lo.no_outlines = 1;
	if (layout_scan(fs, &lo, layout)) {
		keep_clean(fs);
		return;
	}
	if (sanity_check_layout(*layout, &found) || found.what != SANITY_NONE) {
		keep_clean(fs);
		return;
	}
	layout_drop_extras(*layout);
	memset(&so, 0, sizeof(so));
	so.newer_than = INT64_MIN;
	so.layout_checked = 1;
	/* A failure from here on ends e2defrag with 8, nothing written. */
	if (select_files(*layout, &so, sel, &bad_path))
		return;
	memset(&po, 0, sizeof(po));
	po.pack = mode & MODE_PACK;
	if (plan_build(*layout, sel, &po, plan))
		return;
	if (lo.names != LAYOUT_NAMES_ALL &&
	    layout_names_more(*layout, planned, *plan)) {
		plan_free(*plan);
		*plan = NULL;
	}
}

/* The moves, as e2defrag makes them; the report as it prints it. */
static void move_all(ext2_filsys fs, struct layout *layout,
		     struct selection *sel, struct plan *plan,
		     uint8_t mode, uint8_t when)
{
	struct switch_ctx *sw = NULL;
	struct run_state st;
	struct run_opts ro;
	struct cancel cancel = { 0, when };
	struct layout_opts lo;
	struct layout *after = NULL;
	struct report r;
	errcode_t ret;

	ret = switch_open(fs, 0, &sw);
	if (ret)
		broken("switch_open failed after switch_check passed", error_message(ret));
	memset(&ro, 0, sizeof(ro));
	ro.max_seconds = -1;
	ro.buffer_bytes = mode & MODE_SMALL_BUF ? 3 * fs->blocksize : 0;
	ro.verify = !!(mode & MODE_VERIFY);
	if (mode & MODE_CANCEL) {
		ro.progress = cancel_at;
		ro.progress_priv = &cancel;
	}
	ret = run_plan(fs, sw, layout, plan, &ro, &st);
	if (ret)
		broken("run_plan failed", error_message(ret));
	/* The memory never fails a write: neither may a switch. */
	if (st.switch_failed)
		broken("a switch failed with no I/O error", NULL);
	ret = switch_close(sw);
	if (ret)
		broken("switch_close failed", error_message(ret));
	if (verbose)
		fprintf(stderr, "run target: mode %#x: %llu moves planned, %llu done, %llu failed%s\n",
			mode, (unsigned long long)plan->nmoves,
			(unsigned long long)st.done, (unsigned long long)st.failed,
			st.cancelled ? ", cancelled" : "");
	memset(&lo, 0, sizeof(lo));
	readmodel_defaults(&lo.model);
	lo.names = LAYOUT_NAMES_LOSSY;
	lo.partner_counts_only = 1;
	lo.no_outlines = 1;
	if (layout_scan(fs, &lo, &after))
		after = NULL;
	memset(&r, 0, sizeof(r));
	r.prog = "e2defrag";
	r.device = "fuzz.img";
	r.verbose = 1;
	r.layout = layout;
	r.sel = sel;
	r.plan = plan;
	r.after = after;
	r.run = &st;
	text_failures(null_out, &r);
	text_result(null_out, &r);
	json_output(null_out, &r);
	layout_free(after);
	run_free(&st);
}

/* The image IMG after the run against the input's BEFORE and its counts. */
static void check_after(const struct memimg *img,
			const struct fsoracle_files *before, int super_agreed)
{
	struct fsoracle_files *files = NULL;
	ext2_filsys fs = NULL;
	char name[64], why[256];
	errcode_t ret;

	memio_name(name, sizeof(name), img->data, img->size);
	ret = ext2fs_open2(name, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP, 0, 0,
			   memio_manager, &fs);
	if (ret)
		broken("the image does not open after the run", error_message(ret));
	if (ext2fs_has_feature_journal_needs_recovery(fs->super) ||
	    !(fs->super->s_state & EXT2_VALID_FS))
		broken("the run left the journal to recover or the filesystem not clean",
		       NULL);
	ret = fsoracle_files(fs, &files);
	if (ret)
		broken("reading the files after the run", error_message(ret));
	if (fsoracle_files_differ(before, files, why, sizeof(why)))
		broken("a file changed", why);
	if (fsoracle_blocks_differ(fs, super_agreed, why, sizeof(why)))
		broken("the blocks after the run", why);
	fsoracle_files_free(files);
	ext2fs_close_free(&fs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fsopen_info info;
	struct fsoracle_files *before = NULL;
	struct layout *layout = NULL;
	struct selection sel;
	struct plan *plan = NULL;
	struct memimg img;
	ext2_filsys ro = NULL, fs = NULL;
	char name[64], why[256];
	int super_agreed = 0, accepted;
	uint8_t mode, when;
	errcode_t ret;

	if (size > MAX_INPUT || !fits(data, size))
		return -1;	/* not kept in the corpus */
	mode = data[size - 1];
	when = data[size - 2] & 15;
	/* fsopen_open(): read-only first, refused as for writing. */
	memio_name(name, sizeof(name), data, size);
	if (ext2fs_open2(name, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP |
			 EXT2_FLAG_IGNORE_CSUM_ERRORS, 0, 0, memio_manager, &ro))
		return 0;
	memset(&info, 0, sizeof(info));
	if (fsopen_check_opened(ro, size, &info) ||
	    fsopen_write_refusal(ro, &info, FSOPEN_FORCE))
		goto out;
	/* Then read-write, on the copy, and e2defrag's own checks. */
	if (memimg_open(&img, data, size))
		broken("no memory for the image", NULL);
	memset(&sel, 0, sizeof(sel));
	ret = ext2fs_open2(img.name, NULL, EXT2_FLAG_64BITS | EXT2_FLAG_SKIP_MMP |
			   EXT2_FLAG_RW, 0, 0, memimg_manager, &fs);
	if (!ret)
		plan_run(fs, size, mode, &layout, &sel, &plan);
	if (plan && plan->nmoves) {
		/* Accepted: what the oracle reads before, on the input itself. */
		ret = fsoracle_files(ro, &before);
		if (ret)
			broken("reading the files of an accepted image", error_message(ret));
		super_agreed = fsoracle_super_counts_agree(ro);
		if (fsoracle_blocks_differ(ro, super_agreed, why, sizeof(why)))
			broken("accepted an image whose blocks disagree", why);
		move_all(fs, layout, &sel, plan, mode, when);
	}
	accepted = plan != NULL;
	if (verbose && !before)
		fprintf(stderr, "run target: %s\n", accepted ? "nothing to move" : "refused");
	plan_free(plan);
	select_free(&sel);
	layout_free(layout);
	if (fs && ext2fs_close_free(&fs))
		broken("closing the filesystem failed", NULL);
	if (before)
		check_after(&img, before, super_agreed);
	else if (memcmp(img.data, data, size))
		broken(accepted ? "nothing to move, yet the image changed" :
		       "refused, yet the image changed", NULL);
	fsoracle_files_free(before);
	memimg_close(&img);
out:
	ext2fs_close_free(&ro);
	return 0;
}
