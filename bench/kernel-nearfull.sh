#!/bin/sh
# bench/kernel-nearfull.sh [DIR] --- how close e2fragimg's near-full disks
# (--workload nearfull, turns; images/mballoc.c's model of the kernel's
# allocator) come to what the running kernel makes of the same workload.
#
# For each case: e2fragimg builds the model image and writes the workload's
# operations (--script: create, write, close, delete, sync; sizes, order
# and deletes from the seed).  A fresh filesystem of the same geometry
# (mke2fs with the model's block count, block size, blocks per group,
# inode count, inode size, features and journal size) is loop-mounted as
# its type (ext2 and ext3 without delayed allocation, as the kernel mounts
# them), the operations are replayed on it by one process (sync is
# sync(2)), and it is unmounted.  Then e2frag --json and e2defrag -n --json
# on both, side by side: files, fragmented, avoidably fragmented, pieces,
# best, interleave sets, free extents, largest free extent, and the plan's
# selected / best / partial / no room, bytes needing a move and to write.
#
# Root only (loop mounts); run from the build tree after make.  CASES may
# list "WORKLOAD TYPE BLOCKSIZE SIZE FILL [E2FRAGIMG-OPTIONS]" lines instead
# of the defaults (the options, e.g. "-S 2 --streams 2 --no-flex-bg", come
# last on e2fragimg's command line, and into the case's name).
# BUILD_ONLY=1 only builds: the kernel's image of each case is left as
# DIR/CASE.kernel.img, with no figures (bench/iocost.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BENCH_DIR:-${TMPDIR:-/tmp}/kernel-nearfull}}
PATH=$top/defrag:$top/analyze:$top/images:$PATH:/sbin:/usr/sbin
export PATH LC_ALL=C
seed=${SEED:-1}
cases=${CASES:-"nearfull ext2 1024 64M 90
nearfull ext3 1024 64M 90
nearfull ext4 1024 64M 90
nearfull ext3 4096 64M 95
nearfull ext4 4096 64M 95
turns ext2 1024 16M 85
turns ext3 1024 16M 85
turns ext4 1024 16M 85
turns ext4 4096 16M 85"}

if [ "$(id -u)" -ne 0 ]; then
	echo "kernel-nearfull: needs root for loop mounts" >&2
	exit 77
fi
mkdir -p "$dir"
mnt=$(mktemp -d "$dir/mnt.XXXXXX")
trap 'umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true' EXIT

# hdr IMG FIELD: a field of dumpe2fs -h.
hdr() { dumpe2fs -h "$1" 2>/dev/null | sed -n "s/^$2: *//p" | head -1; }

# mkfs_like MODEL OUT TYPE: a fresh filesystem of MODEL's geometry.
mkfs_like() {
	features=$(hdr "$1" 'Filesystem features' | tr ' ' ',')
	jopt=
	case $features in
	*has_journal*)
		jbytes=$(debugfs -R 'stat <8>' "$1" 2>/dev/null | sed -n 's/.*Size: \([0-9]*\).*/\1/p' | head -1)
		jopt="-J size=$((jbytes / 1048576))" ;;
	esac
	rm -f "$2"
	truncate -s "$(stat -c %s "$1")" "$2"
	# shellcheck disable=SC2086
	mke2fs -q -F -t "$3" -b "$(hdr "$1" 'Block size')" \
		-g "$(hdr "$1" 'Blocks per group')" -N "$(hdr "$1" 'Inode count')" \
		-I "$(hdr "$1" 'Inode size')" -O "none,$features" $jopt -m 5 \
		"$2" "$(hdr "$1" 'Block count')"
}

# replay OPS MNT: the operations, by one process (bench/replay.py).
replay() { python3 "$top/bench/replay.py" "$1" "$2"; }

# figures IMG: one line of the e2frag and e2defrag -n figures.
figures() {
	e2frag --json "$1" > "$1.frag.json" 2>/dev/null || true
	# -f: the kernel's image was mounted since its last check
	e2defrag -f -n --json "$1" > "$1.plan.json" 2>/dev/null || true
	python3 - "$1.frag.json" "$1.plan.json" <<'EOF'
import json, sys
f = json.load(open(sys.argv[1]))
s, fs, fr = f['summary'], f['filesystem'], f['free_space']
try:
    p = json.load(open(sys.argv[2]))['plan']
except (ValueError, KeyError):
    p = {}
used = 100 * (fs['blocks'] - fs['free_blocks']) / fs['blocks']
print('%4.1f%% %5d %5d %5d %6d %5d %4d %6d %8d | %4s %4s %4s %4s %6.1f %6.1f' % (
    used, s['files'], s['fragmented_files'], s['avoidably_fragmented_files'],
    s['pieces'], s['best_pieces'], s['interleave_sets'], fr['free_extents'],
    fr['largest_free_extent'], p.get('files_selected', '-'), p.get('files_best', '-'),
    p.get('files_partial', '-'), p.get('files_no_room', '-'),
    p.get('bytes_needing_move', 0) / 2**20, p.get('bytes_to_write', 0) / 2**20))
EOF
}

echo "kernel $(uname -r), seed $seed"
echo "case                            used files  frag avoid pieces  best sets freeEx  largest |  sel best part room needMiB writeMiB"
echo "$cases" | while read -r w t bs size fill extra; do
	[ -n "$w" ] || continue
	# shellcheck disable=SC2086
	name=$w-$t-$bs-$size-$fill${extra:+-$(echo $extra | tr -d ' -')}
	model=$dir/$name.model.img
	kern=$dir/$name.kernel.img
	# shellcheck disable=SC2086
	nice -n 10 e2fragimg -q -w "$w" -t "$t" -b "$bs" -s "$size" --fill "$fill" \
		-S "$seed" $extra --script "$dir/$name.ops" "$model"
	mkfs_like "$model" "$kern" "$t"
	mount -t "$t" -o loop "$kern" "$mnt"
	if ! replay "$dir/$name.ops" "$mnt"; then
		umount "$mnt"
		echo "$name: replay failed (the kernel ran out of room?)"
		continue
	fi
	umount "$mnt"
	e2fsck -fn "$kern" > /dev/null 2>&1 || echo "$name: kernel image not clean per e2fsck -fn"
	if [ -n "${BUILD_ONLY:-}" ]; then
		rm -f "$model" "$model.json"
		continue
	fi
	printf '%-30s model  %s\n' "$name" "$(figures "$model")"
	printf '%-30s kernel %s\n' "" "$(figures "$kern")"
	[ -n "${KEEP:-}" ] || rm -f "$model" "$kern" "$model".*.json "$kern".*.json
done
