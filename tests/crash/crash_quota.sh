#!/bin/sh
# Power cuts at every write of quota-updating switches (cutsweep.sh -a):
# on ext4 with user, group and project quota, testmove scatters /s (its
# extent tree grows, depth 0 -> 1), then e2defrag moves it back whole
# (the tree shrinks, 1 -> 0), each switch changing the usage of three
# quota files.  (Depth 2 -> 1, replayed: switch_quota.sh.)  After every cut, the journal replayed
# alone leaves a filesystem e2fsck -fn finds clean (it checks the usage),
# and e2fsck -fy loses no file's data.  Without a journal (ordered
# writes), e2fsck fixes no more than leaked blocks and counts (the free
# counts, and an id's space in the quota files).
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs tune2fs python3 sha256sum cmp e2defrag testmove iolog_replay
need_iolog
mkwork

img=$WORK/quota.img
mkimg "$img" 4096 -t ext4 -b 1024 -I 256 -O quota,project \
	-E quotatype=usrquota:grpquota:prjquota
make_quota "$img" "$WORK"
runs=$(scattered_runs "$img" 7) || fail "no room for /s's scattered target"
work="testmove -t $runs \"\$IMAGE\" /s && e2defrag \"\$IMAGE\" /s"
cp "$img" "$WORK/nojournal.img"
tune2fs -O ^has_journal "$WORK/nojournal.img" > /dev/null 2>&1 || fail "tune2fs -O ^has_journal"
mv "$img" "$WORK/journal.img"

total_n=0 total_l=0 total_c=0
for variant in journal nojournal; do
	img=$WORK/$variant.img
	# The run being cut must change the trees: /s grows, then both shrink.
	cp "$img" "$WORK/whole.img"
	testmove -t "$runs" "$WORK/whole.img" /s > /dev/null 2>&1 || fail "$variant: testmove failed"
	[ "$(depth "$WORK/whole.img" /s)" -eq 1 ] || fail "$variant: /s did not grow a tree"
	e2defrag "$WORK/whole.img" /s > /dev/null 2>&1 || fail "$variant: e2defrag failed"
	[ "$(depth "$WORK/whole.img" /s)" -eq 0 ] || fail "$variant: e2defrag did not shrink /s's tree"
	clean "$WORK/whole.img" || { cat "$WORK/fsck.out"; fail "$variant: e2fsck -fn after the whole run"; }
	quota_matches "$WORK/whole.img" > /dev/null || fail "$variant: quota usage off after the whole run"
	sh "$top_srcdir/tests/crash/cutsweep.sh" -a -r 0 -p 0 -n "quota-$variant" "$img" \
		"$work" \
		> "$WORK/sweep.out" 2> "$WORK/sweep.err"
	cat "$WORK/sweep.out"
	head -20 "$WORK/sweep.err"
	set -- $(sweep_line "$WORK/sweep.out")
	[ $# -eq 3 ] || fail "$variant: no summary from cutsweep.sh"
	total_n=$((total_n + $1)) total_l=$((total_l + $2)) total_c=$((total_c + $3))
done
echo "cut points $total_n, data lost $total_l, not clean after replay $total_c"
[ "$total_l" -eq 0 ] && [ "$total_c" -eq 0 ] || fail "power cuts lose data or leave damage"
