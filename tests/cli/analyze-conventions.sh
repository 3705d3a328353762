#!/bin/sh
# e2frag keeps the promises of its --help: -N 0 lists every file that
# loses read time (the files debugfs shows in more than one run, here
# where one run could hold each), where it used to drop the table; -N N
# the N worst of them.
. "$top_srcdir/tests/lib/common.sh"

# Thirteen recorders written round robin: 13 files in 158 pieces each,
# against two contiguous directories (/ and /lost+found) that lose nothing.
img=$T/s13.img
e2fragimg -q -w streams -t ext2 -b 1024 --streams 13 --total 2M "$img" ||
	fail "e2fragimg streams"
$ORACLE layout "$img" > "$T/oracle.json" || fail "oracle"
python3 - "$T/oracle.json" > "$T/want" <<'PY' || fail "oracle"
import json, sys
files = json.load(open(sys.argv[1])).values()
lossy = sorted(f["path"] for f in files if f["pieces"] > 1)
assert len(lossy) == 13 and len(files) > 13, (len(lossy), len(files))
print("\n".join(lossy))
PY

# table_paths OUT: the paths in the text report's table, sorted.
table_paths() {
	sed -n '/^Worst files by read time lost to layout:/,/^$/p' "$1" |
		awk '$1 ~ /^\// { print $1 }' | sort
}

run_status e2frag -N 0 "$img" > "$T/n0"
[ "$status" -eq 1 ] || fail "e2frag -N 0 exited $status"
table_paths "$T/n0" > "$T/got"
cmp -s "$T/got" "$T/want" || {
	diff "$T/want" "$T/got"
	fail "-N 0 did not list every file that loses read time"
}
echo "-N 0: all $(wc -l < "$T/want") files that debugfs shows in pieces, no others"
for n in 3 10; do
	run_status e2frag -N $n "$img" > "$T/n$n"
	table_paths "$T/n$n" > "$T/got"
	[ "$(wc -l < "$T/got")" -eq $n ] || fail "-N $n listed $(wc -l < "$T/got") files"
	comm -13 "$T/want" "$T/got" | grep -q . && fail "-N $n listed a file that loses nothing"
done
run_status e2frag "$img" > "$T/default"
[ "$(table_paths "$T/default" | wc -l)" -eq 10 ] || fail "the default is not 10 files"
echo "-N 3, -N 10 and the default: 3, 10, 10 of them"

exit 0
