/*
 * listview.c --- a scrolling list of text rows over the whole screen, fed
 * by a source (lists.c): the worst files, the interleave sets, what is
 * under the cursor, the keys.  Enter hands the chosen row to the source;
 * q, Esc or Left go back to the map.
 */
#include <curses.h>
#include <stdlib.h>

#include "tui.h"

struct list {
	const struct tui_list_source	*src;
	void				*priv;
	uint64_t			top, sel;
};

/* Rows between the title (and header) and the status line. */
static int list_rows(const struct list *l)
{
	int rows = LINES - 2 - (l->src->header != NULL);

	return rows > 0 ? rows : 1;
}

static void list_draw(struct tui *t, void *data)
{
	struct list *l = data;
	uint64_t n = l->src->count(t, l->priv), i;
	int rows = list_rows(l), y0 = 1 + (l->src->header != NULL), y;
	char buf[2048];

	if (l->src->choose) {
		/* Keep the selection on the screen, and the screen full. */
		if (l->sel >= n)
			l->sel = n ? n - 1 : 0;
		if (l->top + rows > n)
			l->top = n > (uint64_t)rows ? n - rows : 0;
		if (l->sel < l->top)
			l->top = l->sel;
		if (l->sel >= l->top + rows)
			l->top = l->sel - rows + 1;
	} else if (l->top + rows > n) {
		l->top = n > (uint64_t)rows ? n - rows : 0;
	}

	attron(A_REVERSE);
	mvhline(0, 0, ' ', COLS);
	if (l->src->title_of) {
		char title[512];

		l->src->title_of(t, l->priv, title, sizeof(title));
		snprintf(buf, sizeof(buf), "%s (%llu)", title, (unsigned long long)n);
	} else {
		snprintf(buf, sizeof(buf), "%s (%llu)", l->src->title, (unsigned long long)n);
	}
	tui_put(0, 0, buf, COLS);
	attroff(A_REVERSE);
	if (l->src->header) {
		attron(A_BOLD);
		tui_put(1, 0, l->src->header, COLS);
		attroff(A_BOLD);
	}
	for (y = 0, i = l->top; y < rows && i < n; y++, i++) {
		l->src->row(t, l->priv, i, buf, sizeof(buf));
		if (i == l->sel && l->src->choose) {
			attron(A_REVERSE);
			mvhline(y0 + y, 0, ' ', COLS);
		}
		tui_put(y0 + y, 0, buf, COLS);
		attroff(A_REVERSE);
	}
	attron(A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	tui_put(LINES - 1, 0, t->message[0] ? t->message :
		l->src->choose ? "arrows/jk PgUp PgDn: move   Enter: show on the map   q Esc: back" :
		"arrows/jk PgUp PgDn: scroll   q Esc: back", COLS);
	attroff(A_REVERSE);
}

/* A list whose rows cannot be chosen (help, what is under the cursor) just scrolls. */
static enum tui_action scroll_key(struct list *l, uint64_t n, uint64_t page, int key)
{
	uint64_t last_top = n > page ? n - page : 0;

	switch (key) {
	case 'q': case 27: case 'h': case TUI_FKEY + KEY_LEFT:
		return TUI_CLOSE;
	case 'k': case TUI_FKEY + KEY_UP:
		if (l->top)
			l->top--;
		break;
	case 'j': case TUI_FKEY + KEY_DOWN:
		l->top++;
		break;
	case TUI_FKEY + KEY_PPAGE:
		l->top = l->top > page ? l->top - page : 0;
		break;
	case TUI_FKEY + KEY_NPAGE:
		l->top += page;
		break;
	case TUI_FKEY + KEY_HOME:
		l->top = 0;
		break;
	case TUI_FKEY + KEY_END:
		l->top = last_top;
		break;
	}
	if (l->top > last_top)
		l->top = last_top;
	return TUI_STAY;
}

static enum tui_action list_key(struct tui *t, void *data, int key)
{
	struct list *l = data;
	uint64_t n = l->src->count(t, l->priv);
	uint64_t page = list_rows(l);

	if (!l->src->choose)
		return scroll_key(l, n, page, key);
	switch (key) {
	case 'q': case 27: case 'h': case TUI_FKEY + KEY_LEFT:
		return TUI_CLOSE;
	case 'k': case TUI_FKEY + KEY_UP:
		if (l->sel)
			l->sel--;
		break;
	case 'j': case TUI_FKEY + KEY_DOWN:
		if (l->sel + 1 < n)
			l->sel++;
		break;
	case TUI_FKEY + KEY_PPAGE:
		l->sel = l->sel > page ? l->sel - page : 0;
		l->top = l->top > page ? l->top - page : 0;
		break;
	case TUI_FKEY + KEY_NPAGE:
		l->sel = l->sel + page < n ? l->sel + page : (n ? n - 1 : 0);
		l->top += page;
		break;
	case TUI_FKEY + KEY_HOME:
		l->sel = 0;
		break;
	case TUI_FKEY + KEY_END:
		l->sel = n ? n - 1 : 0;
		break;
	case '\n': case '\r': case TUI_FKEY + KEY_ENTER:
		if (l->sel < n)
			return l->src->choose(t, l->priv, l->sel);
		break;
	}
	return TUI_STAY;
}

static void list_free(void *data)
{
	struct list *l = data;

	if (l->src->free)
		l->src->free(l->priv);
	free(l);
}

static const struct tui_view list_view = {
	.name = "list",
	.draw = list_draw,
	.key = list_key,
	.free = list_free,
};

int tui_list_push(struct tui *t, const struct tui_list_source *src, void *priv)
{
	return tui_list_push_at(t, src, priv, 0);
}

int tui_list_push_at(struct tui *t, const struct tui_list_source *src, void *priv,
		     uint64_t sel)
{
	struct list *l = calloc(1, sizeof(*l));

	if (!l) {
		if (src->free)
			src->free(priv);
		tui_message(t, "out of memory");
		return -1;
	}
	l->src = src;
	l->priv = priv;
	l->sel = sel;
	return tui_push(t, &list_view, l);
}
