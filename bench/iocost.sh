#!/bin/sh
# bench/iocost.sh [DISK...] --- e2defrag's own I/O on a rotating disk
# (issue 22): every read, write and flush of a real run, traced with
# strace, costed by bench/iocost.py on the model e2frag uses for read time
# (7200 rpm, 120 MB/s, 8.5 ms seek growing with the distance over the
# whole image, half a rotation per jump; the page cache serves what was
# read or written before; writes go out in block order at each flush),
# against the limit of reading once and writing once, sequentially, the
# bytes the run wrote (e2defrag -J's bytes_written: the copies and the new
# mapping blocks; the journal and the metadata written in place are the
# overhead judged, not counted in the limit).
#
# Per disk: moves (e2defrag -J); the moves that write into blocks a move
# since the last such one released (the commits any batching of this plan
# must make); flushes (fsync calls on the image, and in brackets those
# with writes to make durable: libext2fs fsyncs each open); bytes
# read from and written to the disk by the model, modeled seconds (the
# whole run: scan, plan, moves), the limit, the ratio, flushes per 32 MiB
# written; the floor (iocost.py --plan: reading the blocks that the
# files the plan defragments cannot keep where they are, at the least any
# order of reads costs, and writing the run's bytes once; the scan is not
# counted; above 2x the limit, no run that defragments those files
# writing no more meets the 2x target on that disk); then the run again,
# untraced, on a fresh copy in the page cache, against `dd bs=8M
# conv=fsync` writing as many bytes in the same directory (rate ratio:
# bytes/s of e2defrag's whole run over dd's; the fastest of
# PAGECACHE_RUNS, default 3, of each).
#
# Disks (default all but ktree200k):
#   ktree       kernel-written: 25,000 files of 1-16 KiB into 625
#               directories, ext3 1 GiB, every 20th file written together
#               with the next (bench/kerneltree.py)
#   kmanifest   kernel-written: e2fragimg's kernel-tree of 25,000 files
#               (sizes log-normal around 8 KiB, up to 256 KiB) written one
#               after another into 625 random directories, ext3 1 GiB
#               (bench/kernel-tree.sh)
#   ktree200k   as ktree with 200,000 files in 5,000 directories, 8 GiB
#               (slow: tens of minutes traced)
#   pvr         kernel-written aged PVR disk, ext2 2 GiB, recorders into
#               the holes of deleted recordings (bench/kernel-aged.sh)
#   recordings  kernel-written, recordings larger than the free space,
#               ext3 2 GiB 92% full (bench/kernel-nearfull.sh's nearfull)
#   img-nearfull img-streams img-tree img-aged img-ktree
#               e2fragimg's workloads, ext4 (nearfull 2 GiB 90%, streams
#               4 x 200 MiB round robin on 2 GiB, tree of 24,353 files,
#               aged 2 GiB) and its model of kmanifest (kernel-tree, ext3,
#               25,000 files)
#
# Images are built once into DIR (BENCH_DIR, default $TMPDIR/iocost) as
# NAME.orig and used again by later runs (REBUILD=1 builds them anew);
# each run works on a copy.  KEEP_TRACE=1 keeps the traces and iocost.py's
# per-move file (NAME.moves.json); E2DEFRAG_OPTIONS are added to each
# e2defrag run (--buffer 64M, say).  Root only (loop mounts); run from the
# build tree after make.  Needs about 10 GiB under DIR (20 with tree200k).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/iocost}
PATH=$top/defrag:$top/analyze:$top/images:$PATH:/sbin:/usr/sbin
export PATH LC_ALL=C
E2DEFRAG_OPTIONS=${E2DEFRAG_OPTIONS:-}
disks=${*:-"ktree kmanifest pvr recordings img-nearfull img-streams img-tree img-aged img-ktree"}
syscalls=openat,open,close,dup,dup2,dup3,lseek,read,write,pread64,pwrite64
syscalls=$syscalls,preadv,pwritev,preadv2,pwritev2,fsync,fdatasync,sync,syncfs
syscalls=$syscalls,sync_file_range,fadvise64,readahead,ioctl,fallocate

if [ "$(id -u)" -ne 0 ]; then
	echo "iocost: needs root for loop mounts" >&2
	exit 77
fi
command -v strace > /dev/null || { echo "iocost: needs strace" >&2; exit 77; }
mkdir -p "$dir"

now() { python3 -c 'import time; print("%.3f" % time.monotonic())'; }

# build NAME: DIR/NAME.orig, by the bench script that makes that disk.
build() {
	orig=$dir/$1.orig
	[ -z "${REBUILD:-}" ] && [ -f "$orig" ] && return 0
	echo "building $1"
	case $1 in
	ktree)
		nice python3 "$top/bench/kerneltree.py" "$orig" 1 25000 625 1 20 ;;
	kmanifest)
		KERNEL_TREE_TYPES=ext3 KERNEL_TREE_KEEP=$dir BENCH_DIR=$dir \
			nice sh "$top/bench/kernel-tree.sh" 25000 > /dev/null
		mv "$dir/kernel-ext3.img" "$orig" ;;
	ktree200k)
		nice python3 "$top/bench/kerneltree.py" "$orig" 8 200000 5000 1 20 ;;
	pvr)
		TYPES=ext2 BUILD_ONLY=1 nice sh "$top/bench/kernel-aged.sh" "$dir/pvr.build"
		mv "$dir/pvr.build/kernel/aged-ext2-4096.img" "$orig"
		rm -rf "$dir/pvr.build" ;;
	recordings)
		CASES="nearfull ext3 4096 2G 92" BUILD_ONLY=1 \
			nice sh "$top/bench/kernel-nearfull.sh" "$dir/recordings.build"
		mv "$dir/recordings.build/nearfull-ext3-4096-2G-92.kernel.img" "$orig"
		rm -rf "$dir/recordings.build" ;;
	img-nearfull)
		nice e2fragimg -q -w nearfull -t ext4 -s 2G --fill 90 -S 1 "$orig" ;;
	img-streams)
		nice e2fragimg -q -w streams -t ext4 --streams 4 --total 800M -s 2G -S 1 "$orig" ;;
	img-tree)
		nice e2fragimg -q -w tree -t ext4 -S 1 "$orig" ;;
	img-aged)
		nice e2fragimg -q -w aged -t ext4 -s 2G -S 1 "$orig" ;;
	img-ktree)
		nice e2fragimg -q -w kernel-tree -t ext3 --files 25000 -S 1 "$orig" ;;
	*)
		echo "iocost: no disk named $1" >&2
		exit 16 ;;
	esac
	rm -f "$orig.json"
}

# measure NAME: the traced run, its cost, the untraced run and dd.
measure() {
	name=$1 orig=$dir/$1.orig img=$dir/run.img
	cp --sparse=always "$orig" "$img"
	# -f: the kernel's images were mounted since their last check.
	# -C 9: the progress lines mark where the move phase starts.
	nice strace -f -qq -s 8 -e trace=$syscalls -o "$dir/$name.strace" \
		e2defrag -f -J -C 9 $E2DEFRAG_OPTIONS "$img" > "$dir/$name.json" 2> "$dir/$name.err" 9> /dev/null || true
	e2fsck -fn "$img" > /dev/null 2>&1 || echo "$name: e2fsck -fn NOT CLEAN after the run"
	# What e2defrag -n says the moves will take on the modeled disk.
	e2defrag -f -n -J $E2DEFRAG_OPTIONS "$orig" > "$dir/$name.plan.json" 2> /dev/null || true
	moves=
	[ -z "${KEEP_TRACE:-}" ] || moves="--moves $dir/$name.moves.json"
	# shellcheck disable=SC2086
	nice python3 "$top/bench/iocost.py" --traced "$img" --progress-fd 9 --result "$dir/$name.json" \
		--plan "$dir/$name.plan.json" $moves "$dir/$name.strace" "$orig" > "$dir/$name.cost.json"
	[ -n "${KEEP_TRACE:-}" ] || rm -f "$dir/$name.strace"

	# The page-cache runs, each PAGECACHE_RUNS times (default 3), the
	# fastest of each kept: a second on these machines varies by half.
	bytes=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bytes_written"] or 0)' "$dir/$name.cost.json")
	head -c "$bytes" /dev/urandom > "$dir/dd.src"
	sync "$dir/dd.src"
	times=
	i=0
	while [ "$i" -lt "${PAGECACHE_RUNS:-3}" ]; do
		# The copy made durable first, as a disk is: else the run's
		# first fsync (libext2fs', as it opens the device) writes
		# back the whole copy (img-streams: 0.6 s of 2.6 s).
		cp --sparse=always "$orig" "$img"
		sync "$img"
		cat "$img" > /dev/null
		t0=$(now)
		e2defrag -f -J $E2DEFRAG_OPTIONS "$img" > "$dir/$name.wall.json" 2> /dev/null || true
		t1=$(now)
		rm -f "$img"
		cat "$dir/dd.src" > /dev/null
		t2=$(now)
		dd if="$dir/dd.src" of="$dir/dd.dst" bs=8M conv=fsync status=none
		t3=$(now)
		rm -f "$dir/dd.dst"
		times="$times $t0 $t1 $t2 $t3"
		i=$((i + 1))
	done
	rm -f "$dir/dd.src"
	# shellcheck disable=SC2086
	python3 - "$dir/$name.cost.json" $times <<'PY'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
t = list(map(float, sys.argv[2:]))
runs = [t[i:i + 4] for i in range(0, len(t), 4)]
c["wall_seconds"] = min(t1 - t0 for t0, t1, _, _ in runs)
c["dd_seconds"] = min(t3 - t2 for _, _, t2, t3 in runs)
json.dump(c, open(p, "w"), indent=1)
PY
}

# row NAME: one line of the table.
row() {
	python3 - "$1" "$dir/$1.cost.json" "$dir/$1.json" "$dir/$1.plan.json" <<'PY'
import json, sys
name, c, j = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
try:
    est = json.load(open(sys.argv[4]))["plan"]["estimated_seconds"]
except (OSError, ValueError, KeyError, TypeError):
    est = None
fs = j["filesystem"]
MiB = 2 ** 20
w = c["bytes_written"] or 0
rate = "%.2f s / %.2f s: %.2fx" % (c["wall_seconds"], c["dd_seconds"],
                                   c["dd_seconds"] / c["wall_seconds"]) if w else "-"
size = fs["blocks"] * fs["block_size"]
size = "%.0f GiB" % (size / 2**30) if size >= 2**30 else "%.0f MiB" % (size / MiB)
# The estimate covers the moves: beside the modeled moves (the whole run
# less its scan and plan).
moves_s = c["modeled_seconds"] - c["scan_seconds"]
estimate = "%.1f s / %.1f s: %.2fx" % (est, moves_s, est / moves_s) \
    if est is not None and moves_s > 0 else "-"
floor = "%.1f s: %.1fx" % (c["floor_seconds"], c["floor_ratio"]) \
    if w and c.get("floor_ratio") is not None else "-"
print("| %s (%s %s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
    name, fs["type"], size,
    format(c["moves"], ","), format(c["forced_reuses"], ","),
    "%s (%s)" % (format(c["flushes"], ","), format(c["flushes_writing"], ",")),
    "%.1f" % c["flushes_per_32mib"] if w else "-",
    "%.0f MiB" % (c["disk_bytes_read"] / MiB), "%.0f MiB" % (w / MiB),
    "%.1f s (%.1f s)" % (c["modeled_seconds"], c["scan_seconds"]),
    "%.1f s" % c["limit_seconds"], "%.1fx" % c["ratio"] if w else "-", floor, rate,
    estimate))
PY
}

for d in $disks; do
	build "$d"
done
echo "$(e2defrag -V 2>&1 | head -1) ($(git -C "$top" describe --always --dirty 2>/dev/null || echo "no git")), kernel $(uname -r), $(nproc) CPUs, load $(cut -d" " -f1-3 /proc/loadavg)"
echo
echo "| disk | moves | forced reuses | flushes (writing) | flushes / 32 MiB | read | written | modeled (scan and plan) | limit | ratio | floor, its ratio to the limit | page cache: e2defrag / dd, rate | estimate (e2defrag -n) / modeled moves |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for d in $disks; do
	measure "$d"
	row "$d"
done
