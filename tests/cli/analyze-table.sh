#!/bin/sh
# e2frag's file table (libsmartcols): -l -J, -r, -P, -o +COL, --noheadings
# and --top against the whole report's JSON (-J), which the other tests
# check against debugfs; the shapes util-linux users expect (one header,
# one line per file, \x20 for a space in --raw, KEY="value" a shell can
# eval); the letters one program of the suite does not take in another
# sense (-n, -t), and -j as the old spelling of -J.
. "$top_srcdir/tests/lib/common.sh"

img=$T/s.img
e2fragimg -q --workload streams --type ext4 --streams 3 --total 6M --size 16M \
	--seed 7 "$img" || fail "e2fragimg"
printf 'hello\n' > "$T/small"
printf 'write %s "/with space"\nmkdir /d\nwrite %s /d/one\n' "$T/small" "$T/small" > "$T/cmds"
dfs "$img" "$T/cmds"

run_status e2frag -J "$img" > "$T/r.json"
[ "$status" -le 1 ] || fail "e2frag -J exited $status"
run_status e2frag -j "$img" > "$T/j.json"
cmp -s "$T/r.json" "$T/j.json" || fail "-j does not print what -J prints"
all=$(e2frag --list-columns | awk '{ printf "%s%s", sep, $1; sep = "," }')

# -l -J: every column of every file equals the report's figures.
run_status e2frag -l -J -o "$all" "$img" > "$T/t.json"
[ "$status" -le 1 ] || fail "e2frag -l -J exited $status"
python3 - "$T/r.json" "$T/t.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
rows = t["files"]
files = {f["ino"]: f for f in r["files"]}
if sorted(x["ino"] for x in rows) != sorted(files):
    sys.exit("FAIL: the table lists inodes %s, the report %s" %
             (sorted(x["ino"] for x in rows), sorted(files)))
def near(a, b, tol):
    return abs(a - b) <= tol
for x in rows:
    f = files[x["ino"]]
    lost = f["read_seconds"] - f["ideal_read_seconds"]
    want = {"path": f["path"], "type": f["type"], "size": f["size"],
            "blocks": f["blocks"], "pieces": f["pieces"], "extents": f["extents"],
            "best": f["best"], "pieces/best": "%d/%d" % (f["pieces"], f["best"]),
            "interleaved": len(f["interleaved_with"]), "set": f["interleave_set"]}
    for k, v in want.items():
        if x[k] != v:
            sys.exit("FAIL: %s: %s is %r in the table, %r in the report" % (f["path"], k, x[k], v))
    for k, v, tol in (("read", f["read_seconds"], 1e-6), ("ideal", f["ideal_read_seconds"], 1e-6),
                      ("lost", lost, 2e-6), ("score", f["score"], 0.051),
                      ("efficiency", f["ideal_read_seconds"] / f["read_seconds"]
                       if f["read_seconds"] else 1, 1e-4)):
        if not near(x[k], v, tol):
            sys.exit("FAIL: %s: %s is %r in the table, %r in the report" % (f["path"], k, x[k], v))
losts = [x["lost"] for x in rows]
if losts != sorted(losts, reverse=True):
    sys.exit("FAIL: the table is not ordered by lost read time: %s" % losts)
if not any(x["set"] for x in rows):
    sys.exit("FAIL: no interleaved file in the table: the test image is wrong")
print("# -l -J: %d files, every column as in the report" % len(rows))
PY

# -r: one header, one line per file, the default columns, \x20 for a space;
# --noheadings drops the header; -o +INO adds to the defaults.
files=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["files"]))' "$T/r.json")
run_status e2frag -r "$img" > "$T/raw"
[ "$(head -1 "$T/raw")" = "PATH SIZE PIECES/BEST EFFICIENCY LOST" ] ||
	fail "-r header is '$(head -1 "$T/raw")'"
[ "$(wc -l < "$T/raw")" -eq $((files + 1)) ] || fail "-r printed $(wc -l < "$T/raw") lines for $files files"
awk 'NF != 5 { exit 1 }' "$T/raw" || fail "-r: a line without 5 fields"
grep -q '^/with\\x20space 6 1/1 ' "$T/raw" || fail "-r: no '/with\\x20space 6 1/1' line"
run_status e2frag -r --noheadings -o +INO "$img" > "$T/raw2"
[ "$(wc -l < "$T/raw2")" -eq "$files" ] || fail "--noheadings: $(wc -l < "$T/raw2") lines for $files files"
tail -n +2 "$T/raw" > "$T/raw.body"
cut -d' ' -f1-5 "$T/raw2" | cmp -s - "$T/raw.body" ||
	fail "-o +INO: the first columns differ from the defaults"
python3 - "$T/r.json" "$T/raw2" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
paths = {f["ino"]: f["path"] for f in r["files"]}
for line in open(sys.argv[2]):
    path, size, pb, eff, lost, ino = line.split()
    if path.replace("\\x20", " ") != paths[int(ino)]:
        sys.exit("FAIL: -r: inode %s is %s, the report says %s" % (ino, path, paths[int(ino)]))
PY

# -P: KEY="value" pairs, names a shell can use, values as -r prints them.
# (Not PATH through eval: it would be the shell's PATH.)
run_status e2frag -P -o INO,PIECES/BEST "$img" > "$T/pairs"
[ "$(wc -l < "$T/pairs")" -eq "$files" ] || fail "-P printed $(wc -l < "$T/pairs") lines for $files files"
while IFS= read -r line; do
	PIECES_BEST= INO=
	eval "$line" || fail "-P line does not eval: $line"
	echo "$INO $PIECES_BEST"
done < "$T/pairs" | sort -n > "$T/pairs.got"
python3 -c 'import json,sys; [print("%d %d/%d" % (f["ino"], f["pieces"], f["best"])) for f in json.load(open(sys.argv[1]))["files"]]' \
	"$T/r.json" | sort -n > "$T/pairs.want"
cmp -s "$T/pairs.got" "$T/pairs.want" || fail "-P: INO and PIECES_BEST differ from the report: $(diff "$T/pairs.got" "$T/pairs.want" | head -3)"
run_status e2frag -P -o PATH "$img" > "$T/pairs"
grep -qx 'PATH="/with space"' "$T/pairs" || fail "-P: no PATH=\"/with space\""

# --top limits the table; -l alone is aligned, a header and every file.
run_status e2frag -l -N 2 "$img" > "$T/top"
[ "$(wc -l < "$T/top")" -eq 3 ] || fail "-l -N 2 printed $(wc -l < "$T/top") lines"
run_status e2frag -l --noheadings "$img" > "$T/list"
[ "$(wc -l < "$T/list")" -eq "$files" ] || fail "-l --noheadings: $(wc -l < "$T/list") lines for $files files"
# The text report: the worst files under their header, which --noheadings drops.
run_status e2frag "$img" > "$T/text"
grep -qE '^  PATH +SIZE PIECES/BEST EFFICIENCY +LOST$' "$T/text" || fail "text report: no table header"
run_status e2frag --noheadings "$img" > "$T/text2"
! grep -q 'PIECES/BEST' "$T/text2" || fail "--noheadings: the text report still has the header"
grep -qE '^  /rec0[0-2]\.ts ' "$T/text2" || fail "--noheadings: no worst files"

# PATHs: the text report says its scope, and its counts are the JSON's.
run_status e2frag "$img" /d > "$T/scope"
run_status e2frag -J "$img" /d > "$T/scope.json"
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["files"])' "$T/scope.json")
grep -q "^Scope         /d: files, interleaving and read time below are theirs; free space is the filesystem's$" "$T/scope" ||
	fail "no Scope line naming /d: $(head -2 "$T/scope")"
grep -q "^Files         $want with blocks: " "$T/scope" || fail "/d: the text counts differ from the JSON's $want files"
run_status e2frag "$img" > "$T/noscope"
! grep -q '^Scope' "$T/noscope" || fail "a Scope line without PATHs"

# Letters: -n and -t are other programs' (exit 16, naming what to use);
# raw, pairs and JSON exclude each other.
for args in "-n 5" "-t 20" "-r -P" "-J -r" "-l -J -P" "-o +" "-o +NOPE"; do
	# shellcheck disable=SC2086
	run_status e2frag $args "$img" > "$T/out" 2> "$T/err"
	[ "$status" -eq 16 ] && [ -s "$T/err" ] && [ ! -s "$T/out" ] ||
		fail "'e2frag $args': exit $status, stderr '$(cat "$T/err")'"
done
run_status e2frag -n 5 "$img" 2> "$T/err"
grep -q -- '--top N' "$T/err" && grep -q -- '--noheadings' "$T/err" || fail "-n: '$(cat "$T/err")'"
run_status e2frag -t 20 "$img" 2> "$T/err"
grep -q -- '--threshold 20' "$T/err" || fail "-t: '$(cat "$T/err")'"
note "table: -l -J, -r, -P, -o +COL, --noheadings, --top agree with the report on $files files"
