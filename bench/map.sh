#!/bin/sh
# bench/map.sh [IMAGE...] --- e2fragmap at scale: its first screen against
# e2frag's report on the same image, how long it takes to answer each key,
# and its peak memory against the memory budget (200 bytes per inode
# in use plus 32 per piece).  Not a test: the figures go to bench/README.md.
#
# Without IMAGE it builds ext3 images of an untarred tree of 200,000 and
# 2,000,000 files with e2fragimg (sparse, under $BENCH_DIR or $TMPDIR, at
# nice 10), measures each and deletes it (the second takes some 40 GB of
# disk for a few minutes).  With IMAGEs (bench/scale.sh calls it so) it
# measures those and leaves them alone.  Run from the build tree after
# make.
#
# First screen: bench/measure.py runs `e2fragmap IMAGE` in a 160x50
# pseudo-terminal (script(1)) with q already typed, so that it draws the
# map, reads the q and leaves, and `e2frag IMAGE`, alternately, five times
# each after a warming run, and prints the median wall times and their
# ratio (target: at most 1.5x) and peak RSS.  Keys: bench/mapkeys.py types
# a fixed sequence and prints e2fragmap's own timings (E2FRAGMAP_KEYLOG):
# from reading each key to the screen drawn for it (target: 100 ms).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
map=$top/tui/e2fragmap
frag=$top/analyze/e2frag
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/e2frag-bench}
runs=${BENCH_RUNS:-5}
# The interpreter itself, not a shim that finds it (pyenv's takes seconds
# on a loaded machine).
py=$(python3 -c 'import sys; print(sys.executable)')

# A file name in IMG, for the key sequence: the first one debugfs lists
# going down the first directories.
some_name() {
	d=/ i=0
	while [ $i -lt 10 ]; do
		ls=$(debugfs -R "ls -p $d" "$1" 2>/dev/null | awk -F/ '$6 != "." && $6 != ".." && $6 != "lost+found" && $6 != ""')
		f=$(printf '%s\n' "$ls" | awk -F/ '$3 ~ /^0?10/ { print $6; exit }')
		[ -n "$f" ] && { echo "$f"; return; }
		sub=$(printf '%s\n' "$ls" | awk -F/ '$3 ~ /^0?4/ { print $6; exit }')
		[ -n "$sub" ] || break
		d=${d%/}/$sub i=$((i + 1))
	done
	echo no-such-name
}

measure() {
	img=$1
	inodes=$(dumpe2fs -h "$img" 2>/dev/null | awk -F: '/^Inode count/ { n = $2 } /^Free inodes/ { f = $2 } END { print n - f }')
	pieces=$("$frag" "$img" 2>/dev/null | sed -n 's/^ *\([0-9]*\) pieces where .*/\1/p')
	echo "== $img: $inodes inodes in use, $pieces pieces"
	echo "-- first screen (e2fragmap, q typed ahead) against e2frag's report, $runs runs each"
	printf q > "$dir/map-q"
	python3 "$top/bench/measure.py" "$runs" \
		"e2fragmap=script -qec 'stty cols 160 rows 50; exec env TERM=xterm NO_COLOR=1 $map $img' /dev/null < $dir/map-q" \
		"e2frag=$frag $img"
	name=$(some_name "$img")
	echo "-- keys (ms from reading the key to the screen drawn for it), searching for '$name'"
	/usr/bin/time -o "$dir/map-rss" -f %M "$py" "$top/bench/mapkeys.py" keys "$map" "$img" \
		+ + + + - - - - j l Down PgDn PgDn g 1 Enter Home \
		/ "$name" Enter / '*.c' Enter Enter n n N m Esc \
		/ '/*/*.h' Enter Esc / no-such-file Enter \
		Enter q L Esc w q i Esc c
	rss=$(cat "$dir/map-rss")
	echo "-- peak RSS with the names read, searched and listed: $rss KiB;" \
	     "budget 200 B x $inodes + 32 B x $pieces = $(( (200 * inodes + 32 * pieces) / 1024 )) KiB"
}

mkdir -p "$dir"
if [ $# -gt 0 ]; then
	for img; do measure "$img"; done
	exit 0
fi
for files in 200000 2000000; do
	img=$dir/map-tree-$files.img
	# Some 20 kB a file lands on disk: do not fill it for everyone else.
	avail=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
	if [ "$avail" -lt $((files * 20 + 4 * 1024 * 1024)) ]; then
		echo "skipping $files files: $((avail / 1024)) MiB free in $dir, $((files * 20 / 1024)) MiB needed"
		continue
	fi
	echo "building $img ..."
	nice -n 10 "$top/images/e2fragimg" --workload tree --type ext3 --files "$files" \
		--seed 1 -q "$img"
	measure "$img"
	rm -f "$img" "$img.json"
done
rm -f "$dir/map-rss" "$dir/map-q"
