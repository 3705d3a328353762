#!/bin/sh
# bench/defrag.sh [DIR] --- e2defrag on a 2 GiB aged PVR image (90% full,
# e2fragimg --workload aged) and a 2 GiB image of 4 concurrent recorders
# (--workload streams, 4 x 200 MiB: each fits a zone), both ext4 unless E2DEFRAG_BENCH_TYPE says
# otherwise.  For each, in one run on the same disk:
#   - bytes moved per second, against dd copying the same number of bytes
#     (same directory, same block size, fsync at the end; target >= 0.7x);
#   - write amplification: bytes written / bytes of the files that needed
#     moving (target <= 1.5);
#   - modeled read time after, against the ideal (target within 2%).
# Then e4defrag on a copy of the aged image mounted on a loop device
# (root only; skipped when mounting is impossible), against e2defrag on
# another copy: avoidably fragmented files left (per e2frag) and wall time.
# Then e2defrag with and without --verify on the streams image (alone,
# on a 1 GiB image, with VERIFY_ONLY=1; see bench_verify).
# Then the near-full recordings disks (e2fragimg -w nearfull,
# 2 GiB, 90% and 95% full, ext2/ext3/ext4; see bench_nearfull), also alone
# with NEARFULL_ONLY=1; NEARFULL_IMAGES="IMG..." measures given images instead.
# Then disks where a recording is larger than the free space (see
# bench_bigfile), also alone with BIGFILE_ONLY=1.
# Run from the build tree after make.  Needs about 10 GiB under DIR.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BENCH_DIR:-${TMPDIR:-/tmp}/e2defrag-bench}}
type=${E2DEFRAG_BENCH_TYPE:-ext4}
mkdir -p "$dir"
PATH=$top/defrag:$top/analyze:$top/images:$PATH:/sbin:/usr/sbin
export PATH LC_ALL=C

now() { python3 -c 'import time; print("%.3f" % time.monotonic())'; }

# field JSON EXPR: a figure out of a JSON file (j is the document).
field() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# ddrate BYTES: MB/s of dd copying BYTES within DIR, fsync'd, in 8 MiB blocks.
ddrate() {
	bytes=$1
	head -c "$bytes" /dev/urandom > "$dir/dd.src" 2>/dev/null || true
	cat "$dir/dd.src" > /dev/null
	t0=$(now)
	dd if="$dir/dd.src" of="$dir/dd.dst" bs=8M conv=fsync status=none
	t1=$(now)
	rm -f "$dir/dd.src" "$dir/dd.dst"
	python3 -c "print('%.1f' % ($bytes / 1e6 / ($t1 - $t0)))"
}

# freefrag IMG: "N extents, largest S", per e2freefrag (the peer's own figures).
freefrag() {
	e2freefrag "$1" 2>/dev/null | awk '/^Num. free extent:/ { n = $4 }
		/^Max. free extent:/ { m = $4 }
		END { printf "%d extents, largest %.1f MiB\n", n, m / 1024 }'
}

bench_one() {
	name=$1
	shift
	img=$dir/$name.img
	if [ ! -f "$dir/$name.orig" ]; then
		echo "building $name: e2fragimg $*"
		e2fragimg -q -t "$type" "$@" "$dir/$name.orig"
	fi
	cp "$dir/$name.orig" "$img"
	free0=$(freefrag "$img")
	cat "$img" > /dev/null
	t0=$(now)
	e2defrag --json "$img" > "$dir/$name.json" || true
	t1=$(now)
	e2fsck -fn "$img" > /dev/null 2>&1 || echo "$name: e2fsck -fn NOT CLEAN"
	e2frag --json "$img" > "$dir/$name.after.json" || true
	wall=$(python3 -c "print('%.2f' % ($t1 - $t0))")
	written=$(field "$dir/$name.json" 'j["result"]["bytes_written"]')
	needed=$(field "$dir/$name.json" 'j["plan"]["bytes_needing_move"]')
	movesec=$(field "$dir/$name.json" 'j["result"]["seconds"]')
	ours=$(python3 -c "print('%.1f' % ($written / 1e6 / $wall))")
	ours_move=$(python3 -c "print('%.1f' % ($written / 1e6 / $movesec))")
	dd=$(ddrate "$written")
	wa=$(python3 -c "print('%.3f' % ($written / $needed))")
	read=$(field "$dir/$name.after.json" 'j["summary"]["modeled_read_seconds"]')
	ideal=$(field "$dir/$name.after.json" 'j["summary"]["ideal_read_seconds"]')
	before=$(field "$dir/$name.json" 'j["plan"]["read_seconds_before"]')
	left=$(field "$dir/$name.after.json" 'j["summary"]["avoidably_fragmented_files"]')
	sets=$(field "$dir/$name.after.json" 'j["summary"]["interleave_sets"]')
	echo "$name: e2defrag $wall s wall (move phase $movesec s), $(python3 -c "print('%.0f' % ($written / 2**20))") MiB written"
	echo "  rate: e2defrag $ours MB/s (move phase $ours_move MB/s), dd $dd MB/s: $(python3 -c "print('%.2f' % ($ours / $dd))")x (move phase $(python3 -c "print('%.2f' % ($ours_move / $dd))")x)"
	echo "  write amplification: $wa ($(python3 -c "print('%.0f' % ($needed / 2**20))") MiB of files needed moving)"
	echo "  modeled read time: $before s before, $read s after, ideal $ideal s: $(python3 -c "print('%.2f' % (100 * ($read / $ideal - 1)))")% over ideal"
	echo "  left: $left avoidably fragmented files, $sets interleave sets"
	echo "  free space (e2freefrag): $free0 -> $(freefrag "$img"); $(field "$dir/$name.json" '"%.1f" % (j["plan"]["bytes_to_consolidate"] / 2**20)') MiB written to join it"
}

# selected_bytes JSON: bytes of the files a default run selects (avoidably
# fragmented or interleaved), per e2frag --json before the run.
selected_bytes() {
	field "$1" 'sum(f["blocks"] for f in j["files"] if f["type"] in ("file", "dir") and (f["pieces"] > f["best"] or f.get("interleaved_with"))) * j["filesystem"]["block_size"]'
}

# written JSON: bytes an e2defrag --json run wrote (0: it moved nothing).
written() { field "$1" 'j["result"]["bytes_written"] if j["result"] else 0'; }

# bench_nearfull NAME E2FRAGIMG-ARGS...: the near-full figures (measure_nearfull)
# on a near-full disk made as today's kernel fills it (e2fragimg -w nearfull).
# One image at a time: the disk may be short of room.
bench_nearfull() {
	name=$1
	shift
	echo "building $name: e2fragimg $*"
	nice -n 10 e2fragimg -q "$@" "$dir/$name.img"
	measure_nearfull "$name" "$dir/$name.img"
	rm -f "$dir/$name.img"
}

# measure_nearfull NAME IMG: files left not at best after one run (target
# 0), runs until a run leaves the image byte-identical (cmp; target 1),
# bytes written by the first run over the bytes of the files that needed
# moving (target <= 1.5), free runs and largest before and after
# (e2freefrag), the first run's rate against dd on the same bytes (target
# >= 0.7x).  IMG is written; $E2DEFRAG_OPTS go to every run (-f for an
# image the kernel mounted).
measure_nearfull() {
	name=$1 img=$2
	opts=${E2DEFRAG_OPTS:-}
	e2frag --json "$img" > "$dir/$name.before.json" || true
	sel=$(selected_bytes "$dir/$name.before.json")
	free0=$(freefrag "$img")
	# The promise's condition, from dumpe2fs and debugfs (the test's oracle):
	# whether every selected file can reach its best, and how many can.
	nf="python3 $top/tests/cli/defrag-nearfull.py"
	room=$($nf room "$img" "$dir/$name.before.json" 2>/dev/null || echo unknown)
	most=$($nf most "$img" "$dir/$name.before.json" 2>/dev/null || echo '?')
	cat "$img" > /dev/null
	t0=$(now)
	# shellcheck disable=SC2086
	e2defrag $opts --json "$img" > "$dir/$name.run1.json" 2> "$dir/$name.run1.err" || true
	t1=$(now)
	w1=$(written "$dir/$name.run1.json")
	e2frag --json "$img" > "$dir/$name.after.json" || true
	left=$(field "$dir/$name.after.json" 'j["summary"]["avoidably_fragmented_files"]')
	sets=$(field "$dir/$name.after.json" 'j["summary"]["interleave_sets"]')
	free1=$(freefrag "$img")
	# A run that changes nothing leaves every byte of the image as it was.
	runs=1 wlater=0 same=no
	while [ "$runs" -lt 4 ]; do
		cp --sparse=always "$img" "$dir/$name.prev"
		# shellcheck disable=SC2086
		e2defrag $opts --json "$img" > "$dir/$name.again.json" 2>/dev/null || true
		w=$(written "$dir/$name.again.json")
		if cmp -s "$img" "$dir/$name.prev"; then
			same=yes
			break
		fi
		runs=$((runs + 1))
		wlater=$((wlater + w))
	done
	rm -f "$dir/$name.prev"
	[ "$same" = yes ] || runs=">4"
	left_end=$(e2frag --json "$img" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["avoidably_fragmented_files"])')
	e2fsck -fn "$img" > /dev/null 2>&1 || echo "$name: e2fsck -fn NOT CLEAN"
	wall=$(python3 -c "print('%.2f' % ($t1 - $t0))")
	if [ "$w1" -gt 0 ]; then
		dd=$(ddrate "$w1")
		rate="e2defrag $(python3 -c "print('%.1f' % ($w1 / 1e6 / $wall))") MB/s, dd $dd MB/s: $(python3 -c "print('%.2f' % ($w1 / 1e6 / $wall / $dd))")x"
	else
		rate="nothing written"
	fi
	echo "$name: first run $wall s, exit $(field "$dir/$name.run1.json" 'j["exit_status"]'), $(field "$dir/$name.run1.json" 'j["plan"]["files_selected"]') files selected, $(field "$dir/$name.before.json" 'j["summary"]["avoidably_fragmented_files"]') avoidably fragmented before"
	echo "  the promise's condition (tests/cli/defrag-nearfull.py): $room; at most $most can reach their best"
	echo "  not at best after one run: $left (interleave sets $sets); runs until one leaves the image byte-identical: $runs (later runs wrote $(python3 -c "print('%.0f' % ($wlater / 2**20))") MiB, $left_end left at the end)"
	echo "  written / needing a move: $(python3 -c "print('%.2f' % ($w1 / $sel if $sel else 0))") ($(python3 -c "print('%.0f' % ($w1 / 2**20))") MiB for $(python3 -c "print('%.0f' % ($sel / 2**20))") MiB of selected files)"
	echo "  free space (e2freefrag): $free0 -> $free1"
	echo "  rate: $rate"
}

# bench_verify NAME E2FRAGIMG-ARGS...: e2defrag with and without --verify
# on two copies of one image, in one run: bytes written per second of the
# move phase and of the whole run, and what --verify costs (its reads go
# to the disk past the page cache, O_DIRECT).
bench_verify() {
	name=$1
	shift
	if [ ! -f "$dir/$name.orig" ]; then
		echo "building $name: e2fragimg $*"
		nice -n 10 e2fragimg -q -t "$type" "$@" "$dir/$name.orig"
	fi
	for mode in plain verify; do
		cp "$dir/$name.orig" "$dir/$name.$mode.img"
		cat "$dir/$name.$mode.img" > /dev/null
		opt=
		[ $mode = verify ] && opt=--verify
		t0=$(now)
		e2defrag $opt --json "$dir/$name.$mode.img" > "$dir/$name.$mode.json" || true
		t1=$(now)
		e2fsck -fn "$dir/$name.$mode.img" > /dev/null 2>&1 || echo "$name $mode: e2fsck -fn NOT CLEAN"
		rm -f "$dir/$name.$mode.img"
		eval "wall_$mode=\$(python3 -c \"print('%.2f' % ($t1 - $t0))\")"
		eval "move_$mode=\$(field \"\$dir/\$name.\$mode.json\" 'j[\"result\"][\"seconds\"]')"
		eval "written_$mode=\$(field \"\$dir/\$name.\$mode.json\" 'j[\"result\"][\"bytes_written\"]')"
	done
	# shellcheck disable=SC2154
	python3 - "$name" "$written_plain" "$wall_plain" "$move_plain" \
		"$written_verify" "$wall_verify" "$move_verify" <<'PY'
import sys
name = sys.argv[1]
wp, ap, mp, wv, av, mv = map(float, sys.argv[2:])
print("%s: %.0f MiB written" % (name, wp / 2**20))
print("  without --verify: %.2f s wall, move phase %.2f s: %.1f MB/s (move phase %.1f MB/s)"
      % (ap, mp, wp / 1e6 / ap, wp / 1e6 / mp))
print("  with --verify:    %.2f s wall, move phase %.2f s: %.1f MB/s (move phase %.1f MB/s)"
      % (av, mv, wv / 1e6 / av, wv / 1e6 / mv))
print("  --verify: move phase %.2fx as long, throughput %.2fx" % (mv / mp, (wv / mv) / (wp / mp)))
PY
}

if [ -n "${VERIFY_ONLY:-}" ]; then
	bench_verify streams4-1g -w streams --streams 4 --total 400M -s 1G --seed 1
	exit 0
fi

# NEARFULL_IMAGES="IMG...": measure_nearfull on a copy of each (the disks
# bench/kernel-aged.sh has the kernel write), then stop.
if [ -n "${NEARFULL_IMAGES:-}" ]; then
	for src in $NEARFULL_IMAGES; do
		name=$(basename "$src" .img)
		cp --sparse=always "$src" "$dir/$name.img"
		measure_nearfull "$name" "$dir/$name.img"
		[ -n "${KEEP:-}" ] || rm -f "$dir/$name.img"
	done
	exit 0
fi

# bench_bigfile: the near-full figures on disks where a recording is larger
# than all the free space, two or three recordings written side by side
# into the holes of deleted ones (tests/cli/defrag-bigfile.sh's shapes,
# four times the size): ext2 1 KiB, ext3 1 and 4 KiB, ext4 1 KiB with and
# without flex_bg, built by e2fragimg and (root only) written by the
# kernel.  A file rebuilt where others step aside may take up to 2x its
# bytes (REBUILD_AMPLIFICATION), every other file 1.5x.
bigfile_cases="nearfull ext2 1024 128M 96 -S 2 --streams 2
nearfull ext3 1024 128M 93 -S 1 --streams 2
nearfull ext3 4096 256M 93 -S 1 --streams 2
nearfull ext4 1024 128M 90 -S 3 --streams 2
nearfull ext4 1024 128M 93 -S 1 --streams 2 --no-flex-bg
nearfull ext4 1024 128M 96 -S 1 --streams 3 --no-flex-bg"
bench_bigfile() {
	echo "$bigfile_cases" | while read -r w t bs size fill extra; do
		# shellcheck disable=SC2086
		bench_nearfull "bigfile-$t-$bs-$fill$(echo $extra | tr -d ' -')" \
			-w "$w" --fill "$fill" -t "$t" -b "$bs" -s "$size" $extra
	done
	# The same shapes written by the kernel: e2fragimg's operations
	# replayed on a loop mount (bench/kernel-nearfull.sh; root only).
	if [ "$(id -u)" -ne 0 ]; then
		echo "kernel-written disks: skipped (needs root for loop mounts)"
		return 0
	fi
	kdir=$dir/kernel-bigfile
	mkdir -p "$kdir"
	CASES=$bigfile_cases BUILD_ONLY=1 sh "$top/bench/kernel-nearfull.sh" "$kdir" \
		> "$kdir/build.log" 2>&1 || { cat "$kdir/build.log"; return 0; }
	grep -i 'failed\|not clean' "$kdir/build.log" || true
	saved=${E2DEFRAG_OPTS:-}
	E2DEFRAG_OPTS="$saved -f"	# the kernel mounted them
	for k in "$kdir"/*.kernel.img; do
		[ -f "$k" ] || continue
		measure_nearfull "kernel-$(basename "$k" .kernel.img)" "$k"
		rm -f "$k"
	done
	E2DEFRAG_OPTS=$saved
}

if [ -n "${BIGFILE_ONLY:-}" ]; then
	bench_bigfile
	exit 0
fi

if [ -n "${NEARFULL_ONLY:-}" ]; then
	for t in ext2 ext3 ext4; do
		for fill in 90 95; do
			bench_nearfull "nearfull-$t-$fill" -w nearfull -t "$t" -s 2G --fill "$fill" --seed 1
		done
	done
	exit 0
fi

bench_one aged -w aged -s 2G --seed 1
bench_one streams4 -w streams --streams 4 --total 800M -s 2G --seed 1
bench_verify streams4 -w streams --streams 4 --total 800M -s 2G --seed 1
for t in ext2 ext3 ext4; do
	for fill in 90 95; do
		bench_nearfull "nearfull-$t-$fill" -w nearfull -t "$t" -s 2G --fill "$fill" --seed 1
	done
done
bench_bigfile

# e4defrag on a loop mount of the same aged image.
if [ "$(id -u)" -ne 0 ] || ! command -v e4defrag >/dev/null 2>&1 || [ "$type" != ext4 ]; then
	echo "e4defrag: skipped (needs root, e4defrag and ext4)"
	exit 0
fi
cp "$dir/aged.orig" "$dir/e4.img"
mkdir -p "$dir/mnt"
if ! mount -o loop "$dir/e4.img" "$dir/mnt" 2>/dev/null; then
	echo "e4defrag: skipped (cannot mount a loop device)"
	exit 0
fi
t0=$(now)
e4defrag "$dir/mnt" > "$dir/e4defrag.out" 2>&1 || true
sync
t1=$(now)
umount "$dir/mnt"
e4wall=$(python3 -c "print('%.2f' % ($t1 - $t0))")
e2fsck -fn "$dir/e4.img" > /dev/null 2>&1 || echo "e4defrag: e2fsck -fn not clean"
e2frag --json "$dir/e4.img" > "$dir/e4.after.json" || true
e4left=$(field "$dir/e4.after.json" 'j["summary"]["avoidably_fragmented_files"]')
e4sets=$(field "$dir/e4.after.json" 'j["summary"]["interleave_sets"]')
e4read=$(field "$dir/e4.after.json" 'j["summary"]["modeled_read_seconds"]')

cp "$dir/aged.orig" "$dir/e2.img"
cat "$dir/e2.img" > /dev/null
t0=$(now)
e2defrag "$dir/e2.img" > /dev/null 2>&1 || true
sync
t1=$(now)
e2wall=$(python3 -c "print('%.2f' % ($t1 - $t0))")
e2frag --json "$dir/e2.img" > "$dir/e2.after.json" || true
e2left=$(field "$dir/e2.after.json" 'j["summary"]["avoidably_fragmented_files"]')
e2read=$(field "$dir/e2.after.json" 'j["summary"]["modeled_read_seconds"]')
total=$(field "$dir/aged.json" 'j["plan"]["files_selected"]')
echo "e4defrag vs e2defrag on the aged image ($total files avoidably fragmented before):"
echo "  e4defrag: $e4wall s, $e4left avoidably fragmented files left, $e4sets interleave sets, modeled read $e4read s, free $(freefrag "$dir/e4.img")"
echo "  e2defrag: $e2wall s, $e2left avoidably fragmented files left, modeled read $e2read s, free $(freefrag "$dir/e2.img")"
echo "  time ratio e2defrag/e4defrag: $(python3 -c "print('%.2f' % ($e2wall / $e4wall))")x"
rm -f "$dir/e4.img" "$dir/e2.img" "$dir/aged.img" "$dir/streams4.img"
