/*
 * main.c --- e2fragmap: an interactive block map of an ext2/3/4
 * filesystem.
 *
 * Opens the filesystem read-only through the core, scans it, builds the
 * map model, then hands the terminal to the views (loop.c).  Exit codes
 * are doc/design.md's: 0 success, 8 operational error, 16 usage error.
 */
#include <curses.h>
#include <getopt.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <unistd.h>

#include <et/com_err.h>

#include "config.h"
#include "color.h"
#include "progress.h"
#include "tui.h"
#include "version.h"

enum { EXIT_OK = 0, EXIT_OPERATIONAL = 8, EXIT_USAGE = 16 };
enum { OPT_COLOR = 256 };

/*
 * Zoom levels of at most this many cells are kept painted (one byte a
 * cell, 512 KiB in all); finer ones are painted from the runs in the
 * window drawn.  The whole filesystem on a screen of up to 16,000 cells
 * (mapview.c: up to 16 times finer, joined) is one of them.
 */
#define MAP_VIEW_CACHED_CELLS	((uint64_t)1 << 18)

/* How long leaving waits for the names' thread to stop. */
#define NAMES_STOP_MS	20

static const struct option long_options[] = {
	{ "color",   optional_argument, NULL, OPT_COLOR },
	{ "version", no_argument, NULL, 'V' },
	{ "help",    no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
"Usage: %s [options] SPEC\n"
"Show the block layout of an ext2/ext3/ext4 filesystem as an interactive\n"
"map, read-only: where each file lies, which files are fragmented and\n"
"which were written into each other's way.\n"
"\n"
"SPEC is an image file (raw or e2image -Q), a block device, a mount point,\n"
"LABEL=... or UUID=...\n"
"\n"
"      --color[=WHEN]  colour the map: auto (default: unless NO_COLOR is\n"
"                      set), always, never\n"
"  -V, --version       print the version and exit\n"
"  -h, --help          print this help and exit\n"
"\n"
"In the map, ? lists the keys and q (or ^C) quits; / finds files by name, glob\n"
"(*.ts) or path (/tv/*.ts).  Each state has its own glyph, with colour or\n"
"without (--color=never, NO_COLOR set, or a terminal such as vt100: ASCII).\n"
"\n"
"Exit status: 0 success, 8 operational error, 16 usage error.\n", prog);
}

/* Curses on the terminal, or an error message; 0 on success. */
static int start_curses(struct tui *t, SCREEN **screen)
{
	*screen = newterm(NULL, stdout, stdin);
	if (!*screen) {
		fprintf(stderr, "%s: cannot use the terminal (TERM=%s)\n", t->prog,
			getenv("TERM") ? getenv("TERM") : "");
		return -1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	tui_style_init(t);
	return 0;
}

/*
 * Give the terminal back.  Where it has an alternate screen, endwin()
 * brings back what was there; where it has none (vt100) the map would
 * stay under the shell's prompt, so clear it first.
 */
static void stop_curses(void)
{
	char *smcup = tigetstr("smcup");

	if (!smcup || smcup == (char *)-1) {
		erase();
		refresh();
	}
	endwin();
}

int main(int argc, char **argv)
{
	struct tui t;
	struct fsopen_info info;
	struct layout_opts opts;
	SCREEN *screen = NULL;
	errcode_t ret;
	int opt, status = EXIT_OPERATIONAL;
	double fs_bytes;

	setlocale(LC_ALL, "");
	initialize_e2f_error_table();
	initialize_ext2_error_table();
	memset(&t, 0, sizeof(t));
	memset(&info, 0, sizeof(info));
	t.started = util_now_seconds();
	t.prog = "e2fragmap";

	while ((opt = getopt_long(argc, argv, "Vh", long_options, NULL)) != -1) {
		switch (opt) {
		case OPT_COLOR: {
			enum color_mode mode = COLOR_MODE_ALWAYS;

			if (optarg && color_parse_mode(optarg, &mode)) {
				fprintf(stderr, "%s: --color wants auto, always or never, not '%s'\n",
					t.prog, optarg);
				return EXIT_USAGE;
			}
			t.color_mode = mode;
			break;
		}
		case 'V':
			report_version(stdout, "e2fragmap");
			return EXIT_OK;
		case 'h':
			usage(stdout, t.prog);
			return EXIT_OK;
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n", t.prog);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "%s: %s\n", t.prog, optind >= argc ?
			"no filesystem given" : "one filesystem at a time");
		fprintf(stderr, "Try '%s --help' for more information.\n", t.prog);
		return EXIT_USAGE;
	}
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "%s: the map needs a terminal; e2frag writes reports\n",
			t.prog);
		return EXIT_OPERATIONAL;
	}

	ret = fsopen_open(argv[optind], 0, NULL, &t.fs, &info);
	if (ret) {
		if (ret == E2F_ERR_UNSUPPORTED_FEATURE && info.unsupported[0])
			fprintf(stderr, "%s: %s uses the feature '%s', which %s cannot read\n",
				t.prog, argv[optind], info.unsupported, t.prog);
		else
			com_err(t.prog, ret, "while opening %s", argv[optind]);
		fsopen_close(NULL, &info);
		return EXIT_OPERATIONAL;
	}
	t.device = info.device;

	memset(&opts, 0, sizeof(opts));
	readmodel_defaults(&opts.model);
	fs_bytes = (double)ext2fs_blocks_count(t.fs->super) * t.fs->blocksize;
	if (opts.model.disk_bytes < fs_bytes)
		opts.model.disk_bytes = fs_bytes;
	/* The first screen needs no names: they are read once it is up (names.c). */
	opts.names = map_names_can_wait(t.fs) ? LAYOUT_NAMES_NONE : LAYOUT_NAMES_ALL;
	/* A file's partners are asked for when it is highlighted (map_partners). */
	opts.partner_counts_only = 1;
	if (isatty(STDERR_FILENO)) {
		opts.progress = report_scan_progress;
		opts.progress_priv = (void *)t.prog;
	}
	ret = layout_scan(t.fs, &opts, &t.layout);
	if (opts.progress)
		fputs("\r\033[K", stderr);
	if (ret) {
		com_err(t.prog, ret, "while scanning %s", info.device);
		goto out;
	}
	ret = map_build_cached(t.layout, MAP_VIEW_CACHED_CELLS, &t.map);
	if (ret) {
		com_err(t.prog, ret, "while building the map of %s", info.device);
		goto out;
	}

	if (opts.names == LAYOUT_NAMES_ALL) {
		ret = map_find_index_build(t.layout, &t.find);
		if (ret) {
			com_err(t.prog, ret, "while reading the names of %s", info.device);
			goto out;
		}
	} else {
		t.names_later = 1;	/* once the first screen is up (loop.c) */
	}
	if (getenv("E2FRAGMAP_KEYLOG"))
		t.keylog = fopen(getenv("E2FRAGMAP_KEYLOG"), "w");

	/* What e2frag would warn about goes to the status line here. */
	if (info.mount_flags & EXT2_MF_MOUNTED)
		tui_message(&t, "%s is mounted: the map may be out of date", info.device);
	else if (info.needs_recovery)
		tui_message(&t, "%s needs journal recovery: the journal holds newer metadata",
			    info.device);
	else if (t.layout->summary.corrupt_files || t.layout->unreadable_inodes)
		tui_message(&t, "%s has damaged inodes; run e2fsck", info.device);

	tui_signals_catch();
	if (start_curses(&t, &screen))
		goto out;
	t.fit = 1;
	tui_push(&t, &tui_map_view, NULL);
	tui_run(&t);
	stop_curses();
	/* ^C quits as q does; SIGTERM and SIGHUP, the terminal restored, kill. */
	if (tui_signal_caught() && tui_signal_caught() != SIGINT)
		tui_signal_resend(tui_signal_caught());
	status = EXIT_OK;
out:
	if (!tui_names_stop(&t, NAMES_STOP_MS)) {
		/*
		 * Still reading (a readahead, the index): leave without waiting
		 * for it; the terminal is already restored and nothing was
		 * written, and the kernel frees the rest.
		 */
		fflush(NULL);
		_exit(status);
	}
	if (t.keylog)
		fclose(t.keylog);
	if (screen)
		delscreen(screen);
	map_highlight_free(t.hl);
	map_find_index_free(t.find);
	layout_partners_close(t.partners);	/* when the names' thread was stopped */
	tui_worst_free(t.worst);
	free(t.cells);
	free(t.marks);
	tui_map_forget_matches(&t);
	map_free(t.map);
	layout_free(t.layout);
	fsopen_close(t.fs, &info);
	return status;
}
