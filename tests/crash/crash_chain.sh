#!/bin/sh
# Power cuts in chains of logged moves (make check): e2fragimg's
# kernel-tree on ext3 with 1 KiB blocks, 600 small files placed as the
# kernel places them, interleaved, so that e2defrag's plan slides files
# into the blocks the files before them left, a chain whose every link
# takes blocks a move of the same batch freed.  Each such move writes
# those blocks through the batch's journal transaction (writer.h's logged
# moves) rather than commit first: the run must make hundreds of moves in
# a few commits with data in the log (its JSON result), and a cut at
# every flush boundary, in random subsets and prefixes of the writes
# between two flushes, and in torn writes (journal copies, descriptors,
# revokes and commits among them) must leave every file whole, old or
# new, and the journal's replay clean (cutsweep.sh).
. "$top_srcdir/tests/crash/lib.sh"
need e2fsck debugfs dumpe2fs python3 sha256sum cmp e2defrag iolog_replay
need_iolog
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
mkwork

img=$WORK/tree.img
e2fragimg -q -w kernel-tree -t ext3 -b 1024 --files 600 -S 1 "$img" ||
	fail "e2fragimg failed"
cp "$img" "$WORK/whole.img"
e2defrag --json "$WORK/whole.img" > "$WORK/whole.json" 2>&1 || fail "e2defrag failed"
set -- $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["result"]
print(r["moves_done"], r["commits"], r["logged_bytes"])' "$WORK/whole.json")
moves=$1 commits=$2 logged=$3
echo "tree: moves $moves, commits $commits, bytes logged $logged"
[ "$moves" -ge 200 ] && [ "$commits" -le 10 ] && [ "$logged" -gt 0 ] ||
	fail "expected hundreds of moves in a few commits, with data logged"
clean "$WORK/whole.img" || { cat "$WORK/fsck.out"; fail "not clean after the run"; }

cut_sweep tree "$img" 30 5 16 3 'e2defrag "$IMAGE"'
grep -q '^tree: torn cuts 16:.*jcopy' "$WORK/sweep.out" ||
	fail "no torn write of a journal copy among the cuts"
[ "$swept_l" -eq 0 ] && [ "$swept_c" -eq 0 ] || fail "power cuts lose data or leave damage"
