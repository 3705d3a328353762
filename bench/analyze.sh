#!/bin/sh
# bench/analyze.sh [FILES | IMAGE] --- e2frag against e2fsck -fn.
# With a number (or nothing): on an untarred source tree (seed 001: 24,353
# files; here 200,000 by default), built by e2fragimg --workload tree.
# With the path of an image: on that image, for instance a tree written by
# the kernel on a loop mount (see bench/README.md), which e2frag only reads.
# Five alternating warm-cache runs each; prints median wall times, peak RSS
# and their ratios (targets: e2frag <= 0.5x e2fsck's time and <= 4x its
# RSS) and e2frag's own figures from its report: inodes in use, pieces,
# interleaved files and the largest set.  Run from the build tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
arg=${1:-200000}
if [ -f "$arg" ]; then
	img=$arg
	what="given image"
else
	files=$arg
	dir=${BENCH_DIR:-${TMPDIR:-/tmp}/e2frag-bench}
	img=$dir/tree-$files.img
	what="$files files, e2fragimg --workload tree"
	mkdir -p "$dir"
	if [ ! -f "$img" ]; then
		echo "building $img ..."
		"$top/images/e2fragimg" --workload tree --type ext4 --files "$files" \
			--size 16G --seed 1 "$img"
	fi
fi
cat "$img" > /dev/null		# warm the page cache
e2fsck -fn "$img" > /dev/null 2>&1 || true
echo "image: $img ($what)"
"$top/analyze/e2frag" --json "$img" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
s, sets = r["summary"], r["interleave_sets"]
print("e2frag: %d inodes in use, %d pieces, %d files interleaved in %d sets (largest %d files, %d alternations)" % (
    r["filesystem"]["inodes_used"], s["pieces"], s["interleaved_files"], len(sets),
    max([len(x["files"]) for x in sets] or [0]),
    max([x["alternations"] for x in sets] or [0])))' || true
python3 "$top/bench/measure.py" 5 \
	"e2frag=$top/analyze/e2frag $img" \
	"e2fsck=e2fsck -fn $img"
