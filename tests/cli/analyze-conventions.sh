#!/bin/sh
# e2frag keeps the promises of its --help: -N 0 lists every file that
# loses read time (the files debugfs shows in more than one run, here
# where one run could hold each), where it used to drop the table; -N N
# the N worst of them; -J's nested objects are indented by their depth
# (counted here over the document's brackets, as a reader's eye does), and
# -J says once on stderr that it ignores the file table's options.
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

# -J: every line indented two spaces a level, the depth counted over the
# brackets outside strings before it (a line that closes one is one out).
run_status e2frag -J "$img" > "$T/r.json" 2> "$T/err"
[ "$status" -eq 1 ] || fail "e2frag -J exited $status"
[ ! -s "$T/err" ] || fail "-J alone said: $(cat "$T/err")"
python3 - "$T/r.json" <<'PY' || fail "-J's indentation"
import json, sys
text = open(sys.argv[1]).read()
doc = json.loads(text)
depth, in_string, escaped, nested = 0, False, False, 0
for number, line in enumerate(text.split("\n")[:-1], 1):
    stripped = line.lstrip(" ")
    want = 2 * (depth - (stripped[:1] in ("]", "}")))
    if len(line) - len(stripped) != want:
        sys.exit("line %d is indented %d, at depth %d wants %d: %s"
                 % (number, len(line) - len(stripped), depth, want, line[:60]))
    if depth >= 2 and stripped[:1] in ("{", "[", '"'):
        nested += 1
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
if depth:
    sys.exit("brackets do not balance")
if nested < 20 or not doc["interleave_sets"] or not doc["filesystem"]["features"]:
    sys.exit("too little nesting to show anything: %d lines" % nested)
print("-J: %d lines two or more levels in, each indented by its depth" % nested)
PY

# -J with the table's options: the same report, and one line saying so.
run_status e2frag -J -o PATH -o PATH,SIZE -N 3 "$img" > "$T/o.json" 2> "$T/err"
[ "$status" -eq 1 ] || fail "e2frag -J -o exited $status"
cmp -s "$T/o.json" "$T/r.json" || fail "-o changed -J's report"
[ "$(wc -l < "$T/err")" -eq 1 ] || fail "-J -o -o -N: $(wc -l < "$T/err") lines on stderr: $(cat "$T/err")"
grep -q '^e2frag: -J prints the whole report.*: -o, --top ignored' "$T/err" ||
	fail "-J -o: '$(cat "$T/err")'"
# -l -J takes -o: nothing to say.
run_status e2frag -l -J -o PATH "$img" > "$T/t.json" 2> "$T/err"
[ ! -s "$T/err" ] || fail "-l -J -o said: $(cat "$T/err")"
python3 -c 'import json, sys
files = json.load(open(sys.argv[1]))["files"]
assert files and all(list(f) == ["path"] for f in files), files[:2]' "$T/t.json" ||
	fail "-l -J -o PATH"
echo "-J -o -N: one line on stderr, the report unchanged; -l -J -o: silent"
exit 0
