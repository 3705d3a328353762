#!/bin/sh
# bench/kernel-aged.sh [DIR] --- an aged recordings disk, written by
# the running kernel on a loop mount, then defragmented as a nightly script
# would: the disk a user reported (2 GiB, 16 block groups of 128 MiB, 4 KiB
# blocks, kept about 85% full; recorders writing recordings of 1-145 MiB
# side by side in rounds, the oldest deleted between rounds).  BLOCK_SIZE=1024
# makes the same disk with 1 KiB blocks (256 groups of 8 MiB: every
# recording then spans several).
#
# For each type (TYPES, default "ext2 ext3 ext4"): a fresh filesystem is
# mounted (ext2 and ext3 as their type), the operations (made here from
# SEED, see ops below) are replayed by bench/replay.py, it is unmounted and
# checked (e2fsck -fn), every file's SHA-256 is taken on a read-only mount,
# and then bench/defrag.sh's measure_nearfull runs e2defrag -f on a copy
# (files left not at best after one run, runs until one leaves the image
# byte-identical, written / needing a move, free space, rate against dd).
# The copy's files are then compared with the sums taken before.
#
# BUILD_ONLY=1 stops after the kernel has written the images and leaves
# them as DIR/kernel/aged-TYPE-BLOCKSIZE.img (bench/iocost.sh).
#
# Root only (loop mounts); run from the build tree after make.  Needs about
# 6 GiB under DIR.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BENCH_DIR:-${TMPDIR:-/tmp}/kernel-aged}}
PATH=$top/defrag:$top/analyze:$top/images:$PATH:/sbin:/usr/sbin
export PATH LC_ALL=C
seed=${SEED:-1}
fill=${FILL:-88}
types=${TYPES:-"ext2 ext3 ext4"}
bs=${BLOCK_SIZE:-4096}

if [ "$(id -u)" -ne 0 ]; then
	echo "kernel-aged: needs root for loop mounts" >&2
	exit 77
fi
mkdir -p "$dir/kernel" "$dir/runs"
mnt=$(mktemp -d "$dir/mnt.XXXXXX")
trap 'umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true' EXIT

# ops MNT OUT: the workload's operations, for a filesystem mounted at MNT.
# Each round, 4 recorders each start a recording of 1-145 MiB (and a few
# bytes more) and append to them in turn, 64 KiB at a time, with a sync
# every 8 MiB (when ext4 allocates its delayed writes); when a round would
# take the disk past FILL percent of its blocks, the oldest recordings
# are deleted first.  Four such rounds after the disk first fills.
ops() {
	python3 - "$1" "$2" "$seed" "$fill" <<'PY'
import os, random, sys
mnt, out, seed, fill = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
st = os.statvfs(mnt)
target = st.f_blocks * st.f_frsize * fill // 100 - (st.f_blocks - st.f_bfree) * st.f_frsize
rng = random.Random(seed)
MiB, chunk, sync_every = 1 << 20, 64 << 10, 8 << 20
live, used, n, full_rounds = [], 0, 0, 0
with open(out, 'w') as f:
    f.write('# kernel-aged seed %d fill %d\n' % (seed, fill))
    while full_rounds < 4:
        sizes = [rng.randint(1, 145) * MiB + rng.randint(0, MiB - 1) for _ in range(4)]
        if used + sum(sizes) > target:
            full_rounds += 1
            while live and used + sum(sizes) > target:
                path, size = live.pop(0)
                f.write('delete %s\n' % path)
                used -= size
        left = {}
        for size in sizes:
            n += 1
            path = '/rec%04d.ts' % n
            f.write('create %s\n' % path)
            left[path] = size
            live.append((path, size))
            used += size
        since = 0
        while left:
            for path in list(left):
                k = min(chunk, left[path])
                f.write('write %s %d\n' % (path, k))
                left[path] -= k
                since += k
                if not left[path]:
                    f.write('close %s\n' % path)
                    del left[path]
                if since >= sync_every:
                    f.write('sync\n')
                    since = 0
    f.write('sync\n')
PY
}

# sums MNT: every regular file's path and SHA-256, sorted.
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0r sha256sum); }

echo "kernel $(uname -r), seed $seed, fill $fill%, $bs-byte blocks"
imgs=
for t in $types; do
	img=$dir/kernel/aged-$t-$bs.img
	rm -f "$img"
	truncate -s 2G "$img"
	mke2fs -q -F -t "$t" -b "$bs" "$img"
	mount -t "$t" -o loop "$img" "$mnt"
	ops "$mnt" "$dir/kernel/aged-$t-$bs.ops"
	if ! python3 "$top/bench/replay.py" "$dir/kernel/aged-$t-$bs.ops" "$mnt"; then
		umount "$mnt"
		echo "aged-$t-$bs: replay failed (the kernel ran out of room?)"
		continue
	fi
	umount "$mnt"
	e2fsck -fn "$img" > /dev/null 2>&1 || echo "aged-$t-$bs: kernel image not clean per e2fsck -fn"
	mount -t "$t" -o loop,ro "$img" "$mnt"
	sums "$mnt" > "$dir/kernel/aged-$t-$bs.sums"
	df -h "$mnt" | sed -n "2s/^/aged-$t-$bs: /p"
	umount "$mnt"
	imgs="$imgs $img"
done

[ -z "${BUILD_ONLY:-}" ] || exit 0
NEARFULL_IMAGES=$imgs E2DEFRAG_OPTS=-f KEEP=1 sh "$top/bench/defrag.sh" "$dir/runs"

for t in $types; do
	img=$dir/runs/aged-$t-$bs.img
	[ -f "$img" ] || continue
	mount -t "$t" -o loop,ro "$img" "$mnt"
	if sums "$mnt" | cmp -s - "$dir/kernel/aged-$t-$bs.sums"; then
		echo "aged-$t-$bs: every file's SHA-256 the same after e2defrag"
	else
		echo "aged-$t-$bs: FILE CONTENTS DIFFER after e2defrag"
	fi
	umount "$mnt"
	[ -n "${KEEP:-}" ] || rm -f "$img" "$dir/kernel/aged-$t-$bs.img"
done
