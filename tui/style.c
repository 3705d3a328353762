/*
 * style.c --- what a cell looks like, by state and mark.
 *
 * Every state and mark has its own glyph whether or not there is colour,
 * so that colour is never the only difference (red-green colour
 * blindness is common): in a UTF-8 locale block and shade glyphs, else
 * ASCII characters.  Colour (--color, NO_COLOR) adds lib/color.h's
 * Okabe-Ito hues, from xterm's 256 colours where the terminal has them.
 * Without colour the glyphs are always ASCII: the tests rely on that.
 */
#include <curses.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "color.h"
#include "tui.h"

struct look {
	char	ascii;		/* without colour, or without a UTF-8 locale */
	wchar_t	wide;		/* with colour in a UTF-8 locale */
	int	hue;		/* enum color_hue_id, or -1: the terminal's own */
	attr_t	attr;
};

/* States (enum map_state, MAP_PAST_END last), then the two marks. */
enum { LOOK_MARK_PARTNER = MAP_NSTATES + 1, LOOK_MARK_FILE, LOOK_COUNT };

static const struct look looks[LOOK_COUNT] = {
	[MAP_FREE]		= { '.', L'\u00b7', -1, 0 },		/* middle dot */
	[MAP_FIXED]		= { '#', L'\u2580', HUE_BLUE, 0 },	/* upper half */
	[MAP_JOURNAL]		= { 'J', L'\u2592', HUE_BLUE, 0 },	/* medium shade */
	[MAP_UNKNOWN]		= { '!', L'!', -1, A_BOLD },	/* not '?', the help key */
	[MAP_DIR]		= { 'd', L'\u258c', HUE_BLUISH_GREEN, 0 },	/* left half */
	[MAP_FILE]		= { 'o', L'\u2588', HUE_SKY_BLUE, 0 },	/* full block */
	[MAP_FRAGMENTED]	= { 'f', L'\u2584', HUE_YELLOW, 0 },	/* lower half */
	[MAP_INTERLEAVED]	= { 'x', L'\u259a', HUE_VERMILLION, 0 },	/* quadrants, crossed */
	[MAP_PAST_END]		= { ' ', L' ', -1, 0 },
	[LOOK_MARK_PARTNER]	= { '&', L'\u2591', HUE_REDDISH_PURPLE, A_BOLD },	/* light shade */
	[LOOK_MARK_FILE]	= { '@', L'\u25c6', -1, A_BOLD },	/* diamond */
};

void tui_style_init(struct tui *t)
{
	int i;

	t->unicode = !strcmp(nl_langinfo(CODESET), "UTF-8");
	t->color = 0;
	if (!color_wanted(t->color_mode, STDOUT_FILENO) || !has_colors() ||
	    start_color() == ERR)
		return;
	for (i = 0; i < LOOK_COUNT; i++) {
		const struct look *l = &looks[i];
		short fg = l->hue < 0 ? -1 : COLORS >= 256 ?
			color_hues[l->hue].xterm256 : color_hues[l->hue].ansi8;

		/* The terminal's own background behind everything, when it lets us. */
		if (use_default_colors() == ERR)
			init_pair(i + 1, fg < 0 ? COLOR_WHITE : fg, COLOR_BLACK);
		else
			init_pair(i + 1, fg, -1);
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
