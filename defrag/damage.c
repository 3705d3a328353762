/*
 * damage.c --- refuse, in one line, to move blocks on a filesystem whose
 * metadata disagree with themselves.  What is checked is lib/sanity.c's
 * (e2defrag(8), SAFETY, lists it); no option overrides it: e2fsck -f
 * repairs the filesystem, then e2defrag may run.
 */
#include <string.h>

#include <et/com_err.h>

#include "damage.h"
#include "sanity.h"

/* Nothing read so far may reach the disk when FS is closed. */
static void keep_clean(ext2_filsys fs)
{
	fs->flags &= ~(EXT2_FLAG_DIRTY | EXT2_FLAG_BB_DIRTY | EXT2_FLAG_IB_DIRTY);
}

static int refuse(const char *prog, const char *device, ext2_filsys fs,
		  struct layout *layout, errcode_t ret,
		  const struct sanity_finding *found)
{
	char what[600];

	if (ret) {
		keep_clean(fs);
		com_err(prog, ret, "while checking %s for damage. Nothing was changed.",
			device);
		return 1;
	}
	if (found->what == SANITY_NONE)
		return 0;
	keep_clean(fs);
	/* Any file may be the one named: all of them (no-op when all are). */
	if (layout)
		(void)layout_names_more(layout, NULL, NULL);
	sanity_describe(layout, found, what, sizeof(what));
	if (found->problems > 1)
		fprintf(stderr, "%s: %s: %s (and %llu more %s); run e2fsck -f first. Nothing was changed.\n",
			prog, device, what, (unsigned long long)found->problems - 1,
			util_plural(found->problems - 1, "problem", "problems"));
	else
		fprintf(stderr, "%s: %s: %s; run e2fsck -f first. Nothing was changed.\n",
			prog, device, what);
	return 1;
}

int damage_refuse_fs(const char *prog, const char *device, ext2_filsys fs)
{
	struct sanity_finding found;
	errcode_t ret = sanity_check_fs(fs, &found);

	return refuse(prog, device, fs, NULL, ret, &found);
}

int damage_refuse_layout(const char *prog, const char *device,
			 struct layout *layout)
{
	struct sanity_finding found;
	errcode_t ret = sanity_check_layout(layout, &found);

	return refuse(prog, device, layout->fs, layout, ret, &found);
}

int damage_refuse_scan(const char *prog, const char *device, ext2_filsys fs)
{
	struct layout_opts lo;
	struct layout *layout = NULL;
	errcode_t ret;
	int refused;

	if (damage_refuse_fs(prog, device, fs))
		return 1;
	memset(&lo, 0, sizeof(lo));
	readmodel_defaults(&lo.model);
	lo.names = LAYOUT_NAMES_ALL;
	lo.sanity = 1;
	ret = layout_scan(fs, &lo, &layout);
	if (ret) {
		keep_clean(fs);
		com_err(prog, ret, "while scanning %s. Nothing was changed.", device);
		return 1;
	}
	refused = damage_refuse_layout(prog, device, layout);
	layout_free(layout);
	return refused;
}
