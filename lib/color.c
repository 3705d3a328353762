/*
 * color.c --- whether to colour (--color and NO_COLOR) and the palette.
 * See color.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "color.h"

int color_parse_mode(const char *arg, enum color_mode *mode)
{
	static const struct { const char *word; enum color_mode mode; } words[] = {
		{ "auto", COLOR_MODE_AUTO }, { "tty", COLOR_MODE_AUTO },
		{ "if-tty", COLOR_MODE_AUTO },
		{ "always", COLOR_MODE_ALWAYS }, { "yes", COLOR_MODE_ALWAYS },
		{ "force", COLOR_MODE_ALWAYS },
		{ "never", COLOR_MODE_NEVER }, { "no", COLOR_MODE_NEVER },
		{ "none", COLOR_MODE_NEVER },
	};
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcmp(arg, words[i].word)) {
			*mode = words[i].mode;
			return 0;
		}
	return -1;
}

int color_wanted(enum color_mode mode, int fd)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	if (mode != COLOR_MODE_AUTO)
		return mode == COLOR_MODE_ALWAYS;
	if (no_color && *no_color)
		return 0;
	return isatty(fd) && !(term && !strcmp(term, "dumb"));
}

/*
 * Okabe and Ito, "Color Universal Design" (2008); the xterm-256 entries
 * are the nearest in its 6x6x6 cube, the 8-colour ones the nearest hue.
 */
const struct color_hue color_hues[HUE_COUNT] = {
	[HUE_BLACK]	     = { "black",	   "#000000",  16, 0 },
	[HUE_ORANGE]	     = { "orange",	   "#e69f00", 214, 3 },
	[HUE_SKY_BLUE]	     = { "sky blue",	   "#56b4e9",  74, 6 },
	[HUE_BLUISH_GREEN]   = { "bluish green",   "#009e73",  36, 2 },
	[HUE_YELLOW]	     = { "yellow",	   "#f0e442", 221, 3 },
	[HUE_BLUE]	     = { "blue",	   "#0072b2",  25, 4 },
	[HUE_VERMILLION]     = { "vermillion",	   "#d55e00", 166, 1 },
	[HUE_REDDISH_PURPLE] = { "reddish purple", "#cc79a7", 175, 5 },
	[HUE_GREY]	     = { "grey",	   "#dddddd", 252, 7 },
};

enum color_hue_id color_state_hue(int state)
{
	static const enum color_hue_id hues[MAP_NSTATES] = {
		[MAP_FREE]	  = HUE_GREY,
		[MAP_FIXED]	  = HUE_BLUE,
		[MAP_JOURNAL]	  = HUE_BLUE,
		[MAP_UNKNOWN]	  = HUE_GREY,
		[MAP_DIR]	  = HUE_BLUISH_GREEN,
		[MAP_FILE]	  = HUE_SKY_BLUE,
		[MAP_FRAGMENTED]  = HUE_YELLOW,
		[MAP_INTERLEAVED] = HUE_VERMILLION,
	};

	return state >= 0 && state < MAP_NSTATES ? hues[state] : HUE_GREY;
}

const char *color_sgr(enum color_hue_id hue, char *buf, size_t len)
{
	snprintf(buf, len, "\033[38;5;%dm", color_hues[hue].xterm256);
	return buf;
}
