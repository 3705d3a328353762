/*
 * lists.c --- the lists the map opens, as sources for listview.c: the
 * worst files by lost read time (ncdu's list, sorted by what layout costs
 * in reading), the interleave sets, what lies under the cursor, the keys.
 */
#include <curses.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "radix_sort.h"
#include "tui.h"

static enum tui_action show_and_close(struct tui *t, uint64_t fi)
{
	tui_map_show_file(t, fi);
	return TUI_CLOSE;
}

/* -------------------------------------------------------- worst files */

/* +inf's bits: no loss is more. */
#define LOSS_KEY_MAX	UINT64_C(0x7ff0000000000000)

/*
 * The order is worked out once, when the list opens.  Only files in
 * several pieces can lose read time (one piece reads at its ideal), so
 * only those are timed and sorted; the rest follow in inode order, as
 * ties do, and are not listed anywhere: row NLOSSY + K is the K-th file
 * not in LOSSY_BY_FILE, found by a binary search: a row for every file
 * (written in fresh pages, each a page fault) and a second sort would
 * take most of the key's time on a large filesystem.  Each row's figures
 * are computed when it is drawn.
 */
struct loss_row {
	uint64_t	key;		/* the time lost, worst first: see loss_key */
	uint32_t	file;
};

/* The order (tui.h), built once: with the names, in their thread, or by the first L. */
struct tui_worst {
	uint32_t		*order;		/* the lossy files, worst first */
	uint32_t		*lossy_by_file;	/* the same, in file order */
	uint64_t		nlossy;
};

struct worst {
	const struct layout	*layout;
	const uint32_t		*order, *lossy_by_file;
	uint64_t		nlossy, n;
};

/*
 * LOST (> 0) as a key that sorts ascending where LOST sorts descending:
 * a positive double's bits order as it does.  Stable sorting by it keeps
 * equal losses in file order.
 */
static uint64_t loss_key(double lost)
{
	uint64_t bits;

	memcpy(&bits, &lost, sizeof(bits));
	return LOSS_KEY_MAX - bits;
}

/* Row I's file index. */
static uint32_t worst_file(const struct worst *w, uint64_t i)
{
	uint64_t k, lo = 0, hi = w->nlossy;

	if (i < w->nlossy)
		return w->order[i];
	/*
	 * The K-th file not lossy is K + the lossy files before it: those J
	 * with lossy_by_file[J] - J (the files not lossy before the J-th
	 * lossy one, which never falls) at most K.
	 */
	k = i - w->nlossy;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (w->lossy_by_file[mid] - mid <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return k + lo;
}

static uint64_t worst_count(struct tui *t, void *priv)
{
	(void)t;
	return ((struct worst *)priv)->n;
}

static void worst_row(struct tui *t, void *priv, uint64_t i, char *buf, size_t len)
{
	struct worst *w = priv;
	const struct layout_file *f = &w->layout->files[worst_file(w, i)];
	char lost[32], path[1024];
	double read, ideal;

	layout_file_times(w->layout, f, &read, &ideal);
	util_format_seconds(read - ideal, lost, sizeof(lost));
	tui_file_path(t, f->ino, path, sizeof(path));
	snprintf(buf, len, "%10s %5.1f %7u %5u %6u  %s", lost,
		 readmodel_score(read, ideal), layout_file_pieces(w->layout, f),
		 layout_file_best(w->layout, f), tui_partners(t, f), path);
}

static enum tui_action worst_choose(struct tui *t, void *priv, uint64_t i)
{
	return show_and_close(t, worst_file(priv, i));
}

static void worst_free(void *priv)
{
	free(priv);
}

void tui_worst_free(struct tui_worst *o)
{
	if (!o)
		return;
	free(o->order);
	free(o->lossy_by_file);
	free(o);
}

static const struct tui_list_source worst_source = {
	.title = "files by read time lost to their layout",
	.header = "      lost score  pieces  best  inter  path",
	.count = worst_count,
	.row = worst_row,
	.choose = worst_choose,
	.free = worst_free,
};

errcode_t tui_worst_build(const struct layout *layout, struct tui_worst **ret)
{
	struct tui_worst *o = calloc(1, sizeof(*o));
	struct loss_row *lossy = NULL;
	uint64_t i, nlossy = 0;

	*ret = NULL;
	if (o)
		lossy = malloc((layout->nfiles + 1) * sizeof(*lossy));
	if (!lossy) {
		free(o);
		return ENOMEM;
	}
	for (i = 0; i < layout->nfiles; i++) {
		double read, ideal;

		if (layout_file_pieces(layout, &layout->files[i]) < 2)
			continue;
		layout_file_times(layout, &layout->files[i], &read, &ideal);
		if (read > ideal)
			lossy[nlossy++] = (struct loss_row){ loss_key(read - ideal), i };
	}
	o->order = malloc((nlossy + 1) * sizeof(*o->order));
	o->lossy_by_file = malloc((nlossy + 1) * sizeof(*o->lossy_by_file));
	if (o->lossy_by_file)
		for (i = 0; i < nlossy; i++)
			o->lossy_by_file[i] = lossy[i].file;
	if (!o->order || !o->lossy_by_file ||
	    radix_sort_by_start(lossy, nlossy, sizeof(*lossy),
				offsetof(struct loss_row, key), LOSS_KEY_MAX)) {
		tui_worst_free(o);
		free(lossy);
		return ENOMEM;
	}
	for (i = 0; i < nlossy; i++)
		o->order[i] = lossy[i].file;
	free(lossy);
	o->nlossy = nlossy;
	*ret = o;
	return 0;
}

int tui_open_worst(struct tui *t)
{
	struct worst *w;

	tui_names_wait(t);	/* and the order, which mostly comes with them */
	if (!t->worst && tui_worst_build(t->layout, &t->worst)) {
		tui_message(t, "out of memory");
		return -1;
	}
	w = malloc(sizeof(*w));
	if (!w) {
		tui_message(t, "out of memory");
		return -1;
	}
	*w = (struct worst){ t->layout, t->worst->order, t->worst->lossy_by_file,
			     t->worst->nlossy, t->layout->nfiles };
	return tui_list_push(t, &worst_source, w);
}

/* ------------------------------------------------------------ matches */

static uint64_t matches_count(struct tui *t, void *priv)
{
	(void)priv;
	return t->nmatches;
}

static void matches_row(struct tui *t, void *priv, uint64_t i, char *buf, size_t len)
{
	const struct layout_file *f = &t->layout->files[map_find_file(t->matches, i)];
	char path[1024];

	(void)priv;
	tui_file_path(t, f->ino, path, sizeof(path));
	snprintf(buf, len, "%7u %5u %6u  %s", layout_file_pieces(t->layout, f), layout_file_best(t->layout, f),
		 tui_partners(t, f), path);
}

static enum tui_action matches_choose(struct tui *t, void *priv, uint64_t i)
{
	(void)priv;
	tui_map_show_match(t, i);
	return TUI_CLOSE;
}

static void matches_title(struct tui *t, void *priv, char *buf, size_t len)
{
	(void)priv;
	snprintf(buf, len, "files matching %s", t->pattern);
}

static const struct tui_list_source matches_source = {
	.title_of = matches_title,
	.header = " pieces  best  inter  path",
	.count = matches_count,
	.row = matches_row,
	.choose = matches_choose,
};

int tui_open_matches(struct tui *t)
{
	return tui_list_push_at(t, &matches_source, NULL,
				t->match < t->nmatches ? t->match : 0);
}

/* ---------------------------------------------------- interleave sets */

static uint64_t sets_count(struct tui *t, void *priv)
{
	(void)priv;
	return t->layout->nsets;
}

static void sets_row(struct tui *t, void *priv, uint64_t i, char *buf, size_t len)
{
	const struct layout *layout = t->layout;
	const struct layout_set *s = &layout->sets[i];
	char lost[32], path[1024];
	size_t pos;
	uint32_t m;

	(void)priv;
	util_format_seconds(s->read_seconds - s->ideal_seconds, lost, sizeof(lost));
	pos = snprintf(buf, len, "%5llu %10s %6u %8llu  ", (unsigned long long)i + 1,
		       lost, s->members, (unsigned long long)s->alternations);
	/*
	 * As many member paths as the row has room for, and no more than
	 * fill the screen's width: a set of thousands would otherwise look
	 * up dozens of paths a row where two or three show.
	 */
	for (m = 0; m < s->members && pos + 1 < len && tui_width(buf) < COLS; m++) {
		tui_file_path(t, layout->files[layout->set_members[s->first_member + m]].ino,
			      path, sizeof(path));
		pos += snprintf(buf + pos, len - pos, "%s%s", m ? " " : "", path);
	}
}

static enum tui_action sets_choose(struct tui *t, void *priv, uint64_t i)
{
	const struct layout_set *s = &t->layout->sets[i];

	(void)priv;
	return show_and_close(t, t->layout->set_members[s->first_member]);
}

static const struct tui_list_source sets_source = {
	.title = "interleave sets: files written into each other's way",
	.header = "  set       lost  files  alterns  members",
	.count = sets_count,
	.row = sets_row,
	.choose = sets_choose,
};

int tui_open_sets(struct tui *t)
{
	tui_names_wait(t);	/* and the sets' order, which comes with them */
	if (!t->layout->nsets) {
		tui_message(t, "no files interleave");
		return 0;
	}
	return tui_list_push(t, &sets_source, NULL);
}

/* ------------------------------------------------ under the cursor */

/*
 * Rows: the range, one row per state present, then one per owner.  Only
 * owner rows can be chosen, so the list has rows for both and Enter on a
 * summary row does nothing.
 */
struct cell_info {
	blk64_t		start, end;	/* inclusive */
	blk64_t		counts[MAP_NSTATES];
	int		states[MAP_NSTATES], nstates;
	ext2_ino_t	*inos;
	uint64_t	ninos;
};

static uint64_t cell_count(struct tui *t, void *priv)
{
	struct cell_info *c = priv;

	(void)t;
	return 1 + c->nstates + 1 + c->ninos;
}

static void cell_row(struct tui *t, void *priv, uint64_t i, char *buf, size_t len)
{
	struct cell_info *c = priv;
	char path[1024];
	int64_t fi;

	if (i == 0) {
		blk64_t first = t->fs->super->s_first_data_block;
		dgrp_t g0 = ext2fs_group_of_blk2(t->fs, c->start > first ? c->start : first);
		dgrp_t g1 = ext2fs_group_of_blk2(t->fs, c->end > first ? c->end : first);

		if (c->start == c->end)
			snprintf(buf, len, "block %llu, group %u",
				 (unsigned long long)c->start, g0);
		else if (g0 == g1)
			snprintf(buf, len, "blocks %llu-%llu, group %u",
				 (unsigned long long)c->start, (unsigned long long)c->end, g0);
		else
			snprintf(buf, len, "blocks %llu-%llu, groups %u-%u",
				 (unsigned long long)c->start, (unsigned long long)c->end,
				 g0, g1);
		return;
	}
	i--;
	if (i < (uint64_t)c->nstates) {
		int s = c->states[i];

		snprintf(buf, len, "  %10llu %-12s %s", (unsigned long long)c->counts[s],
			 map_state_name(s), map_state_description(s));
		return;
	}
	i -= c->nstates;
	if (i == 0) {
		snprintf(buf, len, c->ninos ? "owners (Enter shows one on the map):" :
			 "no inode owns these blocks");
		return;
	}
	i--;
	tui_file_path(t, c->inos[i], path, sizeof(path));
	fi = layout_find(t->layout, c->inos[i]);
	if (fi < 0) {
		snprintf(buf, len, "  %-40s inode %u, only an extended attribute block",
			 path, c->inos[i]);
	} else {
		const struct layout_file *f = &t->layout->files[fi];

		snprintf(buf, len, "  %-40s %s, %u piece%s (best %u), %u interleaved",
			 path, layout_type_name(f->type), layout_file_pieces(t->layout, f),
			 layout_file_pieces(t->layout, f) == 1 ? "" : "s", layout_file_best(t->layout, f),
			 tui_partners(t, f));
	}
}

static enum tui_action cell_choose(struct tui *t, void *priv, uint64_t i)
{
	struct cell_info *c = priv;
	int64_t fi;

	if (i < 2 + (uint64_t)c->nstates)
		return TUI_STAY;
	fi = layout_find(t->layout, c->inos[i - 2 - c->nstates]);
	if (fi < 0) {
		tui_message(t, "that inode has no blocks but an EA block");
		return TUI_STAY;
	}
	return show_and_close(t, fi);
}

static void cell_free(void *priv)
{
	struct cell_info *c = priv;

	free(c->inos);
	free(c);
}

static const struct tui_list_source cell_source = {
	.title = "under the cursor",
	.count = cell_count,
	.row = cell_row,
	.choose = cell_choose,
	.free = cell_free,
};

int tui_open_cell(struct tui *t, blk64_t start, blk64_t len)
{
	struct cell_info *c = calloc(1, sizeof(*c));
	errcode_t ret;
	int s;

	tui_names_wait(t);
	if (!c) {
		tui_message(t, "out of memory");
		return -1;
	}
	if (start + len > map_blocks(t->map))
		len = map_blocks(t->map) - start;
	c->start = start;
	c->end = start + len - 1;
	map_range_counts(t->map, start, len, c->counts);
	for (s = MAP_NSTATES - 1; s >= 0; s--)
		if (c->counts[s])
			c->states[c->nstates++] = s;
	ret = map_range_owners(t->map, start, len, &c->inos, &c->ninos);
	if (ret) {
		tui_message(t, "cannot list the owners: %s", error_message(ret));
		free(c);
		return -1;
	}
	return tui_list_push(t, &cell_source, c);
}

/* -------------------------------------------------------------- help */

static uint64_t help_count(struct tui *t, void *priv)
{
	(void)t;
	(void)priv;
	return tui_map_help_count() + 2 + MAP_NSTATES;
}

static void help_row(struct tui *t, void *priv, uint64_t i, char *buf, size_t len)
{
	size_t keys = tui_map_help_count();

	(void)t;
	(void)priv;
	if (i < keys) {
		tui_map_help_row(i, buf, len);
	} else if (i == keys) {
		buf[0] = 0;
	} else if (i == keys + 1) {
		snprintf(buf, len, "A cell shows the worst state of its blocks:");
	} else {
		int s = i - keys - 2;

		snprintf(buf, len, "  %-12s %s", map_state_name(s),
			 map_state_description(s));
	}
}

static const struct tui_list_source help_source = {
	.title = "e2fragmap keys",
	.count = help_count,
	.row = help_row,
};

int tui_open_help(struct tui *t)
{
	return tui_list_push(t, &help_source, NULL);
}
