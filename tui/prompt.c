/*
 * prompt.c --- one line of input over the status line: a path to find,
 * a group to go to.  A view like the others (drawn over the one below),
 * so resizes and redraws go through the one loop.
 */
#include <curses.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui.h"

#define PROMPT_MAX	1024

struct prompt {
	const char	*label;
	tui_prompt_done	done;
	wchar_t		text[PROMPT_MAX];
	size_t		len;
};

static void prompt_draw(struct tui *t, void *data)
{
	struct prompt *p = data;
	int y = LINES - 1, x, w = 0;
	size_t first = 0, i;

	(void)t;
	move(y, 0);
	clrtoeol();
	x = tui_put(y, 0, p->label, COLS - 1);
	/* Show the end of a long entry: drop characters from the front. */
	for (i = p->len; i > 0; i--) {
		int cw = wcwidth(p->text[i - 1]);

		w += cw > 0 ? cw : 1;
		if (x + w >= COLS) {
			first = i;
			break;
		}
	}
	mvaddnwstr(y, x, p->text + first, p->len - first);
	curs_set(1);
}

static enum tui_action prompt_key(struct tui *t, void *data, int key)
{
	struct prompt *p = data;
	char mb[PROMPT_MAX * MB_LEN_MAX + 1];
	size_t n;

	switch (key) {
	case 27: case 'G' - '@':
		return TUI_CLOSE;
	case '\n': case '\r': case TUI_FKEY + KEY_ENTER:
		p->text[p->len] = 0;
		n = wcstombs(mb, p->text, sizeof(mb));
		if (n == (size_t)-1) {
			tui_message(t, "cannot convert that to this locale's characters");
			return TUI_CLOSE;
		}
		if (n)
			p->done(t, mb);
		return TUI_CLOSE;
	case TUI_FKEY + KEY_BACKSPACE: case 127: case 'H' - '@':
		if (p->len)
			p->len--;
		return TUI_STAY;
	case 'U' - '@':
		p->len = 0;
		return TUI_STAY;
	}
	if (key < TUI_FKEY && key >= ' ' && key != 127 && p->len + 1 < PROMPT_MAX)
		p->text[p->len++] = key;
	return TUI_STAY;
}

static const struct tui_view prompt_view = {
	.name = "prompt",
	.overlay = 1,
	.draw = prompt_draw,
	.key = prompt_key,
	.free = free,
};

int tui_prompt(struct tui *t, const char *label, tui_prompt_done done)
{
	struct prompt *p = calloc(1, sizeof(*p));

	if (!p) {
		tui_message(t, "out of memory");
		return -1;
	}
	p->label = label;
	p->done = done;
	return tui_push(t, &prompt_view, p);
}
