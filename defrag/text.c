/*
 * text.c --- e2defrag's report for people: the plan (what -n prints, and
 * with -v before a run) and the outcome of a run.
 */
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>

#include "report.h"

static const char *outcome_word(const struct report *r, uint64_t i)
{
	const struct plan_file *pf = plan_file(r->plan, i);

	if (r->result) {
		if (r->result[i] == FR_FAILED)
			return "FAILED";
		if (r->result[i] == FR_NOT_REACHED)
			return "not reached";
	}
	switch (pf->outcome) {
	case OUT_BEST: return "best";
	case OUT_PARTIAL: return "fewer pieces";
	case OUT_NO_ROOM:
		/* Moved out of others' way, maybe, but in no fewer pieces. */
		return pf->pieces_after > pf->pieces_before ? "more pieces" : "unchanged";
	case OUT_SKIPPED: return skip_reason_text(pf->reason);
	case OUT_EVACUATED: return "moved out of the way";
	case OUT_CONSOLIDATED: return "moved to join free space";
	default: return "";
	}
}

/*
 * Why file I stays short of best, for the outcomes that say so, into BUF:
 * the free space its best layout needs against what the disk has
 * (layout_room_needed, layout_room_available; after a run, the disk as
 * it is then).  "no room" when the disk has less: no run can do better
 * here.  Else e2defrag found no way to clear that much for it.  Empty
 * for the other outcomes.
 */
static const char *short_reason(const struct report *r, uint64_t i, char *buf,
				size_t len)
{
	const struct plan_file *pf = plan_file(r->plan, i);
	const struct layout *now = r->after ? r->after : r->layout;
	unsigned bs = r->layout->fs->blocksize;
	blk64_t need, have;
	char a[32], b[32];

	buf[0] = 0;
	if (pf->outcome != OUT_PARTIAL && pf->outcome != OUT_NO_ROOM)
		return buf;
	if (r->result && (r->result[i] == FR_FAILED || r->result[i] == FR_NOT_REACHED))
		return buf;
	need = layout_room_needed(r->layout, &r->layout->files[i]);
	have = layout_room_available(now);
	util_format_size(need * (uint64_t)bs, a, sizeof(a));
	util_format_size(have * (uint64_t)bs, b, sizeof(b));
	snprintf(buf, len, "%s: its best needs %s free, the disk has %s",
		 need > have ? "no room" : "no way found to clear room", a, b);
	return buf;
}

/* Path bytes util_printable passes as they are. */
static int plain_byte(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

/*
 * File INO's path at P, as print_path prints it, in a buffer of
 * PATH_ROOM: a path of plain ASCII is copied as it is, where
 * util_printable would decode it byte by byte as UTF-8.
 */
#define PATH_ROOM	(4096 * 4)

static char *field_path(char *p, const struct layout *layout, ext2_ino_t ino)
{
	char path[4096];
	size_t n = layout_path(layout, ino, path, sizeof(path)), i;

	if (n >= sizeof(path))
		n = strlen(path);	/* cut: what fitted */
	for (i = 0; i < n && plain_byte((unsigned char)path[i]); i++)
		;
	if (i < n)
		return p + util_printable(path, p, PATH_ROOM);
	memcpy(p, path, n);
	return p + n;
}

static void print_path(FILE *out, const struct layout *layout, ext2_ino_t ino)
{
	char shown[PATH_ROOM];

	fwrite(shown, 1, field_path(shown, layout, ino) - shown, out);
}

/* S (N bytes) at P in a field of WIDTH, right-aligned or (LEFT) left-aligned. */
static char *field(char *p, const char *s, size_t n, size_t width, int left)
{
	size_t pad = n < width ? width - n : 0;

	if (!left) {
		memset(p, ' ', pad);
		p += pad;
	}
	memcpy(p, s, n);
	p += n;
	if (left) {
		memset(p, ' ', pad);
		p += pad;
	}
	return p;
}

static char *field_u32(char *p, uint32_t v, size_t width, int left)
{
	char d[12];
	size_t n = sizeof(d);

	do {
		d[--n] = '0' + v % 10;
		v /= 10;
	} while (v);
	return field(p, d + n, sizeof(d) - n, width, left);
}

static char *field_secs(char *p, double v, size_t width, int left)
{
	char d[64];

	return field(p, d, util_format_fixed(d, sizeof(d), v, 3), width, left);
}

/*
 * One line per file the plan touches or skips.  The line's figures are
 * put together by hand, as fprintf's "%6u -> %-6u (%u)  %8.3f -> %-8.3f
 * %10s  " would (a tenth of planning went to fprintf for a million files).
 */
static void file_lines(FILE *out, const struct report *r)
{
	const struct layout *layout = r->layout;
	unsigned bs = layout->fs->blocksize;
	uint64_t i;
	int header = 0;

	/* The files with a line only: the others are OUT_NONE. */
	for (i = plan_next_line(r->plan, 0); i < layout->nfiles;
	     i = plan_next_line(r->plan, i + 1)) {
		const struct plan_file *pf = plan_file(r->plan, i);
		const struct layout_file *f = &layout->files[i];
		char size[32], line[256 + PATH_ROOM + 256], why[128], *p;
		const char *word;

		if (pf->outcome == OUT_NONE)
			continue;
		if (!header) {
			fprintf(out, "\n  %-20s %-19s %10s  %s\n", "pieces (best)",
				"read time (s)", "size", "path: outcome");
			header = 1;
		}
		util_format_size(layout_stream_blocks(layout, f) * (uint64_t)bs, size, sizeof(size));
		p = field(line, "  ", 2, 0, 0);
		p = field_u32(p, pf->pieces_before, 6, 0);
		p = field(p, " -> ", 4, 0, 0);
		p = field_u32(p, pf->pieces_after, 6, 1);
		p = field(p, " (", 2, 0, 0);
		p = field_u32(p, pf->best, 0, 0);
		p = field(p, ")  ", 3, 0, 0);
		p = field_secs(p, pf->read_before, 8, 0);
		p = field(p, " -> ", 4, 0, 0);
		p = field_secs(p, pf->read_after, 8, 1);
		p = field(p, " ", 1, 0, 0);
		p = field(p, size, strlen(size), 10, 0);
		p = field(p, "  ", 2, 0, 0);
		/* The whole line in one write, not four stdio calls a line. */
		p = field_path(p, layout, f->ino);
		word = outcome_word(r, i);
		p = field(p, ": ", 2, 0, 0);
		p = field(p, word, strlen(word), 0, 0);
		if (*short_reason(r, i, why, sizeof(why))) {
			p = field(p, " (", 2, 0, 0);
			p = field(p, why, strlen(why), 0, 0);
			p = field(p, ")", 1, 0, 0);
		}
		*p++ = '\n';
		fwrite(line, 1, p - line, out);
	}
	for (i = 0; r->verbose && i < r->sel->nextra; i++) {
		char shown[1024];

		if (!header) {
			fputc('\n', out);
			header = 1;
		}
		util_printable(r->sel->extra[i].name, shown, sizeof(shown));
		fprintf(out, "  %-51s %s: skipped, %s\n", "", shown,
			skip_reason_text(r->sel->extra[i].reason));
	}
}

/* The selected files that did not reach best, and why. */
static void not_best_lines(FILE *out, const struct report *r)
{
	char why[128];
	uint64_t i;

	for (i = 0; i < r->layout->nfiles; i++) {
		const struct plan_file *pf = plan_file(r->plan, i);
		uint32_t after;

		if (pf->outcome != OUT_PARTIAL && pf->outcome != OUT_NO_ROOM &&
		    pf->outcome != OUT_SKIPPED &&
		    !(r->result && (r->result[i] == FR_FAILED ||
				    r->result[i] == FR_NOT_REACHED)))
			continue;
		/* After a run, what the rescan found, not what was planned. */
		if (r->after) {
			int64_t k = layout_find(r->after, r->layout->files[i].ino);

			after = k >= 0 ? layout_file_pieces(r->after, &r->after->files[k]) : pf->pieces_after;
		} else {
			after = pf->pieces_after;
		}
		fprintf(out, "  not at best: ");
		print_path(out, r->layout, r->layout->files[i].ino);
		fprintf(out, " (%u -> %u %s, best %u): %s", pf->pieces_before,
			after, util_plural(after, "piece", "pieces"), pf->best,
			outcome_word(r, i));
		if (*short_reason(r, i, why, sizeof(why)))
			fprintf(out, " (%s)", why);
		fputc('\n', out);
	}
}

/* Files named in the closing line, at most; the rest are counted. */
#define CLOSING_NAMES	3

/*
 * ", moving PATH and N more files": what unit K moves (its moves' files,
 * the first named), so a unit too long for a window can be found.
 */
static void unit_files(FILE *out, const struct report *r, uint64_t k)
{
	const struct units *u = r->units;
	uint64_t i, first = k ? u->end[k - 1] : 0, n = 0;
	uint8_t *seen = calloc(r->layout->nfiles, 1);

	if (!seen || first >= u->end[k]) {
		free(seen);
		return;
	}
	for (i = first; i < u->end[k]; i++) {
		uint32_t f = r->plan->moves[i].file;

		n += !seen[f];
		seen[f] = 1;
	}
	free(seen);
	fputs(", moving ", out);
	print_path(out, r->layout, r->layout->files[r->plan->moves[first].file].ino);
	if (n > 1)
		fprintf(out, " and %llu more %s", (unsigned long long)(n - 1),
			util_plural(n - 1, "file", "files"));
}

void text_closing(FILE *out, const struct report *r)
{
	uint64_t i, n = 0, not_reached = 0;
	char why[128];

	for (i = 0; r->result && i < r->layout->nfiles; i++)
		not_reached += r->result[i] == FR_NOT_REACHED;
	if (r->status == EXIT_MORE) {
		const struct run_state *st = r->run;
		char est[32];

		fprintf(out, "%s: stopped at %s: another run could do more "
			"(%llu %s not reached)\n", r->prog,
			st && st->unit_limit ? "--max-units" : "--max-time",
			(unsigned long long)not_reached,
			util_plural(not_reached, "file", "files"));
		/* A unit no window of this length fits: every night would
		 * stop before it, so say which and what it needs. */
		if (st && st->too_long && r->units && st->next_unit < r->units->n) {
			fprintf(out, "%s: the next unit, estimated %s", r->prog,
				util_format_seconds(st->next_unit_seconds, est, sizeof(est)));
			unit_files(out, r, st->next_unit);
			fputs(", is longer than the time this --max-time leaves for moving: give it a longer window\n", out);
		}
		return;
	}
	if (r->status != EXIT_OK)
		return;
	for (i = plan_next_line(r->plan, 0); i < r->layout->nfiles;
	     i = plan_next_line(r->plan, i + 1)) {
		const struct plan_file *pf = plan_file(r->plan, i);

		if (pf->outcome != OUT_PARTIAL && pf->outcome != OUT_NO_ROOM &&
		    pf->outcome != OUT_SKIPPED)
			continue;
		if (!n)
			fprintf(out, "%s: %s short of best: ", r->prog, r->dry_run ?
				"a run would leave" : "done, and another run would do no more;");
		if (n < CLOSING_NAMES) {
			fputs(n ? ", " : "", out);
			print_path(out, r->layout, r->layout->files[i].ino);
			if (pf->outcome == OUT_SKIPPED)
				fprintf(out, " (skipped: %s)", skip_reason_text(pf->reason));
			else
				fprintf(out, " (%s)", short_reason(r, i, why, sizeof(why)));
		}
		n++;
	}
	if (n > CLOSING_NAMES)
		fprintf(out, " and %llu more (listed above)",
			(unsigned long long)(n - CLOSING_NAMES));
	if (n)
		fputc('\n', out);
}

void text_plan(FILE *out, const struct report *r)
{
	const struct plan *p = r->plan;
	const struct layout *layout = r->layout;
	unsigned bs = layout->fs->blocksize;
	char a[32], b[32], c[32], d[32];

	fprintf(out, "%s: plan for %s (%s, %u-byte blocks)\n", r->prog, r->device,
		fsopen_fs_type(layout->fs), bs);
	if (!p->selected) {
		/* Paths, --min-score, --newer-than or --interleaved-only may
		 * leave out what the filesystem has to do. */
		if (layout->summary.avoidably_fragmented_files ||
		    layout->summary.interleaved_files)
			fprintf(out, "  nothing to do in the selection: the filesystem's %llu "
				"avoidably fragmented and %llu interleaved files are outside it\n",
				(unsigned long long)layout->summary.avoidably_fragmented_files,
				(unsigned long long)layout->summary.interleaved_files);
		else
			fprintf(out, "  nothing to do: no file is avoidably fragmented or interleaved%s\n",
				layout->summary.files ? "" : " (no files)");
		if (r->verbose)
			file_lines(out, r);
		return;
	}
	fprintf(out, "  files selected:     %llu: %llu to best pieces, %llu to fewer pieces, "
		"%llu unchanged (no room), %llu skipped\n",
		(unsigned long long)p->selected, (unsigned long long)p->best,
		(unsigned long long)p->partial, (unsigned long long)p->no_room,
		(unsigned long long)p->skipped);
	util_format_size(p->copy_blocks * (uint64_t)bs, a, sizeof(a));
	util_format_size(p->needed_blocks * (uint64_t)bs, b, sizeof(b));
	fprintf(out, "  to write:           %s for %s of files that need it", a, b);
	if (p->evacuated)
		fprintf(out, " (%llu other %s moved out of the way)",
			(unsigned long long)p->evacuated,
			util_plural(p->evacuated, "file", "files"));
	fputc('\n', out);
	if (p->consolidate_blocks || p->consolidate_files) {
		util_format_size(p->consolidate_blocks * (uint64_t)bs, a, sizeof(a));
		fprintf(out, "  to join free space: %s of it, moving %llu %s\n", a,
			(unsigned long long)p->consolidate_files,
			util_plural(p->consolidate_files, "file", "files"));
	}
	/* Both figures are the selected files' only: say so. */
	fprintf(out, "  pieces:             %llu -> %llu (of the selected files)\n",
		(unsigned long long)p->pieces_before, (unsigned long long)p->pieces_after);
	fprintf(out, "  modeled read time:  %s -> %s (ideal %s; of the selected files)\n",
		util_format_seconds(p->read_before, a, sizeof(a)),
		util_format_seconds(p->read_after, b, sizeof(b)),
		util_format_seconds(p->ideal, c, sizeof(c)));
	if (r->units && r->units->n) {
		fprintf(out, "  estimated time:     %s on the modeled disk, in %llu %s (the longest %s",
			util_format_seconds(r->units->total_seconds, a, sizeof(a)),
			(unsigned long long)r->units->n,
			util_plural(r->units->n, "unit", "units"),
			util_format_seconds(r->units->longest_seconds, b, sizeof(b)));
		unit_files(out, r, r->units->longest);
		fputs(")\n", out);
	}
	if (r->units && r->units->n && r->limit) {
		double saved, all;
		uint64_t k = units_within(r->units, r->limit, &saved), i;

		for (i = 0, all = 0; i < r->units->n; i++)
			all += r->units->gain[i];
		if (k < r->units->n)
			fprintf(out, "  within the limit:   %llu of the %llu units, saving %s of the %s of "
				"read time the plan saves\n", (unsigned long long)k,
				(unsigned long long)r->units->n,
				util_format_seconds(saved, a, sizeof(a)),
				util_format_seconds(all, b, sizeof(b)));
	}
	if (p->for_window)
		fputs("  window:             units made to fit --max-time (the plan without it "
		      "has a longer one)\n", out);
	if (r->units && r->units->by_gain)
		fprintf(out, "  order:              the units saving the most read time per second "
			"first (in the plan's order those within the limit save %s)\n",
			util_format_seconds(r->units->plan_order_saved, a, sizeof(a)));
	util_format_size(p->largest_free_before * (uint64_t)bs, c, sizeof(c));
	util_format_size(p->largest_free_after * (uint64_t)bs, d, sizeof(d));
	fprintf(out, "  free space:         %llu %s, largest %s -> %llu %s, largest %s%s\n",
		(unsigned long long)p->free_extents_before,
		util_plural(p->free_extents_before, "extent", "extents"), c,
		(unsigned long long)p->free_extents_after,
		util_plural(p->free_extents_after, "extent", "extents"), d,
		p->consolidate_over_budget ? " (--pack may join more)" : "");
	file_lines(out, r);
}

void report_after_figures(const struct report *r, uint64_t *pieces,
			  double *read)
{
	uint64_t i;

	*pieces = 0;
	*read = 0;
	for (i = 0; i < r->layout->nfiles; i++) {
		const struct plan_file *pf = plan_file(r->plan, i);
		int64_t k;

		if (pf->outcome == OUT_NONE || pf->outcome == OUT_EVACUATED ||
		    pf->outcome == OUT_CONSOLIDATED)
			continue;
		k = layout_find(r->after, r->layout->files[i].ino);
		if (k < 0)
			continue;
		double t, ideal;

		layout_file_times(r->after, &r->after->files[k], &t, &ideal);
		*pieces += layout_file_pieces(r->after, &r->after->files[k]);
		*read += t;
	}
}

void text_result(FILE *out, const struct report *r)
{
	const struct run_state *st = r->run;
	const struct layout *layout = r->layout;
	unsigned bs = layout->fs->blocksize;
	char a[32], b[32], secs[32];
	uint64_t pieces = r->plan->pieces_before;
	double read = r->plan->read_before;

	if (r->verbose)
		text_plan(out, r);
	util_format_size(st->written * (uint64_t)bs, a, sizeof(a));
	util_format_size(st->seconds > 0 ? (uint64_t)(st->written * (double)bs /
						      st->seconds) : 0, b, sizeof(b));
	fprintf(out, "%s: %s: %llu %s done, %llu failed; %s written in %s (%s/s)%s\n",
		r->prog, r->device, (unsigned long long)st->done,
		util_plural(st->done, "move", "moves"),
		(unsigned long long)st->failed, a,
		util_format_seconds(st->seconds, secs, sizeof(secs)), b,
		st->cancelled ? "; cancelled" : st->unit_limit ? "; stopped at --max-units" :
		st->timed_out ? "; stopped at --max-time" : "");
	if (!r->after)
		return;
	report_after_figures(r, &pieces, &read);
	fprintf(out, "  selected files:     %llu, pieces %llu -> %llu, modeled read time %s -> %s (ideal %s)\n",
		(unsigned long long)r->plan->selected,
		(unsigned long long)r->plan->pieces_before, (unsigned long long)pieces,
		util_format_seconds(r->plan->read_before, a, sizeof(a)),
		util_format_seconds(read, b, sizeof(b)),
		util_format_seconds(r->plan->ideal, secs, sizeof(secs)));
	fprintf(out, "  filesystem:         avoidably fragmented files %llu -> %llu, interleave sets %llu -> %llu\n",
		(unsigned long long)layout->summary.avoidably_fragmented_files,
		(unsigned long long)r->after->summary.avoidably_fragmented_files,
		(unsigned long long)layout->summary.interleave_sets,
		(unsigned long long)r->after->summary.interleave_sets);
	util_format_size(layout->free.largest_free_extent * (uint64_t)bs, a, sizeof(a));
	util_format_size(r->after->free.largest_free_extent * (uint64_t)bs, b, sizeof(b));
	fprintf(out, "  free space:         %llu %s, largest %s -> %llu %s, largest %s\n",
		(unsigned long long)layout->free.free_extents,
		util_plural(layout->free.free_extents, "extent", "extents"), a,
		(unsigned long long)r->after->free.free_extents,
		util_plural(r->after->free.free_extents, "extent", "extents"), b);
	if (!r->verbose)
		not_best_lines(out, r);
}

void text_failures(FILE *out, const struct report *r)
{
	uint64_t i;

	if (!r->run)
		return;
	for (i = 0; i < r->plan->nmoves; i++) {
		const struct run_result *res = &r->run->results[i];
		uint32_t f = r->plan->moves[i].file;

		if (!res->err)
			continue;
		fprintf(out, "%s: ", r->prog);
		print_path(out, r->layout, r->layout->files[f].ino);
		fprintf(out, " (inode %u) not moved: %s\n", r->layout->files[f].ino,
			error_message(res->err));
	}
}
