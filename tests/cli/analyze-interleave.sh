#!/bin/sh
# Interleaving: files whose blocks were handed out round-robin (built block
# by block with debugfs, so the ground truth is how they were built) name
# each other and form one interleave set per group written together; a
# small file dropped into one hole of another (A..B..A) and a file written
# alone are in no set.  Each construction is checked with debugfs first.
. "$top_srcdir/tests/lib/common.sh"

img=$T/il.img
bs=1024
mkfs_img "$img" ext2 $bs 8M
debugfs -R "ffb 200 1000" "$img" 2>/dev/null | tr -s ' ' '\n' | grep -E '^[0-9]+$' > "$T/free"
first=$(head -1 "$T/free")
[ "$(wc -l < "$T/free")" -eq 200 ] && [ "$(tail -1 "$T/free")" -eq $((first + 199)) ] ||
	fail "precondition: no 200 contiguous free blocks at 1000"

# place NAME BLOCK...: an empty file, then its direct blocks set one by one.
place() {
	name=$1; shift
	echo "write /dev/null $name"
	i=0
	for b in "$@"; do
		echo "sif $name block[$i] $b"
		echo "setb $b"
		i=$((i + 1))
	done
	echo "sif $name size $((i * bs))"
	echo "sif $name blocks $((i * bs / 512))"
}

# Four streams, one block at a time: a 1, b 2, c 3, d 4, a 5, ...
# Three streams, three blocks at a time: x x x y y y z z z x x x ...
# p, then q in one hole of p: p p p q q p p p.
{
	for s in 0 1 2 3; do
		set --
		for k in $(seq 0 11); do set -- "$@" $((first + k * 4 + s)); done
		place "rec$s" "$@"
	done
	base=$((first + 60))
	for s in 0 1 2; do
		set --
		for k in $(seq 0 11); do
			set -- "$@" $((base + (k / 3) * 9 + s * 3 + k % 3))
		done
		place "chan$s" "$@"
	done
	base=$((first + 110))
	place p $base $((base + 1)) $((base + 2)) $((base + 5)) $((base + 6)) $((base + 7))
	place q $((base + 3)) $((base + 4))
} > "$T/cmds"
dfs "$img" "$T/cmds"
dd if=/dev/urandom of="$T/solo" bs=1024 count=20 status=none
echo "write $T/solo solo" > "$T/cmds2"
dfs "$img" "$T/cmds2"
e2fsck -fy "$img" >/dev/null 2>&1	# the free counts debugfs left behind
fsck_clean "$img"

# debugfs must list exactly the blocks we placed.
for s in 0 1 2 3; do
	want=$(for k in $(seq 0 11); do printf '%s ' $((first + k * 4 + s)); done)
	got=$(debugfs -R "blocks rec$s" "$img" 2>/dev/null)
	[ "$(echo $got)" = "$(echo $want)" ] || fail "precondition: rec$s has blocks '$got', expected '$want'"
done

run_status e2frag --json "$img" > "$T/r.json"
[ "$status" -le 1 ] || fail "e2frag exited $status"
python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
by_path = {f["path"]: f for f in r["files"]}
def check(group):
    inos = sorted(by_path[p]["ino"] for p in group)
    sets = {by_path[p]["interleave_set"] for p in group}
    for p in group:
        mates = sorted(i for i in inos if i != by_path[p]["ino"])
        if sorted(by_path[p]["interleaved_with"]) != mates:
            sys.exit("FAIL: %s interleaves with %s, expected %s" % (p, by_path[p]["interleaved_with"], mates))
    if len(sets) != 1 or 0 in sets:
        sys.exit("FAIL: %s are not one interleave set: %s" % (group, sets))
    match = [s for s in r["interleave_sets"] if sorted(s["files"]) == inos]
    if len(match) != 1:
        sys.exit("FAIL: no interleave set of exactly %s" % group)
check(["/rec0", "/rec1", "/rec2", "/rec3"])
check(["/chan0", "/chan1", "/chan2"])
for p in ("/p", "/q", "/solo", "/", "/lost+found"):
    if by_path[p]["interleaved_with"] or by_path[p]["interleave_set"]:
        sys.exit("FAIL: %s should interleave with nothing" % p)
if by_path["/p"]["pieces"] != 2:
    sys.exit("FAIL: /p should be in 2 pieces")
if len(r["interleave_sets"]) != 2 or r["summary"]["interleave_sets"] != 2 or r["summary"]["interleaved_files"] != 7:
    sys.exit("FAIL: expected 2 sets of 7 files, got %d sets, %d files" %
             (len(r["interleave_sets"]), r["summary"]["interleaved_files"]))
print("# 2 interleave sets found: %s" % [s["paths"] for s in r["interleave_sets"]])
PY
