/*
 * report_json.h --- the layout as the JSON objects of e2frag's report
 * (doc/design.md, e2frag(8)), for the programs that print JSON: e2frag,
 * e2defrag's --json.  Apart from lib/e2frag.h so that only they compile
 * against jansson.
 */
#ifndef REPORT_JSON_H
#define REPORT_JSON_H

#include <jansson.h>

#include "e2frag.h"

/* The "filesystem", "summary", one "files" entry, "groups", "free_space". */
json_t *report_json_filesystem(const struct layout *layout, const char *device);
json_t *report_json_summary(const struct layout *layout);
json_t *report_json_file(const struct layout *layout, const struct layout_file *f);
json_t *report_json_groups(const struct layout *layout);
json_t *report_json_free_space(const struct layout *layout);
json_t *report_json_sets(const struct layout *layout);

/* Seconds and ratios rounded to the microsecond: stable, readable output. */
json_t *report_json_real(double x);

#endif /* REPORT_JSON_H */
