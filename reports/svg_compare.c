/*
 * svg_compare.c --- e2defrag --svg: the map before the run and after it,
 * side by side in one picture, each with its caption, one style for both.
 * The picture before is drawn before anything moves and kept in memory
 * (the layout it is drawn from describes blocks the run reuses), and the
 * file is opened then too, so that a file that cannot be written stops
 * the run before it starts, as --svg-before does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <et/com_err.h>

#include "svg_int.h"

#define COMPARE_GAP	30	/* pixels between the two pictures */

struct svg_compare {
	FILE	*file;
	int	to_stdout;
	char	*path, *device;
	char	*before;	/* the picture before, a <g> */
	size_t	before_len;
	long	width, height;	/* of the picture before */
};

/* The picture of LAYOUT named ID at X into *TEXT (malloc'd); 0 or an errno. */
static int draw_group(const struct layout *layout, const char *device,
		      const char *caption, const char *id, long x, char **text,
		      size_t *len, long *width, long *height)
{
	struct picture p;
	struct map *map = NULL;
	int ret;

	*text = NULL;
	memset(&p, 0, sizeof(p));
	ret = map_build(layout, &map);
	if (ret)
		return ret;
	p.out = open_memstream(text, len);
	if (!p.out) {
		ret = errno;
		map_free(map);
		return ret;
	}
	svg_geometry(&p, layout, map);
	p.id = id;
	p.x = x;
	ret = svg_draw(&p, device, NULL, NULL, caption);
	if (fclose(p.out) && !ret)
		ret = ENOMEM;
	map_free(map);
	if (ret) {
		free(*text);
		*text = NULL;
	}
	*width = p.width;
	*height = p.height;
	return ret;
}

void svg_compare_free(struct svg_compare *cmp)
{
	if (!cmp)
		return;
	if (cmp->file && !cmp->to_stdout)
		fclose(cmp->file);
	free(cmp->path);
	free(cmp->device);
	free(cmp->before);
	free(cmp);
}

int svg_compare_begin(struct svg_compare **ret, const struct layout *layout,
		      const char *device, const char *path, const char *caption,
		      const char *prog)
{
	struct svg_compare *cmp = calloc(1, sizeof(*cmp));
	int err;

	*ret = NULL;
	if (!cmp || !(cmp->path = strdup(path)) || !(cmp->device = strdup(device))) {
		com_err(prog, ENOMEM, "while drawing the map of %s", device);
		svg_compare_free(cmp);
		return -1;
	}
	cmp->to_stdout = !strcmp(path, "-");
	cmp->file = cmp->to_stdout ? stdout : fopen(path, "w");
	if (!cmp->file) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
		svg_compare_free(cmp);
		return -1;
	}
	err = draw_group(layout, device, caption, "before", 0, &cmp->before,
			 &cmp->before_len, &cmp->width, &cmp->height);
	if (err) {
		com_err(prog, err, "while drawing the map of %s", device);
		svg_compare_free(cmp);
		return -1;
	}
	*ret = cmp;
	return 0;
}

int svg_compare_end(struct svg_compare *cmp, const struct layout *layout,
		    const char *caption, const char *prog)
{
	char *after = NULL;
	size_t after_len = 0;
	long width, height, x = cmp->width + COMPARE_GAP;
	FILE *out = cmp->file;
	int err, status = -1;

	err = draw_group(layout, cmp->device, caption, "after", x, &after, &after_len,
			 &width, &height);
	if (err) {
		com_err(prog, err, "while drawing the map of %s", cmp->device);
		return -1;
	}
	width += x;
	if (height < cmp->height)
		height = cmp->height;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
		"viewBox=\"0 0 %ld %ld\" data-pictures=\"before after\">\n",
		width, height, width, height);
	fputs("<title>block maps of ", out);
	svg_put_text(out, cmp->device);
	fputs(" before and after, side by side</title>\n", out);
	svg_put_style(out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%ld\" height=\"%ld\" fill=\"#fff\"/>\n",
		width, height);
	fwrite(cmp->before, 1, cmp->before_len, out);
	fwrite(after, 1, after_len, out);
	fputs("</svg>\n", out);
	free(after);
	if (fflush(out) || ferror(out))
		fprintf(stderr, "%s: error writing %s: %s\n", prog, cmp->path, strerror(errno));
	else
		status = 0;
	if (!cmp->to_stdout) {
		if (fclose(out) && !status) {
			fprintf(stderr, "%s: error writing %s: %s\n", prog, cmp->path,
				strerror(errno));
			status = -1;
		}
		cmp->file = NULL;
	}
	return status;
}
