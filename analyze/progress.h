/*
 * analyze/progress.h --- the scan's progress on a terminal ("PROG:
 * reading inodes: 42%"), which e2frag -v and e2fragmap show while they
 * read a large filesystem.
 */
#ifndef ANALYZE_PROGRESS_H
#define ANALYZE_PROGRESS_H

#include "../lib/e2frag.h"

/*
 * A layout_opts progress callback; PRIV is the program's name.  Nothing
 * when stderr is not a terminal.
 */
int report_scan_progress(void *priv, enum e2f_phase phase, uint64_t done,
			 uint64_t total);

#endif /* ANALYZE_PROGRESS_H */
