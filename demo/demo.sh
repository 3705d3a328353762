#!/bin/sh
# demo.sh BUILDDIR [DIR] --- what `make demo` shows: interleaved recordings
# and the rest of e2fragimg's mixed workload, e2frag's report on them,
# e2defrag on a copy, e2frag again, and the two side by side.  The images
# go to DIR (default BUILDDIR/images; doc/readme-excerpts.sh uses its own).
set -eu
b=$1
before=${2:-$b/images}/demo-mixed.img
after=${2:-$b/images}/demo-after.img

"$b/images/e2fragimg" --workload mixed --seed 1 "$before"
echo
echo "=== e2frag $before"
"$b/analyze/e2frag" "$before" || [ $? -eq 1 ]
cp --sparse=always "$before" "$after"
echo
echo "=== e2defrag $after (a copy)"
"$b/defrag/e2defrag" "$after" || [ $? -eq 1 ]
echo
echo "=== e2frag $after"
"$b/analyze/e2frag" "$after" || [ $? -eq 1 ]
e2fsck -fn "$after" > /dev/null 2>&1 || { echo "demo: e2fsck -fn $after is not clean" >&2; exit 1; }

"$b/analyze/e2frag" --json "$before" > "$before.report.json" || [ $? -eq 1 ]
"$b/analyze/e2frag" --json "$after" > "$after.report.json" || [ $? -eq 1 ]
echo
echo "=== before and after (e2fsck -fn: clean)"
python3 - "$before.report.json" "$after.report.json" <<'PY'
import json, sys
b, a = (json.load(open(p)) for p in sys.argv[1:3])
rows = [
    ("score (0-100)", lambda r: "%.0f" % r["summary"]["score"]),
    ("modeled read time", lambda r: "%.3f s" % r["summary"]["modeled_read_seconds"]),
    ("ideal read time", lambda r: "%.3f s" % r["summary"]["ideal_read_seconds"]),
    ("read efficiency", lambda r: "%.0f%%" % (100 * r["summary"]["read_efficiency"])),
    ("fragmented files", lambda r: str(r["summary"]["fragmented_files"])),
    ("avoidably fragmented", lambda r: str(r["summary"]["avoidably_fragmented_files"])),
    ("pieces (best possible)", lambda r: "%d (%d)" % (r["summary"]["pieces"], r["summary"]["best_pieces"])),
    ("interleave sets", lambda r: str(r["summary"]["interleave_sets"])),
    ("free extents", lambda r: str(r["free_space"]["free_extents"])),
    ("largest free extent", lambda r: "%.1f MiB" % (r["free_space"]["largest_free_extent"] *
                                                   r["filesystem"]["block_size"] / 2**20)),
]
print("%-24s %14s %14s" % ("", "before", "after"))
for name, f in rows:
    print("%-24s %14s %14s" % (name, f(b), f(a)))
PY
