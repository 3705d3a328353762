#!/bin/sh
# The power-cut harness on a bounded sample (make check; `make crashtest`
# runs the full sweep): e2defrag deinterleaving small stream images, ext2
# (ordered writes) and ext4 (journal, checksum v3); every flush boundary
# of the run, 30 random subsets of the writes between flushes and 5
# prefixes, each.  Then a control: a run that clobbers an inode table
# block must be caught.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum cmp e2defrag testmove iolog_replay jtool
need_iolog
mkwork

total_n=0 total_l=0 total_c=0
sweep() {
	name=$1 img=$2
	[ -n "$(fragmented_files "$img")" ] || fail "$name: no fragmented file to move"
	# The run being cut must really move the files: afterwards every file
	# is in one piece, by debugfs's block lists (tests/lib/oracle.py).
	cp "$img" "$WORK/whole.img"
	e2defrag "$WORK/whole.img" > /dev/null 2>&1 || fail "$name: e2defrag failed"
	python3 "$top_srcdir/tests/lib/oracle.py" layout "$WORK/whole.img" |
		python3 -c 'import json, sys
left = [f["path"] for f in json.load(sys.stdin).values() if f["type"] == "f" and f["pieces"] > 1]
sys.exit("left in pieces: %s" % left if left else 0)' || fail "$name: e2defrag left files in pieces"
	sh "$top_srcdir/tests/crash/cutsweep.sh" -r 30 -p 5 -s 7 -n "$name" "$img" \
		"e2defrag \"\$IMAGE\"" > "$WORK/sweep.out" 2> "$WORK/sweep.err"
	cat "$WORK/sweep.out"
	head -20 "$WORK/sweep.err"
	set -- $(sweep_line "$WORK/sweep.out")
	[ $# -eq 3 ] || fail "$name: no summary from cutsweep.sh"
	total_n=$((total_n + $1)) total_l=$((total_l + $2)) total_c=$((total_c + $3))
}

img=$WORK/ext2.img
mkimg "$img" 4096 -t ext2 -b 1024
make_streams "$img" 3 40 "$WORK"
sweep ext2-streams "$img"

img=$WORK/ext4.img
mkimg "$img" 8192 -t ext4 -b 1024
make_streams "$img" 3 40 "$WORK"
sweep ext4-streams "$img"

echo "cut points $total_n, data lost $total_l, not clean after replay $total_c"
[ "$total_l" -eq 0 ] && [ "$total_c" -eq 0 ] || fail "power cuts lose data or leave damage"

# The control: the harness must notice an unsafe write.
img=$WORK/ext2.img
ib=$(debugfs -R "imap /s1" "$img" 2>/dev/null | sed -n 's/.*located at block \([0-9]*\),.*/\1/p')
sh "$top_srcdir/tests/crash/cutsweep.sh" -r 3 -p 0 -n control "$img" \
	"testmove \"\$IMAGE\" /s0 && jtool \"\$IMAGE\" clobber $ib" > "$WORK/sweep.out" 2>/dev/null &&
	fail "control: a clobbered inode table block went unnoticed"
set -- $(sweep_line "$WORK/sweep.out")
[ $# -eq 3 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] ||
	{ cat "$WORK/sweep.out"; fail "control: expected data lost and not clean"; }
echo "ok control: $(cat "$WORK/sweep.out")"
