/*
 * signals.c --- ^C, SIGTERM and SIGHUP while the map is up.
 *
 * Left to ncurses, they restored the terminal and exited 1, a status
 * e2fragmap(1) does not list.  Here a handler only notes the signal: it
 * interrupts the read of the next key (no SA_RESTART), the loop ends as
 * q ends it, and main() gives the terminal back.  Then ^C is an ordinary
 * way out (exit 0); SIGTERM and SIGHUP are sent again with their default
 * action, so that whoever sent them sees e2fragmap die of them.
 *
 * Caught from just before curses starts: ^C during the scan still kills
 * the program at once, as nothing is on the screen to restore.  ncurses
 * installs its own handlers only where none is set, so these stay.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "tui.h"

static volatile sig_atomic_t caught;
static const int quit_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NQUIT	(sizeof(quit_signals) / sizeof(quit_signals[0]))

static void note(int sig)
{
	if (!caught)
		caught = sig;
}

void tui_signals_catch(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = note;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: the key's read() returns */
	for (i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &sa, NULL);
}

int tui_signal_caught(void)
{
	return caught;
}

/*
 * Threads started between these two take none of the signals, so that
 * the one reading keys is the one interrupted.
 */
void tui_signals_block(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < NQUIT; i++)
		sigaddset(&set, quit_signals[i]);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void tui_signals_unblock(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

void tui_signal_resend(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}
