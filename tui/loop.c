/*
 * loop.c --- the view stack and the one loop that draws the top view and
 * hands it keys; plus text output the views share.
 */
#include <curses.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "tui.h"

/* Below this the map, its legend and status line cannot be told apart. */
#define MIN_COLS	24
#define MIN_LINES	6

/* getch() failing this many times in a row: the terminal is gone. */
#define MAX_READ_ERRORS	100

/* How often the screen looks whether the names have come. */
#define NAMES_POLL_MS	100

int tui_push(struct tui *t, const struct tui_view *view, void *data)
{
	if (t->depth >= TUI_MAX_VIEWS) {
		if (view->free)
			view->free(data);
		tui_message(t, "too many windows open");
		return -1;
	}
	t->stack[t->depth].view = view;
	t->stack[t->depth].data = data;
	t->depth++;
	return 0;
}

/* Remove frame I (not necessarily the top: a prompt's callback may push). */
static void remove_frame(struct tui *t, int i)
{
	struct tui_frame f = t->stack[i];

	memmove(&t->stack[i], &t->stack[i + 1],
		(t->depth - i - 1) * sizeof(t->stack[0]));
	t->depth--;
	if (f.view->free)
		f.view->free(f.data);
}

void tui_message(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->message, sizeof(t->message), fmt, ap);
	va_end(ap);
}

/* The next character of S (of LEN bytes): its length, and it as shown (wide, width). */
static size_t next_char(const char *s, size_t len, mbstate_t *st, wchar_t *wc, int *width)
{
	size_t n = mbrtowc(wc, s, len, st);

	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		/* Not text in this locale: one '?' per byte. */
		memset(st, 0, sizeof(*st));
		*wc = L'?';
		n = 1;
	}
	*width = wcwidth(*wc);
	if (*width < 0) {
		*wc = L'?';
		*width = 1;
	}
	return n;
}

int tui_width(const char *s)
{
	mbstate_t st;
	size_t len = strlen(s);
	int used = 0;

	memset(&st, 0, sizeof(st));
	while (len) {
		wchar_t wc;
		int w;
		size_t n = next_char(s, len, &st, &wc, &w);

		used += w;
		s += n;
		len -= n;
	}
	return used;
}

void tui_elide(const char *s, int maxw, char *buf, size_t len)
{
	size_t slen = strlen(s), head = 0, tail = slen, at = 0, n;
	int width = tui_width(s), used = 0, keep_head, keep_tail;
	mbstate_t st;

	if (width <= maxw || maxw < 5) {
		snprintf(buf, len, "%.*s", (int)slen, s);
		return;
	}
	keep_head = (maxw - 3 + 1) / 2;
	keep_tail = maxw - 3 - keep_head;
	/* The head: whole characters up to KEEP_HEAD columns. */
	memset(&st, 0, sizeof(st));
	while (at < slen) {
		wchar_t wc;
		int w;

		n = next_char(s + at, slen - at, &st, &wc, &w);
		if (used + w > keep_head)
			break;
		used += w;
		at += n;
	}
	head = at;
	/* The tail: the first character from which the rest fits KEEP_TAIL. */
	used = tui_width(s + head);
	while (at < slen && used > keep_tail) {
		wchar_t wc;
		int w;

		n = next_char(s + at, slen - at, &st, &wc, &w);
		used -= w;
		at += n;
	}
	tail = at;
	snprintf(buf, len, "%.*s...%s", (int)head, s, s + tail);
}

int tui_put(int y, int x, const char *s, int maxw)
{
	mbstate_t st;
	int used = 0;

	size_t len = strlen(s);

	memset(&st, 0, sizeof(st));
	move(y, x);
	while (len && used < maxw) {
		wchar_t wc;
		int w;
		size_t n = next_char(s, len, &st, &wc, &w);

		if (used + w > maxw)
			break;
		addnwstr(&wc, 1);
		used += w;
		s += n;
		len -= n;
	}
	return used;
}

void tui_file_path(const struct tui *t, ext2_ino_t ino, char *buf, size_t len)
{
	char raw[4096];

	if (!tui_names_in(t)) {
		snprintf(buf, len, "<ino %u>", ino);
		return;
	}
	layout_path(t->layout, ino, raw, sizeof(raw));
	util_printable(raw, buf, len);
}

static int too_small(void)
{
	return COLS < MIN_COLS || LINES < MIN_LINES;
}

/* The complaint, word-wrapped over whatever room there is. */
static void draw_too_small(void)
{
	char text[160];
	const char *p = text;
	int y;

	snprintf(text, sizeof(text), "Terminal too small (%dx%d): e2fragmap needs %dx%d. q quits.",
		 COLS, LINES, MIN_COLS, MIN_LINES);
	for (y = 0; y < LINES && *p; y++) {
		int len = strlen(p), cut = len;

		if (len > COLS) {
			for (cut = COLS; cut > 0 && p[cut] != ' '; cut--)
				;
			if (!cut)
				cut = COLS;
		}
		mvaddnstr(y, 0, p, cut);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

static void draw(struct tui *t)
{
	int i;

	erase();
	curs_set(0);
	if (too_small()) {
		draw_too_small();
	} else {
		/* From the topmost view that covers the screen up. */
		for (i = t->depth - 1; i > 0 && t->stack[i].view->overlay; i--)
			;
		for (; i < t->depth; i++)
			t->stack[i].view->draw(t, t->stack[i].data);
	}
	refresh();
}

/* The bytes of a character typed so far: next_key() reads them one by one. */
struct key_bytes {
	char	b[MB_LEN_MAX];
	size_t	len;
};

/*
 * 1 and the character in *WC once KB's bytes make one, 0 while more are
 * to come.  A byte that starts no character in this locale is dropped; a
 * byte that cannot continue the character begun drops what came before
 * it and is taken afresh, as the first byte of the next.
 */
static int decode_key(struct key_bytes *kb, wchar_t *wc)
{
	while (kb->len) {
		mbstate_t st;
		size_t n;

		memset(&st, 0, sizeof(st));
		n = mbrtowc(wc, kb->b, kb->len, &st);
		if (n == (size_t)-2 && kb->len < sizeof(kb->b))
			return 0;
		if (n != (size_t)-1 && n != (size_t)-2) {
			kb->len = 0;
			return 1;
		}
		/* Each shorter prefix was a character begun: the last byte broke it. */
		kb->b[0] = kb->b[kb->len - 1];
		kb->len = kb->len > 1 ? 1 : 0;
	}
	return 0;
}

/*
 * The next key as get_wch() gives it: OK and a character, KEY_CODE_YES and
 * a function key, or ERR (the timeout ran out, the terminal failed).
 *
 * Not get_wch() itself: ncurses' get_wch() takes bytes that can never make
 * a character (\xff, a stray \x80, \xc3 then 'q') for one not complete
 * yet and reads on, up to 145 bytes.  With no timeout it sat in read()
 * after one such byte, and every key after it (q too) went into the
 * character that never came.  So the bytes are decoded here.
 */
static int next_key(struct key_bytes *kb, wint_t *key)
{
	for (;;) {
		int c = getch();
		wchar_t wc;

		if (c == ERR)
			return ERR;	/* a character begun stays in KB for the next call */
		if (c >= KEY_MIN) {
			/* A function key: a character it cut short will not come. */
			kb->len = 0;
			*key = c;
			return KEY_CODE_YES;
		}
		kb->b[kb->len++] = (char)c;
		if (decode_key(kb, &wc)) {
			*key = wc;
			return OK;
		}
	}
}

void tui_run(struct tui *t)
{
	struct key_bytes kb = { .len = 0 };
	int errors = 0, key = 0;
	double t0 = 0;

	while (t->depth > 0 && !tui_signal_caught()) {
		wint_t wc;
		int r, top, waiting;
		enum tui_action action;

		draw(t);
		if (t->keylog && (t0 || !key)) {
			/* From the key read to the screen drawn for it; first, the map's. */
			const char *name = key ? keyname(key < TUI_FKEY ? key : key - TUI_FKEY) :
				"first-screen";

			fprintf(t->keylog, "%s %.1f ms\n", name ? name : "?",
				(util_now_seconds() - (key ? t0 : t->started)) * 1e3);
			fflush(t->keylog);
			key = -1;
		}
		/*
		 * The names are read only once the first screen is up: on a
		 * busy machine their thread would take CPU from the map.
		 */
		if (t->names_later)
			tui_names_begin(t);
		/* While the names are read, look now and then to show them when they come. */
		waiting = !tui_names_ready(t);
		timeout(waiting ? NAMES_POLL_MS : -1);
		r = next_key(&kb, &wc);
		t0 = util_now_seconds();
		if (r == ERR) {
			if (tui_signal_caught())
				break;	/* the read was interrupted: end as q does */
			if (!waiting && ++errors > MAX_READ_ERRORS)
				break;
			t0 = 0;
			continue;
		}
		errors = 0;
		key = r == KEY_CODE_YES ? tui_fkey(wc) : (int)wc;
		if (key == tui_fkey(KEY_RESIZE))
			continue;	/* LINES and COLS are new: the next draw fits them */
		t->message[0] = 0;
		if (key == 'L' - '@') {		/* ^L: repaint from scratch */
			clearok(curscr, TRUE);
			continue;
		}
		if (too_small()) {
			if (key == 'q' || key == 'Q')
				break;
			continue;
		}
		top = t->depth - 1;
		action = t->stack[top].view->key(t, t->stack[top].data, key);
		if (action == TUI_QUIT)
			break;
		if (action == TUI_CLOSE)
			remove_frame(t, top);
	}
	while (t->depth > 0)
		remove_frame(t, t->depth - 1);
}
