#!/bin/sh
# A large interleave set (more than 10 files) is outlined: the directories
# its members are in and the pairs that alternate most.  Built block by
# block with debugfs, so the truth is how it was built: 14 streams in /a
# (8), /b (4) and /c (2) take one block each, round robin, three rounds;
# then /c/s0 and /c/s1 go on alone for three more.  Every pair of streams
# alternates x..y..x..y..x..y (6 runs: 4 enclosures) but /c/s0 and /c/s1,
# whose 12 runs make 10.
. "$top_srcdir/tests/lib/common.sh"

img=$T/large.img
bs=1024
mkfs_img "$img" ext2 $bs 8M
debugfs -R "ffb 100 1000" "$img" 2>/dev/null | tr -s ' ' '\n' | grep -E '^[0-9]+$' > "$T/free"
first=$(head -1 "$T/free")
[ "$(tail -1 "$T/free")" -eq $((first + 99)) ] ||
	fail "precondition: no 100 contiguous free blocks at 1000"

streams="/a/s0 /a/s1 /a/s2 /a/s3 /a/s4 /a/s5 /a/s6 /a/s7 /b/s0 /b/s1 /b/s2 /b/s3 /c/s0 /c/s1"
# blocks_of N ROUNDS: the blocks of stream N (0..13)
blocks_of() {
	n=$1
	for k in 0 1 2; do printf '%s ' $((first + k * 14 + n)); done
	if [ "$n" -ge 12 ]; then
		for k in 0 1 2; do printf '%s ' $((first + 42 + k * 2 + n - 12)); done
	fi
}
{
	echo "mkdir a"; echo "mkdir b"; echo "mkdir c"
	n=0
	for name in $streams; do
		echo "write /dev/null $name"
		i=0
		for b in $(blocks_of $n); do
			echo "sif $name block[$i] $b"
			echo "setb $b"
			i=$((i + 1))
		done
		echo "sif $name size $((i * bs))"
		echo "sif $name blocks $((i * bs / 512))"
		n=$((n + 1))
	done
} > "$T/cmds"
dfs "$img" "$T/cmds"
e2fsck -fy "$img" >/dev/null 2>&1	# the free counts debugfs left behind
fsck_clean "$img"
n=0
for name in $streams; do
	got=$(debugfs -R "blocks $name" "$img" 2>/dev/null)
	[ "$(echo $got)" = "$(echo $(blocks_of $n))" ] ||
		fail "precondition: $name has blocks '$got', expected '$(blocks_of $n)'"
	n=$((n + 1))
done

run_status e2frag --json "$img" > "$T/r.json"
[ "$status" -le 1 ] || fail "e2frag --json exited $status"
python3 - "$T/r.json" $streams <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
streams = sys.argv[2:]
ino = {f["path"]: f["ino"] for f in r["files"]}
sets = r["interleave_sets"]
if len(sets) != 1 or sorted(sets[0]["paths"]) != sorted(streams):
    sys.exit("FAIL: expected one set of the 14 streams, got %s" % [s["paths"] for s in sets])
s = sets[0]
# 91 pairs: 90 of 4 enclosures, one of 10.
if s["alternations"] != 90 * 4 + 10:
    sys.exit("FAIL: the set has %d alternations, expected 370" % s["alternations"])
if s["directory_count"] != 3:
    sys.exit("FAIL: directory_count %s, expected 3" % s["directory_count"])
want = [{"ino": ino[d], "path": d, "files": n} for d, n in (("/a", 8), ("/b", 4), ("/c", 2))]
if s["top_directories"] != want:
    sys.exit("FAIL: top_directories %s, expected %s" % (s["top_directories"], want))
pairs = s["strongest_pairs"]
if len(pairs) != 5:
    sys.exit("FAIL: %d strongest pairs, expected 5" % len(pairs))
c = sorted([ino["/c/s0"], ino["/c/s1"]])
if pairs[0] != {"files": c, "paths": ["/c/s0", "/c/s1"], "alternations": 10}:
    sys.exit("FAIL: strongest pair %s, expected /c/s0 and /c/s1 with 10" % pairs[0])
for p in pairs[1:]:
    if p["alternations"] != 4 or p["files"][0] >= p["files"][1]:
        sys.exit("FAIL: pair %s, expected 4 alternations, inodes ascending" % p)
print("# one set of 14, outlined: %s; %s" % (want, pairs[0]))
PY
[ $? -eq 0 ] || exit 1

run_status e2frag "$img" > "$T/r.txt"
[ "$status" -le 1 ] || fail "e2frag exited $status"
grep -q "^              set 1: 14 files" "$T/r.txt" || fail "no set of 14 in: $(cat "$T/r.txt")"
grep -qx "                in 3 directories, most in /a (8 files), /b (4), /c (2)" "$T/r.txt" ||
	fail "no directory outline in: $(cat "$T/r.txt")"
grep -qx "                strongest pairs: /c/s0 and /c/s1, 10 alternations" "$T/r.txt" ||
	fail "no strongest pair in: $(cat "$T/r.txt")"
[ "$(grep -c "alternations$" "$T/r.txt")" -eq 3 ] || fail "expected three pairs in: $(cat "$T/r.txt")"
# The outline stands in for the member list; -i adds the list to it.
grep -q "/a/s0 /a/s1" "$T/r.txt" && fail "a set of 14 still lists paths on one line"
run_status e2frag -i "$img" > "$T/ri.txt"
grep -q "in 3 directories" "$T/ri.txt" && [ "$(grep -c "pieces, 13 partners" "$T/ri.txt")" -eq 14 ] ||
	fail "e2frag -i: no outline or not 14 members of 13 partners: $(cat "$T/ri.txt")"
exit 0
