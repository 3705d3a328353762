/*
 * names.c --- the names of the files, read in a thread of their own while
 * the map is already on the screen.
 *
 * The first screen needs no names (main.c scans without them); the
 * directories are read once it is drawn (loop.c).  Until they are, paths show as
 * "<ino N>" (the status line's owner, redrawn when the names come), and
 * what needs every name (a search, the lists) waits for them, saying so.
 * The thread only touches the layout's names and sets, the filesystem's
 * I/O and the index the searches use; nothing else here does until it
 * is joined (map_names_read() has the contract).
 */
#include <curses.h>
#include <pthread.h>
#include <time.h>

#include "tui.h"

static int cancelled(void *priv, enum e2f_phase phase, uint64_t done, uint64_t total)
{
	struct tui *t = priv;

	(void)phase;
	(void)done;
	(void)total;
	return __atomic_load_n(&t->names_stop, __ATOMIC_ACQUIRE);
}

static void *read_names(void *priv)
{
	struct tui *t = priv;

	t->names_err = map_names_read(t->layout, cancelled, t);
	if (!t->names_err)
		t->names_err = map_find_index_build(t->layout, &t->find);
	/*
	 * The partners index a highlight asks: here, not before the first
	 * screen nor in the first highlight's key.  It reads the layout as
	 * the map does, and the map gets it when the thread is joined; a
	 * highlight before then builds its own (map_partners).  On failure
	 * that one says why.
	 */
	if (!cancelled(t, E2F_PHASE_DIRS, 0, 0) && !t->layout->partners &&
	    t->layout->ninterleaved && layout_partners_open(t->layout, &t->partners))
		t->partners = NULL;
	/* L's order, the same way (only L reads it; without it L builds its own). */
	if (!cancelled(t, E2F_PHASE_DIRS, 0, 0) && !t->worst && tui_worst_build(t->layout, &t->worst))
		t->worst = NULL;
	__atomic_store_n(&t->names_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

void tui_names_begin(struct tui *t)
{
	sigset_t old;
	int failed;

	t->names_later = 0;
	/* The key loop is the one a ^C must interrupt (signals.c). */
	tui_signals_block(&old);
	failed = pthread_create(&t->names_thread, NULL, read_names, t);
	tui_signals_unblock(&old);
	if (!failed) {
		t->names_pending = 1;
		return;
	}
	/* No thread: read them now, while the first screen waits. */
	read_names(t);
	map_partners_give(t->map, t->partners);
	t->partners = NULL;
	if (t->names_err)
		tui_message(t, "cannot read every name: %s", error_message(t->names_err));
}

static void join(struct tui *t)
{
	pthread_join(t->names_thread, NULL);
	t->names_pending = 0;
	map_partners_give(t->map, t->partners);
	t->partners = NULL;
	if (t->keylog)
		fprintf(t->keylog, "names %.1f ms\n", (util_now_seconds() - t->started) * 1e3);
	if (t->keylog)
		fflush(t->keylog);
	if (t->names_err && t->names_err != E2F_ERR_CANCELLED)
		tui_message(t, "cannot read every name: %s", error_message(t->names_err));
}

int tui_names_in(const struct tui *t)
{
	/* Once the thread says it is done, what it wrote can be read (acquire). */
	return !t->names_later &&
	       (!t->names_pending || __atomic_load_n(&t->names_done, __ATOMIC_ACQUIRE));
}

int tui_names_ready(struct tui *t)
{
	if (t->names_pending && __atomic_load_n(&t->names_done, __ATOMIC_ACQUIRE))
		join(t);
	return !t->names_pending;
}

void tui_names_wait(struct tui *t)
{
	if (tui_names_ready(t))
		return;
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	tui_put(LINES - 1, 0, "reading the directories for the files' names...", COLS);
	attroff(A_REVERSE);
	refresh();
	join(t);
}

int tui_names_stop(struct tui *t, long wait_ms)
{
	struct timespec deadline;

	if (!t->names_pending)
		return 1;
	__atomic_store_n(&t->names_stop, 1, __ATOMIC_RELEASE);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += wait_ms * 1000000L;
	deadline.tv_sec += deadline.tv_nsec / 1000000000L;
	deadline.tv_nsec %= 1000000000L;
	/* The names stop between directories; a readahead or the index may take longer. */
	if (pthread_timedjoin_np(t->names_thread, NULL, &deadline))
		return 0;
	t->names_pending = 0;
	return 1;
}
