/*
 * text.c --- the report a person reads: like e2fsck's closing summary,
 * meant to be taken in within seconds, ending with a verdict that names
 * the command to run.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "color.h"

#define SETS_SHOWN	5	/* without -i */
#define MEMBERS_SHOWN	6	/* paths per set line without -i */
#define PAIRS_SHOWN	3	/* strongest pairs of a large set */

/*
 * S as one shell word, so that the verdict's command can be pasted: as it
 * is when every character is one no shell treats specially, else in
 * single quotes, a quote in it as '\''.
 */
static void put_shell_word(FILE *out, const char *s)
{
	static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		"0123456789_./:=@+-";

	if (*s && !s[strspn(s, plain)]) {
		fputs(s, out);
		return;
	}
	fputc('\'', out);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", out);
		else
			fputc(*s, out);
	fputc('\'', out);
}

/* With --color: the verdict in the hue of what it says, bold. */
static void verdict_color(FILE *out, const struct report_opts *o, int recommend)
{
	char sgr[32];

	if (o->color)
		fprintf(out, COLOR_SGR_BOLD "%s", color_sgr(recommend ? HUE_VERMILLION :
							   HUE_BLUE, sgr, sizeof(sgr)));
}

static void color_end(FILE *out, const struct report_opts *o)
{
	if (o->color)
		fputs(COLOR_SGR_RESET, out);
}

static void print_path(FILE *out, const struct layout *layout, ext2_ino_t ino)
{
	char raw[4096], text[4096 * 4];

	layout_path(layout, ino, raw, sizeof(raw));
	util_printable(raw, text, sizeof(text));
	fputs(text, out);
}

static int set_selected(const struct layout *layout, const struct layout_set *s)
{
	uint32_t m;

	for (m = 0; m < s->members; m++)
		if (layout->files[layout->set_members[s->first_member + m]].flags &
		    LAYOUT_F_SELECTED)
			return 1;
	return 0;
}

static void print_set_detail(FILE *out, const struct layout *layout,
			     const struct layout_set *s)
{
	char size[32];
	uint32_t m;

	for (m = 0; m < s->members; m++) {
		const struct layout_file *f =
			&layout->files[layout->set_members[s->first_member + m]];

		const struct layout_interleave *il = layout_file_interleave(layout, f);
		uint32_t partners = il ? il->partners : 0;
		uint32_t alternations = il ? il->alternations : 0;

		fprintf(out, "                ");
		print_path(out, layout, f->ino);
		fprintf(out, "  %s, %u/%u %s, %u %s, %u %s\n",
			util_format_size(layout_file_size(layout, f), size, sizeof(size)),
			layout_file_pieces(layout, f),
			layout_file_best(layout, f),
			util_plural(layout_file_pieces(layout, f), "piece", "pieces"),
			partners, util_plural(partners, "partner", "partners"),
			alternations, util_plural(alternations, "alternation", "alternations"));
	}
}

/*
 * A large set's members are too many to read: say which directories they
 * are in and which pairs alternate most.
 */
static void print_set_outline(FILE *out, const struct layout *layout,
			      const struct layout_set *s)
{
	struct layout_set_outline ol;
	uint32_t i;

	if (layout_set_outline(layout, s, &ol))
		return;		/* out of memory: the member list still follows */
	fprintf(out, "                in %u %s, most in", ol.directories,
		util_plural(ol.directories, "directory", "directories"));
	for (i = 0; i < ol.ndirs; i++) {
		fputs(i ? ", " : " ", out);
		if (ol.dirs[i].ino)
			print_path(out, layout, ol.dirs[i].ino);
		else
			fputs("(no name)", out);
		if (i)
			fprintf(out, " (%u)", ol.dirs[i].members);
		else
			fprintf(out, " (%u %s)", ol.dirs[i].members,
				util_plural(ol.dirs[i].members, "file", "files"));
	}
	fputc('\n', out);
	for (i = 0; i < ol.npairs && i < PAIRS_SHOWN; i++) {
		fputs(i ? "                                 " :
			  "                strongest pairs: ", out);
		print_path(out, layout, ol.pairs[i].a);
		fputs(" and ", out);
		print_path(out, layout, ol.pairs[i].b);
		fprintf(out, ", %u %s\n", ol.pairs[i].alternations,
			util_plural(ol.pairs[i].alternations, "alternation", "alternations"));
	}
}

static void print_sets(FILE *out, const struct layout *layout,
		       const struct report_opts *o)
{
	const struct layout_summary *sum = &layout->summary;
	uint64_t i, shown = 0;
	char size[32], read[32], ideal[32];

	if (!sum->interleave_sets) {
		fprintf(out, "Interleaving  none: no files were written into each other\n");
		return;
	}
	fprintf(out, "Interleaving  %llu %s of files written into each other (%llu %s)\n",
		(unsigned long long)sum->interleave_sets,
		util_plural(sum->interleave_sets, "set", "sets"),
		(unsigned long long)sum->interleaved_files,
		util_plural(sum->interleaved_files, "file", "files"));
	for (i = 0; i < layout->nsets; i++) {
		const struct layout_set *s = &layout->sets[i];
		uint32_t m;

		if (!set_selected(layout, s))
			continue;
		if (!o->show_sets && shown == SETS_SHOWN) {
			fprintf(out, "              ... and %llu more (e2frag -i lists them)\n",
				(unsigned long long)(sum->interleave_sets - shown));
			break;
		}
		shown++;
		fprintf(out, "              set %llu: %u %s, %s, %llu %s, "
			"read in %s instead of %s\n",
			(unsigned long long)(i + 1), s->members,
			util_plural(s->members, "file", "files"),
			util_format_size((uint64_t)s->blocks * layout->fs->blocksize,
					 size, sizeof(size)),
			(unsigned long long)s->alternations,
			util_plural(s->alternations, "alternation", "alternations"),
			util_format_seconds(s->read_seconds, read, sizeof(read)),
			util_format_seconds(s->ideal_seconds, ideal, sizeof(ideal)));
		if (s->members > LAYOUT_SET_LARGE)
			print_set_outline(out, layout, s);
		if (o->show_sets) {
			print_set_detail(out, layout, s);
			continue;
		}
		if (s->members > LAYOUT_SET_LARGE)
			continue;
		fprintf(out, "               ");
		for (m = 0; m < s->members && m < MEMBERS_SHOWN; m++) {
			fputc(' ', out);
			print_path(out, layout, layout->files[
				layout->set_members[s->first_member + m]].ino);
		}
		if (s->members > MEMBERS_SHOWN)
			fprintf(out, " (+%u more)", s->members - MEMBERS_SHOWN);
		fputc('\n', out);
	}
}

static void print_groups(FILE *out, const struct layout *layout)
{
	ext2_filsys fs = layout->fs;
	dgrp_t g;

	fprintf(out, "\nGroup  First block    Blocks      Free  Free extents  Largest free\n");
	for (g = 0; g < fs->group_desc_count; g++) {
		const struct free_group *fg = &layout->free.groups[g];

		fprintf(out, "%5u  %11llu  %8u  %8llu  %12llu  %12llu\n", g,
			(unsigned long long)ext2fs_group_first_block2(fs, g),
			ext2fs_group_blocks_count(fs, g),
			(unsigned long long)fg->free_blocks,
			(unsigned long long)fg->free_extents,
			(unsigned long long)fg->largest_free);
	}
}

static void print_histogram(FILE *out, const struct layout *layout)
{
	const struct free_space *fsp = &layout->free;
	unsigned bs = layout->fs->blocksize, i, last = 0;
	char lo[32], hi[32];

	for (i = 0; i < FREE_BUCKETS; i++)
		if (fsp->histogram[i].count)
			last = i;
	fprintf(out, "\nFree extents by size:\n");
	fprintf(out, "      Extent size range   Free extents    Free blocks  Percent\n");
	for (i = 0; i <= last && fsp->free_blocks; i++) {
		const struct free_bucket *b = &fsp->histogram[i];

		util_format_size(b->min_blocks * bs, lo, sizeof(lo));
		util_format_size(b->min_blocks * 2 * bs, hi, sizeof(hi));
		fprintf(out, "  %9s - %9s  %13llu  %13llu  %6.2f%%\n", lo, hi,
			(unsigned long long)b->count, (unsigned long long)b->blocks,
			100.0 * b->blocks / fsp->free_blocks);
	}
}

void text_report(FILE *out, const struct layout *layout,
		 const struct report_opts *o)
{
	const struct layout_summary *s = &layout->summary;
	const struct readmodel *m = &layout->model;
	ext2_filsys fs = layout->fs;
	uint64_t bytes = ext2fs_blocks_count(fs->super) * (uint64_t)fs->blocksize;
	char size[32], free_size[32], largest[32], read[32], ideal[32];

	fprintf(out, "%s: %s, %s, %u-byte blocks, %u block %s, "
		"%llu of %u %s in use\n",
		o->device, fsopen_fs_type(fs), util_format_size(bytes, size, sizeof(size)),
		fs->blocksize, fs->group_desc_count,
		util_plural(fs->group_desc_count, "group", "groups"),
		(unsigned long long)layout->inodes_used, fs->super->s_inodes_count,
		util_plural(fs->super->s_inodes_count, "inode", "inodes"));
	if (o->npaths) {
		int i;

		/* What the figures below cover: say it before them. */
		fprintf(out, "Scope        ");
		for (i = 0; i < o->npaths; i++) {
			char shown[4096 * 4];

			util_printable(o->paths[i], shown, sizeof(shown));
			fprintf(out, " %s", shown);
		}
		fprintf(out, ": files, interleaving and read time below are theirs; "
			"free space is the filesystem's\n");
	}
	fprintf(out, "Files         %llu with blocks: %llu fragmented, "
		"%llu avoidably (more pieces than their best)\n",
		(unsigned long long)s->files, (unsigned long long)s->fragmented_files,
		(unsigned long long)s->avoidably_fragmented_files);
	if (s->avoidably_fragmented_files)
		fprintf(out, "              %llu of them e2defrag could bring closer to best "
			"on this disk as it is\n", (unsigned long long)o->improvable);
	fprintf(out, "              %llu %s where %llu would do; %llu %s\n",
		(unsigned long long)s->pieces, util_plural(s->pieces, "piece", "pieces"),
		(unsigned long long)s->best_pieces, (unsigned long long)s->extents,
		util_plural(s->extents, "extent", "extents"));
	print_sets(out, layout, o);
	fprintf(out, "Read time     %s modeled, %s ideal: %.0f%% efficiency "
		"(%.0f rpm, %.0f MB/s, %.1f ms seek)\n",
		util_format_seconds(s->modeled_read_seconds, read, sizeof(read)),
		util_format_seconds(s->ideal_read_seconds, ideal, sizeof(ideal)),
		100 * s->read_efficiency, m->rpm, m->mbps, m->seek_ms);
	fprintf(out, "Free space    %s in %llu %s, largest %s\n",
		util_format_size(layout->free.free_blocks * (uint64_t)fs->blocksize,
				 free_size, sizeof(free_size)),
		(unsigned long long)layout->free.free_extents,
		util_plural(layout->free.free_extents, "extent", "extents"),
		util_format_size(layout->free.largest_free_extent * (uint64_t)fs->blocksize,
				 largest, sizeof(largest)));
	if (o->show_groups)
		print_groups(out, layout);
	if (o->show_free)
		print_histogram(out, layout);
	/* --top 0: every file that loses read time (table_print_files). */
	if (s->modeled_read_seconds > s->ideal_read_seconds) {
		fprintf(out, "\nWorst files by read time lost to layout:\n");
		table_print_files(out, layout, o, 2);
	}
	fputc('\n', out);
	verdict_color(out, o, s->score >= o->threshold && s->score > 0);
	if (s->score >= o->threshold && s->score > 0 && o->dump)
		fprintf(out, "Score %.0f of 100 (threshold %.0f): defragmentation "
			"recommended; run e2defrag on the filesystem this dump "
			"was made from", s->score, o->threshold);
	else if (s->score >= o->threshold && s->score > 0) {
		fprintf(out, "Score %.0f of 100 (threshold %.0f): defragmentation "
			"recommended; run: %s ", s->score, o->threshold,
			o->mount_point ? "e2defrag-offline" : "e2defrag");
		put_shell_word(out, o->mount_point ? o->mount_point : o->spec);
	} else
		fprintf(out, "Score %.0f of 100 (threshold %.0f): the layout is fine, "
			"nothing to do", s->score, o->threshold);
	color_end(out, o);
	fputc('\n', out);
}
