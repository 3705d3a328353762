#!/bin/sh
# When free space is too short for a file to become contiguous, e2defrag
# still gives it fewer pieces if it can and says so; when it cannot, it
# leaves the file as it is and says why: the free space its best needs
# against what the disk has.  Either way the run did all that is
# possible: exit 0, and a closing line names the file and the reason;
# a second run on the disk where best is impossible does the same,
# writing nothing.  The image is clean and every file intact.
. "$top_srcdir/tests/cli/defrag-lib.sh"

# Two free runs of 45 blocks for /a's 81 (80 and an IND block): two or three
# pieces instead of 41.
crowded "$T/fs.img" 100 45 45
before=$(pieces "$T/fs.img" /a)
[ "$before" -ge 40 ] || fail "/a should start in 40 pieces or more, is in $before"
snapshot "$T/fs.img" "$T/before.json"
expect_rc 0 e2defrag "$T/fs.img" /a
grep -q "fewer pieces\|: best$" "$T/out" || { cat "$T/out"; fail "partial result not reported"; }
check_clean "$T/fs.img"
snapshot "$T/fs.img" "$T/after.json"
same_snapshot "$T/before.json" "$T/after.json"
p=$(pieces "$T/fs.img" /a)
[ "$p" -le 3 ] || fail "/a in $p pieces, expected 2 or 3 (one per free run, its IND block)"

# One free run of 45 blocks: no room at all (the oracle: fewer free blocks
# than /a's stream, per dumpe2fs and debugfs); /a stays as it is, twice.
crowded "$T/full.img" 100 45
free=$(free_blocks "$T/full.img")
stream=$(debugfs -R "stat /a" "$T/full.img" 2>/dev/null |
	sed -n 's/.*Blockcount: *\([0-9]*\).*/\1/p')
stream=$((stream / 2))	# 512-byte units, 1 KiB blocks
[ "$free" -lt "$stream" ] || fail "the disk has $free blocks free for /a's $stream: best is not impossible"
cp "$T/full.img" "$T/full.orig"
for run in 1 2; do
	expect_rc 0 e2defrag "$T/full.img" /a
	grep -q "/a.*unchanged (no room: its best needs 81 KiB free, the disk has $free KiB)" "$T/out" ||
		{ cat "$T/out"; fail "run $run: no room and its reason not reported"; }
	tail -n 1 "$T/out" | grep -q "^e2defrag: done, and another run would do no more; short of best: /a (no room: its best needs 81 KiB free, the disk has $free KiB)$" ||
		{ cat "$T/out"; fail "run $run: the closing line does not name /a and why"; }
	check_clean "$T/full.img"
	[ "$(pieces "$T/full.img" /a)" -ge 40 ] || fail "/a should have been left as it was"
	cmp -s "$T/full.img" "$T/full.orig" || fail "run $run: nothing to move, yet the image changed"
done
# The same in the JSON: no_room, the room figures, exit_status 0.
e2defrag -n -J "$T/full.img" /a > "$T/full.json" || fail "e2defrag -n -J exited $?"
python3 - "$T/full.json" "$free" <<'PY' || fail "the JSON of the plan"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["filesystem"]["block_size"]
a = [f for f in d["files"] if f["path"] == "/a"][0]
assert a["outcome"] == "no_room", a
assert a["room_needed"] == 81 * bs and a["room_free"] == int(sys.argv[2]) * bs, a
assert d["exit_status"] == 0, d["exit_status"]
PY
exit 0
