/*
 * main.c --- e2defrag: offline defragmenter for ext2/ext3/ext4.
 *
 * The front end: parses options, opens the filesystem through the core
 * (which refuses what must not be written), sets up the undo file,
 * signals and progress, and runs the engine: scan, select, plan, move.
 * Exit codes are doc/design.md's (report.h; status.c decides a run's): 0
 * done, nothing to do or all that is possible done, 1 another run could
 * still do more, 4 some files failed to move, 8 operational error or
 * refusal, 16 usage error, 32 cancelled.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <et/com_err.h>

#include "config.h"
#include "svg.h"
#include "metrics.h"
#include "modelopt.h"
#include "version.h"
#include "damage.h"
#include "report.h"
#include "writer.h"
#include "fmap_err.h"

enum {
	OPT_MIN_SCORE = 256, OPT_NEWER_THAN, OPT_INTERLEAVED_ONLY, OPT_MAX_TIME,
	OPT_BUFFER, OPT_PACK, OPT_MAX_UNITS,
	OPT_SVG_BEFORE, OPT_SVG_AFTER, OPT_SVG,
	OPT_VERIFY, OPT_METRICS, OPT_METRICS_MOUNTPOINT,
};

/* e2defrag's own; the read model's follow (modelopt_long_options). */
static const struct option own_options[] = {
	{ "dry-run",	     no_argument,	NULL, 'n' },
	{ "json",	     no_argument,	NULL, 'J' },
	{ "progress",	     no_argument,	NULL, 'p' },
	{ "progress-fd",     required_argument, NULL, 'C' },
	{ "undo",	     required_argument, NULL, 'z' },
	{ "force",	     no_argument,	NULL, 'f' },
	{ "min-score",	     required_argument, NULL, OPT_MIN_SCORE },
	{ "newer-than",	     required_argument, NULL, OPT_NEWER_THAN },
	{ "interleaved-only", no_argument,	NULL, OPT_INTERLEAVED_ONLY },
	{ "max-time",	     required_argument, NULL, OPT_MAX_TIME },
	{ "max-units",	     required_argument, NULL, OPT_MAX_UNITS },
	{ "buffer",	     required_argument, NULL, OPT_BUFFER },
	{ "pack",	     no_argument,	NULL, OPT_PACK },
	{ "svg",	     required_argument, NULL, OPT_SVG },
	{ "svg-before",	     required_argument, NULL, OPT_SVG_BEFORE },
	{ "svg-after",	     required_argument, NULL, OPT_SVG_AFTER },
	{ "verify",	     no_argument,	NULL, OPT_VERIFY },
	{ "metrics",	     required_argument, NULL, OPT_METRICS },
	{ "metrics-mountpoint", required_argument, NULL, OPT_METRICS_MOUNTPOINT },
	{ "verbose",	     no_argument,	NULL, 'v' },
	{ "version",	     no_argument,	NULL, 'V' },
	{ "help",	     no_argument,	NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Set by SIGINT/SIGTERM; the engine polls it through the progress callback. */
static volatile sig_atomic_t cancel_requested;

static void usage(FILE *out, const char *prog)
{
	fprintf(out,
"Usage: %s [options] SPEC [PATH...]\n"
"Defragment an unmounted ext2/ext3/ext4 filesystem: rewrite fragmented and\n"
"interleaved files contiguously (an interleave set one file after another,\n"
"in path order) and leave free space in few large runs.  Every file move is\n"
"crash-safe.\n"
"\n"
"SPEC is an image file, a block device, LABEL=... or UUID=... (-n also\n"
"reads a mount point and an e2image -Q dump); PATHs (inside the\n"
"filesystem) restrict the run to those files and trees.\n"
"\n"
"Selection (default: every avoidably fragmented or interleaved file):\n"
"      --min-score N       only files whose score is at least N (0-100)\n"
"      --newer-than WHEN   only files modified since WHEN: a date\n"
"                          (2024-05-01, '2024-05-01 20:00', @EPOCH) or a\n"
"                          duration ago (90s, 30m, 12h, 7d, 2w)\n"
"      --interleaved-only  only files interleaved with others\n"
"      --max-time TIME     start a unit of the plan only if its estimate fits\n"
"                          in TIME (and plan units that fit, where it can):\n"
"                          seconds, or 90s, 30m, 1.5h\n"
"      --max-units N       stop after N units of the plan (under either limit,\n"
"                          the units saving most read time per second first)\n"
"\n"
"Run:\n"
"  -n, --dry-run           print the plan, write nothing (reads a mounted\n"
"                          filesystem too, as it is on the disk)\n"
"  -J, --json              print the plan or the result as JSON\n"
"  -p, --progress          progress bar on stderr even when not a terminal\n"
"  -C, --progress-fd FD    write 'PHASE DONE TOTAL DEVICE' lines to FD, phases\n"
"                          1 inodes, 2 directories, 3 planning, 4 moving; with\n"
"                          FD 0 (as e2fsck -C 0) or a terminal, draw the bar\n"
"  -z, --undo FILE         save what is overwritten in an e2undo file\n"
"  -f, --force             run even if not checked since last mounted\n"
"  -v, --verbose           list every file of the plan and the skipped ones\n"
"      --buffer SIZE       copy buffer, and data per commit (default 64M)\n"
"      --pack              join free space into as few runs as possible,\n"
"                          however much that writes\n"
"      --svg FILE          draw the block map before any move and after the\n"
"                          run side by side into FILE\n"
"      --svg-before FILE   draw the block map before any move into FILE\n"
"      --svg-after FILE    ... and after the run (with -n: as it is, unchanged)\n"
"      --verify            read every copy back from the disk (not the\n"
"                          cache) before switching the file to it\n"
"      --metrics FILE      write the figures and the run's outcome for\n"
"                          node_exporter's textfile collector into FILE\n"
"      --metrics-mountpoint DIR  label them with this mount point\n"
"\n", prog);
	modelopt_usage(out);
	fputs(
"\n"
"  -V, --version           print the version and exit\n"
"  -h, --help              print this help and exit\n"
"\n"
"Times are printed in seconds.\n"
"\n"
"Exit status: 0 done (nothing to do, or all that is possible: files left\n"
"short of best are named with the reason), 1 another run could do more\n"
"(stopped at --max-time or --max-units), 4 some files failed to move,\n"
"8 operational error or refusal (mounted, needs recovery, errors, not\n"
"clean, orphans, unsupported feature), 16 usage error, 32 cancelled\n"
"(SIGINT/SIGTERM).\n", out);
}

/* The first finishes the unit at hand, the second the move at hand. */
static void on_signal(int sig)
{
	(void)sig;
	if (cancel_requested < 2)
		cancel_requested++;
}

/*
 * --newer-than: a duration before now (90s, 30m, 12h, 7d, 2w), @EPOCH, or
 * a date (YYYY-MM-DD, optionally with " HH:MM[:SS]" or "THH:MM[:SS]",
 * local time).
 */
static int parse_when(const char *s, time_t now, int64_t *out)
{
	static const char *const formats[] = {
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
		"%Y-%m-%dT%H:%M", "%Y-%m-%d",
	};
	struct tm tm;
	char *end;
	unsigned i;
	double n;

	if (*s == '@') {
		long long v;

		errno = 0;
		v = strtoll(s + 1, &end, 10);
		if (errno || end == s + 1 || *end)
			return -1;
		*out = v;
		return 0;
	}
	errno = 0;
	n = strtod(s, &end);
	if (!errno && end != s && n >= 0 && (!strcmp(end, "s") || !strcmp(end, "m") ||
					       !strcmp(end, "h") || !strcmp(end, "d") ||
					       !strcmp(end, "w"))) {
		double mult = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 :
			*end == 'd' ? 86400 : 604800;

		if (n * mult > 1e12)
			return -1;
		*out = (int64_t)now - (int64_t)(n * mult);
		return 0;
	}
	for (i = 0; i < sizeof(formats) / sizeof(*formats); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, formats[i], &tm);
		if (end && !*end) {
			tm.tm_isdst = -1;
			*out = mktime(&tm);
			return 0;
		}
	}
	return -1;
}

/*
 * --max-time: seconds, or a number with a unit (90s, 30m, 1.5h), the
 * durations e2defrag-offline takes in its --max-time and config file:
 * digits and a decimal point only, which its shell checks as well (no
 * sign, exponent, hexadecimal or infinity, which strtod would take).
 */
static int parse_duration(const char *s, double *seconds)
{
	size_t digits = strspn(s, "0123456789.");
	char *end;
	double n, unit;

	errno = 0;
	n = strtod(s, &end);
	if (errno || end == s || end != s + digits || !(n >= 0))
		return -1;
	if (!strcmp(end, "") || !strcmp(end, "s"))
		unit = 1;
	else if (!strcmp(end, "m"))
		unit = 60;
	else if (!strcmp(end, "h"))
		unit = 3600;
	else
		return -1;
	/* (Infinity fails too.) */
	if (!(n * unit <= 1e9))
		return -1;
	*seconds = n * unit;
	return 0;
}

struct cli {
	struct select_opts sel;
	struct readmodel model;
	int		dry_run, json, bar, verbose, force, pack, verify;
	int		progress_fd;
	const char	*undo_file;
	const char	*svg_before, *svg_after;	/* --svg-before, --svg-after */
	const char	*svg_both;	/* --svg: before and after side by side */
	double		max_time;	/* < 0: none */
	uint64_t	max_units;	/* 0: none */
	double		start;		/* when we started, CLOCK_MONOTONIC */
	uint64_t	buffer;
	char		*spec;
	const char	*metrics, *metrics_mountpoint;	/* --metrics... */
	/* What the metrics report, filled in by run(). */
	struct metrics_figures fig;	/* after the run, or as planned from */
	uint64_t	bytes_written;
	int		would_improve;	/* the plan brings a file to its best or
					 * fewer pieces, or joins free space */
	int		attempted;	/* moves were tried: a failure wrote */
	int		moved;		/* moves went through */
	/*
	 * The exit status of the run itself, before a picture or the report
	 * failed to be written; < 0: the run did not get that far.
	 */
	int		run_status;
	char		*mount_point;	/* where it is mounted (-n), or NULL */
	char		*device;	/* as resolved, or NULL */
};

static int parse_args(int argc, char **argv, struct cli *c, const char *prog)
{
	struct option long_options[sizeof(own_options) / sizeof(*own_options) +
				   MODELOPT_COUNT];
	int opt;
	double d;

	modelopt_long_options(own_options, long_options);
	while ((opt = getopt_long(argc, argv, "nJjpC:z:fvVh", long_options,
				  NULL)) != -1) {
		if (modelopt_owns(opt)) {
			if (modelopt_parse(prog, opt, optarg, &c->model))
				return -1;
			continue;
		}
		switch (opt) {
		case 'n': c->dry_run = 1; break;
		case 'j':	/* the old spelling: still JSON, nothing else */
		case 'J': c->json = 1; break;
		case 'p': c->bar = 1; break;
		case 'C':
			if (util_parse_double(optarg, 0, 1 << 20, &d) || d != (int)d ||
			    fcntl((int)d, F_GETFD) < 0) {
				fprintf(stderr, "%s: -C wants an open file descriptor, not '%s'\n",
					prog, optarg);
				return -1;
			}
			c->progress_fd = (int)d;
			break;
		case 'z':
			if (!*optarg) {
				fprintf(stderr, "%s: -z wants a file name\n", prog);
				return -1;
			}
			c->undo_file = optarg;
			break;
		case 'f': c->force = 1; break;
		case 'v': c->verbose = 1; break;
		case OPT_MIN_SCORE:
			if (util_parse_double(optarg, 0, 100, &c->sel.min_score)) {
				fprintf(stderr, "%s: --min-score wants a score from 0 to 100, not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		case OPT_NEWER_THAN:
			if (parse_when(optarg, time(NULL), &c->sel.newer_than)) {
				fprintf(stderr, "%s: --newer-than wants a date (2024-05-01, '2024-05-01 20:00', @EPOCH) or a duration (90s, 30m, 12h, 7d, 2w), not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		case OPT_INTERLEAVED_ONLY: c->sel.interleaved_only = 1; break;
		case OPT_PACK: c->pack = 1; break;
		case OPT_MAX_TIME:
			if (parse_duration(optarg, &c->max_time)) {
				fprintf(stderr, "%s: --max-time wants a duration: seconds, or a number with the unit s, m or h (90, 90s, 30m, 1.5h), not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		case OPT_METRICS:
			c->metrics = optarg;
			if (!metrics_path_ok(optarg, prog))
				return -1;
			break;
		case OPT_METRICS_MOUNTPOINT: c->metrics_mountpoint = optarg; break;
		case OPT_MAX_UNITS: {
			char *end;

			errno = 0;
			c->max_units = strtoull(optarg, &end, 10);
			/* strtoull would take a sign and leading blanks. */
			if (errno || !isdigit((unsigned char)*optarg) || *end ||
			    !c->max_units) {
				fprintf(stderr, "%s: --max-units wants a number from 1 up, not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		}
		case OPT_VERIFY:
			c->verify = 1;
			break;
		case OPT_BUFFER:
			if (util_parse_size(optarg, &c->buffer) || c->buffer < 4096 ||
			    c->buffer > (1ULL << 30)) {
				fprintf(stderr, "%s: --buffer wants a size from 4k to 1G, not '%s'\n",
					prog, optarg);
				return -1;
			}
			break;
		case OPT_SVG_BEFORE:
		case OPT_SVG_AFTER:
		case OPT_SVG:
			if (!*optarg) {
				fprintf(stderr, "%s: %s wants a file name\n", prog,
					argv[optind - 1]);
				return -1;
			}
			*(opt == OPT_SVG_BEFORE ? &c->svg_before : opt == OPT_SVG_AFTER ?
			  &c->svg_after : &c->svg_both) = optarg;
			break;
		case 'V':
			report_version(stdout, "e2defrag");
			exit(EXIT_OK);
		case 'h':
			usage(stdout, prog);
			exit(EXIT_OK);
		default:
			fprintf(stderr, "Try '%s --help' for more information.\n", prog);
			return -1;
		}
	}
	if (modelopt_check(prog, &c->model))
		return -1;
	if (optind >= argc) {
		fprintf(stderr, "%s: no filesystem given\n", prog);
		fprintf(stderr, "Try '%s --help' for more information.\n", prog);
		return -1;
	}
	c->spec = argv[optind];
	c->sel.paths = argv + optind + 1;
	c->sel.npaths = argc - optind - 1;
	return 0;
}

/* A refusal or failure to open, said plainly. */
static void open_error(const char *prog, const char *spec, errcode_t ret,
		       const struct fsopen_info *info)
{
	if (ret == E2F_ERR_MOUNTED)
		fprintf(stderr, "%s: %s is mounted%s%s; e2defrag works only on unmounted filesystems. Nothing was changed.\n",
			prog, info->device ? info->device : spec,
			info->mount_point[0] ? " on " : "", info->mount_point);
	else if (ret == E2F_ERR_UNSUPPORTED_FEATURE)
		fprintf(stderr, "%s: %s uses the feature '%s', which e2defrag cannot handle. Nothing was changed.\n",
			prog, info->device ? info->device : spec, info->unsupported);
	else
		com_err(prog, ret, "while opening %s for defragmentation. Nothing was changed.",
			spec);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;	/* the I/O in flight finishes; we stop after it */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A -C reader that goes away must not kill us in the middle of a move. */
	signal(SIGPIPE, SIG_IGN);
}

/*
 * Whether the filesystem refuses a run (mounted, needs recovery, damaged,
 * ...), found by opening it read-only as -n does: 0, or the exit status,
 * the refusal said.  Run before anything is touched, the old undo file
 * included.
 */
static int refused(const struct cli *c, const char *prog, int flags)
{
	struct fsopen_info info;
	ext2_filsys fs = NULL;
	errcode_t ret;
	int damaged = 0;

	ret = fsopen_open(c->spec, flags | FSOPEN_CHECK, NULL, &fs, &info);
	if (!ret)
		ret = switch_check(fs);
	if (ret)
		open_error(prog, c->spec, ret, &info);
	else
		damaged = damage_refuse_scan(prog, info.device, fs);
	fsopen_close(fs, &info);
	return ret || damaged ? EXIT_OPERATIONAL : 0;
}

/*
 * Replace the undo file with a new, empty one: 0, or the exit status.
 * Never the filesystem itself (-z IMAGE IMAGE deleted the image) nor
 * anything but a regular file (a device node would go), where it points
 * there through links too.  Created here, with the mode undo_io gives
 * it, since libext2fs' undo_io crashes when it cannot create the file
 * (1.47.0: a directory that does not exist); it takes the empty file as
 * new.
 */
static int undo_file_new(const struct cli *c, const char *prog)
{
	const char *undo = c->undo_file;
	struct stat us, ds;
	char *device = NULL;
	int fd, same = 0;

	if (stat(undo, &us) == 0) {
		if (!S_ISREG(us.st_mode)) {
			fprintf(stderr, "%s: the undo file %s is not a regular file\n",
				prog, undo);
			return EXIT_USAGE;
		}
		if (!fsopen_resolve(c->spec, &device) && stat(device, &ds) == 0)
			same = us.st_dev == ds.st_dev && us.st_ino == ds.st_ino;
		free(device);
		if (same) {
			fprintf(stderr, "%s: the undo file %s is the filesystem itself\n",
				prog, undo);
			return EXIT_USAGE;
		}
	}
	if (unlink(undo) < 0 && errno != ENOENT) {
		com_err(prog, errno, "while trying to delete %s", undo);
		return EXIT_OPERATIONAL;
	}
	fd = open(undo, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		com_err(prog, errno, "while creating the undo file %s", undo);
		return EXIT_OPERATIONAL;
	}
	close(fd);
	return 0;
}

/*
 * A dry run may read a mounted filesystem (e2defrag-offline asks it
 * whether a maintenance window is worth having): opened read-only, as
 * e2frag opens one, and planned from what is on the disk, which the
 * kernel may have changed since.  What being mounted explains (needs
 * recovery, not clean, orphans, not checked) is let pass, since a run
 * comes only after the unmount and e2fsck -f; what makes the plan
 * untrustworthy or any run impossible is refused as before: errors
 * recorded, an external journal, an unsupported feature.  The journal's
 * own checks (switch_check) wait for the run.
 */
static errcode_t open_mounted(const struct cli *c, const char *prog,
			      ext2_filsys *fs, struct fsopen_info *info)
{
	struct fsopen_info after_fsck;
	errcode_t ret;

	ret = fsopen_open(c->spec, 0, NULL, fs, info);
	if (ret)
		return ret;
	if (!(info->mount_flags & EXT2_MF_MOUNTED) ||
	    (info->mount_flags & EXT2_MF_SWAP)) {
		/* Unmounted or a swap device meanwhile: refuse as before. */
		ret = E2F_ERR_MOUNTED;
		goto fail;
	}
	fprintf(stderr, "%s: warning: %s is mounted%s%s; planning from what is on the disk, which may be stale (a run would refuse it)\n",
		prog, info->device, info->mount_point[0] ? " on " : "",
		info->mount_point);
	after_fsck = *info;
	after_fsck.mount_flags = 0;
	after_fsck.needs_recovery = 0;
	after_fsck.not_clean = 0;
	ret = fsopen_write_refusal(*fs, &after_fsck, FSOPEN_FORCE);
	if (ret == E2F_ERR_ORPHANS)
		ret = 0;
	if (!ret)
		return 0;
fail:
	ext2fs_close_free(fs);
	return ret;
}

/* Per file: did all its moves go through? */
static uint8_t *file_results(const struct plan *plan, const struct run_state *st)
{
	uint8_t *res = calloc(plan->layout_files + 1, 1);
	uint64_t i;

	if (!res)
		return NULL;
	for (i = 0; i < plan->nmoves; i++) {
		uint32_t f = plan->moves[i].file;

		if (!st->results[i].attempted) {
			if (res[f] != FR_FAILED)
				res[f] = FR_NOT_REACHED;
		} else if (st->results[i].err) {
			res[f] = FR_FAILED;
		} else if (res[f] == FR_PLANNED) {
			res[f] = FR_DONE;
		}
	}
	return res;
}

/* Whether the plan lists file I (layout_names_more). */
static int planned(void *priv, uint64_t i)
{
	return plan_has_line(priv, i);
}

/*
 * Whether the scan may name only the files a summary shows (the planner
 * orders interleave sets by the names it has), the rest of the plan's
 * read after planning: every name of a large filesystem, kept through
 * planning for the few the plan lists, would be a good part of the
 * memory.  PATH
 * arguments need every name to select, pictures show any file, and the
 * second reading does not reach inline directories.
 */
static int names_after_plan(const struct cli *c, ext2_filsys fs)
{
	return !c->sel.npaths && !c->svg_before && !c->svg_after && !c->svg_both &&
	       !ext2fs_has_feature_inline_data(fs->super);
}

/*
 * What --max-time leaves now, counted from the start (scanning and
 * planning included): -1 without --max-time, else at least 0.
 */
static double time_left(const struct cli *c)
{
	double used = util_now_seconds() - c->start;

	if (c->max_time < 0)
		return -1;
	return c->max_time > used ? c->max_time - used : 0;
}

static int run(struct cli *c, const char *prog)
{
	struct fsopen_info info;
	struct layout_opts lo;
	struct layout *layout = NULL, *after = NULL;
	struct selection sel;
	struct plan *plan = NULL;
	struct run_state st;
	struct units units;
	struct units_limit limit;
	struct run_opts ro;
	struct plan_opts po;
	struct units_model um;
	struct progress pr;
	struct report r;
	struct switch_ctx *sw = NULL;
	struct svg_compare *both = NULL;
	ext2_filsys fs = NULL;
	io_manager io = NULL;
	FILE *out = c->json ? stderr : stdout;	/* human notes when JSON owns stdout */
	const char *bad_path;
	int flags = FSOPEN_WRITE, status = EXIT_OPERATIONAL, mounted = 0;
	errcode_t ret;

	memset(&sel, 0, sizeof(sel));
	memset(&st, 0, sizeof(st));
	memset(&units, 0, sizeof(units));
	memset(&r, 0, sizeof(r));
	memset(&pr, 0, sizeof(pr));
	if (c->force)
		flags |= FSOPEN_FORCE;
	if (c->dry_run)
		flags |= FSOPEN_CHECK | FSOPEN_DRY_RUN;
	if (c->undo_file && !c->dry_run) {
		/*
		 * A new undo file for every run, as e2fsck, resize2fs and
		 * tune2fs make theirs: undo_io would add to an old one only
		 * if the filesystem had not changed since it was written, and
		 * refuse to open it otherwise.  Not before the filesystem
		 * said yes: the old file may be all that undoes the last run.
		 */
		status = refused(c, prog, flags);
		if (!status)
			status = undo_file_new(c, prog);
		if (status)
			return status;
		status = EXIT_OPERATIONAL;
		ret = set_undo_io_backing_manager(unix_io_manager);
		if (!ret)
			ret = set_undo_io_backup_file((char *)c->undo_file);
		if (ret) {
			com_err(prog, ret, "while setting up the undo file %s", c->undo_file);
			return EXIT_OPERATIONAL;
		}
		io = undo_io_manager;
	}
	install_signals();
	ret = fsopen_open(c->spec, flags, io, &fs, &info);
	if (ret == E2F_ERR_MOUNTED && c->dry_run) {
		fsopen_close(NULL, &info);
		ret = open_mounted(c, prog, &fs, &info);
		mounted = !ret;
	}
	/* Builds for the power-cut tests log the writes (--enable-iolog). */
	if (!ret && (fs->flags & EXT2_FLAG_RW)) {
		ret = iolog_attach_env(fs);
		if (ret) {
			fs->flags &= ~EXT2_FLAG_DIRTY;
			ext2fs_close_free(&fs);
		}
	}
	if (ret) {
		open_error(prog, c->spec, ret, &info);
		fsopen_close(NULL, &info);
		return EXIT_OPERATIONAL;
	}
	/* The journal's refusals too, before any work: -n refuses the same way. */
	ret = mounted ? 0 : switch_check(fs);
	if (ret) {
		open_error(prog, c->spec, ret, &info);
		goto out;
	}
	/* Damaged metadata refuse the run, -n too (doc/design.md, Safety). */
	if (damage_refuse_fs(prog, info.device, fs))
		goto out;

	pr.prog = prog;
	pr.device = info.device;
	pr.blocksize = fs->blocksize;
	pr.cancel = &cancel_requested;
	progress_open(&pr, c->progress_fd, c->bar || (isatty(STDERR_FILENO) && !c->json));
	memset(&lo, 0, sizeof(lo));
	lo.model = c->model;
	if ((double)ext2fs_blocks_count(fs->super) * fs->blocksize > lo.model.disk_bytes)
		lo.model.disk_bytes = (double)ext2fs_blocks_count(fs->super) * fs->blocksize;
	lo.progress = progress_update;
	lo.progress_priv = &pr;
	lo.sanity = 1;
	lo.names = names_after_plan(c, fs) ? LAYOUT_NAMES_LOSSY : LAYOUT_NAMES_ALL;
	/* Who interleaves with whom is e2frag's report: the sets are enough here. */
	lo.partner_counts_only = 1;
	lo.no_outlines = 1;

	ret = layout_scan(fs, &lo, &layout);
	if (ret)
		progress_end(&pr);
	else
		progress_finish(&pr);
	if (ret == E2F_ERR_CANCELLED) {
		fprintf(stderr, "%s: cancelled while scanning; nothing was changed\n", prog);
		status = EXIT_CANCELLED;
		goto out;
	}
	if (ret) {
		com_err(prog, ret, "while scanning %s", info.device);
		goto out;
	}
	if (damage_refuse_layout(prog, info.device, layout))
		goto out;
	/* Its sets' outlines are e2frag's report; the check is done. */
	layout_drop_extras(layout);
	c->sel.layout_checked = 1;	/* what select_files need not ask again */
	/* Before anything moves; a picture that cannot be written stops the run. */
	if (c->svg_before && svg_report(layout, info.device, c->svg_before, NULL,
					"before e2defrag", prog))
		goto out;
	if (c->svg_both && svg_compare_begin(&both, layout, info.device, c->svg_both,
					     "before e2defrag", prog))
		goto out;
	ret = select_files(layout, &c->sel, &sel, &bad_path);
	if (ret == ENOENT) {
		fprintf(stderr, "%s: %s: no such file or directory in %s\n", prog,
			bad_path, info.device);
		goto out;
	}
	if (ret) {
		com_err(prog, ret, "while selecting files on %s", info.device);
		goto out;
	}
	po.progress = progress_update;
	po.progress_priv = &pr;
	po.pack = c->pack;
	/* Between plans as good, the faster on the disk the estimate models
	 * (the same arguments as units_make's below). */
	um.layout = layout;
	um.model = &lo.model;
	um.buffer_bytes = c->buffer;
	switch_log_limits(fs, &um.log);
	if (c->verify)
		um.log.room = 0;	/* --verify logs nothing (move.c's may_log) */
	po.seconds = units_plan_seconds;
	po.seconds_priv = &um;
	/* A plan whose units fit what --max-time leaves (the model's time:
	 * no rate measured yet), where one can (plan_search.c); 0: none. */
	po.window = time_left(c) > 0 ? time_left(c) : 0;
	ret = plan_build(layout, &sel, &po, &plan);
	if (ret)
		progress_end(&pr);
	else
		progress_finish(&pr);
	if (ret == E2F_ERR_CANCELLED) {
		fprintf(stderr, "%s: cancelled while planning; nothing was changed\n", prog);
		status = EXIT_CANCELLED;
		goto out;
	}
	if (ret) {
		com_err(prog, ret, "while planning the moves on %s", info.device);
		goto out;
	}
	if (lo.names != LAYOUT_NAMES_ALL &&
	    (ret = layout_names_more(layout, planned, plan))) {
		com_err(prog, ret, "while reading the names in %s", info.device);
		goto out;
	}
	r.prog = prog;
	r.device = info.device;
	r.verbose = c->verbose;
	r.dry_run = c->dry_run;
	r.layout = layout;
	r.sel = &sel;
	r.plan = plan;
	/* The estimate logs moves where the run would (move.h): not with
	 * --verify, and only with a journal the writer takes. */
	ret = units_make(layout, plan, &lo.model, c->buffer, &um.log, &units);
	/* What will cut the run (the model's seconds: no rate measured yet);
	 * under it, the units saving most per second first, where that
	 * saves more within it. */
	limit.units = c->max_units;
	limit.seconds = time_left(c);
	if (!ret)
		ret = units_by_gain(&um, plan, &units, &limit);
	if (!ret)
		ret = units_fit(&um, &units, &limit, NULL);
	if (ret) {
		com_err(prog, ret, "while planning the moves on %s", info.device);
		goto out;
	}
	r.units = &units;
	r.limit = limit.units || limit.seconds >= 0 ? &limit : NULL;

	if (c->dry_run || !plan->nmoves) {
		/* Nothing moves: the picture after is the one before. */
		const char *caption = c->dry_run ? "unchanged (e2defrag -n)" :
			"after e2defrag (nothing to move)";

		c->run_status = run_exit_status(plan, NULL, NULL);
		if (c->svg_after && svg_report(layout, info.device, c->svg_after, NULL,
					       caption, prog))
			goto out;
		if (both && svg_compare_end(both, layout, caption, prog))
			goto out;
		r.status = status = run_exit_status(plan, NULL, NULL);
		if (c->json)
			json_output(stdout, &r);
		else
			text_plan(stdout, &r);
		if (!c->json)
			text_closing(stdout, &r);
		goto out;
	}
	if (c->undo_file)
		fprintf(out, "Overwriting existing filesystem; this can be undone using the command:\n"
			"    e2undo %s %s\n\n", c->undo_file, info.device);
	ret = switch_open(fs, 0, &sw);
	if (ret) {
		com_err(prog, ret, "while preparing to write %s. Nothing was changed.",
			info.device);
		goto out;
	}
	memset(&ro, 0, sizeof(ro));
	ro.progress = progress_update;
	ro.progress_priv = &pr;
	ro.max_seconds = time_left(c);
	ro.buffer_bytes = c->buffer;
	ro.verify = c->verify;
	ro.units = &units;
	ro.max_units = c->max_units;
	/* A first signal stops at the end of the unit at hand (execute.c),
	 * a second in the middle of it, between two moves. */
	ro.stop = &cancel_requested;
	pr.cancel_at = 2;
	ret = run_plan(fs, sw, layout, plan, &ro, &st);
	pr.cancel_at = 1;
	/* Every move tried, failed ones too: the moving is done. */
	if (!ret && !st.cancelled && !st.timed_out && !st.switch_failed)
		progress_finish(&pr);
	else
		progress_end(&pr);
	if (ret) {
		com_err(prog, ret, "while moving files on %s", info.device);
		switch_close(sw);
		goto out;
	}
	if (st.switch_failed) {
		/* The writer's own error: the files' EIO only says their batch failed. */
		errcode_t why = switch_failure(sw);

		switch_close(sw);
		fprintf(stderr, "%s: writing the metadata of a file switch failed (%s); the filesystem is as a power cut would leave it: run e2fsck -f %s\n",
			prog, why ? error_message(why) : "unknown error", info.device);
		r.run = &st;
		text_failures(stderr, &r);
		goto out;
	}
	ret = switch_close(sw);
	if (ret) {
		com_err(prog, ret, "while finishing the writes to %s; run e2fsck -f",
			info.device);
		goto out;
	}
	if (st.cancelled && st.abandoned)
		fprintf(stderr, "%s: cancelled inside a unit; the file at hand was finished or left as it was, the filesystem is consistent, but its layout may be worse than before until the next run\n",
			prog);
	else if (st.cancelled)
		fprintf(stderr, "%s: cancelled at the end of a unit; the filesystem is consistent and its layout no worse than before (a second signal stops sooner)\n",
			prog);
	if (st.device_error)
		fprintf(stderr, "%s: %s: reading or writing the data of a move failed (%s): stopped there; every file has its old or its new layout and the moves done are kept, but the layout may be worse than before until a run finishes; check the device before the next run\n",
			prog, info.device, error_message(st.device_error));
	/* Measure the outcome afresh rather than trust the plan. */
	lo.progress = NULL;
	lo.sanity = 0;
	if (layout_scan(fs, &lo, &after))
		after = NULL;
	r.after = after;
	r.run = &st;
	r.result = file_results(plan, &st);
	r.status = status = c->run_status = run_exit_status(plan, &st, r.result);
	/* The run is done whatever the picture does; a failed one is an error still. */
	if ((c->svg_after || both) && !after) {
		fprintf(stderr, "%s: cannot scan %s after the run: no picture after\n",
			prog, info.device);
		r.status = status = EXIT_OPERATIONAL;
	} else {
		if (c->svg_after && svg_report(after, info.device, c->svg_after, NULL,
					       "after e2defrag", prog))
			r.status = status = EXIT_OPERATIONAL;
		if (both && svg_compare_end(both, after, "after e2defrag", prog))
			r.status = status = EXIT_OPERATIONAL;
	}
	text_failures(stderr, &r);
	if (c->json)
		json_output(stdout, &r);
	else
		text_result(stdout, &r);
	if (!c->json)
		text_closing(stdout, &r);
out:
	if (layout && c->metrics) {
		metrics_figures_from(&c->fig, after ? after : layout);
		c->bytes_written = (uint64_t)st.written * fs->blocksize;
		c->would_improve = plan && plan->best + plan->partial + plan->consolidated > 0;
		c->attempted = st.done || st.failed || st.switch_failed || st.device_error;
		c->moved = st.done > 0;
	}
	if (c->metrics && info.device && !c->device) {
		c->device = strdup(info.device);
		if (mounted && info.mount_point[0])
			c->mount_point = strdup(info.mount_point);
	}
	progress_close(&pr);
	svg_compare_free(both);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: error writing the report: %s\n", prog, strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_OPERATIONAL;
	}
	free(r.result);
	run_free(&st);
	units_free(&units);
	plan_free(plan);
	select_free(&sel);
	layout_free(after);
	layout_free(layout);
	ret = fsopen_close(fs, &info);
	if (ret) {
		com_err(prog, ret, "while closing the filesystem; run e2fsck -f");
		status = EXIT_OPERATIONAL;
		if (c->run_status >= 0)	/* the filesystem's writes: the run's */
			c->run_status = status;
	}
	return status;
}

/*
 * The run's outcome, as e2defrag(8) METRICS names it: of the run, not of
 * the pictures and the report that tell of it, whose failure shows in the
 * exit status alone.
 */
static const char *outcome(const struct cli *c, int status)
{
	if (c->run_status >= 0)
		status = c->run_status;
	if (status == EXIT_CANCELLED)
		return "cancelled";
	if (status == EXIT_FAILED || (status == EXIT_OPERATIONAL && c->attempted))
		return "failed";
	if (status == EXIT_OPERATIONAL)
		return "refused";	/* or could not open, scan or plan: nothing written */
	if (c->dry_run)
		return c->would_improve ? "planned" : "skipped";
	return c->moved ? "done" : "nothing_to_do";
}

/*
 * --metrics: the figures (after the run, or as planned from) and the
 * run's outcome, whatever it was; a file that cannot be written makes a
 * run that went well an operational error, as a picture does.
 */
static int write_metrics(struct cli *c, const char *prog, int status)
{
	struct metrics_run run;

	run.outcome = outcome(c, status);
	run.bytes_written = c->bytes_written;
	run.seconds = util_now_seconds() - c->start;
	run.exit_status = status;
	if (metrics_write(c->metrics, prog, c->device ? c->device : c->spec,
			  c->metrics_mountpoint ? c->metrics_mountpoint : c->mount_point,
			  &c->fig, &run))
		return status < EXIT_OPERATIONAL ? EXIT_OPERATIONAL : status;
	return status;
}

int main(int argc, char **argv)
{
	const char *prog = "e2defrag";
	struct cli c;
	int status;

#ifdef M_MMAP_THRESHOLD
	/*
	 * Blocks of 128 KiB and more mapped on their own, always: glibc
	 * otherwise raises the threshold each time such a block is freed, and
	 * the planner's many-megabyte arrays, grown and freed, then stay in a
	 * fragmented heap, which raises the peak RSS.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	initialize_e2f_error_table();
	initialize_fmap_error_table();
	initialize_plan_error_table();
	initialize_e2d_error_table();
	initialize_ext2_error_table();
	memset(&c, 0, sizeof(c));
	c.progress_fd = -1;
	c.run_status = -1;
	c.max_time = -1;
	c.start = util_now_seconds();
	c.sel.newer_than = INT64_MIN;
	readmodel_defaults(&c.model);
	if (parse_args(argc, argv, &c, prog))
		return EXIT_USAGE;
	status = run(&c, prog);
	if (c.metrics)
		status = write_metrics(&c, prog, status);
	free(c.device);
	free(c.mount_point);
	return status;
}
