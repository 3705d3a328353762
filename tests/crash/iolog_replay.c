/*
 * iolog_replay.c --- rebuild an image as a power cut would leave it, from
 * the write log of a run (writer/writer.h).  Test-only.
 *
 *   iolog_replay info LOG
 *	"flushes F writes W", then one line per epoch: "epoch K writes N".
 *	Epoch K holds the writes between flush K and flush K+1 (epoch 0:
 *	before the first flush; epoch F: after the last).
 *   iolog_replay tears LOG IMAGE
 *	Apply the whole log to IMAGE (a copy of the image before the run)
 *	and list the writes a torn write could leave in a state that is
 *	neither old nor new: "epoch K write I offset O sectors S differ D
 *	jbd2 T", one a line, for each write whose new data differ from what
 *	the image held just before it in D >= 2 of its S 512-byte sectors
 *	(I counts the writes of epoch K from 0; T is the JBD2 block type
 *	when the data start with the journal magic, else 0).
 *   iolog_replay apply LOG IMAGE K all|prefix N|subset SEED|torn I SEED
 *	Apply to IMAGE (a copy of the image before the run) every write of
 *	the epochs before K, then of epoch K: all of them, the first N, or
 *	a subset drawn with SEED (each write kept with probability 1/2,
 *	applied in log order): what a disk whose cache reorders writes
 *	between barriers may hold when the power fails.  torn: the writes of
 *	epoch K other than write I as in subset, and write I torn: a disk
 *	writes only its sector (512 bytes) whole, so a block may reach it in
 *	part.  SEED chooses which sectors of write I are new, among those
 *	that differ from what the image holds: the first k of them (a write
 *	cut short) or any mix of them (a disk that orders sectors as it
 *	likes), never all or none, so that the result is neither the old
 *	data nor the new.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "writer.h"

#define SECTOR 512	/* what a disk writes whole */
#define JBD2_MAGIC 0xc03b3998U

enum mode { ALL, PREFIX, SUBSET, TORN };

/* splitmix64: a fixed, portable sequence for a given seed. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t get_be32(const char *p)
{
	const unsigned char *b = (const unsigned char *)p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static int die(const char *what)
{
	fprintf(stderr, "iolog_replay: %s: %s\n", what, strerror(errno ? errno : EINVAL));
	exit(2);
}

static FILE *open_log(const char *path)
{
	char magic[8];
	FILE *f = fopen(path, "rb");

	if (!f)
		die(path);
	if (fread(magic, 8, 1, f) != 1 || memcmp(magic, IOLOG_MAGIC, 8)) {
		errno = EINVAL;
		die("not a write log");
	}
	return f;
}

/* Read the next record; its data into *buf (grown as needed). */
static int next_record(FILE *f, struct iolog_record *r, char **buf, size_t *cap)
{
	if (fread(r, sizeof(*r), 1, f) != 1)
		return 0;
	if (r->type != IOLOG_WRITE)
		return 1;
	if (r->length > *cap) {
		free(*buf);
		*cap = r->length;
		*buf = malloc(*cap);
		if (!*buf)
			die("malloc");
	}
	if (r->length && fread(*buf, r->length, 1, f) != 1)
		die("truncated log");
	return 1;
}

static int info(const char *log)
{
	FILE *f = open_log(log);
	struct iolog_record r;
	char *buf = NULL;
	size_t cap = 0, n = 0, writes = 0, flushes = 0, *counts = NULL, ncounts = 0;

	while (next_record(f, &r, &buf, &cap)) {
		if (r.type == IOLOG_FLUSH) {
			flushes++;
			continue;
		}
		writes++;
		if (flushes >= ncounts) {
			size_t k = ncounts;

			ncounts = flushes + 64;
			counts = realloc(counts, ncounts * sizeof(*counts));
			if (!counts)
				die("realloc");
			memset(counts + k, 0, (ncounts - k) * sizeof(*counts));
		}
		counts[flushes]++;
	}
	printf("flushes %zu writes %zu\n", flushes, writes);
	for (n = 0; n <= flushes; n++)
		printf("epoch %zu writes %zu\n", n, n < ncounts ? counts[n] : 0);
	free(counts);
	free(buf);
	fclose(f);
	return 0;
}

static void apply_one(int fd, const struct iolog_record *r, const char *data)
{
	static const char zeroes[4096];
	uint64_t done = 0;

	if (r->type == IOLOG_WRITE) {
		if (pwrite(fd, data, r->length, r->offset) != (ssize_t)r->length)
			die("pwrite");
		return;
	}
	while (done < r->length) {
		size_t n = r->length - done < sizeof(zeroes) ?
			   r->length - done : sizeof(zeroes);

		if (pwrite(fd, zeroes, n, r->offset + done) != (ssize_t)n)
			die("pwrite");
		done += n;
	}
}

/*
 * Read LEN bytes at OFFSET of FD into OLD (zeroes past the end of the
 * image) and mark in DIFF which sectors of DATA differ from them: what a
 * torn write could leave half done.  Returns how many differ.
 */
static size_t differing_sectors(int fd, const struct iolog_record *r,
				const char *data, char *old, char *diff)
{
	size_t i, n = 0, nsect = (r->length + SECTOR - 1) / SECTOR;
	ssize_t got = pread(fd, old, r->length, r->offset);

	if (got < 0)
		die("pread");
	memset(old + got, 0, r->length - got);
	for (i = 0; i < nsect; i++) {
		size_t lo = i * SECTOR;
		size_t len = r->length - lo < SECTOR ? r->length - lo : SECTOR;

		diff[i] = memcmp(old + lo, data + lo, len) != 0;
		n += diff[i];
	}
	return n;
}

/*
 * Write R torn: of the ND sectors that differ (DIFF), the new data of the
 * first k (k drawn from 1..ND-1) when the draw says "cut short", else of a
 * random mix with at least one new and one old; OLD keeps the rest.
 */
static void apply_torn(int fd, const struct iolog_record *r, const char *data,
		       char *old, const char *diff, size_t nd, uint64_t *state)
{
	size_t i, k, nsect = (r->length + SECTOR - 1) / SECTOR, seen = 0;
	int mixed = next_random(state) & 1;
	char *take = calloc(nsect ? nsect : 1, 1);

	if (!take)
		die("calloc");
	if (nd < 2) {
		fprintf(stderr, "iolog_replay: the torn write differs in %zu sectors: "
			"old or new, nothing in between\n", nd);
		exit(2);
	}
	k = 1 + next_random(state) % (nd - 1);
	for (i = 0; i < nsect; i++) {
		if (!diff[i])
			continue;
		take[i] = mixed ? next_random(state) & 1 : seen < k;
		seen++;
	}
	if (mixed) {
		/* Never all nor none: force the first differing sector new
		 * and the last old, or the other way round. */
		size_t first = 0, last = nsect - 1;

		while (!diff[first])
			first++;
		while (!diff[last])
			last--;
		take[first] = !(next_random(state) & 1);
		take[last] = !take[first];
	}
	for (i = 0; i < nsect; i++) {
		size_t lo = i * SECTOR;
		size_t len = r->length - lo < SECTOR ? r->length - lo : SECTOR;

		if (take[i])
			memcpy(old + lo, data + lo, len);
	}
	free(take);
	if (pwrite(fd, old, r->length, r->offset) != (ssize_t)r->length)
		die("pwrite");
}

/* Room for a write's old data and its sector flags. */
static void grow_scratch(char **old, char **diff, size_t *cap, uint64_t len)
{
	if (len <= *cap)
		return;
	free(*old);
	free(*diff);
	*cap = len;
	*old = malloc(len);
	*diff = malloc(len / SECTOR + 1);
	if (!*old || !*diff)
		die("malloc");
}

/* Close IMAGE (FD) and LOG (F), free the buffers. */
static int finish(FILE *f, int fd, const char *image, char *buf, char *old,
		  char *diff)
{
	if (close(fd))
		die(image);
	free(buf);
	free(old);
	free(diff);
	fclose(f);
	return 0;
}

static int tears(const char *log, const char *image)
{
	FILE *f = open_log(log);
	struct iolog_record r;
	uint64_t flushes = 0, in_epoch = 0;
	char *buf = NULL, *old = NULL, *diff = NULL;
	size_t cap = 0, ocap = 0;
	int fd = open(image, O_RDWR);

	if (fd < 0)
		die(image);
	while (next_record(f, &r, &buf, &cap)) {
		if (r.type == IOLOG_FLUSH) {
			flushes++;
			in_epoch = 0;
			continue;
		}
		if (r.type == IOLOG_WRITE) {
			size_t nd;

			grow_scratch(&old, &diff, &ocap, r.length);
			nd = differing_sectors(fd, &r, buf, old, diff);
			if (nd >= 2)
				printf("epoch %" PRIu64 " write %" PRIu64
				       " offset %" PRIu64 " sectors %" PRIu64
				       " differ %zu jbd2 %" PRIu32 "\n",
				       flushes, in_epoch, r.offset,
				       (r.length + SECTOR - 1) / SECTOR, nd,
				       r.length >= 8 && get_be32(buf) == JBD2_MAGIC ?
				       get_be32(buf + 4) : 0);
		}
		apply_one(fd, &r, buf);
		in_epoch++;
	}
	return finish(f, fd, image, buf, old, diff);
}

static int apply(const char *log, const char *image, uint64_t epoch,
		 enum mode mode, uint64_t arg, uint64_t seed)
{
	FILE *f = open_log(log);
	struct iolog_record r;
	uint64_t flushes = 0, in_epoch = 0, state = mode == TORN ? seed : arg;
	uint64_t torn_state = ~seed;
	char *buf = NULL, *old = NULL, *diff = NULL;
	size_t cap = 0, ocap = 0;
	int fd = open(image, O_RDWR), torn_done = 0;

	if (fd < 0)
		die(image);
	while (next_record(f, &r, &buf, &cap)) {
		if (r.type == IOLOG_FLUSH) {
			if (++flushes > epoch)
				break;
			continue;
		}
		if (flushes < epoch) {
			apply_one(fd, &r, buf);
			continue;
		}
		if (mode == TORN && in_epoch == arg) {
			if (r.type != IOLOG_WRITE) {
				errno = EINVAL;
				die("the write to tear is not a write");
			}
			grow_scratch(&old, &diff, &ocap, r.length);
			apply_torn(fd, &r, buf, old, diff,
				   differing_sectors(fd, &r, buf, old, diff),
				   &torn_state);
			torn_done = 1;
		} else if (mode == ALL || (mode == PREFIX && in_epoch < arg) ||
			   ((mode == SUBSET || mode == TORN) &&
			    (next_random(&state) & 1))) {
			apply_one(fd, &r, buf);
		}
		in_epoch++;
	}
	if (mode == TORN && !torn_done) {
		errno = EINVAL;
		die("no such write to tear");
	}
	return finish(f, fd, image, buf, old, diff);
}

static void usage(void)
{
	fprintf(stderr, "usage: iolog_replay info LOG\n"
		"       iolog_replay tears LOG IMAGE\n"
		"       iolog_replay apply LOG IMAGE EPOCH all|prefix N|subset SEED|torn I SEED\n");
	exit(16);
}

int main(int argc, char **argv)
{
	enum mode mode;
	uint64_t arg = 0, seed = 0;

	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "tears"))
		return tears(argv[2], argv[3]);
	if (argc < 6 || strcmp(argv[1], "apply"))
		usage();
	if (!strcmp(argv[5], "all") && argc == 6)
		mode = ALL;
	else if (!strcmp(argv[5], "prefix") && argc == 7)
		mode = PREFIX;
	else if (!strcmp(argv[5], "subset") && argc == 7)
		mode = SUBSET;
	else if (!strcmp(argv[5], "torn") && argc == 8)
		mode = TORN;
	else
		usage();
	if (argc >= 7)
		arg = strtoull(argv[6], NULL, 0);
	if (argc == 8)
		seed = strtoull(argv[7], NULL, 0);
	return apply(argv[2], argv[3], strtoull(argv[4], NULL, 0), mode, arg, seed);
}
