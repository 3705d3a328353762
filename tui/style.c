/*
 * style.c --- what a cell looks like, by state and mark.
 *
 * With colour, a state is a colour (and a block glyph when the locale can
 * show one).  Without colour (TERM=vt100, NO_COLOR set) every state and
 * mark has its own ASCII character, so the map still reads; the tests
 * rely on that too.
 */
#include <curses.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

struct look {
	char	ascii;		/* without colour, or without a UTF-8 locale */
	wchar_t	wide;		/* with colour in a UTF-8 locale */
	short	color;		/* -1: the terminal's own */
	attr_t	attr;
};

/* States (enum map_state, MAP_PAST_END last), then the two marks. */
enum { LOOK_MARK_PARTNER = MAP_NSTATES + 1, LOOK_MARK_FILE, LOOK_COUNT };

static const struct look looks[LOOK_COUNT] = {
	[MAP_FREE]		= { '.', L'\u00b7', -1, 0 },
	[MAP_FIXED]		= { '#', L'\u2588', COLOR_BLUE, 0 },
	[MAP_JOURNAL]		= { 'J', L'\u2592', COLOR_BLUE, 0 },
	[MAP_UNKNOWN]		= { '?', L'?', COLOR_WHITE, A_BOLD },
	[MAP_DIR]		= { 'd', L'\u2588', COLOR_CYAN, 0 },
	[MAP_FILE]		= { 'o', L'\u2588', COLOR_GREEN, 0 },
	[MAP_FRAGMENTED]	= { 'f', L'\u2588', COLOR_YELLOW, 0 },
	[MAP_INTERLEAVED]	= { 'x', L'\u2588', COLOR_RED, 0 },
	[MAP_PAST_END]		= { ' ', L' ', -1, 0 },
	[LOOK_MARK_PARTNER]	= { '&', L'\u2588', COLOR_MAGENTA, A_BOLD },
	[LOOK_MARK_FILE]	= { '@', L'\u2588', COLOR_WHITE, A_BOLD },
};

void tui_style_init(struct tui *t)
{
	const char *no_color = getenv("NO_COLOR");
	int i;

	t->unicode = !strcmp(nl_langinfo(CODESET), "UTF-8");
	t->color = 0;
	if ((no_color && *no_color) || !has_colors() || start_color() == ERR)
		return;
	/* The terminal's own background behind everything, when it lets us. */
	if (use_default_colors() == ERR) {
		for (i = 0; i < LOOK_COUNT; i++)
			init_pair(i + 1, looks[i].color < 0 ? COLOR_WHITE : looks[i].color,
				  COLOR_BLACK);
	} else {
		for (i = 0; i < LOOK_COUNT; i++)
			init_pair(i + 1, looks[i].color, -1);
	}
	t->color = 1;
}

static int look_of(int state, int mark)
{
	if (mark == MAP_MARK_FILE)
		return LOOK_MARK_FILE;
	if (mark == MAP_MARK_PARTNER)
		return LOOK_MARK_PARTNER;
	return state >= 0 && state <= MAP_PAST_END ? state : MAP_PAST_END;
}

static void put_look(const struct tui *t, int y, int x, int look, attr_t extra)
{
	const struct look *l = &looks[look];
	wchar_t s[2] = { l->ascii, 0 };
	cchar_t cc;

	if (t->color && t->unicode)
		s[0] = l->wide;
	setcchar(&cc, s, (t->color ? l->attr : 0) | extra,
		 t->color ? look + 1 : 0, NULL);
	mvadd_wch(y, x, &cc);
}

void tui_style_cell(const struct tui *t, int y, int x, int state, int mark,
		    int cursor)
{
	put_look(t, y, x, look_of(state, mark), cursor ? A_REVERSE : 0);
}

int tui_style_legend_entry(const struct tui *t, int y, int x, int state, int mark,
			   const char *name)
{
	put_look(t, y, x, look_of(state, mark), 0);
	return 2 + tui_put(y, x + 2, name, COLS - x - 2);
}
