/*
 * json.c --- e2defrag --json: the plan (dry run) or the plan and what the
 * run did, as one JSON document on stdout.  Its members and what they
 * mean are listed once, in e2defrag(8)'s JSON section (man/e2defrag.8.in);
 * tests/cli/docs.sh checks that list against what this file writes.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_json.h"

static const char *outcome_name(const struct report *r, uint64_t i)
{
	static const char *const names[] = {
		[OUT_NONE] = "none", [OUT_BEST] = "best", [OUT_PARTIAL] = "partial",
		[OUT_NO_ROOM] = "no_room", [OUT_SKIPPED] = "skipped",
		[OUT_EVACUATED] = "evacuated", [OUT_CONSOLIDATED] = "consolidated",
	};

	if (r->result && r->result[i] == FR_FAILED)
		return "failed";
	if (r->result && r->result[i] == FR_NOT_REACHED)
		return "not_reached";
	return names[plan_file(r->plan, i)->outcome];
}

static json_t *plan_json(const struct report *r)
{
	const struct plan *p = r->plan;
	json_int_t bs = r->layout->fs->blocksize;
	json_t *o = json_object();

	json_object_set_new(o, "files_selected", json_integer(p->selected));
	json_object_set_new(o, "files_best", json_integer(p->best));
	json_object_set_new(o, "files_partial", json_integer(p->partial));
	json_object_set_new(o, "files_no_room", json_integer(p->no_room));
	json_object_set_new(o, "files_skipped", json_integer(p->skipped));
	json_object_set_new(o, "files_evacuated", json_integer(p->evacuated));
	json_object_set_new(o, "files_consolidated", json_integer(p->consolidated));
	json_object_set_new(o, "moves", json_integer(p->nmoves));
	/* The units a stop falls between, and the modeled time (units.c). */
	json_object_set_new(o, "units", json_integer(r->units ? r->units->n : 0));
	json_object_set_new(o, "estimated_seconds",
			    report_json_real(r->units ? r->units->total_seconds : 0));
	json_object_set_new(o, "longest_unit_seconds",
			    report_json_real(r->units ? r->units->longest_seconds : 0));
	json_object_set_new(o, "longest_unit", r->units && r->units->n ?
			    json_integer(r->units->longest + 1) : json_null());
	json_object_set_new(o, "units_for_window", json_boolean(p->for_window));
	json_object_set_new(o, "units_by_gain", json_boolean(r->units && r->units->by_gain));
	/* What the run's limit leaves room for, on the model (null: none). */
	if (r->units && r->limit) {
		double saved;
		uint64_t k = units_within(r->units, r->limit, &saved);

		json_object_set_new(o, "units_within_limit", json_integer(k));
		json_object_set_new(o, "read_seconds_saved_within_limit", report_json_real(saved));
	} else {
		json_object_set_new(o, "units_within_limit", json_null());
		json_object_set_new(o, "read_seconds_saved_within_limit", json_null());
	}
	json_object_set_new(o, "read_seconds_saved_within_limit_in_plan_order",
			    r->units && r->units->by_gain ?
			    report_json_real(r->units->plan_order_saved) : json_null());
	json_object_set_new(o, "bytes_to_write", json_integer(p->copy_blocks * bs));
	json_object_set_new(o, "bytes_needing_move", json_integer(p->needed_blocks * bs));
	json_object_set_new(o, "bytes_rebuilt", json_integer(p->rebuilt_blocks * bs));
	json_object_set_new(o, "bytes_to_consolidate",
			    json_integer(p->consolidate_blocks * bs));
	json_object_set_new(o, "pieces_before", json_integer(p->pieces_before));
	json_object_set_new(o, "pieces_after", json_integer(p->pieces_after));
	json_object_set_new(o, "read_seconds_before", report_json_real(p->read_before));
	json_object_set_new(o, "read_seconds_after", report_json_real(p->read_after));
	json_object_set_new(o, "ideal_read_seconds", report_json_real(p->ideal));
	json_object_set_new(o, "free_extents_before", json_integer(p->free_extents_before));
	json_object_set_new(o, "free_extents_after", json_integer(p->free_extents_after));
	json_object_set_new(o, "largest_free_before", json_integer(p->largest_free_before * bs));
	json_object_set_new(o, "largest_free_after", json_integer(p->largest_free_after * bs));
	return o;
}

/* UNIT: the unit (from 1) of the file's last move, 0: none. */
static json_t *file_json(const struct report *r, uint64_t i, uint64_t unit)
{
	const struct layout_file *f = &r->layout->files[i];
	const struct plan_file *pf = plan_file(r->plan, i);
	json_int_t bs = r->layout->fs->blocksize;
	char raw[4096], text[4096 * 4];
	json_t *o = json_object();

	layout_path(r->layout, f->ino, raw, sizeof(raw));
	util_printable(raw, text, sizeof(text));
	json_object_set_new(o, "ino", json_integer(f->ino));
	json_object_set_new(o, "path", json_string(text));
	json_object_set_new(o, "type", json_string(layout_type_name(f->type)));
	json_object_set_new(o, "size", json_integer(layout_file_size(r->layout, f)));
	json_object_set_new(o, "blocks", json_integer(layout_file_blocks(r->layout, f)));
	json_object_set_new(o, "outcome", json_string(outcome_name(r, i)));
	json_object_set_new(o, "reason", pf->outcome == OUT_SKIPPED ?
			    json_string(skip_reason_text(pf->reason)) : json_null());
	json_object_set_new(o, "pieces_before", json_integer(pf->pieces_before));
	json_object_set_new(o, "pieces_after", json_integer(pf->pieces_after));
	json_object_set_new(o, "best", json_integer(pf->best));
	json_object_set_new(o, "read_seconds_before", report_json_real(pf->read_before));
	json_object_set_new(o, "read_seconds_after", report_json_real(pf->read_after));
	json_object_set_new(o, "ideal_read_seconds", report_json_real(pf->ideal));
	json_object_set_new(o, "bytes_to_write", json_integer(pf->moved_blocks * bs));
	json_object_set_new(o, "interleave_set", json_integer(
		layout_file_interleave(r->layout, f) ?
		layout_file_interleave(r->layout, f)->set : 0));
	json_object_set_new(o, "unit", unit ? json_integer(unit) : json_null());
	/* Short of best: the free space its best needs, and the disk's (text.c). */
	if (pf->outcome == OUT_PARTIAL || pf->outcome == OUT_NO_ROOM) {
		json_object_set_new(o, "room_needed",
				    json_integer(layout_room_needed(r->layout, f) * bs));
		json_object_set_new(o, "room_free", json_integer(layout_room_available(
			r->after ? r->after : r->layout) * bs));
	} else {
		json_object_set_new(o, "room_needed", json_null());
		json_object_set_new(o, "room_free", json_null());
	}
	return o;
}

static json_t *result_json(const struct report *r)
{
	const struct run_state *st = r->run;
	json_int_t bs = r->layout->fs->blocksize;
	json_t *o;
	uint64_t pieces;
	double read;

	if (!st)
		return json_null();
	o = json_object();
	json_object_set_new(o, "moves_done", json_integer(st->done));
	json_object_set_new(o, "moves_failed", json_integer(st->failed));
	json_object_set_new(o, "files_failed", json_integer(st->files_failed));
	json_object_set_new(o, "bytes_written", json_integer(st->written * bs));
	json_object_set_new(o, "bytes_copied", json_integer(st->copied * bs));
	/* Written per byte of the files that needed moving (0: none needed it). */
	json_object_set_new(o, "write_amplification",
			    report_json_real(r->plan->needed_blocks ?
					     (double)st->written / r->plan->needed_blocks : 0));
	json_object_set_new(o, "seconds", report_json_real(st->seconds));
	json_object_set_new(o, "cancelled", json_boolean(st->cancelled));
	json_object_set_new(o, "timed_out", json_boolean(st->timed_out));
	/* Group commit: batches made durable, and those a reuse of blocks
	 * freed by the batch ended early. */
	json_object_set_new(o, "commits", json_integer(st->commits));
	json_object_set_new(o, "reuse_commits", json_integer(st->reuse_commits));
	/* Data also written to the journal, where a move logged the blocks
	 * its batch freed rather than commit (move.h); bytes_written counts
	 * it once, in place. */
	json_object_set_new(o, "logged_bytes",
			    json_integer(st->logged_blocks * r->layout->fs->blocksize));
	json_object_set_new(o, "units_done", json_integer(st->units_done));
	json_object_set_new(o, "abandoned", json_boolean(st->abandoned));
	/* Stopped by the clock before a unit: its estimate, and whether it
	 * fits no window of this length (text.c says which files). */
	json_object_set_new(o, "next_unit_seconds", st->timed_out && !st->unit_limit ?
			    report_json_real(st->next_unit_seconds) : json_null());
	json_object_set_new(o, "next_unit_too_long", json_boolean(st->too_long));
	if (!r->after)
		return o;
	report_after_figures(r, &pieces, &read);
	json_object_set_new(o, "pieces_after", json_integer(pieces));
	json_object_set_new(o, "read_seconds_after", report_json_real(read));
	json_object_set_new(o, "avoidably_fragmented_before",
			    json_integer(r->layout->summary.avoidably_fragmented_files));
	json_object_set_new(o, "avoidably_fragmented_after",
			    json_integer(r->after->summary.avoidably_fragmented_files));
	json_object_set_new(o, "interleave_sets_before",
			    json_integer(r->layout->summary.interleave_sets));
	json_object_set_new(o, "interleave_sets_after",
			    json_integer(r->after->summary.interleave_sets));
	json_object_set_new(o, "free_extents_after",
			    json_integer(r->after->free.free_extents));
	json_object_set_new(o, "largest_free_after",
			    json_integer(r->after->free.largest_free_extent * bs));
	return o;
}

#define JSON_FLAGS	(JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12))

/*
 * VALUE (taken) as jansson would print it DEPTH levels deep in one
 * document: its own dump with every line after the first indented by
 * DEPTH levels (a string's newlines are escaped, so every '\n' is a line).
 */
static int put_nested(FILE *out, json_t *value, int depth)
{
	char *text = value ? json_dumps(value, JSON_FLAGS | JSON_ENCODE_ANY) : NULL;
	const char *c, *nl;

	json_decref(value);
	if (!text)
		return -1;
	/* A line at a time: a plan of 25,000 files prints megabytes. */
	for (c = text; (nl = strchr(c, '\n')); c = nl + 1) {
		fwrite(c, 1, (size_t)(nl + 1 - c), out);
		fprintf(out, "%*s", 2 * depth, "");
	}
	fputs(c, out);
	free(text);
	return 0;
}

/* One member of the document, KEY one of our literals. */
static int put_member(FILE *out, const char *key, json_t *value, int first)
{
	fprintf(out, "%s  \"%s\": ", first ? "{\n" : ",\n", key);
	return put_nested(out, value, 1);
}

/*
 * The document, byte for byte as one json_dumpf of it would be, but with
 * the files written one at a time: a plan may move a quarter of a large
 * filesystem's files, and a tree of all their objects would take many
 * times the memory e2defrag otherwise needs.
 */
int json_output(FILE *out, const struct report *r)
{
	json_t *skipped = json_array();
	uint64_t i, n = 0;
	uint32_t *unit = calloc(r->layout->nfiles ? r->layout->nfiles : 1,
				sizeof(*unit));

	if (!skipped || !unit) {
		json_decref(skipped);
		free(unit);
		return -1;
	}
	/* Each file's unit: that of its last move (units are in order). */
	for (i = 0; r->units && i < r->plan->nmoves; i++)
		unit[r->plan->moves[i].file] = units_of_move(r->units, i) + 1;

	if (put_member(out, "filesystem", report_json_filesystem(r->layout, r->device), 1) ||
	    put_member(out, "dry_run", json_boolean(r->dry_run), 0) ||
	    put_member(out, "plan", plan_json(r), 0)) {
		json_decref(skipped);
		free(unit);
		return -1;
	}
	fputs(",\n  \"files\": [", out);
	for (i = 0; i < r->layout->nfiles; i++) {
		if (plan_file(r->plan, i)->outcome == OUT_NONE)
			continue;
		fputs(n++ ? ",\n    " : "\n    ", out);
		if (put_nested(out, file_json(r, i, unit[i]), 2)) {
			json_decref(skipped);
			free(unit);
			return -1;
		}
	}
	free(unit);
	fputs(n ? "\n  ]" : "]", out);
	for (i = 0; i < r->sel->nextra; i++) {
		char text[1024];

		util_printable(r->sel->extra[i].name, text, sizeof(text));
		json_array_append_new(skipped, json_pack("{s:I, s:s, s:s}",
			"ino", (json_int_t)r->sel->extra[i].ino, "name", text,
			"reason", skip_reason_text(r->sel->extra[i].reason)));
	}
	if (put_member(out, "skipped", skipped, 0) ||
	    put_member(out, "result", result_json(r), 0) ||
	    put_member(out, "exit_status", json_integer(r->status), 0))
		return -1;
	fputs("\n}\n", out);
	return 0;
}
