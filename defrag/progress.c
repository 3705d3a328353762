/*
 * progress.c --- progress for people (a bar on the terminal: how far each
 * phase is, and for the moves bytes, rate and time left) and for programs
 * (-C FD: lines of "PHASE DONE TOTAL DEVICE", as e2fsck -C writes them).
 *
 * The phases are numbered in the order they run: 1 inodes, 2 directories
 * (the scan), 3 planning, 4 moving.  A phase that the next one follows is
 * complete, so its last frame and its last line say so (DONE = TOTAL),
 * whatever the engine last reported: it reports every so often, not at
 * the end.
 *
 * It is also where a SIGINT or SIGTERM is noticed: the engine asks here
 * after every batch of I/O whether to go on.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* At most this often, in seconds. */
#define DRAW_INTERVAL	0.2
#define BAR_WIDTH	30

/* The -C phase numbers (e2defrag(8)), in the order the phases run. */
static int phase_number(enum e2f_phase phase)
{
	switch (phase) {
	case E2F_PHASE_INODES:
	case E2F_PHASE_BITMAPS:		/* the end of reading the inodes' tables */
		return 1;
	case E2F_PHASE_DIRS:
		return 2;
	case E2F_PHASE_PLAN:
		return 3;
	case E2F_PHASE_MOVE:
		return 4;
	default:
		return 1;
	}
}

static const char *phase_label(int number)
{
	static const char *const labels[] = {
		"", "scanning inodes", "reading directories", "planning", "moving",
	};

	return number > 0 && number < 5 ? labels[number] : "scanning";
}

static void write_fd(const struct progress *p, int phase, uint64_t done,
		     uint64_t total)
{
	char line[512];
	int n;
	ssize_t w;

	n = snprintf(line, sizeof(line), "%d %llu %llu %s\n", phase,
		     (unsigned long long)done, (unsigned long long)total,
		     p->device ? p->device : "");
	if (n > 0 && (size_t)n < sizeof(line))
		w = write(p->fd, line, n);
	else
		w = 0;
	(void)w;	/* a reader that went away must not stop the run */
}

/* Whole percent, rounded down: 100 only when the phase is done. */
static int percent(uint64_t done, uint64_t total)
{
	if (done >= total)	/* a phase with nothing to do is done */
		return 100;
	return (int)(100.0 * done / total);
}

static void draw_bar(struct progress *p, int phase, uint64_t done,
		     uint64_t total, double t)
{
	char bar[BAR_WIDTH + 1], a[32], b[32], c[32], eta[32] = "";
	int i, pct = percent(done, total), fill = pct * BAR_WIDTH / 100;
	double el = t - p->start;

	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[BAR_WIDTH] = 0;
	if (phase != 4) {
		fprintf(p->bar, "\r%s: %s |%s| %3d%%\033[K", p->prog, phase_label(phase),
			bar, pct);
	} else {
		/* The engine counts blocks; people read bytes. */
		double rate = el > 0 ? done * (double)p->blocksize / el : 0;

		if (el > 1 && rate > 0 && done < total) {
			int left = (int)((total - done) * (double)p->blocksize / rate);

			snprintf(eta, sizeof(eta), ", ETA %d:%02d", left / 60, left % 60);
		}
		util_format_size(done * (uint64_t)p->blocksize, a, sizeof(a));
		util_format_size(total * (uint64_t)p->blocksize, b, sizeof(b));
		util_format_size((uint64_t)rate, c, sizeof(c));
		fprintf(p->bar, "\r%s: moving |%s| %3d%% %s of %s, %s/s%s\033[K", p->prog,
			bar, pct, a, b, c, eta);
	}
	fflush(p->bar);
	p->drawn = 1;
}

/* The phase at hand is complete: its last frame and line at its total. */
static void finish_phase(struct progress *p)
{
	if (p->last_phase < 0 || p->finished)
		return;
	p->finished = 1;
	if (!p->reported_total && p->fd >= 0)
		write_fd(p, p->last_phase, p->last_total, p->last_total);
	p->last_done = p->last_total;
	p->reported_total = 1;
	if (p->bar && p->drawn_done != p->last_total) {
		draw_bar(p, p->last_phase, p->last_total, p->last_total,
			 util_now_seconds());
		p->drawn_done = p->last_total;
	}
	progress_end(p);
}

/* During the moves a first signal waits for the unit's end (execute.c). */
static int cancelled(const struct progress *p)
{
	return p->cancel && *p->cancel >= (p->cancel_at ? p->cancel_at : 1);
}

int progress_update(void *priv, enum e2f_phase phase, uint64_t done,
		    uint64_t total)
{
	struct progress *p = priv;
	double t = util_now_seconds();
	int number = phase_number(phase), pct;

	if (phase == E2F_PHASE_BITMAPS) {
		/* Not a phase of its own: the inodes are read. */
		if (p->last_phase == 1)
			finish_phase(p);
		return cancelled(p);
	}
	if (number != p->last_phase) {
		finish_phase(p);
		p->last_phase = number;
		p->start = t;
		p->last_draw = 0;
		p->last_pct = -1;
		p->drawn_done = UINT64_MAX;
		p->finished = 0;
	}
	p->last_done = done;
	p->last_total = total;
	p->reported_total = done == total;
	pct = percent(done, total);
	if (p->fd >= 0 && (pct != p->last_pct || done == total ||
			   t - p->last_draw >= DRAW_INTERVAL))
		write_fd(p, number, done, total);
	if (p->bar && (t - p->last_draw >= DRAW_INTERVAL || done == total)) {
		draw_bar(p, number, done, total, t);
		p->drawn_done = done;
	}
	if (pct != p->last_pct || t - p->last_draw >= DRAW_INTERVAL) {
		p->last_pct = pct;
		p->last_draw = t;
	}
	return cancelled(p);
}

void progress_finish(struct progress *p)
{
	finish_phase(p);
	p->last_phase = -1;
}

void progress_end(struct progress *p)
{
	if (p->drawn) {
		fputc('\n', p->bar);
		fflush(p->bar);
		p->drawn = 0;
	}
}

void progress_open(struct progress *p, int fd, int bar)
{
	p->fd = fd;
	p->bar = bar ? stderr : NULL;
	p->own_bar = 0;
	p->last_phase = -1;
	if (fd == 0) {
		/* e2fsck -C 0: a bar, not lines on standard input. */
		p->fd = -1;
		p->bar = stderr;
	} else if (fd > 0 && isatty(fd)) {
		/* Lines are for programs: a terminal gets the bar, on it. */
		p->fd = -1;
		p->bar = fd == STDOUT_FILENO ? stdout : fd == STDERR_FILENO ? stderr : NULL;
		if (!p->bar) {
			int copy = dup(fd);

			p->bar = copy >= 0 ? fdopen(copy, "w") : NULL;
			if (!p->bar && copy >= 0)
				close(copy);
			p->own_bar = p->bar != NULL;
		}
	}
}

void progress_close(struct progress *p)
{
	progress_end(p);
	if (p->own_bar)
		fclose(p->bar);
	p->bar = NULL;
	p->own_bar = 0;
}
