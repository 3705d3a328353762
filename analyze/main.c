/*
 * main.c --- e2frag: read-only layout analysis of an ext2/3/4 filesystem.
 *
 * Parses options, opens the filesystem through the core, scans it into a
 * layout and hands that to the report asked for.  Exit codes are
 * doc/design.md's: 0 nothing to do, 1 defragmentation recommended,
 * 8 operational error, 16 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <et/com_err.h>

#include "config.h"
#include "color.h"
#include "report.h"
#include "progress.h"
#include "modelopt.h"
#include "svg.h"
#include "metrics.h"
#include "version.h"

enum {
	EXIT_NOTHING = 0, EXIT_RECOMMEND = 1, EXIT_OPERATIONAL = 8, EXIT_USAGE = 16,
};

enum {
	OPT_NOHEADINGS = 256, OPT_LIST_COLUMNS, OPT_SVG, OPT_HIGHLIGHT, OPT_THRESHOLD,
	OPT_COLOR, OPT_METRICS, OPT_METRICS_MOUNTPOINT,
};

/* e2frag's own; the read model's follow (modelopt_long_options). */
static const struct option own_options[] = {
	{ "json",	   no_argument,	      NULL, 'J' },
	{ "list",	   no_argument,	      NULL, 'l' },
	{ "output",	   required_argument, NULL, 'o' },
	{ "raw",	   no_argument,	      NULL, 'r' },
	{ "pairs",	   no_argument,	      NULL, 'P' },
	{ "noheadings",	   no_argument,	      NULL, OPT_NOHEADINGS },
	{ "top",	   required_argument, NULL, 'N' },
	{ "groups",	   no_argument,	      NULL, 'g' },
	{ "free",	   no_argument,	      NULL, 'F' },
	{ "interleave",	   no_argument,	      NULL, 'i' },
	{ "threshold",	   required_argument, NULL, OPT_THRESHOLD },
	{ "list-columns",  no_argument,	      NULL, OPT_LIST_COLUMNS },
	{ "svg",	   required_argument, NULL, OPT_SVG },
	{ "highlight",	   required_argument, NULL, OPT_HIGHLIGHT },
	{ "color",	   optional_argument, NULL, OPT_COLOR },
	{ "metrics",	   required_argument, NULL, OPT_METRICS },
	{ "metrics-mountpoint", required_argument, NULL, OPT_METRICS_MOUNTPOINT },
	{ "verbose",	   no_argument,	      NULL, 'v' },
	{ "version",	   no_argument,	      NULL, 'V' },
	{ "help",	   no_argument,	      NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
"Usage: %s [options] SPEC [PATH...]\n"
"Analyze the block layout of an ext2/ext3/ext4 filesystem, read-only:\n"
"fragmentation, interleaving between files, free space and the time a\n"
"rotating disk would take to read it all back.\n"
"\n"
"SPEC is an image file (raw or e2image -Q), a block device, a mount point,\n"
"LABEL=... or UUID=...; PATHs (inside the filesystem) restrict the report\n"
"to those files and trees.\n"
"\n"
"Report:\n"
"  -J, --json              the whole report as JSON (see e2frag(8))\n"
"  -N, --top N             list the N worst files (default 10; 0: every file\n"
"                          that loses read time)\n"
"  -g, --groups            per-group table\n"
"  -F, --free              free-space histogram\n"
"  -i, --interleave        interleave sets in detail\n"
"      --threshold SCORE   score from which to recommend e2defrag (default 10)\n"
"      --svg FILE          also draw the block map as SVG into FILE (-: stdout only)\n"
"      --highlight PATH    in the SVG, mark PATH and the files it interleaves with\n"
"      --color[=WHEN]      colour the report: auto (default: on a terminal,\n"
"                          unless NO_COLOR is set), always, never\n"
"      --metrics FILE      also write the figures for node_exporter's textfile\n"
"                          collector into FILE (atomically)\n"
"      --metrics-mountpoint DIR  label them with this mount point (default:\n"
"                          where the filesystem is mounted, if it is)\n"
"\n"
"File table (worst lost read time first):\n"
"  -o, --output LIST       its columns (--list-columns); +LIST adds to the default\n"
"  -l, --list              print only the file table, every file (with -J: as\n"
"                          JSON {\"files\": [...]}, not the report)\n"
"  -r, --raw               the file table alone, unaligned\n"
"  -P, --pairs             the file table alone, as KEY=\"value\" pairs\n"
"      --noheadings        no header line\n"
"      --list-columns      list the columns and exit\n"
"\n", prog);
	modelopt_usage(out);
	fputs(
"\n"
"  -v, --verbose           report progress and unreadable inodes\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              print this help and exit\n"
"\n"
"Times are in seconds; --raw, --pairs and the table's JSON print numbers\n"
"unformatted (bytes, seconds, ratios).\n"
"\n"
"Exit status: 0 layout is fine, 1 defragmentation recommended,\n"
"8 operational error, 16 usage error.\n", out);
}

/* Options that are not the report's: gathered here, checked, then used. */
struct cli {
	struct report_opts	report;
	struct layout_opts	scan;
	int			json;			/* -J */
	const char		*svg, *highlight;	/* --svg, --highlight */
	const char		*metrics, *metrics_mountpoint;
	enum color_mode		color;
};

static int parse_args(int argc, char **argv, struct cli *c)
{
	const char *prog = c->report.program;
	struct option long_options[sizeof(own_options) / sizeof(*own_options) +
				   MODELOPT_COUNT];
	int opt, cols[64], ncols;
	const char *bad;
	size_t badlen;
	uint64_t n;

	modelopt_long_options(own_options, long_options);
	while ((opt = getopt_long(argc, argv, "Jjlo:rPnN:gFit:vVh", long_options,
				  NULL)) != -1) {
		if (modelopt_owns(opt)) {
			if (modelopt_parse(prog, opt, optarg, &c->scan.model))
				return -1;
			continue;
		}
		switch (opt) {
		case 'j':	/* the old spelling: still JSON, nothing else */
		case 'J': c->json = 1; break;
		case 'l': c->report.list = 1; break;
		case 'o':
			ncols = table_parse_columns(optarg, cols, 64, &bad, &badlen);
			if (ncols == -2) {
				fprintf(stderr, "%s: -o takes at most 64 columns\n", prog);
				return -1;
			}
			if (ncols < 0) {
				fprintf(stderr, "%s: unknown column '%.*s' (see --list-columns)\n",
					prog, (int)badlen, bad);
				return -1;
			}
			c->report.columns = optarg;
			break;
		case 'r':
		case 'P':
			if (c->report.format != TABLE_ALIGNED &&
			    c->report.format != (opt == 'r' ? TABLE_RAW : TABLE_PAIRS)) {
				fprintf(stderr, "%s: --raw and --pairs are mutually exclusive\n",
					prog);
				return -1;
			}
			c->report.format = opt == 'r' ? TABLE_RAW : TABLE_PAIRS;
			c->report.list = 1;
			break;
		case OPT_NOHEADINGS: c->report.noheadings = 1; break;
		case 'n':
			/* -n was --top once; in this suite it is e2defrag's dry run. */
			fprintf(stderr, "%s: -n is not an e2frag option (e2frag never writes; "
				"e2defrag -n is the dry run): --top N (-N N) lists the N worst "
				"files, --noheadings drops the header\n", prog);
			return -1;
		case 'N':
			if (util_parse_size(optarg, &n) || n > UINT32_MAX) {
				fprintf(stderr, "%s: --top wants a count, not '%s'\n",
					prog, optarg);
				return -1;
			}
			c->report.top = n;
			c->report.top_set = 1;
			break;
		case 'g': c->report.show_groups = 1; break;
		case 'F': c->report.show_free = 1; break;
		case 'i': c->report.show_sets = 1; break;
		case 't':
			/* -t was --threshold once; in this suite it is e2fragimg's type. */
			fprintf(stderr, "%s: -t is not an e2frag option (-t is e2fragimg's "
				"filesystem type): write --threshold %s\n", prog, optarg);
			return -1;
		case OPT_THRESHOLD:
			if (util_parse_double(optarg, 0, 100, &c->report.threshold)) {
				fprintf(stderr, "%s: --threshold wants a score from 0 to 100, not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		case OPT_LIST_COLUMNS:
			table_list_columns(stdout);
			exit(EXIT_NOTHING);
		case OPT_SVG: c->svg = optarg; break;
		case OPT_HIGHLIGHT: c->highlight = optarg; break;
		case OPT_METRICS:
			c->metrics = optarg;
			if (!metrics_path_ok(optarg, prog))
				return -1;
			break;
		case OPT_METRICS_MOUNTPOINT: c->metrics_mountpoint = optarg; break;
		case OPT_COLOR:
			if (optarg && color_parse_mode(optarg, &c->color)) {
				fprintf(stderr, "%s: --color wants auto, always or never, not '%s'\n",
					prog, optarg);
				return -1;
			}
			if (!optarg)
				c->color = COLOR_MODE_ALWAYS;
			break;
		case 'v': c->report.verbose = 1; break;
		case 'V':
			report_version(stdout, "e2frag");
			exit(EXIT_NOTHING);
		case 'h':
			usage(stdout, prog);
			exit(EXIT_NOTHING);
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n", prog);
			return -1;
		}
	}
	if (modelopt_check(prog, &c->scan.model))
		return -1;
	if (c->json && c->report.format != TABLE_ALIGNED) {
		fprintf(stderr, "%s: --json and --%s are mutually exclusive\n", prog,
			c->report.format == TABLE_RAW ? "raw" : "pairs");
		return -1;
	}
	/* -l -J: the file table as JSON; -J alone: the whole report. */
	if (c->json && c->report.list) {
		c->json = 0;
		c->report.format = TABLE_JSON;
	}
	/*
	 * The table's options shape nothing in the whole report: say so, once,
	 * rather than let a script think its -o took (lsblk -J takes -o, and
	 * so does our -l -J).
	 */
	if (c->json && (c->report.columns || c->report.top_set || c->report.noheadings)) {
		char given[64] = "";

		if (c->report.columns)
			strcat(given, "-o");
		if (c->report.top_set)
			strcat(strcat(given, *given ? ", " : ""), "--top");
		if (c->report.noheadings)
			strcat(strcat(given, *given ? ", " : ""), "--noheadings");
		fprintf(stderr, "%s: -J prints the whole report, every file with every "
			"field: %s ignored (options of the file table, which -l -J prints "
			"as JSON)\n", prog, given);
	}
	if (c->highlight && !c->svg) {
		fprintf(stderr, "%s: --highlight marks a file in the --svg map; give --svg too\n",
			prog);
		return -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no filesystem given\n", prog);
		fprintf(stderr, "Try '%s --help' for more information.\n", prog);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct cli c;
	struct fsopen_info info;
	struct layout *layout = NULL;
	ext2_filsys fs = NULL;
	const char *prog = "e2frag";
	errcode_t ret;
	int i, damaged, status = EXIT_OPERATIONAL;
	double fs_bytes;

	initialize_e2f_error_table();
	initialize_ext2_error_table();
	memset(&c, 0, sizeof(c));
	c.report.program = prog;
	c.report.top = 10;
	c.report.threshold = 10;
	readmodel_defaults(&c.scan.model);
	if (parse_args(argc, argv, &c))
		return EXIT_USAGE;
	c.report.spec = argv[optind];
	c.report.color = color_wanted(c.color, STDOUT_FILENO);
	c.report.paths = argv + optind + 1;
	c.report.npaths = argc - optind - 1;

	ret = fsopen_open(argv[optind], 0, NULL, &fs, &info);
	if (ret) {
		if (ret == E2F_ERR_UNSUPPORTED_FEATURE && info.unsupported[0])
			fprintf(stderr, "%s: %s uses the feature '%s', which %s cannot read\n",
				prog, argv[optind], info.unsupported, prog);
		else
			com_err(prog, ret, "while opening %s", argv[optind]);
		fsopen_close(NULL, &info);
		return EXIT_OPERATIONAL;
	}
	c.report.device = info.device;
	c.report.dump = info.dump == FSOPEN_DUMP_QCOW2;
	if ((info.mount_flags & EXT2_MF_MOUNTED) && info.mount_point[0])
		c.report.mount_point = info.mount_point;
	if (info.mount_flags & EXT2_MF_MOUNTED)
		fprintf(stderr, "%s: warning: %s is mounted%s%s; the results may be stale\n",
			prog, info.device, info.mount_point[0] ? " on " : "",
			info.mount_point);
	if (info.needs_recovery)
		fprintf(stderr, "%s: warning: %s needs journal recovery; the journal holds newer metadata\n",
			prog, info.device);
	if (info.has_errors)
		fprintf(stderr, "%s: warning: %s has errors recorded; run e2fsck -f\n",
			prog, info.device);

	fs_bytes = (double)ext2fs_blocks_count(fs->super) * fs->blocksize;
	if (c.scan.model.disk_bytes < fs_bytes)
		c.scan.model.disk_bytes = fs_bytes;
	/* A summary names only the files it can show: less memory and time. */
	c.scan.names = c.json || c.report.list || optind + 1 < argc ?
		LAYOUT_NAMES_ALL : LAYOUT_NAMES_LOSSY;
	/* Who interleaves with whom: for JSON and the highlight, not a summary. */
	c.scan.partner_counts_only = !c.json && !c.highlight;
	if (c.report.verbose) {
		c.scan.progress = report_scan_progress;
		c.scan.progress_priv = (void *)prog;
	}
	ret = layout_scan(fs, &c.scan, &layout);
	if (c.report.verbose && isatty(STDERR_FILENO))
		fputc('\n', stderr);
	if (ret) {
		com_err(prog, ret, "while scanning %s", info.device);
		goto out;
	}
	damaged = layout->unreadable_inodes || layout->summary.corrupt_files;

	if (optind + 1 < argc) {
		for (i = 0; i < (int)layout->nfiles; i++)
			layout->files[i].flags &= ~LAYOUT_F_SELECTED;
		for (i = optind + 1; i < argc; i++) {
			ret = layout_select_path(layout, argv[i]);
			if (ret) {
				com_err(prog, ret, "while looking up %s in %s",
					argv[i], info.device);
				goto out;
			}
		}
		layout_summarize(layout, 0);
	}

	/* Only the reports that show it, from the bitmap the scan read. */
	if ((c.metrics || (!(c.svg && !strcmp(c.svg, "-")) && (c.json || !c.report.list))) &&
	    (ret = layout_count_improvable(layout, optind + 1 < argc, &c.report.improvable))) {
		com_err(prog, ret, "while estimating what e2defrag could improve on %s",
			info.device);
		goto out;
	}
	if (c.svg && svg_report(layout, info.device, c.svg, c.highlight, NULL, prog))
		goto out;
	if (c.metrics) {
		struct metrics_figures fig;

		metrics_figures_from(&fig, layout);
		fig.have_improvable = 1;
		fig.improvable = c.report.improvable;
		if (metrics_write(c.metrics, prog, info.device,
				  c.metrics_mountpoint ? c.metrics_mountpoint :
				  (info.mount_flags & EXT2_MF_MOUNTED) ? info.mount_point : NULL,
				  &fig, NULL))
			goto out;
	}
	if (c.svg && !strcmp(c.svg, "-")) {
		/* The picture is on stdout: no report beside it. */
	} else if (c.json) {
		if (json_report(stdout, layout, &c.report))
			goto out;
	} else if (c.report.list) {
		if (table_print_files(stdout, layout, &c.report, 0)) {
			fprintf(stderr, "%s: out of memory printing the file table\n", prog);
			goto out;
		}
	} else {
		text_report(stdout, layout, &c.report);
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: error writing the report: %s\n", prog,
			strerror(errno));
		goto out;
	}
	if (damaged) {
		/* The figures are as good as the damage allows; say so once, and
		 * exit as for errors on the filesystem. */
		fprintf(stderr, "%s: %s has errors: %llu %s unreadable, %llu with "
			"corrupt block maps (read as far as they go); run e2fsck -f\n", prog,
			info.device, (unsigned long long)layout->unreadable_inodes,
			util_plural(layout->unreadable_inodes, "inode", "inodes"),
			(unsigned long long)layout->summary.corrupt_files);
		goto out;
	}
	status = layout->summary.score >= c.report.threshold &&
		 layout->summary.score > 0 ? EXIT_RECOMMEND : EXIT_NOTHING;
out:
	layout_free(layout);
	fsopen_close(fs, &info);
	return status;
}
