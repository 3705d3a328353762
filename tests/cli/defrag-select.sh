#!/bin/sh
# Selection: PATH arguments (a file, a tree), --interleaved-only,
# --newer-than, --min-score and --max-time (0, 0h, 1h) move exactly the
# files they say, per debugfs's block lists and e2frag's scores.
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/base.img" ext4
debugfs -w -R "sif /frag mtime 20010101000000" "$T/base.img" >/dev/null 2>&1
check_clean "$T/base.img"
for f in /rec/a /rec/b /frag; do
	[ "$(pieces "$T/base.img" $f)" -gt 2 ] || fail "$f should start in pieces"
done

# run NAME OPTIONS PATH...: a copy of the base image defragmented.
run() {
	name=$1 opts=$2
	shift 2
	cp "$T/base.img" "$T/$name.img"
	e2defrag $opts "$T/$name.img" "$@" > "$T/$name.out" 2>&1
	echo $? > "$T/$name.rc"
	check_clean "$T/$name.img"
}
# moved NAME PATH / kept NAME PATH: PATH is now one piece / as it was.
moved() {
	[ "$(pieces "$T/$1.img" "$2")" -eq 1 ] || fail "$1: $2 should have moved"
}
kept() {
	[ "$(pieces "$T/$1.img" "$2")" -eq "$(pieces "$T/base.img" "$2")" ] ||
		fail "$1: $2 should not have moved"
}

run file '' /frag
moved file /frag; kept file /rec/a; kept file /rec/b
run tree '' /rec
moved tree /rec/a; moved tree /rec/b; kept tree /frag
run inter --interleaved-only
moved inter /rec/a; moved inter /rec/b; kept inter /frag
run newer '--newer-than 2010-01-01'
moved newer /rec/a; moved newer /rec/b; kept newer /frag

# A selection that leaves out every file with work to do says so, not
# that the filesystem has nothing to do: /rec/a and /rec/b interleaved
# (small_image writes them so), /frag alone, each in pieces (above).
run none '-n --newer-than 2099-01-01'
[ "$(cat "$T/none.rc")" -eq 0 ] || { cat "$T/none.out"; fail "--newer-than 2099: exited $(cat "$T/none.rc")"; }
grep -qx "  nothing to do in the selection: the filesystem's 3 avoidably fragmented and 2 interleaved files are outside it" "$T/none.out" ||
	{ cat "$T/none.out"; fail "--newer-than 2099: not said that the selection left the files out"; }

# --min-score: between the scores e2frag gives /frag and /rec/a.
e2frag --json "$T/base.img" > "$T/e2frag.json"
n=$(python3 -c 'import json, sys
f = {x["path"]: x["score"] for x in json.load(open(sys.argv[1]))["files"]}
a, b = f["/frag"], f["/rec/a"]
if abs(a - b) < 1: sys.exit(1)
print((a + b) / 2)' "$T/e2frag.json") || fail "scores of /frag and /rec/a too close to split"
run score "--min-score $n"
python3 -c 'import json, sys
f = {x["path"]: x["score"] for x in json.load(open(sys.argv[1]))["files"]}
for p in ("/frag", "/rec/a", "/rec/b"):
    print(p, "moved" if f[p] >= float(sys.argv[2]) else "kept")' "$T/e2frag.json" "$n" |
while read -r p what; do
	$what score "$p"
done || exit 1

# --max-time 0: stops before the first move; exit 1 (another run could
# do more), its closing line counting the files not reached (the three
# the plan selects); nothing moved.  The next run, with no limit, does it
# and exits 0.
run time '--max-time 0'
[ "$(cat "$T/time.rc")" -eq 1 ] || { cat "$T/time.out"; fail "--max-time 0 exited $(cat "$T/time.rc")"; }
grep -q "max-time" "$T/time.out" || fail "--max-time not reported"
tail -n 1 "$T/time.out" | grep -q "^e2defrag: stopped at --max-time: another run could do more ([0-9]* files not reached)$" ||
	{ cat "$T/time.out"; fail "--max-time 0: the closing line"; }
kept time /rec/a; kept time /frag
expect_rc 0 e2defrag "$T/time.img"
moved time /rec/a; moved time /rec/b; moved time /frag
# With a unit: 0h is 0 as well; 1h is time enough for everything.
run time0h '--max-time 0h'
[ "$(cat "$T/time0h.rc")" -eq 1 ] || { cat "$T/time0h.out"; fail "--max-time 0h exited $(cat "$T/time0h.rc")"; }
kept time0h /rec/a; kept time0h /frag
run time1h '--max-time 1h'
[ "$(cat "$T/time1h.rc")" -eq 0 ] || { cat "$T/time1h.out"; fail "--max-time 1h exited $(cat "$T/time1h.rc")"; }
moved time1h /rec/a; moved time1h /rec/b; moved time1h /frag

# A tree selects a hard link by any of its names: /rec/alias, a second
# name of /frag, puts /frag's inode under /rec though e2frag shows it by
# its first name, /frag.  What /rec holds is debugfs's listing.
cp "$T/base.img" "$T/links.img"
printf 'ln /frag /rec/alias\nsif /frag links_count 2\n' > "$T/c"
dbg "$T/links.img" "$T/c"
check_clean "$T/links.img"
ino=$(debugfs -R "ls -p /rec" "$T/links.img" 2>/dev/null | awk -F/ '$6 == "alias" { print $2 }')
[ "$ino" = "$(debugfs -R "stat /frag" "$T/links.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')" ] ||
	fail "/rec/alias is not /frag's inode"
e2frag --json "$T/links.img" > "$T/links.json"
[ "$(json_get "$T/links.json" "[f['path'] for f in j['files'] if f['ino'] == $ino]")" = "['/frag']" ] ||
	fail "the image should name inode $ino /frag first, outside /rec"
cp "$T/links.img" "$T/linktree.img"
expect_rc 0 e2defrag "$T/linktree.img" /rec
check_clean "$T/linktree.img"
debugfs -R "ls -p /rec" "$T/links.img" 2>/dev/null | awk -F/ '$3 ~ /^100/ { print $6 }' > "$T/rec.files"
[ "$(wc -l < "$T/rec.files")" -eq 3 ] || fail "/rec should hold a, b and alias: $(cat "$T/rec.files")"
while read -r f; do
	moved linktree "/rec/$f"
done < "$T/rec.files" || exit 1
kept linktree /ok/one
exit 0
