#!/bin/sh
# --pack against the run without it, on e2fragimg's mixed ext2 1 KiB disk
# (128 MiB, 16 block groups, free space in 4 runs), where placing every
# file at its best leaves more free runs than before that packing the
# zones cannot join.  --pack used to take that placing back and then give
# the files fewer pieces in the free runs one by one: 7 of 22 files short
# of best and free space in 19 runs.  Both runs are made for real, on
# copies of one image, and checked against oracles of their own:
#   best       files in more pieces than their best, per
#              tests/lib/best_oracle.py (dumpe2fs and debugfs): --pack
#              leaves none, and never more than the run without it
#   free runs  counted from dumpe2fs's free blocks lists: --pack ends in
#              no more than before or than block groups, and no more
#              than the run without it
#   clean      e2fsck -fn; every file's sha256 as in the manifest (debugfs
#              dump); stat fields unchanged (debugfs stat)
#   settled    after --pack, --pack -n plans nothing (a packed disk has no
#              write left that changes pieces or free runs), and a real
#              second --pack leaves the image byte-identical
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v dumpe2fs >/dev/null 2>&1 || { echo "skip: dumpe2fs not found"; exit 77; }

# free_runs IMG: runs of free blocks, from every group's "Free blocks:"
# list in dumpe2fs, ranges that touch across groups counted as one.
free_runs() {
	dumpe2fs "$1" 2>/dev/null | python3 -c '
import re, sys
runs, end = 0, None
for line in sys.stdin:
    m = re.match(r"\s+Free blocks: (.*)", line)
    if not m or not m.group(1).strip():
        continue
    for r in m.group(1).split(","):
        a, _, b = r.strip().partition("-")
        a, b = int(a), int(b or a)
        if end is None or a != end + 1:
            runs += 1
        end = b
print(runs)' || fail "dumpe2fs $1"
}

img=$T/mixed.img
e2fragimg -q -w mixed -t ext2 -b 1024 "$img" || fail "e2fragimg"
snapshot "$img" "$T/before.json"
runs0=$(free_runs "$img")
groups=$(groups "$img")
left0=$(avoidable "$img") || fail "the oracle before"
[ "$left0" -gt 0 ] || fail "nothing avoidably fragmented: the case tests nothing"
cp "$img" "$T/default.img"
cp "$img.json" "$T/default.img.json"

e2defrag "$T/default.img" > "$T/default.out" 2>&1 ||
	{ cat "$T/default.out"; fail "e2defrag exited $?"; }
left_d=$(avoidable "$T/default.img") || fail "the oracle after the default run"
runs_d=$(free_runs "$T/default.img")

e2defrag --pack "$img" > "$T/pack.out" 2>&1 ||
	{ cat "$T/pack.out"; fail "e2defrag --pack exited $?"; }
check_clean "$img"
check_manifest "$img"
snapshot "$img" "$T/after.json"
same_snapshot "$T/before.json" "$T/after.json"
left_p=$(avoidable "$img") || fail "the oracle after --pack"
runs_p=$(free_runs "$img")
echo "# avoidably fragmented $left0 -> $left_d (default), $left_p (--pack);" \
	"free runs $runs0 -> $runs_d (default), $runs_p (--pack), $groups block groups"
[ "$left_p" -eq 0 ] || fail "--pack left $left_p files short of best: $(avoidable_list)"
[ "$left_p" -le "$left_d" ] ||
	fail "--pack left $left_p files short of best, the run without it $left_d"
[ "$runs_p" -le "$runs0" ] || [ "$runs_p" -le "$groups" ] ||
	fail "--pack: free runs $runs0 -> $runs_p, in $groups block groups"
[ "$runs_p" -le "$runs_d" ] ||
	fail "--pack: free runs $runs0 -> $runs_p, the run without it $runs_d"

e2defrag --pack -n -J "$img" > "$T/again.json" || fail "--pack -n -J after --pack exited $?"
[ "$(json_get "$T/again.json" 'j["plan"]["moves"]')" -eq 0 ] ||
	fail "--pack -n after --pack plans $(json_get "$T/again.json" 'j["plan"]["bytes_to_write"]') bytes"
cp "$img" "$T/packed.img"
e2defrag --pack "$img" > "$T/again.out" 2>&1 ||
	{ cat "$T/again.out"; fail "a second --pack exited $?"; }
cmp -s "$img" "$T/packed.img" || fail "a second --pack changed the image"
exit 0
