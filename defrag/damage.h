/*
 * damage.h --- e2defrag's refusal to write a damaged filesystem
 * (doc/design.md, Safety): the checks are lib/sanity.c's, the words and the
 * refusal are here.
 */
#ifndef DAMAGE_H
#define DAMAGE_H

#include "e2frag.h"

/*
 * Whether FS (before the scan) or LAYOUT (after a scan with
 * layout_opts.sanity) shows damage that makes moving blocks unsafe.  When
 * it does, one line naming the first problem and saying to run e2fsck
 * goes to stderr, FS is kept from writing anything on close, and 1 is
 * returned (e2defrag then exits 8).  An error of the check itself is said
 * and refuses too.
 */
int damage_refuse_fs(const char *prog, const char *device, ext2_filsys fs);
int damage_refuse_layout(const char *prog, const char *device,
			 struct layout *layout);

/*
 * Both checks, with a scan of their own (no progress shown): for deciding
 * before anything is touched, the old undo file included.
 */
int damage_refuse_scan(const char *prog, const char *device, ext2_filsys fs);

#endif /* DAMAGE_H */
