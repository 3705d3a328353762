#!/bin/sh
# No free run holds /a, but two runs with a small file between them do:
# e2defrag moves the small file out of the way (into a hole elsewhere)
# and puts /a there, contiguous; everything stays intact, exit 0.
. "$top_srcdir/tests/cli/defrag-lib.sh"

crowded "$T/fs.img" 10 45 45 20
snapshot "$T/fs.img" "$T/before.json"
expect_rc 0 e2defrag -v "$T/fs.img" /a
grep -q "moved out of the way" "$T/out" || { cat "$T/out"; fail "no file was moved out of the way"; }
check_clean "$T/fs.img"
snapshot "$T/fs.img" "$T/after.json"
same_snapshot "$T/before.json" "$T/after.json"
[ "$(pieces "$T/fs.img" /a)" -eq 1 ] || fail "/a is in $(pieces "$T/fs.img" /a) pieces"
for f in /s0 /s1 /s2; do
	[ "$(pieces "$T/fs.img" $f)" -eq 1 ] || fail "$f was left in pieces"
done
exit 0
