/*
 * progress.c --- the scan's progress for people on a terminal, the one
 * line e2frag -v and e2fragmap show while they read a large filesystem.
 */
#include <stdio.h>
#include <unistd.h>

#include "progress.h"

int report_scan_progress(void *priv, enum e2f_phase phase, uint64_t done,
			 uint64_t total)
{
	/* Reading the bitmaps is a moment, not a phase to watch. */
	if (total && phase != E2F_PHASE_BITMAPS && isatty(STDERR_FILENO))
		fprintf(stderr, "\r%s: reading %s: %3d%%\033[K", (const char *)priv,
			util_phase_name(phase),
			done >= total ? 100 : (int)(100.0 * done / total));
	return 0;
}
