#!/bin/sh
# bench/plan.sh [FILES [IMG]] --- e2defrag's planning (e2defrag -n) against
# e2fsck -fn on a kernel-written ext3 tree: FILES files of 1-16 KiB
# (default 200,000) in FILES/40 directories, 8 GiB per 200,000 files,
# every 20th written together with the next (bench/kerneltree.py; needs
# root for the loop mount).  Or on IMG when given.  Three alternating
# warm-cache runs each; prints median wall times, peak RSS and their
# ratios (targets: e2defrag -n <= 1x e2fsck's time, <= 4x its RSS) and
# the time per file.  Run from the build tree.
set -eu
files=${1:-200000}
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/e2frag-bench}
img=${2:-$dir/kernel-$files.img}
mkdir -p "$dir"
if [ ! -f "$img" ]; then
	gib=$(( (files * 8 + 199999) / 200000 ))
	echo "building $img ($files files, $gib GiB) ..."
	python3 "$top/bench/kerneltree.py" "$img" "$gib" "$files" \
		$(( files / 40 > 1 ? files / 40 : 1 )) 1 20
fi
cat "$img" > /dev/null		# warm the page cache
echo "image: $img"
"$top/defrag/e2defrag" -n -f "$img" | sed -n '2,4p'
python3 "$top/bench/measure.py" 3 \
	"e2defrag=$top/defrag/e2defrag -n -f $img" \
	"e2fsck=e2fsck -fn $img" | tee "$dir/plan.out"
inodes=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '
	/^Inode count/ { n = $2 } /^Free inodes/ { f = $2 } END { print n - f }')
awk -v n="$inodes" '$1 == "e2defrag" {
	printf "e2defrag -n: %.1f us and %.0f bytes of peak RSS per inode in use (%d)\n",
	       $2 * 1e6 / n, $3 * 1024 / n, n }' "$dir/plan.out"
