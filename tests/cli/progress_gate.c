/*
 * progress_gate.c --- an LD_PRELOAD library for tests/cli/defrag-signal.sh:
 * it holds e2defrag inside one progress report on its -C descriptor until
 * the test lets it go, so that a signal the test sends meanwhile lands in
 * the phase that report belongs to, however short the phase and however
 * loaded the machine (a reader that only reacts to the report races the
 * phase's end).  Only the test loads it; no program links it.
 *
 *   E2F_GATE_FD=N       the progress descriptor (e2defrag -C N)
 *   E2F_GATE_AT="P D"   the report held: the first of phase P whose done
 *                       count is at least D ("3 0": planning as it starts;
 *                       "2 1": moving, once a block is copied)
 *   E2F_GATE=PATH       a FIFO: the held report is written, then the write
 *                       returns only once a byte is read from PATH
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int held;

/* Whether BUF (N bytes, "PHASE DONE TOTAL DEVICE\n") is the report to hold. */
static int is_gate(int fd, const void *buf, size_t n)
{
	const char *want_fd = getenv("E2F_GATE_FD"), *at = getenv("E2F_GATE_AT");
	unsigned long long done, min_done;
	int phase, want_phase;
	char line[64];

	if (held || !want_fd || !at || fd != atoi(want_fd))
		return 0;
	if (sscanf(at, "%d %llu", &want_phase, &min_done) != 2)
		return 0;
	n = n < sizeof(line) - 1 ? n : sizeof(line) - 1;
	memcpy(line, buf, n);
	line[n] = '\0';
	return sscanf(line, "%d %llu", &phase, &done) == 2 &&
	       phase == want_phase && done >= min_done;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*real)(int, const void *, size_t) =
		(ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	const char *gate = getenv("E2F_GATE");
	ssize_t r = real(fd, buf, n);
	char c;
	int g;

	if (gate && is_gate(fd, buf, n)) {
		held = 1;
		/* Opening a FIFO waits for its writer; signals restart both calls. */
		while ((g = open(gate, O_RDONLY)) < 0 && errno == EINTR)
			;
		if (g >= 0) {
			while (read(g, &c, 1) < 0 && errno == EINTR)
				;
			close(g);
		}
	}
	return r;
}
