#!/bin/sh
# bench/kernel-tree.sh [FILES [DIRS [SEED]]] --- does e2fragimg's
# kernel-tree lay files out as the kernel does?  For ext3 and ext4:
# builds the tree with e2fragimg, then writes the same tree (same
# directories, same files and sizes, same order: the manifest numbers
# the files in write order) with the running kernel onto a fresh image of
# the same size and geometry on a loop mount, unmounts, and prints
# e2frag --json's summaries of both side by side.  Default 20,000 files in
# FILES/40 directories, seed 1.  Needs root and loop devices; images go
# to $BENCH_DIR (default $TMPDIR or /tmp) one type at a time and are
# removed after.  Run from the build tree after `make`.
# KERNEL_TREE_TYPES picks the types (default "ext3 ext4");
# KERNEL_TREE_KEEP=DIR keeps the kernel's images there as kernel-TYPE.img
# (bench/scale.sh measures them).
set -u
files=${1:-20000}
dirs=${2:-$((files / 40))}
seed=${3:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${BENCH_DIR:-${TMPDIR:-/tmp}}
PATH=$PATH:/sbin:/usr/sbin
work=$(mktemp -d "$dir/kernel-tree.XXXXXX") || exit 1
mnt=$work/mnt
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then
		umount "$mnt"
	fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

[ -x "$top/images/e2fragimg" ] || { echo "build first: images/e2fragimg not found" >&2; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
	echo "kernel-tree.sh: needs root for loop mounts; skipped" >&2
	exit 77
fi
mkdir "$mnt"

echo "kernel-tree: $files files in $dirs directories, seed $seed; kernel $(uname -r), $(date -u +%Y-%m-%d)"
keep=${KERNEL_TREE_KEEP:-}
for type in ${KERNEL_TREE_TYPES:-ext3 ext4}; do
	img=$work/e2fragimg-$type.img
	kimg=$work/kernel-$type.img
	"$top/images/e2fragimg" -q --workload kernel-tree --type "$type" \
		--files "$files" --dirs "$dirs" --seed "$seed" "$img" || exit 1
	size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["size"])' "$img.json")
	bs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["block_size"])' "$img.json")
	inodes=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Inode count: *//p')
	truncate -s "$size" "$kimg"
	mke2fs -q -F -t "$type" -b "$bs" -N "$inodes" "$kimg" || exit 1
	if ! mount -o loop "$kimg" "$mnt"; then
		echo "kernel-tree.sh: cannot loop-mount; skipped" >&2
		exit 77
	fi
	# The directories as e2fragimg made them (in order), then the files
	# in the order of their numbers.
	debugfs -R 'ls /' "$img" 2>/dev/null | tr -s ' ' '\n' | grep -E '^d[0-9]+$' |
		sort > "$work/dirs"
	start=$(date +%s.%N)
	python3 - "$img.json" "$mnt" "$work/dirs" <<'PY' || exit 1
import json, os, sys
manifest, mnt, dirlist = sys.argv[1:4]
for d in open(dirlist).read().split():
    os.mkdir(os.path.join(mnt, d))
files = json.load(open(manifest))["files"]
files.sort(key=lambda f: int(f["path"].rsplit("/f", 1)[1]))
chunk = b"\xa5" * (1 << 20)
for f in files:
    with open(mnt + f["path"], "wb") as out:
        left = f["size"]
        while left:
            n = out.write(chunk[:min(left, len(chunk))])
            left -= n
PY
	umount "$mnt" || exit 1
	end=$(date +%s.%N)
	e2fsck -fn "$kimg" > /dev/null 2>&1 || echo "note: e2fsck -fn found trouble on the kernel's $type image"
	"$top/analyze/e2frag" --json "$kimg" > "$work/kernel.json"
	"$top/analyze/e2frag" --json "$img" > "$work/img.json"
	python3 - "$type" "$work/kernel.json" "$work/img.json" "$start" "$end" <<'PY'
import json, sys
typ, kj, ij, start, end = sys.argv[1:6]
def row(path):
    d = json.load(open(path))
    s, sets = d["summary"], d["interleave_sets"]
    return [s["files"], s["fragmented_files"], s["avoidably_fragmented_files"],
            s["pieces"], s["interleaved_files"], s["interleave_sets"],
            max([len(x["files"]) for x in sets] or [0]),
            sum(x["alternations"] for x in sets),
            d["free_space"]["free_extents"]]
names = ["files", "fragmented", "avoidably fragmented", "pieces",
         "interleaved files", "interleave sets", "largest set",
         "alternations", "free extents"]
k, i = row(kj), row(ij)
print("\n%s (kernel wrote it in %.0f s)" % (typ, float(end) - float(start)))
print("| %s | kernel | e2fragimg | e2fragimg / kernel |" % typ)
print("|---|---:|---:|---:|")
for n, a, b in zip(names, k, i):
    print("| %s | %s | %s | %s |" % (n, format(a, ","), format(b, ","),
                                    "%.2f" % (b / a) if a else "-"))
PY
	if [ -n "$keep" ]; then
		mv "$kimg" "$keep/kernel-$type.img"
	fi
	rm -f "$img" "$img.json" "$kimg"
done
