#!/bin/sh
# A PVR disk of six recorders (issue 23's second disk): e2fragimg's
# nearfull workload on ext4 with 1 KiB blocks, 256 MiB, 90% full, six
# recordings written at once into the holes of deleted ones, seed 1.
# One run, checked against oracles of its own: no file left avoidably
# fragmented (tests/lib/best_oracle.py, from dumpe2fs and debugfs), exit
# 0, e2fsck -fn clean, every file's sha256 as in the manifest (debugfs
# dump), a second run leaving the image byte-identical (defrag-lib.sh).
#
# It also guards against libext2fs 1.47.0's unix block cache, whose clean
# copies survive a write of more than four blocks (fixed upstream in
# 2025): with that cache on, this run read an extent tree block as it was
# before a checkpoint wrote it, called the file's map corrupt, failed 370
# moves (exit 4) and left e2fsck an invalid extent node.  writer/switch.c
# turns the cache off while it writes.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
BEST="python3 $top_srcdir/tests/lib/best_oracle.py"

img=$T/pvr6.img
e2fragimg -q -w nearfull -t ext4 -b 1024 -s 256M --streams 6 --fill 90 -S 1 "$img" ||
	fail "e2fragimg"
debugfs -w -R "ssv lastcheck now" "$img" >/dev/null 2>&1
before=$($BEST count "$img")
[ "$before" -ge 10 ] || fail "only $before files avoidably fragmented: the disk is not the one described"
e2defrag "$img" > "$T/run.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { cat "$T/run.out" >&2; fail "e2defrag exited $rc"; }
left=$($BEST count "$img")
[ "$left" -eq 0 ] || fail "$left of $before left avoidably fragmented: $($BEST left "$img" | head -3 | tr '\n' ' ')"
check_clean "$img"
check_manifest "$img"
echo "# $before files avoidably fragmented before, none after"
