#!/bin/sh
# A mount point names the filesystem mounted there, as e4defrag -c takes
# one: e2frag MOUNTPOINT reports on its device with the "mounted: may be
# stale" warning and the figures e2frag gives for the image itself
# (JSON compared, the device aside); e2defrag MOUNTPOINT refuses it as
# mounted.  A directory that is no mount point gets one clear line, exit
# 8 (runs everywhere); the mounted part needs root and loop devices and
# skips (77) without them.  The parsing of mountinfo itself:
# tests/unit/mount_source.c.
. "$top_srcdir/tests/lib/common.sh"

mkdir "$T/plain"
run_status e2frag "$T/plain" > "$T/out" 2> "$T/err"
[ "$status" -eq 8 ] || fail "a plain directory: exit $status, expected 8"
[ "$(wc -l < "$T/err")" -eq 1 ] && grep -q "directory but not a mount point" "$T/err" ||
	fail "a plain directory: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "a plain directory: a report was printed"
note "plain directory: $(cat "$T/err")"
run_status e2defrag -n "$T/plain" > "$T/out" 2> "$T/err"
[ "$status" -eq 8 ] && grep -q "directory but not a mount point" "$T/err" ||
	fail "e2defrag -n on a plain directory: exit $status: $(cat "$T/err")"

[ "$(id -u)" -eq 0 ] || skip "not root: cannot loop-mount an image"
command -v mount > /dev/null || skip "no mount"
img=$T/fs.img
e2fragimg -q -w streams -t ext4 -b 1024 --size 32M --streams 4 --chunk 4K \
	--total 8M "$img" || fail "e2fragimg"
mkdir "$T/mnt"
mount -o loop,ro "$img" "$T/mnt" 2> /dev/null || skip "cannot loop-mount an image here"
trap 'umount "$T/mnt" 2> /dev/null; rm -rf "$T"' EXIT
e2frag -J "$img" > "$T/img.json" 2> /dev/null
for spec in "$T/mnt" "$T/mnt/" "$T/plain/../mnt"; do
	run_status e2frag -J "$spec" > "$T/mnt.json" 2> "$T/err"
	[ "$status" -le 1 ] || fail "e2frag $spec: exit $status: $(cat "$T/err")"
	grep -q "warning: /dev/loop[0-9]* is mounted on $T/mnt; the results may be stale" "$T/err" ||
		fail "e2frag $spec: no stale warning: $(cat "$T/err")"
	python3 - "$T/img.json" "$T/mnt.json" <<'PY' || fail "e2frag $spec: the figures differ from the image's"
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k != "device"}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
sys.exit(a != b)
PY
done
note "e2frag mount point: $(cat "$T/err")"
run_status e2defrag "$T/mnt" > "$T/out" 2> "$T/err"
[ "$status" -eq 8 ] && grep -q "is mounted on $T/mnt" "$T/err" ||
	fail "e2defrag on the mount point: exit $status: $(cat "$T/err")"
note "e2defrag mount point: $(cat "$T/err")"
# A directory inside the filesystem is not its mount point.
run_status e2frag "$T/mnt/lost+found" > /dev/null 2> "$T/err"
[ "$status" -eq 8 ] && grep -q "not a mount point" "$T/err" ||
	fail "a directory inside the mount: exit $status: $(cat "$T/err")"
exit 0
