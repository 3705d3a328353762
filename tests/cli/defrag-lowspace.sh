#!/bin/sh
# When free space is too short for a file to become contiguous, e2defrag
# still gives it fewer pieces if it can, says so and exits 1; when it
# cannot, it leaves the file as it is, says so and exits 1.  Either way
# the image is clean and every file intact.
. "$top_srcdir/tests/cli/defrag-lib.sh"

# Two free runs of 45 blocks for /a's 81 (80 and an IND block): two or three
# pieces instead of 41.
crowded "$T/fs.img" 100 45 45
before=$(pieces "$T/fs.img" /a)
[ "$before" -ge 40 ] || fail "/a should start in 40 pieces or more, is in $before"
snapshot "$T/fs.img" "$T/before.json"
expect_rc 1 e2defrag "$T/fs.img" /a
grep -q "fewer pieces" "$T/out" || { cat "$T/out"; fail "partial result not reported"; }
check_clean "$T/fs.img"
snapshot "$T/fs.img" "$T/after.json"
same_snapshot "$T/before.json" "$T/after.json"
p=$(pieces "$T/fs.img" /a)
[ "$p" -le 3 ] || fail "/a in $p pieces, expected 2 or 3 (one per free run, its IND block)"

# One free run of 45 blocks: no room at all; /a stays as it is.
crowded "$T/full.img" 100 45
cp "$T/full.img" "$T/full.orig"
expect_rc 1 e2defrag "$T/full.img" /a
grep -q "no room" "$T/out" || { cat "$T/out"; fail "no room not reported"; }
check_clean "$T/full.img"
[ "$(pieces "$T/full.img" /a)" -ge 40 ] || fail "/a should have been left as it was"
cmp -s "$T/full.img" "$T/full.orig" || fail "nothing to move, yet the image changed"
exit 0
