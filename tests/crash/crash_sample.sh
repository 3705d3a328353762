#!/bin/sh
# The power-cut harness on a bounded sample (make check; `make crashtest`
# runs the full sweep): small interleaved-stream images, ext2 (ordered
# writes) and ext4 (journal, checksum v3), every file moved by the test
# mover; every flush boundary of the run, 30 random subsets of the writes
# between flushes and 5 prefixes, each.  Then a control: a run that
# clobbers an inode table block must be caught.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum cmp testmove iolog_replay jtool
mkwork

total_n=0 total_l=0 total_c=0
sweep() {
	name=$1 img=$2
	files=$(fragmented_files "$img" | tr '\n' ' ')
	[ -n "$files" ] || fail "$name: no fragmented file to move"
	sh "$top_srcdir/tests/crash/cutsweep.sh" -r 30 -p 5 -s 7 -n "$name" "$img" \
		"testmove \"\$IMAGE\" $files" > "$WORK/sweep.out" 2> "$WORK/sweep.err"
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
