#!/bin/sh
# bench/fuse2fs.sh [DIR] --- a disk written through fuse2fs: a 32 MiB ext4 image
# (mkfs.ext4's defaults: 1 KiB blocks, 4 groups) filled through fuse2fs by
# four recorders writing 64 KiB each in turn (libext2fs' allocator, not
# the kernel's), TOTAL MiB in all (default 18: some 9 MiB stay free, in
# one run).  Then, each on a copy of that image: e2defrag, a second run,
# --pack, and --pack with a PATH (/rec0.ts); for each, exit status, bytes
# written and free runs / largest before and after (e2freefrag), and
# e2fsck -fn.  Needs root, /dev/fuse and fuse2fs (Debian: fuse2fs).
# Run from the build tree after make.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${BENCH_DIR:-${TMPDIR:-/tmp}/e2defrag-fuse2fs}}
total=${TOTAL:-18}
PATH=$top/defrag:$top/analyze:$top/images:$PATH:/sbin:/usr/sbin
export PATH LC_ALL=C
command -v fuse2fs >/dev/null 2>&1 || { echo "fuse2fs not found (apt-get install fuse2fs)"; exit 77; }
[ -c /dev/fuse ] || { echo "no /dev/fuse"; exit 77; }
mkdir -p "$dir/mnt"
img=$dir/fuse.img
rm -f "$img"
mkfs.ext4 -q -F "$img" 32M
# In the foreground, so that its exit (the last superblock write) can be waited for.
fuse2fs "$img" "$dir/mnt" -o rw,fakeroot -f &
fpid=$!
while ! mountpoint -q "$dir/mnt"; do sleep 0.2; done
python3 - "$dir/mnt" "$total" <<'EOF'
import os, random, sys
random.seed(1)
chunk = bytes(random.getrandbits(8) for _ in range(65536))
fds = [open(os.path.join(sys.argv[1], "rec%d.ts" % i), "wb") for i in range(4)]
left = int(sys.argv[2]) << 20
while left > 0:
    for f in fds:
        f.write(chunk)
        f.flush()
        left -= len(chunk)
for f in fds:
    f.close()
EOF
umount "$dir/mnt"
wait "$fpid" || true
debugfs -w -R "ssv lastcheck now" "$img" >/dev/null 2>&1

# freefrag IMG: "RUNS LARGEST_KIB" per e2freefrag.
freefrag() {
	e2freefrag "$1" | awk '/^Num\. free extent:/ { n = $4 } /^Max\. free extent:/ { m = $4 } END { print n " runs, largest " m " KiB" }'
}
# written JSON: bytes the run wrote (0 when it moved nothing).
written() {
	python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(j["result"]["bytes_written"] if j.get("result") else 0)' "$1"
}

echo "image: $(e2frag "$img" | sed -n 's/^Files *//p' | head -1); free $(freefrag "$img")"
one() {
	label=$1
	shift
	set +e
	e2defrag --json "$@" > "$dir/out.json" 2> "$dir/out.err"
	rc=$?
	set -e
	clean=clean
	e2fsck -fn "$last" > /dev/null 2>&1 || clean="NOT CLEAN"
	echo "$label: exit $rc, wrote $(written "$dir/out.json") bytes, free $(freefrag "$last"), $clean"
}
cp "$img" "$dir/a.img"
last=$dir/a.img
one "e2defrag" "$dir/a.img"
one "second run" "$dir/a.img"
cp "$img" "$dir/b.img"
last=$dir/b.img
one "--pack" --pack "$dir/b.img"
cp "$img" "$dir/c.img"
last=$dir/c.img
one "--pack /rec0.ts" --pack "$dir/c.img" /rec0.ts
rm -f "$img" "$dir/a.img" "$dir/b.img" "$dir/c.img" "$dir/out.json" "$dir/out.err"
