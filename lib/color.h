/*
 * color.h --- when to colour, and with what: one answer for every program.
 *
 * --color=auto|always|never, as in GNU ls and util-linux: auto colours
 * only a terminal, and only when NO_COLOR (https://no-color.org) is unset
 * or empty; an explicit --color=always wins over NO_COLOR, as that
 * convention asks of command-line options.
 *
 * The palette is Okabe and Ito's (2008), chosen to stay distinguishable
 * with red-green colour blindness: good states are blues, bad ones
 * yellow and vermillion, which differ in lightness as well as hue.  Each
 * state has a shape of its own too (a glyph on a terminal, a pattern in
 * the SVG), so colour is never the only thing that tells them apart.
 */
#ifndef E2FRAG_COLOR_H
#define E2FRAG_COLOR_H

#include "map.h"

enum color_mode { COLOR_MODE_AUTO, COLOR_MODE_ALWAYS, COLOR_MODE_NEVER };

/* "auto", "always", "never" (and their usual aliases); -1 for anything else. */
int color_parse_mode(const char *arg, enum color_mode *mode);

/* Whether to colour output going to file descriptor FD. */
int color_wanted(enum color_mode mode, int fd);

/* A colour: as #rrggbb, as the nearest of xterm's 256 and of the 8 ANSI colours. */
struct color_hue {
	const char	*name;	/* Okabe-Ito's */
	const char	*rgb;
	short		xterm256;
	short		ansi8;	/* COLOR_BLACK .. COLOR_WHITE: 0 .. 7 */
};

enum color_hue_id {
	HUE_BLACK, HUE_ORANGE, HUE_SKY_BLUE, HUE_BLUISH_GREEN, HUE_YELLOW,
	HUE_BLUE, HUE_VERMILLION, HUE_REDDISH_PURPLE, HUE_GREY, HUE_COUNT
};

extern const struct color_hue color_hues[HUE_COUNT];

/* The hue of a map state (enum map_state); HUE_GREY past the end. */
enum color_hue_id color_state_hue(int state);

/* The hue of a highlighted file and of the files it interleaves with. */
#define COLOR_HUE_MARK_FILE	HUE_BLACK
#define COLOR_HUE_MARK_PARTNER	HUE_REDDISH_PURPLE

/* SGR escape sequences for text: bold, a hue, and back to normal. */
#define COLOR_SGR_RESET	"\033[0m"
#define COLOR_SGR_BOLD	"\033[1m"
/* "\033[38;5;Nm" for HUE into BUF (at least 16 bytes); returns BUF. */
const char *color_sgr(enum color_hue_id hue, char *buf, size_t len);

#endif /* E2FRAG_COLOR_H */
