#!/bin/sh
# Interleaving on e2fragimg's recorders: N streams written round robin
# (its manifest's sets are the ground truth) each name all the others and
# form exactly one interleave set, on ext2, ext3 and ext4; the same streams
# with large reservation windows (seed 000's fix) interleave with nothing;
# and so do the files of an untarred tree, each written alone.
. "$top_srcdir/tests/lib/common.sh"

# check_sets REPORT MANIFEST: the manifest's sets are e2frag's sets.
check_sets() {
	python3 - "$1" "$2" <<'PY'
import json, sys
r, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
by_path = {f["path"]: f for f in r["files"]}
want = [sorted(by_path[p]["ino"] for p in s) for s in m["sets"]]
got = sorted(sorted(s["files"]) for s in r["interleave_sets"])
if sorted(want) != got:
    sys.exit("FAIL: interleave sets %s, the manifest says %s" % (got, sorted(want)))
for s in want:
    for ino in s:
        f = [f for f in r["files"] if f["ino"] == ino][0]
        if sorted(f["interleaved_with"]) != [i for i in s if i != ino]:
            sys.exit("FAIL: %s interleaves with %s" % (f["path"], f["interleaved_with"]))
alone = [f["path"] for f in m["files"] if f["set"] is None]
for p in alone:
    if by_path[p]["interleaved_with"]:
        sys.exit("FAIL: %s was written alone but interleaves" % p)
print("# %d set(s) of %s files, %d written alone" % (len(want), [len(s) for s in want], len(alone)))
PY
}

for spec in "ext2 2 4K" "ext3 4 4K" "ext4 8 16K" "ext4 16 4K"; do
	set -- $spec
	img=$T/streams.img
	e2fragimg -q --workload streams --type "$1" --streams "$2" --chunk "$3" \
		--total 16M --size 64M "$img" || fail "e2fragimg streams $spec"
	run_status e2frag --json "$img" > "$T/r.json"
	[ "$status" -eq 1 ] || fail "$spec: interleaved streams should recommend e2defrag (exit $status)"
	check_sets "$T/r.json" "$img.json" || fail "$spec"
done

# Reservation windows large enough for a whole stream: nothing interleaves.
e2fragimg -q --workload streams --type ext3 --streams 4 --total 16M --size 64M \
	--reservation 2048 "$T/fixed.img" || fail "e2fragimg --reservation"
run_status e2frag --json "$T/fixed.img" > "$T/f.json"
python3 - "$T/f.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
if r["interleave_sets"] or r["summary"]["interleaved_files"]:
    sys.exit("FAIL: reserved streams interleave: %s" % r["interleave_sets"])
PY

# An untarred tree: every regular file was written alone.
e2fragimg -q --workload tree --files 3000 --type ext4 "$T/tree.img" || fail "e2fragimg tree"
run_status e2frag --json "$T/tree.img" > "$T/t.json"
[ "$status" -le 1 ] || fail "tree: e2frag exited $status"
python3 - "$T/t.json" "$T/tree.img.json" <<'PY' || exit 1
import json, sys
r, m = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
by_path = {f["path"]: f for f in r["files"]}
bad = [f["path"] for f in m["files"] if f["path"] in by_path and by_path[f["path"]]["interleaved_with"]]
if bad:
    sys.exit("FAIL: files of the tree interleave: %s" % bad[:5])
print("# tree: %d files, none interleaved" % len(m["files"]))
PY
