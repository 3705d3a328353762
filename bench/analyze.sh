#!/bin/sh
# bench/analyze.sh [FILES] --- e2frag against e2fsck -fn on an untarred
# source tree (seed 001: 24,353 files; here 200,000 by default), built by
# e2fragimg --workload tree.  Five alternating warm-cache runs each; prints
# median wall times, peak RSS and their ratios (targets: e2frag <= 0.5x
# e2fsck's time and <= 4x its RSS).  Run from the build tree.
set -eu
files=${1:-200000}
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/e2frag-bench}
img=$dir/tree-$files.img
mkdir -p "$dir"
if [ ! -f "$img" ]; then
	echo "building $img ..."
	"$top/images/e2fragimg" --workload tree --type ext4 --files "$files" \
		--size 16G --seed 1 "$img"
fi
cat "$img" > /dev/null		# warm the page cache
e2fsck -fn "$img" > /dev/null 2>&1 || true
echo "image: $img ($files files)"
python3 "$top/bench/measure.py" 5 \
	"e2frag=$top/analyze/e2frag $img" \
	"e2fsck=e2fsck -fn $img"
