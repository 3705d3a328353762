/*
 * mapview.c --- the map view: cells, legend, status line, and its keys.
 *
 * The screen, top to bottom: rows of cells (each row starting with the
 * number of its first block), the legend, the status line.  The cursor is
 * a cell index at the current scale; zooming keeps the block under it.
 * Its keys are a table, which the help list reads too.
 *
 * A scale is a zoom level of the map (2^level blocks a cell) times a
 * SPAN: zooming steps through levels (span 1), but the whole filesystem
 * at a level fills between half and all of the screen, so the view that
 * fits it takes a finer level and joins SPAN of its cells into one,
 * filling the rows the screen has.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

/* ------------------------------------------------------------- geometry */

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* One legend entry: a state or a mark with its name. */
struct legend_entry {
	int	state, mark;
	char	name[160];
};

static int legend_entries(const struct tui *t, struct legend_entry *e)
{
	int n = 0, s;

	for (s = 0; s < MAP_NSTATES; s++) {
		e[n].state = s;
		e[n].mark = MAP_MARK_NONE;
		snprintf(e[n++].name, sizeof(e[0].name), "%s", map_state_name(s));
	}
	if (t->hl) {
		const struct layout_file *f =
			&t->layout->files[map_highlight_file(t->hl)];
		uint32_t partners = tui_partners(t, f);

		e[n].state = MAP_FREE;
		e[n].mark = MAP_MARK_FILE;
		tui_file_path(t, f->ino, e[n++].name, sizeof(e[0].name));

		if (partners) {
			e[n].state = MAP_FREE;
			e[n].mark = MAP_MARK_PARTNER;
			snprintf(e[n++].name, sizeof(e[0].name),
				 "%u file%s interleaved with it", partners,
				 partners == 1 ? "" : "s");
		}
	}
	e[n].state = MAP_PAST_END;
	e[n].mark = MAP_MARK_NONE;
	snprintf(e[n++].name, sizeof(e[0].name), "?:keys");
	return n;
}

#define LEGEND_MAX	(MAP_NSTATES + 3)
#define LEGEND_GAP	2

/*
 * Lay the legend out from row Y, drawing its first MAX_ROWS rows (none:
 * just measure); returns the rows it takes.
 */
static int legend(const struct tui *t, int y, int max_rows)
{
	struct legend_entry e[LEGEND_MAX];
	int n = legend_entries(t, e), i, x = 0, rows = 1;

	for (i = 0; i < n; i++) {
		int w = 2 + tui_width(e[i].name);

		/* A path longer than the screen keeps its ends (tui_elide). */
		if (w > COLS && COLS > 2) {
			char cut[sizeof(e[0].name)];

			tui_elide(e[i].name, COLS - 2, cut, sizeof(cut));
			memcpy(e[i].name, cut, sizeof(cut));
			w = 2 + tui_width(e[i].name);
		}

		if (x && x + w > COLS) {
			rows++;
			x = 0;
		}
		if (rows <= max_rows) {
			if (e[i].state == MAP_PAST_END)
				tui_put(y + rows - 1, x, e[i].name, COLS - x);
			else
				tui_style_legend_entry(t, y + rows - 1, x, e[i].state,
						       e[i].mark, e[i].name);
		}
		x += w + LEGEND_GAP;
	}
	return rows;
}

void tui_map_geometry(const struct tui *t, struct tui_geometry *g)
{
	int lines = LINES;

	g->status_y = lines - 1;
	g->legend_rows = legend(t, 0, 0);	/* measure only */
	/* Keep at least two rows of cells: the legend gives way first. */
	if (g->legend_rows > lines - 3)
		g->legend_rows = lines - 3 > 0 ? lines - 3 : 0;
	g->legend_y = g->status_y - g->legend_rows;
	g->rows = g->legend_y > 0 ? g->legend_y : 1;
	g->gutter = digits(map_blocks(t->map) - 1) + 1;
	if (COLS - g->gutter < 16)
		g->gutter = 0;
	g->width = COLS - g->gutter > 0 ? COLS - g->gutter : 1;
}

struct scale {
	unsigned	level;
	uint64_t	span;	/* cells of LEVEL in one cell of the screen */
};

static blk64_t cell_blocks(const struct tui *t)
{
	return (blk64_t)t->span << t->level;
}

/* Cells at the current scale. */
static uint64_t scale_cells(const struct tui *t)
{
	return (map_cells(t->map, t->level) + t->span - 1) / t->span;
}

/*
 * The scale that shows the whole filesystem on the screen's cells, as
 * finely as they allow: levels come in powers of two, so a finer level
 * (up to 16 times finer) whose cells are joined SPAN at a time.
 */
static struct scale fit_scale(const struct tui *t, const struct tui_geometry *g)
{
	uint64_t screen = (uint64_t)g->width * g->rows;
	unsigned coarse = map_level_fit(t->map, screen);
	struct scale sc;

	sc.level = coarse > 4 ? coarse - 4 : 0;
	sc.span = (map_cells(t->map, sc.level) + screen - 1) / screen;
	if (!sc.span)
		sc.span = 1;
	/* A span that is a power of two is a level of its own. */
	while (sc.span > 1 && !(sc.span & 1)) {
		sc.span >>= 1;
		sc.level++;
	}
	return sc;
}

static blk64_t scale_blocks(struct scale sc)
{
	return (blk64_t)sc.span << sc.level;
}

/* Change the zoom, keeping the block under the cursor (the anchor when it is in the cell). */
static void set_scale(struct tui *t, struct scale sc)
{
	blk64_t block = t->cursor * cell_blocks(t);

	if (t->anchor / cell_blocks(t) == t->cursor)
		block = t->anchor;
	t->level = sc.level;
	t->span = sc.span;
	t->cursor = block / cell_blocks(t);
	t->anchor = block;
}

static void set_level(struct tui *t, unsigned level)
{
	struct scale sc = { level, 1 };

	set_scale(t, sc);
}

void tui_map_jump(struct tui *t, blk64_t block)
{
	if (!t->span)
		t->span = 1;
	t->cursor = block / cell_blocks(t);
	t->anchor = block;
}

/* Level and scroll position made consistent with the screen as it is now. */
static void settle(struct tui *t, const struct tui_geometry *g)
{
	struct scale fit = fit_scale(t, g);
	uint64_t ncells, nrows, row;

	if (!t->span)
		t->span = 1;
	if (t->fit || cell_blocks(t) > scale_blocks(fit))
		set_scale(t, fit);
	ncells = scale_cells(t);
	if (t->cursor >= ncells)
		t->cursor = ncells - 1;
	nrows = (ncells + g->width - 1) / g->width;
	row = t->cursor / g->width;
	if (row < t->top)
		t->top = row;
	if (row >= t->top + g->rows)
		t->top = row - g->rows + 1;
	if (t->top + g->rows > nrows)
		t->top = nrows > (uint64_t)g->rows ? nrows - g->rows : 0;
}

/* ------------------------------------------------------------- drawing */

static int reserve_cells(struct tui *t, size_t n)
{
	uint8_t *c, *m;

	if (n <= t->cells_cap)
		return 0;
	c = realloc(t->cells, n);
	if (!c)
		return -1;
	t->cells = c;
	m = realloc(t->marks, n);
	if (!m)
		return -1;
	t->marks = m;
	t->cells_cap = n;
	return 0;
}

/*
 * Join each SPAN values of V into one, in place: the worst state (or
 * strongest mark), past the end only when all of them are.
 */
static void join_cells(uint8_t *v, size_t n, uint64_t span)
{
	size_t i;
	uint64_t j;

	for (i = 0; i < n; i++) {
		uint8_t worst = MAP_PAST_END;

		for (j = 0; j < span; j++) {
			uint8_t x = v[i * span + j];

			if (x != MAP_PAST_END && (worst == MAP_PAST_END || x > worst))
				worst = x;
		}
		v[i] = worst;
	}
}

static void draw_cells(struct tui *t, const struct tui_geometry *g)
{
	uint64_t first = t->top * g->width, ncells = scale_cells(t);
	size_t n = (size_t)g->width * g->rows;
	int r, c;

	if (reserve_cells(t, n * t->span)) {
		tui_message(t, "out of memory");
		return;
	}
	map_cell_states(t->map, t->level, first * t->span, n * t->span, t->cells);
	if (t->hl)
		map_highlight_cells(t->hl, t->level, first * t->span, n * t->span,
				    t->marks);
	else
		memset(t->marks, MAP_MARK_NONE, n * t->span);
	if (t->span > 1) {
		join_cells(t->cells, n, t->span);
		join_cells(t->marks, n, t->span);	/* MAP_MARK_* are below MAP_PAST_END */
	}
	for (r = 0; r < g->rows; r++) {
		uint64_t row_first = first + (uint64_t)r * g->width;
		char num[32];

		if (row_first >= ncells)
			break;
		if (g->gutter) {
			snprintf(num, sizeof(num), "%*llu ", g->gutter - 1,
				 (unsigned long long)(row_first * cell_blocks(t)));
			mvaddstr(r, 0, num);
		}
		for (c = 0; c < g->width; c++) {
			size_t i = (size_t)r * g->width + c;

			tui_style_cell(t, r, g->gutter + c, t->cells[i], t->marks[i],
				       row_first + c == t->cursor);
		}
	}
}

/* Who owns the cursor's blocks, in a few words. */
static void describe_cursor(struct tui *t, blk64_t start, blk64_t len,
			    char *buf, size_t size)
{
	ext2_ino_t *inos = NULL;
	uint64_t n = 0;
	blk64_t counts[MAP_NSTATES];
	char path[1024];
	int s;

	if (map_range_owners(t->map, start, len, &inos, &n)) {
		snprintf(buf, size, "?");
		return;
	}
	if (n) {
		/* The highlighted file first, when it is here. */
		ext2_ino_t shown = inos[0];
		uint64_t i;

		if (t->hl) {
			ext2_ino_t hl_ino = t->layout->files[map_highlight_file(t->hl)].ino;

			for (i = 0; i < n; i++)
				if (inos[i] == hl_ino)
					shown = hl_ino;
		}
		tui_file_path(t, shown, path, sizeof(path));
		if (n > 1)
			snprintf(buf, size, "%s +%llu more", path,
				 (unsigned long long)(n - 1));
		else
			snprintf(buf, size, "%s", path);
		free(inos);
		return;
	}
	map_range_counts(t->map, start, len, counts);
	for (s = MAP_NSTATES - 1; s > MAP_FREE && !counts[s]; s--)
		;
	snprintf(buf, size, "%s", map_state_name(s));
}

/*
 * The status line, "WHAT  |  N blocks/cell  DEVICE", in COLS columns: what
 * the cursor or the last key found comes first, the zoom next, the device
 * last (it is the same all along).  So when it is too long the device is
 * named by its last component, then left out, and only then is WHAT cut,
 * in its middle, keeping its subject and its figures.
 */
static void fit_status(const struct tui *t, const char *what, blk64_t bpc,
		       char *buf, size_t len)
{
	const char *base = strrchr(t->device, '/');
	char zoom[48], cut[1600];
	int w = tui_width(what), sep = 5, zw;

	snprintf(zoom, sizeof(zoom), "%llu block%s/cell", (unsigned long long)bpc,
		 bpc == 1 ? "" : "s");
	zw = tui_width(zoom);
	base = base && base[1] ? base + 1 : t->device;
	if (w + sep + zw + 2 + tui_width(t->device) <= COLS) {
		snprintf(buf, len, "%s  |  %s  %s", what, zoom, t->device);
	} else if (w + sep + zw + 2 + tui_width(base) <= COLS) {
		snprintf(buf, len, "%s  |  %s  %s", what, zoom, base);
	} else {
		tui_elide(what, COLS - sep - zw, cut, sizeof(cut));
		snprintf(buf, len, "%s  |  %s", cut, zoom);
	}
}

static void draw_status(struct tui *t, const struct tui_geometry *g)
{
	blk64_t start = t->cursor * cell_blocks(t), len = cell_blocks(t);
	blk64_t end = start + len - 1;
	blk64_t first = t->fs->super->s_first_data_block;
	char owner[1200], line[1600], fitted[1700], groups[64];
	dgrp_t g0, g1;

	if (end >= map_blocks(t->map))
		end = map_blocks(t->map) - 1;
	g0 = ext2fs_group_of_blk2(t->fs, start < first ? first : start);
	g1 = ext2fs_group_of_blk2(t->fs, end < first ? first : end);
	if (g0 == g1)
		snprintf(groups, sizeof(groups), "group %u", g0);
	else
		snprintf(groups, sizeof(groups), "groups %u-%u", g0, g1);
	describe_cursor(t, start, end - start + 1, owner, sizeof(owner));
	/* A message stands in for the cursor's blocks; the zoom stays in view. */
	if (t->message[0])
		snprintf(line, sizeof(line), "%s", t->message);
	else if (end > start)
		snprintf(line, sizeof(line), "blocks %llu-%llu (%s): %s",
			 (unsigned long long)start, (unsigned long long)end, groups, owner);
	else
		snprintf(line, sizeof(line), "block %llu (%s): %s",
			 (unsigned long long)start, groups, owner);
	fit_status(t, line, len, fitted, sizeof(fitted));
	attron(A_REVERSE);
	mvhline(g->status_y, 0, ' ', COLS);
	tui_put(g->status_y, 0, fitted, COLS);
	attroff(A_REVERSE);
}

static void map_draw(struct tui *t, void *data)
{
	struct tui_geometry g;

	(void)data;
	tui_map_geometry(t, &g);
	settle(t, &g);
	draw_cells(t, &g);
	if (g.legend_rows)
		legend(t, g.legend_y, g.legend_rows);
	draw_status(t, &g);
}

/* ---------------------------------------------------------------- keys */

static void move_cursor(struct tui *t, int64_t delta)
{
	uint64_t ncells = scale_cells(t);

	if (delta < 0 && (uint64_t)-delta > t->cursor)
		t->cursor = 0;
	else if (delta > 0 && t->cursor + delta >= ncells)
		t->cursor = ncells - 1;
	else
		t->cursor += delta;
}

static enum tui_action key_move(struct tui *t, const struct tui_geometry *g, int key)
{
	int64_t w = g->width, page = (int64_t)g->width * g->rows;

	switch (key) {
	case 'h': case TUI_FKEY + KEY_LEFT: move_cursor(t, -1); break;
	case 'l': case TUI_FKEY + KEY_RIGHT: move_cursor(t, 1); break;
	case 'k': case TUI_FKEY + KEY_UP: move_cursor(t, -w); break;
	case 'j': case TUI_FKEY + KEY_DOWN: move_cursor(t, w); break;
	case TUI_FKEY + KEY_PPAGE:
		move_cursor(t, -page);
		t->top = t->top > (uint64_t)g->rows ? t->top - g->rows : 0;
		break;
	case TUI_FKEY + KEY_NPAGE:
		move_cursor(t, page);
		t->top += g->rows;	/* settle() pulls it back at the end */
		break;
	case TUI_FKEY + KEY_HOME: t->cursor = 0; break;
	case TUI_FKEY + KEY_END: t->cursor = scale_cells(t) - 1; break;
	}
	return TUI_STAY;
}

static enum tui_action key_zoom(struct tui *t, const struct tui_geometry *g, int key)
{
	struct scale fit = fit_scale(t, g);
	uint64_t screen_row = t->cursor / g->width - t->top;
	blk64_t now = cell_blocks(t);

	if (key == '+' || key == '=') {
		unsigned finer = 0;

		if (now == 1) {
			tui_message(t, "one block per cell: cannot zoom in further");
			return TUI_STAY;
		}
		/* The next level with fewer blocks a cell than now. */
		while (((blk64_t)2 << finer) < now)
			finer++;
		set_level(t, finer);
		t->fit = 0;
	} else {
		if (now >= scale_blocks(fit)) {
			tui_message(t, "the whole filesystem is on the screen");
			return TUI_STAY;
		}
		if (((blk64_t)2 << t->level) >= scale_blocks(fit)) {
			set_scale(t, fit);
			t->fit = 1;
		} else {
			set_level(t, t->level + 1);
		}
	}
	/* Keep the cursor on the same screen row where possible. */
	t->top = t->cursor / g->width > screen_row ? t->cursor / g->width - screen_row : 0;
	return TUI_STAY;
}

static void goto_group(struct tui *t, const char *text)
{
	char *end;
	unsigned long g = strtoul(text, &end, 10);

	if (end == text || *end || g >= t->fs->group_desc_count) {
		tui_message(t, "no group '%s': groups are 0-%u", text,
			    t->fs->group_desc_count - 1);
		return;
	}
	tui_map_jump(t, ext2fs_group_first_block2(t->fs, g));
}

static enum tui_action key_group(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)g;
	(void)key;
	tui_prompt(t, "go to group: ", goto_group);
	return TUI_STAY;
}

/* Highlight layout->files[FI]; PREFIX and HINT frame what the status line says of it. */
static void show_file(struct tui *t, uint64_t fi, const char *prefix, const char *hint)
{
	const struct layout_file *f = &t->layout->files[fi];
	struct map_highlight *hl;
	char path[1024];
	errcode_t ret;

	ret = map_highlight_new(t->map, fi, &hl);
	if (ret) {
		tui_message(t, "cannot highlight: %s", error_message(ret));
		return;
	}
	map_highlight_free(t->hl);
	t->hl = hl;
	t->piece = 0;
	if (layout_file_pieces(t->layout, f))
		tui_map_jump(t, layout_file_piece(t->layout, f, 0).start);
	tui_file_path(t, f->ino, path, sizeof(path));
	tui_message(t, "%s%s: %u piece%s (best %u), interleaved with %u file%s; %s",
		    prefix, path, layout_file_pieces(t->layout, f), layout_file_pieces(t->layout, f) == 1 ? "" : "s",
		    layout_file_best(t->layout, f), tui_partners(t, f),
		    tui_partners(t, f) == 1 ? "" : "s", hint);
}

void tui_map_show_file(struct tui *t, uint64_t fi)
{
	tui_map_forget_matches(t);
	show_file(t, fi, "", "n/N: next/previous piece");
}

void tui_map_show_match(struct tui *t, uint64_t i)
{
	char prefix[64];

	t->match = i;
	snprintf(prefix, sizeof(prefix), "match %llu of %llu: ",
		 (unsigned long long)i + 1, (unsigned long long)t->nmatches);
	show_file(t, map_find_file(t->matches, i), prefix, "n/N: other matches, p/P: pieces");
}

void tui_map_forget_matches(struct tui *t)
{
	map_find_result_free(t->matches);
	t->matches = NULL;
	t->nmatches = t->match = 0;
}

/* Search for TEXT: one match is shown at once, several are listed to choose from. */
static void find_file(struct tui *t, const char *text)
{
	char shown[256];
	struct map_find_result *found;
	uint64_t n;
	errcode_t ret;

	util_printable(text, shown, sizeof(shown));
	tui_names_wait(t);
	if (!t->find) {
		tui_message(t, "cannot search: the names could not be read");
		return;
	}
	ret = map_find(t->find, text, &found);
	if (ret) {
		tui_message(t, "cannot search for %s: %s", shown, error_message(ret));
		return;
	}
	n = map_find_count(found);
	if (!n) {
		map_find_result_free(found);
		tui_message(t, "no file with blocks matches '%s'%s", shown,
			    strchr(text, '/') ? "" :
			    " (names and globs match the last part of a path; with a '/', the whole path)");
		return;
	}
	if (n == 1) {
		tui_map_show_file(t, map_find_file(found, 0));
		map_find_result_free(found);
		return;
	}
	tui_map_forget_matches(t);
	t->matches = found;
	t->nmatches = n;
	t->match = n;
	snprintf(t->pattern, sizeof(t->pattern), "%s", shown);
	tui_open_matches(t);
}

static enum tui_action key_find(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)g;
	(void)key;
	tui_prompt(t, "find file (name, glob or /path): ", find_file);
	return TUI_STAY;
}

/* p/P: the highlighted file's next or previous piece, in the order a read visits them. */
static enum tui_action key_piece(struct tui *t, const struct tui_geometry *g, int key)
{
	const struct layout_file *f;
	struct layout_piece p;
	char path[1024];

	(void)g;
	if (!t->hl) {
		tui_message(t, "no file highlighted: / finds one");
		return TUI_STAY;
	}
	f = &t->layout->files[map_highlight_file(t->hl)];
	if (!layout_file_pieces(t->layout, f))
		return TUI_STAY;
	if (key == 'n' || key == 'p')
		t->piece = (t->piece + 1) % layout_file_pieces(t->layout, f);
	else
		t->piece = (t->piece + layout_file_pieces(t->layout, f) - 1) % layout_file_pieces(t->layout, f);
	p = layout_file_piece(t->layout, f, t->piece);
	tui_map_jump(t, p.start);
	tui_file_path(t, f->ino, path, sizeof(path));
	tui_message(t, "%s: piece %u of %u, blocks %llu-%llu", path, t->piece + 1,
		    layout_file_pieces(t->layout, f), (unsigned long long)p.start,
		    (unsigned long long)(p.start + p.len - 1));
	return TUI_STAY;
}

/* n/N: the next or previous match of a search that found several, else the next piece. */
static enum tui_action key_next(struct tui *t, const struct tui_geometry *g, int key)
{
	uint64_t n = t->nmatches;

	if (n < 2)
		return key_piece(t, g, key);
	if (t->match >= n)	/* none chosen from the list yet */
		tui_map_show_match(t, key == 'n' ? 0 : n - 1);
	else
		tui_map_show_match(t, key == 'n' ? (t->match + 1) % n : (t->match + n - 1) % n);
	return TUI_STAY;
}

static enum tui_action key_clear(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)g;
	(void)key;
	map_highlight_free(t->hl);
	t->hl = NULL;
	tui_map_forget_matches(t);
	return TUI_STAY;
}

static enum tui_action key_cell(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)g;
	(void)key;
	tui_open_cell(t, t->cursor * cell_blocks(t), cell_blocks(t));
	return TUI_STAY;
}

static enum tui_action key_list(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)g;
	if (key == 'L' || key == 'w')
		tui_open_worst(t);
	else if (key == 'i')
		tui_open_sets(t);
	else if (key == 'm' && t->nmatches > 1)
		tui_open_matches(t);
	else if (key == 'm')
		tui_message(t, "no search with several matches: / finds files");
	else
		tui_open_help(t);
	return TUI_STAY;
}

static enum tui_action key_quit(struct tui *t, const struct tui_geometry *g, int key)
{
	(void)t;
	(void)g;
	(void)key;
	return TUI_QUIT;
}

/* The keys: several may share a handler; LABEL and HELP on the first of them. */
static const struct map_key {
	int		key;
	const char	*label, *help;
	enum tui_action (*fn)(struct tui *, const struct tui_geometry *, int);
} map_keys[] = {
	{ TUI_FKEY + KEY_LEFT,	"arrows, h j k l", "move the cursor", key_move },
	{ TUI_FKEY + KEY_RIGHT,	NULL, NULL, key_move },
	{ TUI_FKEY + KEY_UP,	NULL, NULL, key_move },
	{ TUI_FKEY + KEY_DOWN,	NULL, NULL, key_move },
	{ 'h', NULL, NULL, key_move },
	{ 'j', NULL, NULL, key_move },
	{ 'k', NULL, NULL, key_move },
	{ 'l', NULL, NULL, key_move },
	{ TUI_FKEY + KEY_PPAGE,	"PgUp PgDn", "move a screen up or down", key_move },
	{ TUI_FKEY + KEY_NPAGE,	NULL, NULL, key_move },
	{ TUI_FKEY + KEY_HOME,	"Home End", "go to the first or last block", key_move },
	{ TUI_FKEY + KEY_END,	NULL, NULL, key_move },
	{ '+',	"+ -", "zoom in (fewer blocks per cell) or out", key_zoom },
	{ '=',	NULL, NULL, key_zoom },
	{ '-',	NULL, NULL, key_zoom },
	{ '_',	NULL, NULL, key_zoom },
	{ 'g',	"g", "go to a block group", key_group },
	{ '\n',	"Enter", "what is under the cursor: states, owners and their paths", key_cell },
	{ '\r',	NULL, NULL, key_cell },
	{ TUI_FKEY + KEY_ENTER,	NULL, NULL, key_cell },
	{ '/',	"/", "find a file by name, glob or path: highlight it and the files it interleaves with", key_find },
	{ 'n',	"n N", "next or previous match of the search (when several), else piece", key_next },
	{ 'N',	NULL, NULL, key_next },
	{ 'p',	"p P", "next or previous piece of the highlighted file", key_piece },
	{ 'P',	NULL, NULL, key_piece },
	{ 'm',	"m", "the last search's matches again", key_list },
	{ 'c',	"c Esc", "clear the highlight and the search", key_clear },
	{ 27,	NULL, NULL, key_clear },
	/* 'l' would name the list, but it is also vi's right. */
	{ 'L',	"L w", "the worst files by lost read time", key_list },
	{ 'w',	NULL, NULL, key_list },
	{ 'i',	"i", "the interleave sets", key_list },
	{ '?',	"?", "this list of keys", key_list },
	{ 'q',	"q", "quit", key_quit },
};

#define NKEYS (sizeof(map_keys) / sizeof(map_keys[0]))

static enum tui_action map_key(struct tui *t, void *data, int key)
{
	struct tui_geometry g;
	size_t i;

	(void)data;
	tui_map_geometry(t, &g);
	settle(t, &g);
	for (i = 0; i < NKEYS; i++)
		if (map_keys[i].key == key)
			return map_keys[i].fn(t, &g, key);
	return TUI_STAY;
}

size_t tui_map_help_count(void)
{
	size_t i, n = 0;

	for (i = 0; i < NKEYS; i++)
		n += map_keys[i].label != NULL;
	return n;
}

void tui_map_help_row(size_t row, char *buf, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < NKEYS; i++) {
		if (!map_keys[i].label)
			continue;
		if (n++ == row) {
			snprintf(buf, len, "%-16s %s", map_keys[i].label, map_keys[i].help);
			return;
		}
	}
	buf[0] = 0;
}

const struct tui_view tui_map_view = {
	.name = "map",
	.draw = map_draw,
	.key = map_key,
};
