#!/bin/sh
# bench/scale.sh [CASE...] --- how e2frag, e2defrag -n and e2fragmap's
# first screen grow with the filesystem, against e2fsck -fn on the same
# image in the same run (bench/measure.py's alternating runs): wall time
# and peak RSS as ratios to e2fsck's, and time per file.  A benchmark,
# not a test.  Cases (default: all, one image at a time, each deleted
# after):
#
#   tree-200k    e2fragimg kernel-tree, ext3, 200,000 files (8 GiB)
#   tree-1m      the same with 1,000,000 files
#   tree-2m      the same with 2,000,000 files
#   ext4-1t      kernel-tree, ext4, 2,000,000 files in a 1 TiB image
#   ext4-64bit   ext4 with 1 KiB blocks, 4.5 TiB: block numbers past 2^32;
#                kernel-tree spreads a few hundred files over the groups
#   kernel-200k  the 200,000-file ext3 tree written by the kernel on a
#                loop mount (bench/kernel-tree.sh; needs root)
#   kernel-64bit the 4.5 TiB ext4 with 1 KiB blocks, 300 files of 8 MiB
#                in pieces written by the kernel into directories past
#                block 2^32 (bench/kernel64.py; needs root, some 3 GB)
#   PATH         an image already built (bench/kerneltree.py's, say):
#                measured the same way, and left in place
#
# Images go to $BENCH_DIR (default $TMPDIR or /tmp).  RUNS rounds
# (default 3); commands longer than LIMIT seconds (default 1800) are
# stopped and shown as ">LIMIT".  e2fragmap's column is its first screen
# as bench/map.sh times it: e2fragmap in a 160x50 pseudo-terminal
# (script(1)) with q typed ahead, so that it draws the map and leaves;
# without tui/e2fragmap or script the column is skipped.  Run from the
# build tree after `make`.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}
runs=${RUNS:-3}
limit=${LIMIT:-1800}
PATH=$PATH:/sbin:/usr/sbin
work=$(mktemp -d "$dir/scale.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM
img=$work/scale.img

for p in images/e2fragimg analyze/e2frag defrag/e2defrag; do
	[ -x "$top/$p" ] || { echo "build first: $p not found" >&2; exit 1; }
done
[ $# -gt 0 ] || set -- tree-200k tree-1m tree-2m ext4-1t ext4-64bit kernel-200k kernel-64bit

echo "scale benchmark, $(date -u +%Y-%m-%d), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"kernel $(uname -r), $runs rounds, limit ${limit} s"

# Build CASE's image into $img; print why not and return 1 when it cannot.
build() {
	img=$work/scale.img
	force=
	rm -f "$img" "$img.json"
	case $1 in
	/*)
		[ -f "$1" ] || { echo "$1: no such image"; return 1; }
		img=$1
		# Written on a loop mount: not checked since, which e2defrag
		# refuses without -f (a dry run writes nothing anyway).
		force=-f
		return 0 ;;
	tree-200k) set -- -t ext3 --files 200000 ;;
	tree-1m) set -- -t ext3 --files 1000000 ;;
	tree-2m) set -- -t ext3 --files 2000000 ;;
	ext4-1t) set -- -t ext4 --files 2000000 --size 1T ;;
	ext4-64bit)
		# 4.5 TiB sparse: the host filesystem must take a file that large.
		if ! truncate -s 4608G "$img" 2>/dev/null; then
			echo "$1: skipped: $(df -T "$dir" | awk 'NR==2 { print $2 }') at $dir" \
				"cannot hold a 4.5 TiB sparse file"
			rm -f "$img"
			return 1
		fi
		rm -f "$img"
		set -- -t ext4 --block-size 1024 --size 4608G --files 400 --dirs 400 ;;
	kernel-200k)
		if [ "$(id -u)" -ne 0 ]; then
			echo "$1: skipped: loop mounts need root"
			return 1
		fi
		KERNEL_TREE_TYPES=ext3 KERNEL_TREE_KEEP=$work \
			nice -n 10 sh "$top/bench/kernel-tree.sh" 200000 > "$work/kt.out" 2>&1
		if [ ! -f "$work/kernel-ext3.img" ]; then
			echo "$1: skipped: the kernel did not write it:" \
				"$(tail -1 "$work/kt.out")"
			return 1
		fi
		mv "$work/kernel-ext3.img" "$img"
		force=-f
		return 0 ;;
	kernel-64bit)
		if [ "$(id -u)" -ne 0 ]; then
			echo "$1: skipped: loop mounts need root"
			return 1
		fi
		if ! nice -n 10 python3 "$top/bench/kernel64.py" "$img" > "$work/k64.out" 2>&1; then
			echo "$1: skipped: $(tail -1 "$work/k64.out")"
			rm -f "$img"
			return 1
		fi
		cat "$work/k64.out"
		force=-f
		return 0 ;;
	*)
		echo "unknown case $1" >&2
		return 1 ;;
	esac
	t0=$(date +%s.%N)
	nice -n 10 "$top/images/e2fragimg" -q --workload kernel-tree "$@" "$img" || return 1
	t1=$(date +%s.%N)
	echo "built with e2fragimg --workload kernel-tree $* in" \
		"$(echo "$t0 $t1" | awk '{ printf "%.0f", $2 - $1 }') s"
}

for case in "$@"; do
	echo
	echo "== $case"
	build "$case" || continue
	files=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '
		/^Inode count/ { n = $2 } /^Free inodes/ { f = $2 } END { print n - f }')
	# What the image holds, as e2frag's summary says (text: the JSON of
	# millions of files is too big to load for four numbers).
	"$top/analyze/e2frag" --top 0 "$img" > "$work/summary" 2>&1
	sed -n '1,5p' "$work/summary"
	pieces=$(sed -n 's/^ *\([0-9]*\) pieces where .*/\1/p' "$work/summary")
	set -- "e2frag=timeout $limit $top/analyze/e2frag $img" \
	       "e2defrag-n=timeout $limit $top/defrag/e2defrag -n $force $img"
	if [ -x "$top/tui/e2fragmap" ] && command -v script > /dev/null; then
		printf q > "$work/map-q"
		set -- "$@" "e2fragmap=timeout $limit script -qec 'stty cols 160 rows 50; exec env TERM=xterm NO_COLOR=1 $top/tui/e2fragmap $img' /dev/null < $work/map-q"
	else
		echo "(no tui/e2fragmap or no script(1): e2fragmap's column skipped)"
	fi
	nice -n 10 python3 "$top/bench/measure.py" "$runs" "$@" \
		"e2fsck=timeout $limit e2fsck -fn $img" > "$work/measure.out"
	cat "$work/measure.out"
	python3 - "$files" "$limit" "$work/measure.out" "${pieces:-0}" <<'PY'
import sys
files, limit = int(sys.argv[1]), float(sys.argv[2])
pieces = int(sys.argv[4])
budget = 200 * files + 32 * pieces	# the memory budget, bytes (bench/README.md)
rows = [l.split() for l in open(sys.argv[3])
        if l.strip() and not l.startswith(("#", "command"))]
for name, wall, rss, tx, rx in rows:
    w = float(wall)
    print("%-10s %s per file (%d inodes in use), %.0f bytes of peak RSS per inode,"
          " %.2fx the budget of 200 B an inode + 32 B a piece (%d pieces)%s" %
          (name, "%.1f us" % (w / files * 1e6), files, int(rss) * 1024 / files,
           int(rss) * 1024 / budget, pieces,
           ", stopped at the limit" if w >= limit else ""))
PY
	[ "$img" = "$work/scale.img" ] && rm -f "$img" "$img.json"
done
