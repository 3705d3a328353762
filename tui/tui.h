/*
 * tui.h --- e2fragmap's pieces: the state the views share, the view
 * table, and the few helpers every view uses.
 *
 * Every screen is a view, a table of functions {draw, key, free} (tmux's
 * window modes are the model).  Views sit on a stack; one loop (loop.c)
 * draws the top one and hands it each key.  The map view is always at the
 * bottom; lists, help and prompts are pushed over it and popped again.
 * Only the files in tui/ call curses.
 */
#ifndef TUI_H
#define TUI_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "e2frag.h"
#include "map.h"

struct tui;

/* What a view's key handler asks the loop to do. */
enum tui_action {
	TUI_STAY,	/* key handled (or ignored): redraw */
	TUI_CLOSE,	/* pop this view */
	TUI_QUIT,	/* leave the program */
};

/*
 * Keys reach views as one int: a character's code point, or a curses
 * function key (KEY_UP, KEY_RESIZE ...) offset by TUI_FKEY so the two
 * ranges cannot meet.
 */
enum { TUI_FKEY = 0x200000 };

static inline int tui_fkey(int curses_key)
{
	return TUI_FKEY + curses_key;
}

struct tui_view {
	const char *name;
	int overlay;	/* draw the view below first (prompts) */
	void (*draw)(struct tui *t, void *data);
	enum tui_action (*key)(struct tui *t, void *data, int key);
	void (*free)(void *data);
};

#define TUI_MAX_VIEWS	8

struct tui_frame {
	const struct tui_view	*view;
	void			*data;
};

/* How the map view is laid out on the current screen (mapview.c). */
struct tui_geometry {
	int	gutter;		/* columns of block numbers left of the cells */
	int	width;		/* cells per row */
	int	rows;		/* rows of cells */
	int	legend_y, legend_rows;
	int	status_y;
};

struct tui {
	const char		*prog;
	const char		*device;
	ext2_filsys		fs;
	struct layout		*layout;
	struct map		*map;

	int			color_mode;	/* --color: enum color_mode */
	int			color;		/* colour pairs set up */
	int			unicode;	/* the locale can show block glyphs */

	/* Where the map looks; lists and prompts move it too. */
	unsigned		level;		/* the map's zoom level: 2^level blocks ... */
	uint64_t		span;		/* ... times SPAN a cell (mapview.c) */
	int			fit;		/* keep the whole filesystem on screen */
	uint64_t		cursor;		/* cell index at LEVEL */
	blk64_t			anchor;		/* the block a jump went to, inside the cursor's cell */
	uint64_t		top;		/* first row shown */
	struct map_highlight	*hl;
	uint32_t		piece;		/* piece of the highlighted file p/P is at */

	/* The files the last search found, when more than one: n/N step through them. */
	struct map_find_result	*matches;	/* the last search's, when several */
	uint64_t		nmatches;
	uint64_t		match;		/* the one shown; nmatches before any is */
	char			pattern[256];	/* what was searched for, as text */

	char			message[256];	/* for the status line, until the next key */

	/* The names, read in a thread while the map is up (names.c). */
	pthread_t		names_thread;
	int			names_later;	/* not read yet: begin after the first draw */
	int			names_pending;	/* started and not joined */
	int			names_done;	/* atomic: the thread has finished */
	int			names_stop;	/* atomic: asks it to stop */
	errcode_t		names_err;
	struct map_find_index	*find;		/* for /, built with the names */
	struct layout_partners	*partners;	/* built after them, for the map (map_partners_give) */
	struct tui_worst	*worst;		/* L's order, built after them (lists.c) */

	FILE			*keylog;	/* E2FRAGMAP_KEYLOG: how long each key took */
	double			started;	/* util_now_seconds() when main() began */

	struct tui_frame	stack[TUI_MAX_VIEWS];
	int			depth;

	uint8_t			*cells, *marks;	/* a screenful of cells */
	size_t			cells_cap;
};

/* How many files F interleaves with (0 for most). */
static inline uint32_t tui_partners(const struct tui *t, const struct layout_file *f)
{
	const struct layout_interleave *il = layout_file_interleave(t->layout, f);

	return il ? il->partners : 0;
}

/* signals.c: ^C, SIGTERM and SIGHUP end the loop as q does. */
void tui_signals_catch(void);
int tui_signal_caught(void);	/* the first caught, or 0 */
void tui_signals_block(sigset_t *old);	/* around starting a thread */
void tui_signals_unblock(const sigset_t *old);
void tui_signal_resend(int sig);	/* die of SIG, its default action */

/* loop.c */
int tui_push(struct tui *t, const struct tui_view *view, void *data);
void tui_run(struct tui *t);
void tui_message(struct tui *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Put S at Y, X, cut to fit MAXW columns (multibyte-aware); returns columns used. */
int tui_put(int y, int x, const char *s, int maxw);
/* Columns S takes on the screen, as tui_put() draws it. */
int tui_width(const char *s);
/*
 * S into BUF (LEN bytes), its middle replaced by "..." when it takes more
 * than MAXW columns, so that both ends stay: a path's top directory and
 * its file name, a message's subject and its figures.
 */
void tui_elide(const char *s, int maxw, char *buf, size_t len);
/* File paths as terminal-safe text. */
void tui_file_path(const struct tui *t, ext2_ino_t ino, char *buf, size_t len);

/* names.c: the names, read while the map is up. */
void tui_names_begin(struct tui *t);
/* Whether the names are in (without waiting); _ready also joins the thread. */
int tui_names_in(const struct tui *t);
int tui_names_ready(struct tui *t);
/* Wait for them, saying so on the status line. */
void tui_names_wait(struct tui *t);
/* Stop reading them (leaving); 0 when the thread is still at it after WAIT_MS. */
int tui_names_stop(struct tui *t, long wait_ms);

/* style.c: how states and marks look. */
void tui_style_init(struct tui *t);
/* Draw one cell of STATE with MARK (enum map_mark) at Y, X; CURSOR reverses it. */
void tui_style_cell(const struct tui *t, int y, int x, int state, int mark, int cursor);
/* A legend entry: a cell's glyph and a name; returns columns used. */
int tui_style_legend_entry(const struct tui *t, int y, int x, int state, int mark,
			   const char *name);

/* mapview.c */
extern const struct tui_view tui_map_view;
void tui_map_geometry(const struct tui *t, struct tui_geometry *g);
/* Highlight layout->files[FI] and put the cursor on its first piece. */
void tui_map_show_file(struct tui *t, uint64_t fi);
/* The same for match I of the last search (map_find_file(t->matches, I)). */
void tui_map_show_match(struct tui *t, uint64_t i);
/* Forget the last search's matches. */
void tui_map_forget_matches(struct tui *t);
/* Put the cursor on the cell of BLOCK, which zooming in will keep. */
void tui_map_jump(struct tui *t, blk64_t block);
/* Help rows: the map's keys, for the help list. */
size_t tui_map_help_count(void);
void tui_map_help_row(size_t i, char *buf, size_t len);

/* listview.c: a generic scrolling list driven by a source. */
struct tui_list_source {
	const char *title;
	/* A title made when drawn, in place of TITLE (may be NULL). */
	void (*title_of)(struct tui *t, void *priv, char *buf, size_t len);
	const char *header;		/* column titles, or NULL */
	uint64_t (*count)(struct tui *t, void *priv);
	void (*row)(struct tui *t, void *priv, uint64_t i, char *buf, size_t len);
	/* Enter on row I: NULL when rows cannot be chosen. */
	enum tui_action (*choose)(struct tui *t, void *priv, uint64_t i);
	void (*free)(void *priv);
};
int tui_list_push(struct tui *t, const struct tui_list_source *src, void *priv);
/* The same with row SEL selected. */
int tui_list_push_at(struct tui *t, const struct tui_list_source *src, void *priv,
		     uint64_t sel);

/* lists.c: the lists the map opens. */
int tui_open_worst(struct tui *t);
int tui_open_sets(struct tui *t);
int tui_open_cell(struct tui *t, blk64_t start, blk64_t len);
int tui_open_help(struct tui *t);
/* The last search's matches (t->matches), to choose one from. */
int tui_open_matches(struct tui *t);
/*
 * The worst files' order for L (the files that lose read time, worst
 * first): reads LAYOUT only, so the names' thread builds it beside the
 * map (on a large filesystem it would take most of the time a key may).
 */
struct tui_worst;
errcode_t tui_worst_build(const struct layout *layout, struct tui_worst **ret);
void tui_worst_free(struct tui_worst *worst);

/* prompt.c: one line of input in the status line. */
typedef void (*tui_prompt_done)(struct tui *t, const char *text);
int tui_prompt(struct tui *t, const char *label, tui_prompt_done done);

#endif /* TUI_H */
