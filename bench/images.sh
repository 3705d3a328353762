#!/bin/sh
# bench/images.sh [DIR] --- how fast e2fragimg builds the big images the
# issue asks for: a 200,000-file tree (target: 30 s) and a 4 GiB streams
# image (target: 20 s), on ext4 and ext3, plus the aged and mixed
# defaults; with e2fsck -fn on each image for scale.  Images go to DIR
# (default $TMPDIR or /tmp) one at a time and are removed after.
# Run from the build tree (uses images/e2fragimg) after `make`.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
img_bin=${E2FRAGIMG:-$here/images/e2fragimg}
dir=${1:-${TMPDIR:-/tmp}}
out=$dir/bench-e2fragimg.$$.img
trap 'rm -f "$out" "$out.json"' EXIT INT TERM

[ -x "$img_bin" ] || { echo "build first: $img_bin not found" >&2; exit 1; }
now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.1f", $2 - $1 }'; }

echo "e2fragimg benchmark, $(date -u +%Y-%m-%d), $(nproc) CPUs" \
	"($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %8s %9s %8s %9s\n' "image" "build s" "written" "MB/s" "fsck -fn s"

run() {
	label=$1
	shift
	rm -f "$out" "$out.json"
	sync
	t0=$(now)
	if ! "$img_bin" -q "$@" "$out"; then
		echo "$label: e2fragimg failed" >&2
		return
	fi
	t1=$(now)
	written=$(du -k "$out" | cut -f1)
	e2fsck -fn "$out" >/dev/null 2>&1
	rc=$?
	t2=$(now)
	mb=$(echo "$written" | awk '{ printf "%.0f", $1 / 1024 }')
	rate=$(echo "$mb $t0 $t1" | awk '{ printf "%.0f", $1 / ($3 - $2) }')
	fsck=$(secs "$t1" "$t2")
	[ "$rc" -eq 0 ] || fsck="$fsck (rc $rc!)"
	printf '%-44s %8s %7s M %8s %9s\n' "$label" "$(secs "$t0" "$t1")" "$mb" "$rate" "$fsck"
}

run "streams 4G, ext4 (target 20 s)" --workload streams --total 4G
run "streams 4G, ext3 (target 20 s)" --workload streams --type ext3 --total 4G
run "tree 200,000 files, ext4 (target 30 s)" --workload tree --files 200000
run "tree 200,000 files, ext3 (target 30 s)" --workload tree --type ext3 --files 200000
run "parallel-writers 4G, ext4" --workload parallel-writers --total 4G
run "aged 512M (default), ext4" --workload aged
run "mixed 128M (make demo), ext4" --workload mixed
