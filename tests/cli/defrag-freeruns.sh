#!/bin/sh
# Free space never ends in more runs than it began, or than there are
# block groups (issue 10, point 5), also when a file has no room for its
# best: the disk of bench/fuse2fs.sh as e2fragimg makes it (four
# recorders taking turns at 64 KiB on a 32 MiB ext4 disk with 1 KiB
# blocks and 4 groups, the free space in one run at the end).  No zone
# takes the fourth recording beside the other three, so it gets fewer
# pieces (the run exits 0: another would do no more).  Before place.c's partial windows, the
# pieces it left behind cut the free space from 1 run into 5 (19 MiB
# written) and 23 (21 MiB).  Oracles: e2freefrag, e2fsck -fn, the
# manifest's checksums and debugfs's stat fields, best per
# tests/lib/best_oracle.py (dumpe2fs and debugfs); the e2defrag wrapper of
# defrag-lib.sh runs it a second time on a copy and requires the image
# byte-identical (cmp).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v e2freefrag >/dev/null 2>&1 || { echo "skip: e2freefrag not found"; exit 77; }

for total in 19M 21M; do
	img=$T/rec$total.img
	e2fragimg -q -w streams -t ext4 -b 1024 -s 32M --streams 4 --chunk 64K \
		--total "$total" "$img" || fail "e2fragimg --total $total"
	debugfs -w -R "ssv lastcheck now" "$img" >/dev/null 2>&1
	set -- $(freefrag "$img")
	runs0=$1
	allowed=$(groups "$img")
	[ "$runs0" -le "$allowed" ] || allowed=$runs0
	frag0=$(avoidable "$img")
	[ "$frag0" -eq 4 ] || fail "$total: 4 interleaved recordings expected, the oracle finds $frag0 avoidably fragmented: $(avoidable_list)"
	snapshot "$img" "$T/before.json"
	e2defrag --json "$img" > "$T/run.json" 2> "$T/run.err"
	rc=$?
	[ "$rc" -eq 0 ] || { cat "$T/run.err"; fail "$total: e2defrag exited $rc"; }
	check_clean "$img"
	check_manifest "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
	set -- $(freefrag "$img")
	[ "$1" -le "$allowed" ] ||
		fail "$total: free space in $runs0 runs before, $1 after (e2freefrag; $(groups "$img") block groups)"
	# The recordings gained: at most the one without room is left short of best.
	frag=$(avoidable "$img")
	[ "$frag" -le 1 ] || fail "$total: $frag recordings still avoidably fragmented: $(avoidable_list)"
	echo "# --total $total: exit $rc, free runs $runs0 -> $1, $frag of 4 short of best"
done
exit 0
