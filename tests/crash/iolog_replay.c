/*
 * iolog_replay.c --- rebuild an image as a power cut would leave it, from
 * the write log of a run (lib/iolog.h).  Test-only.
 *
 *   iolog_replay info LOG
 *	"flushes F writes W", then one line per epoch: "epoch K writes N".
 *	Epoch K holds the writes between flush K and flush K+1 (epoch 0:
 *	before the first flush; epoch F: after the last).
 *   iolog_replay apply LOG IMAGE K all|prefix N|subset SEED
 *	Apply to IMAGE (a copy of the image before the run) every write of
 *	the epochs before K, then of epoch K: all of them, the first N, or
 *	a subset drawn with SEED (each write kept with probability 1/2,
 *	applied in log order): what a disk whose cache reorders writes
 *	between barriers may hold when the power fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iolog.h"

enum mode { ALL, PREFIX, SUBSET };

/* splitmix64: a fixed, portable sequence for a given seed. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
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

static int apply(const char *log, const char *image, uint64_t epoch,
		 enum mode mode, uint64_t arg)
{
	FILE *f = open_log(log);
	struct iolog_record r;
	uint64_t flushes = 0, in_epoch = 0, state = arg;
	char *buf = NULL;
	size_t cap = 0;
	int fd = open(image, O_WRONLY);

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
		in_epoch++;
		if (mode == ALL || (mode == PREFIX && in_epoch <= arg) ||
		    (mode == SUBSET && (next_random(&state) & 1)))
			apply_one(fd, &r, buf);
	}
	if (close(fd))
		die(image);
	free(buf);
	fclose(f);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: iolog_replay info LOG\n"
		"       iolog_replay apply LOG IMAGE EPOCH all|prefix N|subset SEED\n");
	exit(16);
}

int main(int argc, char **argv)
{
	enum mode mode;
	uint64_t arg = 0;

	if (argc == 3 && !strcmp(argv[1], "info"))
		return info(argv[2]);
	if (argc < 6 || strcmp(argv[1], "apply"))
		usage();
	if (!strcmp(argv[5], "all") && argc == 6)
		mode = ALL;
	else if (!strcmp(argv[5], "prefix") && argc == 7)
		mode = PREFIX;
	else if (!strcmp(argv[5], "subset") && argc == 7)
		mode = SUBSET;
	else
		usage();
	if (argc == 7)
		arg = strtoull(argv[6], NULL, 0);
	return apply(argv[2], argv[3], strtoull(argv[4], NULL, 0), mode, arg);
}
