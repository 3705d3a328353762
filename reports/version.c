/*
 * version.c --- -V: the program's version and the libext2fs it runs with.
 */
#include <ext2fs/ext2fs.h>

#include "config.h"
#include "version.h"

void report_version(FILE *out, const char *prog)
{
	const char *lib_version = NULL, *lib_date = NULL;

	/* What the loaded library says, not what the headers said at build time. */
	ext2fs_get_library_version(&lib_version, &lib_date);
	fprintf(out, "%s %s\n\tUsing EXT2FS Library version %s, %s\n", prog,
		PACKAGE_VERSION, lib_version ? lib_version : "unknown",
		lib_date ? lib_date : "unknown");
}
