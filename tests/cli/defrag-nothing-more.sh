#!/bin/sh
# What a run leaves, and what e2frag says is left (issue 23).  On
# e2fragimg's disks:
#  - e2frag's estimate of the avoidably fragmented files e2defrag could
#    bring closer to best (summary.improvable_files, and its text line)
#    against the files a run then brings to fewer pieces, counted from
#    debugfs alone before and after (tests/lib/best_oracle.py files);
#  - on the near-full disk a run leaves a recording short of best for want
#    of room (fewer free blocks than the recording: dumpe2fs, debugfs):
#    exit 0 and a closing line naming it and why; then e2frag counts it
#    as improvable no more, a second run exits 0 the same way and writes
#    nothing (cmp), its plan calls the recording's 2 -> 2 pieces
#    "unchanged" (no_room in -J, exit_status 0), and --pack, which has no
#    free runs to join there either, plans 0 bytes (-n -J) and leaves the
#    image byte-identical.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
BEST="python3 $top_srcdir/tests/lib/best_oracle.py"

# improved IMG BEFORE AFTER: files avoidably fragmented in BEFORE (the
# oracle's files view) that are in fewer pieces in AFTER.
improved() {
	python3 - "$2" "$3" <<'PY'
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:])
print(sum(1 for i, f in a.items()
          if f["pieces"] > f["best"] and i in b and b[i]["pieces"] < f["pieces"]))
PY
}

# estimate IMG: e2frag -J's improvable_files, checked against the text line.
estimate() {
	e2frag -J "$1" > "$T/frag.json" 2> /dev/null
	[ $? -le 1 ] || fail "e2frag -J $1 exited $?"
	n=$(json_get "$T/frag.json" 'j["summary"]["improvable_files"]')
	e2frag "$1" > "$T/frag.txt" 2> /dev/null
	if [ "$(json_get "$T/frag.json" 'j["summary"]["avoidably_fragmented_files"]')" -gt 0 ]; then
		grep -q "^ *$n of them e2defrag could bring closer to best on this disk as it is$" "$T/frag.txt" ||
			{ cat "$T/frag.txt"; fail "$1: e2frag's text does not say $n improvable"; }
	fi
	echo "$n"
}

for w in "nearfull -t ext4" "turns -t ext4" "streams -t ext2 -b 1024 -s 16M --total 12M"; do
	name=$(echo "$w" | tr -d ' -')
	img=$T/$name.img
	# shellcheck disable=SC2086
	e2fragimg -q -w $w "$img" || fail "e2fragimg -w $w"
	est=$(estimate "$img")
	$BEST files "$img" > "$T/before.json" || fail "$name: the oracle before"
	cp "$img" "$T/$name.orig"
	e2defrag "$img" > "$T/$name.out" 2>&1 || { cat "$T/$name.out"; fail "$name: e2defrag exited $?"; }
	check_clean "$img"
	$BEST files "$img" > "$T/$name.after.json" || fail "$name: the oracle after"
	got=$(improved "$img" "$T/before.json" "$T/$name.after.json")
	[ "$got" -gt 0 ] || fail "$name: the run improved nothing"
	[ "$est" -eq "$got" ] ||
		fail "$name: e2frag estimated $est files e2defrag could improve, the run improved $got (debugfs)"
	echo "$name: $est improvable, $got improved"
done

# The near-full disk, after its run: the recording left short of best.
img=$T/nearfulltext4.img
set -- $($BEST left "$img" | grep -v '^#')
[ $# -eq 3 ] || fail "one file short of best expected after the run, the oracle finds: $*"
path=$1 pieces=$2
[ "$pieces" -eq 2 ] || fail "$path in $pieces pieces, 2 expected"
free=$(free_blocks "$img")
stream=$(json_get "$T/nearfulltext4.after.json" "[f['stream'] for f in j.values() if f['path'] == '$path'][0]")
[ "$free" -lt "$stream" ] || fail "$path: $free blocks free for its $stream: best is not impossible"
tail -n 1 "$T/nearfulltext4.out" | grep -q "^e2defrag: done, and another run would do no more; short of best: $path (no room: its best needs .* free, the disk has .*)$" ||
	{ cat "$T/nearfulltext4.out"; fail "the closing line does not name $path and why"; }
[ "$(estimate "$img")" -eq 0 ] || fail "e2frag still counts improvable files where no run can improve one"

cp "$img" "$T/done.img"
expect_rc 0 e2defrag "$img"
tail -n 1 "$T/out" | grep -q "^e2defrag: done, and another run would do no more; short of best: $path (no room: " ||
	{ cat "$T/out"; fail "the second run's closing line"; }
grep -q "^ *2 -> 2 .* $path: unchanged (no room: its best needs .* free, the disk has .*)$" "$T/out" ||
	{ cat "$T/out"; fail "the 2 -> 2 file is not called unchanged"; }
cmp -s "$img" "$T/done.img" || fail "a second run changed the image"

e2defrag -n -J "$img" > "$T/plan.json" || fail "e2defrag -n -J exited $?"
python3 - "$T/plan.json" "$path" "$stream" "$free" <<'PY' || fail "the plan's JSON"
import json, sys
d = json.load(open(sys.argv[1]))
bs = d["filesystem"]["block_size"]
f = [f for f in d["files"] if f["path"] == sys.argv[2]][0]
assert f["outcome"] == "no_room" and f["pieces_before"] == f["pieces_after"] == 2, f
assert f["room_needed"] == int(sys.argv[3]) * bs and f["room_free"] == int(sys.argv[4]) * bs, f
assert d["exit_status"] == 0 and d["plan"]["bytes_to_write"] == 0, d["plan"]
PY

e2defrag --pack -n -J "$img" > "$T/pack.json" || fail "e2defrag --pack -n -J exited $?"
[ "$(json_get "$T/pack.json" 'j["plan"]["bytes_to_write"]')" -eq 0 ] ||
	fail "--pack plans $(json_get "$T/pack.json" 'j["plan"]["bytes_to_write"]') bytes after a finished run"
expect_rc 0 e2defrag --pack "$img"
cmp -s "$img" "$T/done.img" || fail "--pack after a finished run changed the image"
exit 0
