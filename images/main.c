/*
 * main.c --- e2fragimg: build a reproducible ext2/3/4 image showing one of
 * the seeds' workloads, and its manifest.
 *
 * Parses and checks the options, sizes the filesystem, creates the output
 * files (output.c: beside OUTPUT, renamed over it at the end), makes the
 * filesystem (mkfs.c), runs the workload, writes everything out and the
 * manifest.
 * Exit codes in doc/design.md's sense: 0 success, 8 operational error (the
 * output cannot be written, the workload does not fit), 16 usage error.
 * 32 interrupted.  A failed or interrupted run leaves no image or manifest
 * behind, and an earlier one as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <et/com_err.h>
#include "config.h"
#include "e2frag.h"
#include "img.h"
#include "version.h"
#include <ext2fs/ext3_extents.h>

enum { EXIT_OK = 0, EXIT_OPERATIONAL = 8, EXIT_USAGE = 16, EXIT_CANCELLED = 32 };

#define MIB		(1ULL << 20)
#define MIN_SIZE	(64ULL << 10)	/* asked for: small images for the fuzzer's seeds */
#define MIN_DEFAULT_SIZE (8 * MIB)	/* chosen by the workload */
#define MAX_SIZE	(16ULL << 40)
#define MAX_TOTAL	(2ULL << 40)

enum {
	OPT_STREAMS = 256, OPT_CHUNK, OPT_TOTAL, OPT_RESERVATION, OPT_FILES,
	OPT_FILL, OPT_ROUNDS, OPT_DIRS, OPT_SYNC, OPT_SCRIPT, OPT_BLOCKS_PER_GROUP,
	OPT_NO_FLEX_BG,
};

static const struct option long_options[] = {
	{ "workload",	 required_argument, NULL, 'w' },
	{ "type",	 required_argument, NULL, 't' },
	{ "size",	 required_argument, NULL, 's' },
	{ "block-size",	 required_argument, NULL, 'b' },
	{ "seed",	 required_argument, NULL, 'S' },
	{ "streams",	 required_argument, NULL, OPT_STREAMS },
	{ "chunk",	 required_argument, NULL, OPT_CHUNK },
	{ "total",	 required_argument, NULL, OPT_TOTAL },
	{ "reservation", required_argument, NULL, OPT_RESERVATION },
	{ "files",	 required_argument, NULL, OPT_FILES },
	{ "fill",	 required_argument, NULL, OPT_FILL },
	{ "rounds",	 required_argument, NULL, OPT_ROUNDS },
	{ "dirs",	 required_argument, NULL, OPT_DIRS },
	{ "sync",	 required_argument, NULL, OPT_SYNC },
	{ "script",	 required_argument, NULL, OPT_SCRIPT },
	{ "blocks-per-group", required_argument, NULL, OPT_BLOCKS_PER_GROUP },
	{ "no-flex-bg",	 no_argument,	    NULL, OPT_NO_FLEX_BG },
	{ "quiet",	 no_argument,	    NULL, 'q' },
	{ "version",	 no_argument,	    NULL, 'V' },
	{ "help",	 no_argument,	    NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

#define W(x) (1U << (x))
/* The workloads each workload option means something to. */
static const struct {
	int		opt;
	unsigned	workloads;
} option_scope[] = {
	{ OPT_STREAMS, W(WL_STREAMS) | W(WL_PARALLEL) | W(WL_AGED) | W(WL_NEARFULL) },
	{ OPT_CHUNK, W(WL_STREAMS) | W(WL_PARALLEL) | W(WL_AGED) | W(WL_MIXED) |
		W(WL_NEARFULL) | W(WL_TURNS) },
	{ OPT_TOTAL, W(WL_STREAMS) | W(WL_PARALLEL) },
	{ OPT_FILES, W(WL_TREE) | W(WL_KTREE) },
	{ OPT_DIRS, W(WL_KTREE) },
	{ OPT_FILL, W(WL_AGED) | W(WL_NEARFULL) | W(WL_TURNS) },
	{ OPT_ROUNDS, W(WL_AGED) | W(WL_NEARFULL) },
	{ OPT_SYNC, W(WL_NEARFULL) | W(WL_TURNS) },
	{ OPT_SCRIPT, W(WL_NEARFULL) | W(WL_TURNS) },
};

static const char *prog = "e2fragimg";

static void usage(FILE *out)
{
	fprintf(out,
"Usage: %s --workload NAME [options] OUTPUT.img\n"
"Build a reproducible ext2/ext3/ext4 image whose layout shows a workload\n"
"that fragments files: concurrent recordings, parallel writers, an untarred\n"
"tree, an aged PVR disk, a near-full disk.  Writes OUTPUT.img (sparse) and OUTPUT.img.json,\n"
"the manifest: every file's path, size and SHA-256, and the sets of files\n"
"written at the same time.  No mount, no root needed.\n"
"\n"
"Workloads (-w, --workload):\n"
"  streams             N recorders appending round robin, a chunk each turn\n"
"  parallel-writers    N threads each writing one big file (iozone, tiobench)\n"
"  tree                an untarred source tree of many small files\n"
"  aged                a PVR disk filled, thinned out and recorded into again\n"
"  mixed               a bit of everything, sized for a demo\n"
"  kernel-tree         small files written one by one into random directories,\n"
"                      placed as a current kernel places them (ext3: interleaved)\n"
"  nearfull            recorders on a disk kept nearly full, recordings of\n"
"                      2-4 block groups, oldest deleted between rounds\n"
"  turns               a big file written in turns with small files, every\n"
"                      other small file deleted\n"
"  (nearfull and turns allocate as a today's kernel: ext4's mballoc)\n"
"\n"
"Filesystem:\n"
"  -t, --type TYPE          ext2, ext3 or ext4 (default ext4)\n"
"  -s, --size SIZE          filesystem size, e.g. 512M, 8G, 64K to 16T (default:\n"
"                           what the workload needs; aged 512M, mixed 128M,\n"
"                           kernel-tree about 3x its data in a power of two,\n"
"                           nearfull 64M, turns 16M)\n"
"  -b, --block-size BYTES   1024, 2048 or 4096 (default 4096)\n"
"      --blocks-per-group N blocks per group, a multiple of 8 (default as\n"
"                           mke2fs; nearfull: at least 8 groups)\n"
"      --no-flex-bg         ext4 without flex_bg: every group keeps its own\n"
"                           bitmaps and inode table, as mke2fs -O ^flex_bg\n"
"  -S, --seed N             seed of every choice and id (default 1)\n"
"\n"
"Allocation:\n"
"      --reservation BLOCKS model reservation windows of BLOCKS (ext3 from\n"
"                           2.6.10); default 0: next free block (2.6.2)\n"
"\n"
"Workload options:\n"
"      --streams N          concurrent writers (streams 4, parallel-writers 4,\n"
"                           aged 3, nearfull 4)\n"
"      --chunk SIZE         bytes a writer appends per turn (default one\n"
"                           block; parallel-writers, turns: 4K; nearfull 64K)\n"
"      --total SIZE         bytes written by all writers together (256M)\n"
"      --files N            tree: number of files (24353; kernel-tree 20000)\n"
"      --dirs N             kernel-tree: directories in the root (files / 40)\n"
"      --fill PERCENT       aged, nearfull: how full the disk is kept (90);\n"
"                           turns: how full before the deletes (85)\n"
"      --rounds N           aged, nearfull: rounds of deleting and recording (4)\n"
"      --sync SIZE          nearfull, turns: bytes written between syncs, when\n"
"                           ext4 allocates delayed writes (nearfull 8M,\n"
"                           turns every turn; 0: only at the end)\n"
"      --script FILE        nearfull, turns: write every operation to FILE,\n"
"                           for replaying on a real kernel\n"
"\n"
"  -q, --quiet              print nothing on success\n"
"  -V, --version            print the version and exit\n"
"  -h, --help               print this help and exit\n"
"\n"
"Exit status: 0 success, 8 operational error, 16 usage error,\n"
"32 interrupted (nothing is left behind).\n", prog);
}

/* One line on stderr saying what is wrong with the command line; -1. */
static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* A whole number in [min, max], digits only. */
static int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_workload(const char *s, enum img_workload *w)
{
	int i;

	for (i = 0; i < WL_COUNT; i++) {
		if (!strcmp(s, workload_name(i))) {
			*w = i;
			return 0;
		}
	}
	return -1;
}

/*
 * PATH with its directory resolved (realpath: ./x.img, dir/../x.img and a
 * link to the directory all come to one name), the file itself need not
 * exist; PATH as it is where the directory cannot be resolved.
 */
static void resolved_name(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], *real;

	if (slash && (size_t)(slash - path) >= sizeof(dir))
		goto as_is;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	real = realpath(dir, NULL);
	if (!real)
		goto as_is;
	snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path);
	free(real);
	return;
as_is:
	snprintf(out, len, "%s", path);
}

/* Whether A and B are one existing file. */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 &&
	       x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/*
 * Whether SCRIPT names OUTPUT or OUTPUT.json, by name (its directory
 * resolved: ./x.img is x.img) or, existing, as the same file: the image
 * or manifest renamed over it at the end would take the script's place.
 */
static int script_is_output(const char *script, const char *output)
{
	char s[PATH_MAX + 8], o[PATH_MAX + 8], oj[PATH_MAX + 16], json[PATH_MAX + 8];

	resolved_name(script, s, sizeof(s));
	resolved_name(output, o, sizeof(o));
	snprintf(oj, sizeof(oj), "%s.json", o);
	snprintf(json, sizeof(json), "%s.json", output);
	return !strcmp(s, o) || !strcmp(s, oj) ||
	       same_file(script, output) || same_file(script, json);
}

static int parse_args(int argc, char **argv, struct img_opts *o,
		      const char **output)
{
	uint64_t v;
	unsigned given = 0, i;
	int opt, have_workload = 0;
	const char *name;

	opterr = 0;	/* one line of our own instead of getopt's */
	while ((opt = getopt_long(argc, argv, ":w:t:s:b:S:qVh", long_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'w':
			if (parse_workload(optarg, &o->workload))
				return bad("unknown workload '%s' (streams, parallel-writers, tree, aged, mixed, kernel-tree, nearfull, turns)",
					   optarg);
			have_workload = 1;
			break;
		case 't':
			if (!strcmp(optarg, "ext2"))
				o->type = FS_EXT2;
			else if (!strcmp(optarg, "ext3"))
				o->type = FS_EXT3;
			else if (!strcmp(optarg, "ext4"))
				o->type = FS_EXT4;
			else
				return bad("unknown type '%s' (ext2, ext3, ext4)",
					   optarg);
			break;
		case 's':
			if (util_parse_size(optarg, &o->size) ||
			    o->size < MIN_SIZE || o->size > MAX_SIZE)
				return bad("--size wants a size from 64K to 16T, not '%s'",
					   optarg);
			break;
		case 'b':
			if (util_parse_size(optarg, &v) ||
			    (v != 1024 && v != 2048 && v != 4096))
				return bad("--block-size wants 1024, 2048 or 4096, not '%s'",
					   optarg);
			o->block_size = (unsigned)v;
			break;
		case 'S':
			/* up to 2^63 - 1, so the manifest's JSON integer holds it */
			if (parse_count(optarg, 0, INT64_MAX, &o->seed))
				return bad("--seed wants a whole number below 2^63, not '%s'",
					   optarg);
			break;
		case OPT_STREAMS:
			if (parse_count(optarg, 1, 1000, &v))
				return bad("--streams wants a count from 1 to 1000, not '%s'",
					   optarg);
			o->streams = (unsigned)v;
			break;
		case OPT_CHUNK:
			if (util_parse_size(optarg, &o->chunk) ||
			    o->chunk < 512 || o->chunk > (1ULL << 30))
				return bad("--chunk wants a size from 512 to 1G, not '%s'",
					   optarg);
			break;
		case OPT_TOTAL:
			if (util_parse_size(optarg, &o->total) || o->total > MAX_TOTAL)
				return bad("--total wants a size up to 2T, not '%s'",
					   optarg);
			o->total_set = 1;
			break;
		case OPT_RESERVATION:
			if (parse_count(optarg, 0, 1U << 30, &v))
				return bad("--reservation wants a number of blocks, not '%s'",
					   optarg);
			o->reservation = v;
			break;
		case OPT_FILES:
			if (parse_count(optarg, 0, 10000000, &o->files))
				return bad("--files wants a count up to 10000000, not '%s'",
					   optarg);
			o->files_set = 1;
			break;
		case OPT_DIRS:
			if (parse_count(optarg, 1, 1000000, &o->dirs))
				return bad("--dirs wants a count from 1 to 1000000, not '%s'",
					   optarg);
			break;
		case OPT_FILL:
			if (parse_count(optarg, 1, 99, &v))
				return bad("--fill wants a percentage from 1 to 99, not '%s'",
					   optarg);
			o->fill = (unsigned)v;
			break;
		case OPT_ROUNDS:
			if (parse_count(optarg, 0, 100, &v))
				return bad("--rounds wants a count from 0 to 100, not '%s'",
					   optarg);
			o->rounds = (unsigned)v;
			o->rounds_set = 1;
			break;
		case OPT_SYNC:
			if (util_parse_size(optarg, &o->sync) || o->sync > MAX_SIZE)
				return bad("--sync wants a size up to 2T, not '%s'",
					   optarg);
			o->sync_set = 1;
			break;
		case OPT_SCRIPT:
			if (!*optarg)
				return bad("--script wants a file name");
			o->script = optarg;
			break;
		case OPT_BLOCKS_PER_GROUP:
			if (parse_count(optarg, 256, 65528, &v) || v % 8)
				return bad("--blocks-per-group wants a multiple of 8 from 256 to 65528, not '%s'",
					   optarg);
			o->blocks_per_group = v;
			break;
		case OPT_NO_FLEX_BG:
			o->no_flex_bg = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'V':
			report_version(stdout, "e2fragimg");
			exit(EXIT_OK);
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case ':':
			return bad("option '%s' needs an argument (see --help)",
				   argv[optind - 1]);
		default:
			if (optopt > 0 && optopt < 256)
				return bad("unknown option '-%c' (see --help)", optopt);
			return bad("unknown option '%s' (see --help)",
				   argv[optind - 1]);
		}
		if (opt >= OPT_STREAMS)
			given |= 1U << (opt - OPT_STREAMS);
	}
	if (!have_workload)
		return bad("no --workload given (streams, parallel-writers, tree, aged, mixed, kernel-tree, nearfull, turns)");
	for (i = 0; i < sizeof(option_scope) / sizeof(option_scope[0]); i++) {
		if (!(given & (1U << (option_scope[i].opt - OPT_STREAMS))) ||
		    (option_scope[i].workloads & W(o->workload)))
			continue;
		for (name = NULL, opt = 0; long_options[opt].name; opt++)
			if (long_options[opt].val == option_scope[i].opt)
				name = long_options[opt].name;
		return bad("--%s does not apply to the %s workload", name,
			   workload_name(o->workload));
	}
	if (o->blocks_per_group > 8ULL * (o->block_size ? o->block_size : 4096))
		return bad("--blocks-per-group can be at most 8 times the block size (%u)",
			   8 * (o->block_size ? o->block_size : 4096));
	if (optind >= argc)
		return bad("no output image given (see --help)");
	if (optind + 1 < argc)
		return bad("one output image only, not also '%s'", argv[optind + 1]);
	*output = argv[optind];
	if (o->script && script_is_output(o->script, *output))
		return bad("--script %s would be written over by the image or its manifest",
			   o->script);
	return 0;
}

/* The image's size and inode count: asked for, or what the workload needs. */
static void geometry(const struct img_opts *o, struct img_geometry *geo)
{
	struct img_need need;
	uint64_t bytes = o->size, inodes;

	workload_need(o, &need);
	if (!bytes && need.size) {
		bytes = need.size;
	} else if (!bytes) {
		/* data, an eighth more, a block per inode, journal, some slack */
		bytes = need.bytes + need.bytes / 8 + need.inodes * (o->block_size + 256) +
			8 * MIB;
		bytes += mkfs_journal_blocks(o, bytes / o->block_size) * o->block_size;
		bytes = (bytes + MIB - 1) / MIB * MIB;
		if (bytes < MIN_DEFAULT_SIZE)
			bytes = MIN_DEFAULT_SIZE;
	}
	geo->blocks = bytes / o->block_size;
	geo->blocks_per_group = o->blocks_per_group ? o->blocks_per_group :
		need.blocks_per_group;
	inodes = need.inodes + need.inodes / 8 + 64;
	if (inodes < bytes / 16384)
		inodes = bytes / 16384;	/* mke2fs' inode_ratio */
	geo->inodes = inodes > UINT32_MAX ? UINT32_MAX : (ext2_ino_t)inodes;
}

static const char *hint(errcode_t ret)
{
	if (ret == E2F_ERR_NO_SPACE || ret == EXT2_ET_TOO_MANY_INODES ||
	    ret == EXT2_ET_JOURNAL_TOO_SMALL || ret == EXT2_ET_TOOSMALL)
		return " (give a larger --size)";
	return "";
}

/*
 * Build the image into OUT's temporary files, named OUTPUT in what it
 * says; on failure say what failed and return nonzero.
 */
static int build(const struct img_opts *o, const struct img_output *out,
		 const struct img_geometry *geo)
{
	struct img img;
	uint64_t nfiles = 0, nsets = 0;
	const char *output = out->image;
	const char *base = strrchr(output, '/');
	char what[64], sz[32];
	errcode_t ret;

	memset(&img, 0, sizeof(img));
	img.writer.fd = img.writer.dfd = -1;
	img.opts = o;
	img.bs = o->block_size;
	img.apb = o->block_size / 4;
	img.ext_per_block = (o->block_size - sizeof(struct ext3_extent_header)) /
		sizeof(struct ext3_extent);
	img.extents = o->type == FS_EXT4;
	img.clock = IMG_EPOCH;
	rng_seed(&img.rng, o->seed, o->workload);

	snprintf(what, sizeof(what), "while making the filesystem in");
	ret = mkfs_create(out->tmp_image, o, geo, &img.fs);
	if (!ret) {
		img.csum = ext2fs_has_feature_metadata_csum(img.fs->super);
		ret = data_init(&img, out->tmp_image);
	}
	if (!ret)
		ret = files_init(&img);
	if (!ret) {
		snprintf(what, sizeof(what), "while running the %s workload in",
			 workload_name(o->workload));
		ret = workload_run(&img);
	}
	if (!ret) {
		snprintf(what, sizeof(what), "while writing the files into");
		ret = files_finish(&img);
	}
	if (!ret) {
		snprintf(what, sizeof(what), "while writing the manifest of");
		ret = manifest_write(&img, out->tmp_manifest, base ? base + 1 : output,
				     &nfiles, &nsets);
	}
	if (img.fs && ret) {
		ext2fs_free(img.fs);
	} else if (img.fs) {
		snprintf(what, sizeof(what), "while closing");
		ret = mkfs_close(img.fs);
	}
	img.fs = NULL;
	files_free(&img);
	data_cleanup(&img);
	if (ret) {
		com_err(prog, ret, "%s %s%s", what, output, hint(ret));
		return -1;
	}
	if (!o->quiet)
		printf("%s: %s: %s, %s, %llu %s, %llu %s written concurrently; manifest %s\n",
		       prog, output, fstype_name(o->type),
		       util_format_size(geo->blocks * o->block_size, sz, sizeof(sz)),
		       (unsigned long long)nfiles, util_plural(nfiles, "file", "files"),
		       (unsigned long long)nsets, util_plural(nsets, "set", "sets"),
		       out->manifest);
	return 0;
}

/*
 * The files being built, for the signal handler: an interrupted build
 * leaves nothing behind.  The only mutable global, as main.c's own.
 */
static const struct img_output *volatile building;

static void on_signal(int sig)
{
	(void)sig;
	if (building)
		output_discard(building);
	_exit(EXIT_CANCELLED);
}

/* Catch the signals that end a build, except those ignored (nohup, &). */
static void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
}

int main(int argc, char **argv)
{
	struct img_opts o;
	struct img_geometry geo;
	const char *output = NULL;
	struct img_output out;
	int status = EXIT_OK;

	initialize_ext2_error_table();
	initialize_e2f_error_table();
	memset(&o, 0, sizeof(o));
	o.type = FS_EXT4;
	o.seed = 1;
	if (parse_args(argc, argv, &o, &output))
		return EXIT_USAGE;
	workload_defaults(&o);
	geometry(&o, &geo);
	if (o.type != FS_EXT4 && geo.blocks > 0xffffffffULL) {
		bad("%s holds at most 2^32 blocks: give a smaller --size or --type ext4",
		    fstype_name(o.type));
		return EXIT_USAGE;
	}

	catch_signals();
	if (output_open(&out, prog, output, geo.blocks * o.block_size))
		return EXIT_OPERATIONAL;
	building = &out;
	if (build(&o, &out, &geo)) {
		output_discard(&out);
		status = EXIT_OPERATIONAL;
	} else {
		sigset_t ends, old;

		/* The renames whole or not at all: no handler between them,
		 * nor while output_commit frees the names it would unlink. */
		sigemptyset(&ends);
		sigaddset(&ends, SIGINT);
		sigaddset(&ends, SIGTERM);
		sigaddset(&ends, SIGHUP);
		sigprocmask(SIG_BLOCK, &ends, &old);
		if (output_commit(&out, prog)) {
			output_discard(&out);
			status = EXIT_OPERATIONAL;
		}
		building = NULL;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	building = NULL;
	output_free(&out);
	return status;
}
