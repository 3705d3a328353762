/*
 * reports/version.h --- what -V prints in every program: its own version,
 * then the libext2fs it runs with, as e2fsprogs' programs say it.
 */
#ifndef REPORTS_VERSION_H
#define REPORTS_VERSION_H

#include <stdio.h>

/*
 * "PROG VERSION" and, on the next line, "\tUsing EXT2FS Library version
 * 1.47.0, 5-Feb-2023": the library the program loaded (which may be newer
 * than the one it was built with), asked at run time as e2fsck asks it.
 */
void report_version(FILE *out, const char *prog);

#endif /* REPORTS_VERSION_H */
