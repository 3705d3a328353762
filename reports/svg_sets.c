/*
 * svg_sets.c --- the interleave sets in the SVG map: which sets get a hue
 * of their own (the SVG_KEYED with the most blocks: what the picture
 * shows most of), which set each interleaved cell belongs to, and the key
 * that ties each hue to its set's number and files.  The other sets share
 * a neutral grey, which the key names too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svg_int.h"

/*
 * Paul Tol's muted scheme less rose, cyan and teal (cyan and teal under
 * the interleaved pattern look like the journal and the files, which
 * are blue): wine, green, sand, purple, olive, indigo, in the order the
 * largest sets take them; then the grey of the rest.  In CIEDE2000 the
 * six are at least 15.7 apart under the Machado et al. (2009) simulation
 * of deuteranopia, 11.8 under protanopia's, 15.0 in normal vision, and
 * 20 from the grey.
 */
const char *const svg_set_rgb[SVG_KEYED + 1] = {
	"#882255", "#117733", "#ddcc77", "#aa4499", "#999933", "#332288",
	"#999999",
};

/* Files a key row names at most, and about how many characters it takes. */
#define KEY_NAMES	24
#define KEY_CHARS	120
#define KEY_NAME_CHARS	32	/* a longer name loses its middle */

/* The keyed sets: the SVG_KEYED with the most blocks, ties to the lower number. */
static void choose_keyed(struct picture *p)
{
	const struct layout *layout = p->layout;
	uint64_t si;
	unsigned k, j;

	p->nkeyed = 0;
	for (si = 0; si < layout->nsets; si++) {
		blk64_t blocks = layout->sets[si].blocks;

		p->hue_of_set[si] = SVG_NEUTRAL;
		/* Insert in order, most blocks first; the list keeps SVG_KEYED. */
		for (k = 0; k < p->nkeyed; k++)
			if (blocks > layout->sets[p->keyed[k]].blocks)
				break;
		if (k == SVG_KEYED)
			continue;
		for (j = p->nkeyed < SVG_KEYED ? p->nkeyed : SVG_KEYED - 1; j > k; j--)
			p->keyed[j] = p->keyed[j - 1];
		p->keyed[k] = (uint32_t)si;
		if (p->nkeyed < SVG_KEYED)
			p->nkeyed++;
	}
	for (k = 0; k < p->nkeyed; k++)
		p->hue_of_set[p->keyed[k]] = k;
}

/*
 * Which set each cell's interleaved blocks belong to: the member with the
 * most blocks in the cell wins, and gives the cell its set and its hue.
 */
int svg_find_sets(struct picture *p)
{
	const struct layout *layout = p->layout;
	blk64_t *most = calloc(p->ncells, sizeof(*most)), *mine = NULL;
	uint64_t *touched = NULL, ntouched;
	uint64_t si, m, i, c;

	p->set_of = calloc(p->ncells, sizeof(*p->set_of));
	p->hue_of_set = malloc((layout->nsets + 1) * sizeof(*p->hue_of_set));
	mine = calloc(p->ncells, sizeof(*mine));
	touched = malloc(p->ncells * sizeof(*touched));
	if (!most || !p->set_of || !p->hue_of_set || !mine || !touched) {
		free(most);
		free(mine);
		free(touched);
		return ENOMEM;
	}
	choose_keyed(p);
	for (si = 0; si < layout->nsets; si++) {
		const struct layout_set *s = &layout->sets[si];

		for (m = 0; m < s->members; m++) {
			const struct layout_file *f =
				&layout->files[layout->set_members[s->first_member + m]];

			ntouched = 0;
			for (i = 0; i < layout_file_pieces(layout, f); i++) {
				struct layout_piece pc = layout_file_piece(layout, f, i);
				blk64_t a = pc.start, b = pc.start + pc.len;

				while (a < b) {
					blk64_t end = (((a >> p->level) + 1) << p->level);

					if (end > b)
						end = b;
					c = a >> p->level;
					if (c < p->ncells) {
						if (!mine[c])
							touched[ntouched++] = c;
						mine[c] += end - a;
					}
					a = end;
				}
			}
			for (i = 0; i < ntouched; i++) {
				c = touched[i];
				if (mine[c] > most[c] && (p->looks[c] == MAP_INTERLEAVED ||
							  p->looks[c] >= LOOK_SET)) {
					most[c] = mine[c];
					p->set_of[c] = si + 1;
					p->looks[c] = LOOK_SET + p->hue_of_set[si];
				}
				mine[c] = 0;
			}
		}
	}
	free(most);
	free(mine);
	free(touched);
	return 0;
}

/* Bytes of the UTF-8 character starting at S (1 for a stray byte). */
static size_t char_len(const char *s)
{
	size_t n = 1;

	while (s[n] && ((unsigned char)s[n] & 0xc0) == 0x80)
		n++;
	return n;
}

/* Characters (not bytes) of S. */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s += char_len(s))
		n++;
	return n;
}

/*
 * NAME appended to BUF (LEN bytes), its middle replaced by "..." when it
 * has more than KEY_NAME_CHARS characters: the directory it starts with
 * and the name it ends with say more than what lies between.
 */
static void add_name(char *buf, size_t len, const char *name)
{
	size_t have = strlen(buf), n = chars(name), i;
	const char *tail = name;

	if (n <= KEY_NAME_CHARS) {
		snprintf(buf + have, len - have, "%s", name);
		return;
	}
	for (i = 0; i < KEY_NAME_CHARS / 2; i++)
		tail += char_len(tail);
	snprintf(buf + have, len - have, "%.*s...", (int)(tail - name), name);
	tail = name;
	for (i = 0; i < n - (KEY_NAME_CHARS - KEY_NAME_CHARS / 2 - 3); i++)
		tail += char_len(tail);
	have = strlen(buf);
	snprintf(buf + have, len - have, "%s", tail);
}

/* Set SI's member M's path, printable, into BUF. */
static void member_path(const struct layout *layout, const struct layout_set *s,
			uint32_t m, char *buf, size_t len)
{
	char raw[4096];

	layout_path(layout, layout->files[layout->set_members[s->first_member + m]].ino,
		    raw, sizeof(raw));
	util_printable(raw, buf, len);
}

/*
 * One keyed set's row: "set N: F files, SIZE in DIR/: a b c ... and K
 * more", the directory its members share said once; its <title> the
 * paths in full, one a line.
 */
static void key_row(const struct picture *p, FILE *out, unsigned hue, long y)
{
	const struct layout *layout = p->layout;
	uint32_t si = p->keyed[hue], m, shown = 0;
	const struct layout_set *s = &layout->sets[si];
	char path[4096 * 4], prefix[4096 * 4] = "", text[KEY_CHARS * 8], size[32];
	size_t common = 0;

	/* The directory every member is in, when they share one below /. */
	for (m = 0; m < s->members; m++) {
		member_path(layout, s, m, path, sizeof(path));
		if (!m) {
			snprintf(prefix, sizeof(prefix), "%s", path);
			common = strlen(prefix);
		}
		while (common && strncmp(prefix, path, common))
			common--;
	}
	while (common && prefix[common - 1] != '/')
		common--;
	if (common <= 1)
		common = 0;
	prefix[common] = 0;

	util_format_size(s->blocks * (uint64_t)layout->fs->blocksize, size, sizeof(size));
	snprintf(text, sizeof(text), "set %llu: %u file%s, %s%s",
		 (unsigned long long)si + 1, s->members, s->members == 1 ? "" : "s",
		 size, common ? " in " : "");
	if (common)
		add_name(text, sizeof(text), prefix);
	strcat(text, ":");
	for (m = 0; m < s->members && m < KEY_NAMES; m++) {
		size_t before = strlen(text);

		member_path(layout, s, m, path, sizeof(path));
		strcat(text, " ");
		add_name(text, sizeof(text), path + common);
		/* Room for the last words ("... and 1234 more"). */
		if (chars(text) > KEY_CHARS - (m + 1 < s->members ? 16 : 0) && m) {
			text[before] = 0;
			break;
		}
		shown++;
	}
	if (shown < s->members)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " ... and %u more",
			 s->members - shown);

	fprintf(out, "<g class=\"keyrow\" data-set=\"%llu\" data-hue=\"k%u\" "
		"data-files=\"%u\" data-shown=\"%u\" data-blocks=\"%llu\">",
		(unsigned long long)si + 1, hue, s->members, shown,
		(unsigned long long)s->blocks);
	fprintf(out, "<rect class=\"s%d k%u\" x=\"%d\" y=\"%ld\" width=\"12\" height=\"12\"/>"
		"<rect class=\"p%d\" x=\"%d\" y=\"%ld\" width=\"12\" height=\"12\"/>",
		MAP_INTERLEAVED, hue, GUTTER_PX, y - 1, MAP_INTERLEAVED, GUTTER_PX, y - 1);
	fprintf(out, "<text x=\"%d\" y=\"%ld\">", GUTTER_PX + 16, y + 10);
	/* Printable already (member_path): escaped again, \x01 became \x5cx01. */
	svg_put_printable(out, text);
	fputs("</text><title>", out);
	for (m = 0; m < shown; m++) {
		member_path(layout, s, m, path, sizeof(path));
		if (m)
			fputc('\n', out);
		svg_put_printable(out, path);
	}
	fputs("</title></g>\n", out);
}

int svg_put_key(const struct picture *p, FILE *out, long y0)
{
	const struct layout *layout = p->layout;
	uint64_t others = layout->nsets - p->nkeyed, files = 0, si;
	unsigned k;
	int rows = 0;

	if (!layout->nsets)
		return 0;
	if (out) {
		fputs("<g class=\"key\">\n", out);
		if (others)
			fprintf(out, "<text x=\"%d\" y=\"%ld\">The %u largest interleave "
				"sets, each in a hue of its own (e2frag -i lists them all):"
				"</text>\n", GUTTER_PX, y0 + 10, p->nkeyed);
		else
			fprintf(out, "<text x=\"%d\" y=\"%ld\">Interleave sets, each in a "
				"hue of its own:</text>\n", GUTTER_PX, y0 + 10);
	}
	rows++;
	for (k = 0; k < p->nkeyed; k++, rows++)
		if (out)
			key_row(p, out, k, y0 + rows * LEGEND_ROW);
	if (others) {
		for (si = 0; si < layout->nsets; si++)
			if (p->hue_of_set[si] == SVG_NEUTRAL)
				files += layout->sets[si].members;
		if (out) {
			long y = y0 + rows * LEGEND_ROW;

			fprintf(out, "<g class=\"keyrow\" data-set=\"other\" data-hue=\"kn\" "
				"data-sets=\"%llu\" data-files=\"%llu\">"
				"<rect class=\"s%d kn\" x=\"%d\" y=\"%ld\" width=\"12\" height=\"12\"/>"
				"<rect class=\"p%d\" x=\"%d\" y=\"%ld\" width=\"12\" height=\"12\"/>"
				"<text x=\"%d\" y=\"%ld\">%llu other set%s (%llu files), "
				"in grey</text></g>\n",
				(unsigned long long)others, (unsigned long long)files,
				MAP_INTERLEAVED, GUTTER_PX, y - 1, MAP_INTERLEAVED, GUTTER_PX,
				y - 1, GUTTER_PX + 16, y + 10, (unsigned long long)others,
				others == 1 ? "" : "s", (unsigned long long)files);
		}
		rows++;
	}
	if (out)
		fputs("</g>\n", out);
	return rows;
}
