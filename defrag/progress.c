/*
 * progress.c --- progress for people (a bar on the terminal: bytes moved
 * of the total, rate, time left) and for programs (-C FD: lines of
 * "PHASE DONE TOTAL DEVICE", as e2fsck -C writes them).
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

/*
 * The -C phase numbers (documented in e2defrag(8)): 1 scanning, 2 moving,
 * 3 planning.  Planning comes between the other two; it got its number
 * last, so that readers of the first two keep working.
 */
static int phase_number(enum e2f_phase phase)
{
	return phase == E2F_PHASE_MOVE ? 2 : phase == E2F_PHASE_PLAN ? 3 : 1;
}

static void write_fd(const struct progress *p, enum e2f_phase phase,
		     uint64_t done, uint64_t total)
{
	char line[512];
	int n;
	ssize_t w;

	n = snprintf(line, sizeof(line), "%d %llu %llu %s\n", phase_number(phase),
		     (unsigned long long)done, (unsigned long long)total,
		     p->device ? p->device : "");
	if (n > 0 && (size_t)n < sizeof(line))
		w = write(p->fd, line, n);
	else
		w = 0;
	(void)w;	/* a reader that went away must not stop the run */
}

static void draw_bar(struct progress *p, enum e2f_phase phase, uint64_t done,
		     uint64_t total, double t)
{
	char bar[BAR_WIDTH + 1], a[32], b[32], c[32], eta[32] = "";
	double frac = total ? (double)done / total : 0, el = t - p->start;
	int i, fill;

	if (frac > 1)
		frac = 1;
	fill = (int)(frac * BAR_WIDTH);
	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[BAR_WIDTH] = 0;
	if (phase != E2F_PHASE_MOVE) {
		fprintf(stderr, "\r%s: %s |%s| %3.0f%%\033[K", p->prog,
			phase == E2F_PHASE_PLAN ? "planning" : "scanning", bar,
			100 * frac);
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
		fprintf(stderr, "\r%s: moving |%s| %s of %s, %s/s%s\033[K", p->prog,
			bar, a, b, c, eta);
	}
	p->drawn = 1;
}

int progress_update(void *priv, enum e2f_phase phase, uint64_t done,
		    uint64_t total)
{
	struct progress *p = priv;
	double t = util_now_seconds();
	int pct = total ? (int)(100.0 * done / total) : 0;

	if ((int)phase != p->last_phase) {
		p->last_phase = phase;
		p->start = t;
		p->last_draw = 0;
		p->last_pct = -1;
	}
	if (p->fd >= 0 && (pct != p->last_pct || done == total ||
			   t - p->last_draw >= DRAW_INTERVAL))
		write_fd(p, phase, done, total);
	if (p->bar && (t - p->last_draw >= DRAW_INTERVAL || done == total))
		draw_bar(p, phase, done, total, t);
	if (pct != p->last_pct || t - p->last_draw >= DRAW_INTERVAL) {
		p->last_pct = pct;
		p->last_draw = t;
	}
	return p->cancel && *p->cancel;
}

void progress_end(struct progress *p)
{
	if (p->drawn) {
		fputc('\n', stderr);
		p->drawn = 0;
	}
}
