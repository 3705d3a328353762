/*
 * reports/progress.h --- the scan's progress on a terminal ("PROG:
 * reading inodes: 42%"), which e2frag -v and e2fragmap show while they
 * read a large filesystem.
 */
#ifndef REPORTS_PROGRESS_H
#define REPORTS_PROGRESS_H

#include "e2frag.h"

/*
 * A layout_opts progress callback; PRIV is the program's name.  Nothing
 * when stderr is not a terminal.
 */
int report_scan_progress(void *priv, enum e2f_phase phase, uint64_t done,
			 uint64_t total);

#endif /* REPORTS_PROGRESS_H */
