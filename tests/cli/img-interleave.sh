#!/bin/sh
# The layouts are the seeds': recorders writing in turns without
# reservation take alternate blocks (1,3,5 / 2,4,6, per debugfs' block
# lists), with the indirect block taken right before the data block that
# needs it; with a reservation window larger than a file they do not
# interleave at all.  Parallel writers interleave in bursts; an aged disk
# has fragmented free space and recordings.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"
img=$tmp/i.img

mk() {
	rm -f "$img" "$img.json"
	e2fragimg -q "$@" "$img" || fail "e2fragimg $* failed"
}

for t in ext2 ext3 ext4; do
	mk --workload streams --type "$t" --streams 2 --total 4M
	check interleaved "$img" /rec00.ts /rec01.ts || fail "$t: streams do not interleave"
	mk --workload streams --type "$t" --streams 3 --total 3M --reservation 1024
	check separate "$img" /rec00.ts /rec01.ts /rec02.ts ||
		fail "$t: streams with a 1024-block reservation interleave"
done
mk --workload streams --type ext3 --streams 2 --total 6M
check indirect "$img" 1024 /rec00.ts /rec01.ts || fail "ext3: indirect blocks out of place"
mk --workload streams --type ext2 --block-size 1024 --streams 2 --total 1M
check indirect "$img" 256 /rec00.ts /rec01.ts || fail "ext2 1K: indirect blocks out of place"

# A small reservation: the files alternate window by window.
mk --workload streams --type ext3 --streams 2 --total 2M --reservation 32
n=$(check pieces "$img" /rec00.ts)
[ "$n" -ge 4 ] && [ "$n" -le 16 ] || fail "32-block windows: rec00 in $n pieces, want 4..16"

# iozone threads: runs of 1..16 records, so alternation, but not per block.
mk --workload parallel-writers --streams 2 --total 4M
n=$(check pieces "$img" /iozone.DUMMY.00)
[ "$n" -ge 8 ] && [ "$n" -le 256 ] || fail "parallel-writers: $n pieces, want 8..256"

# Aged: free space in many pieces, recordings in several, and some deleted.
mk --workload aged --size 32M --rounds 3
free=$(e2freefrag "$img" 2>/dev/null | sed -n 's/^Num. free extent: *//p')
[ "${free:-0}" -ge 3 ] || fail "aged: free space in ${free:-?} extents, want >= 3"
python3 - "$img.json" <<'PY' || fail "aged: no recording was deleted"
import json, re, sys
names = [int(re.search(r'rec(\d+)', f["path"]).group(1)) for f in json.load(open(sys.argv[1]))["files"]]
assert max(names) + 1 > len(names)
PY
worst=$(check pieces "$img")
[ "${worst:-0}" -ge 10 ] || fail "aged: most fragmented recording in $worst pieces, want >= 10"
finish
