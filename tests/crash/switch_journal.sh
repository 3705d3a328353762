#!/bin/sh
# The journalled switch, judged by e2fsprogs' own journal code: files are
# moved with testmove -n (SWITCH_NO_CHECKPOINT: transactions committed and
# left in the log).  Then:
#   - in place nothing has changed yet (debugfs does not replay), and
#     needs_recovery is set;
#   - debugfs logdump shows one transaction per file, logging its inode;
#   - replaying the journal alone (e2fsck -E journal_only) leaves an
#     e2fsck -fn clean filesystem;
#   - e2fsck -fy replays it and finds nothing else to fix, then the files
#     are contiguous and byte-identical;
# on ext3 (1 KiB, 32-bit tags, no checksums), ext4 (4 KiB, 64-bit tags,
# checksum v3, metadata_csum), ext4 with checksum v2 (set by debugfs),
# ext4 without 64bit (v2, 32-bit tags), ext3 with checksum v1.  A corrupted logged copy must make
# e2fsck complain (so the checksums are really checked).  Then escaping,
# wrap-around, the fast-commit area, revoke records and refusals.
. "$top_srcdir/tests/crash/lib.sh"
. "$top_srcdir/tests/lib/invert.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum cmp dd od
mkwork

# replayed_ok NAME IMG: the journal replays to the new layout, cleanly.
replayed_ok() {
	name=$1 img=$2
	cp "$img" "$WORK/jo.img"
	e2fsck -y -E journal_only "$WORK/jo.img" > "$WORK/jo.out" 2>&1 ||
		{ cat "$WORK/jo.out"; fail "$name: e2fsck -E journal_only failed"; }
	clean "$WORK/jo.img" ||
		{ cat "$WORK/fsck.out"; fail "$name: not clean after replaying the journal alone"; }
	cp "$img" "$WORK/user.img"
	e2fsck -fy "$WORK/user.img" > "$WORK/user.out" 2>&1
	rc=$?
	grep -q 'recovering journal' "$WORK/user.out" || fail "$name: e2fsck did not replay"
	# 0, or 1 for "filesystem modified" (the replay itself): nothing to fix.
	[ $rc -le 1 ] || { cat "$WORK/user.out"; fail "$name: e2fsck -fy exit $rc"; }
	! grep -q 'Fix? yes' "$WORK/user.out" ||
		{ cat "$WORK/user.out"; fail "$name: e2fsck fixed something after replay"; }
	clean "$WORK/user.img" || { cat "$WORK/fsck.out"; fail "$name: e2fsck -fn after replay"; }
}

# journal_case NAME KIB JO-ARGS MKE2FS-ARGS...: JO-ARGS ("" or e.g.
# "-c -v 2") are given to debugfs's journal_open first.
journal_case() {
	name=$1 kib=$2 jo=$3
	shift 3
	img=$WORK/$name.img
	mkimg "$img" "$kib" "$@"
	if [ -n "$jo" ]; then
		printf 'jo %s\njc\n' "$jo" > "$WORK/jo.cmds"
		dbg "$img" "$WORK/jo.cmds"
	fi
	make_streams "$img" 4 120 "$WORK"
	snapshot "$img" "$WORK/before"
	testmove -n "$img" /s0 /s1 /s2 /s3 > "$WORK/move.out" 2>&1 ||
		{ cat "$WORK/move.out"; fail "$name: testmove -n failed"; }
	dumpe2fs -h "$img" 2>/dev/null > "$WORK/sb"
	grep -q needs_recovery "$WORK/sb" || fail "$name: needs_recovery not set"
	for k in 0 1 2 3; do
		[ "$(pieces "$img" /s$k)" -gt 1 ] || fail "$name: s$k changed in place"
	done
	logdump "$img" > "$WORK/logdump"
	[ "$(grep -c 'type 2 (commit block)' "$WORK/logdump")" -eq 4 ] ||
		{ cat "$WORK/logdump"; fail "$name: logdump does not show 4 transactions"; }
	for k in 0 1 2 3; do
		ib=$(debugfs -R "imap /s$k" "$img" 2>/dev/null |
		     sed -n 's/.*located at block \([0-9]*\),.*/\1/p')
		grep -q "FS block $ib logged" "$WORK/logdump" ||
			fail "$name: inode block $ib of s$k not in the log"
	done
	replayed_ok "$name" "$img"
	snapshot "$WORK/user.img" "$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" || fail "$name: contents changed"
	for k in 0 1 2 3; do
		[ "$(pieces "$WORK/user.img" /s$k)" -eq 1 ] || fail "$name: s$k not contiguous after replay"
	done
	# Once replayed, the journal is empty again and e2defrag may run.
	testmove "$WORK/user.img" /s0 > "$WORK/move.out" 2>&1 ||
		{ cat "$WORK/move.out"; fail "$name: cannot move after replay"; }
	clean "$WORK/user.img" || fail "$name: second run not clean"
	echo "ok $name: $(grep -m1 '^Journal features' "$WORK/sb" | sed 's/  */ /g')"
}

journal_case ext3-1k 8192 "" -t ext3 -b 1024
journal_case ext4-4k-v3 16384 "" -t ext4 -b 4096
journal_case ext4-1k-v2 8192 "-c -v 2" -t ext4 -b 1024
journal_case ext4-32bit-v2 8192 "-c -v 2" -t ext4 -O ^64bit -b 1024
# debugfs sets checksum v1 (journal_checksum) for "-c -v 1".
journal_case ext3-1k-v1 8192 "-c -v 1" -t ext3 -b 1024
grep -q 'Journal features:.*journal_checksum$' "$WORK/sb" ||
	fail "ext3-1k-v1: the journal did not have checksum v1"

# Checksums are checked: a flipped byte in a logged copy (the first copy
# after the first descriptor) makes e2fsck's recovery complain.
img=$WORK/ext4-4k-v3.img
logdump "$img" > "$WORK/logdump"
jb=$(sed -n 's/.*logged at journal block \([0-9]*\).*/\1/p' "$WORK/logdump" | head -1)
pb=$(debugfs -R "bmap <8> $jb" "$img" 2>/dev/null)
[ -n "$pb" ] || fail "csum: no journal block"
invert "$img" $((pb * 4096 + 100)) 1
e2fsck -fy "$img" > "$WORK/bad.out" 2>&1
grep -qi 'checksum' "$WORK/bad.out" || { cat "$WORK/bad.out"; fail "csum: corruption not noticed"; }
echo "ok corrupted copy noticed"

# Escaping: a file moved onto blocks 6-9,11-13,16,19-21,27-28,31 of group
# 4 (its extent block first) makes the group's bitmap start with the bytes
# c0 3b 39 98, the journal's magic.  The copy in the log must be escaped
# (zeroed, flag 1) and replay must put the magic back.  (Group 4: no
# backup superblock, no journal, no bitmaps or inode tables with flex_bg.)
img=$WORK/escape.img
mkimg "$img" 40960 -t ext4 -b 1024
gen_file "$WORK/f" $((13 * 1024)) escape
echo "write $WORK/f f" > "$WORK/c"
dbg "$img" "$WORK/c"
dumpe2fs "$img" 2>/dev/null > "$WORK/dump"
b=$((1 + 4 * 8192))
grep -q "Free blocks: $b-" "$WORK/dump" || fail "escape: group 4 not free"
bb=$(awk '/^Group 4:/ { g = 1 } g && /Block bitmap at/ { sub(/.*Block bitmap at /, ""); sub(/ .*/, ""); print; exit }' "$WORK/dump")
testmove -n -t $((b+6))-$((b+9)),$((b+11))-$((b+13)),$((b+16)),$((b+19))-$((b+21)),$((b+27))-$((b+28)),$((b+31)) \
	"$img" /f > "$WORK/move.out" 2>&1 || { cat "$WORK/move.out"; fail "escape: testmove failed"; }
logdump "$img" > "$WORK/logdump"
line=$(grep "FS block $bb logged" "$WORK/logdump")
[ -n "$line" ] || { cat "$WORK/logdump"; fail "escape: bitmap block $bb not logged"; }
flags=$(echo "$line" | sed 's/.*flags \(0x[0-9a-f]*\).*/\1/')
[ $((flags & 1)) -eq 1 ] || fail "escape: tag flags $flags lack the escape bit"
jb=$(echo "$line" | sed 's/.*journal block \([0-9]*\).*/\1/')
pb=$(debugfs -R "bmap <8> $jb" "$img" 2>/dev/null)
[ "$(dd if="$img" bs=1024 skip="$pb" count=1 2>/dev/null | od -An -tx1 -N4 | tr -d ' ')" = 00000000 ] ||
	fail "escape: the logged copy still starts with the magic"
replayed_ok escape "$img"
[ "$(dd if="$WORK/user.img" bs=1024 skip="$bb" count=1 2>/dev/null | od -An -tx1 -N4 | tr -d ' ')" = c03b3998 ] ||
	fail "escape: replay did not restore the bitmap's first bytes"
echo "ok escape"

# Wrap-around: a 1024-block journal, two files moved back and forth 100
# times without checkpoints: the log fills, is checkpointed to make room,
# and the transactions left in it run past its end to its start.
img=$WORK/wrap.img
mkimg "$img" 8192 -t ext3 -b 1024 -J size=1
gen_file "$WORK/a" $((30 * 1024)) wrapa
gen_file "$WORK/b" $((20 * 1024)) wrapb
printf 'write %s A\nwrite %s B\n' "$WORK/a" "$WORK/b" > "$WORK/c"
dbg "$img" "$WORK/c"
snapshot "$img" "$WORK/before"
testmove -n -r 100 "$img" /A /B > "$WORK/move.out" 2>&1 ||
	{ cat "$WORK/move.out"; fail "wrap: testmove failed"; }
logdump "$img" > "$WORK/logdump"
# Log positions in logdump order must go down somewhere: a wrap.
sed -n 's/.*at block \([0-9]*\)$/\1/p; s/.*logged at journal block \([0-9]*\).*/\1/p' "$WORK/logdump" |
	awk 'NR > 1 && $1 < last { w = 1 } { last = $1 } END { exit !w }' ||
	{ cat "$WORK/logdump"; fail "wrap: the live log does not wrap around"; }
replayed_ok wrap "$img"
snapshot "$WORK/user.img" "$WORK/after"
cmp -s "$WORK/before" "$WORK/after" || fail "wrap: contents changed"
for f in A B; do
	want=$(grep "^moved /$f " "$WORK/move.out" | tail -1 | sed 's/.* to //')
	got=$(file_blocks "$WORK/user.img" /$f | sort -n | awk 'NR == 1 { s = $1 } { e = $1 } END { print s "-" e }')
	[ "$want" = "$got" ] || fail "wrap: /$f at $got after replay, last moved to $want"
done
echo "ok wrap"

# The fast-commit area (the last s_num_fc_blks blocks of the journal) is
# never written, with checkpoints or without.
img=$WORK/fc.img
mkimg "$img" 16384 -t ext4 -O fast_commit -b 1024 -J size=1
fc=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Fast commit length:/ { print $4 }')
total=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Total journal blocks:/ { print $4 }')
[ "${fc:-0}" -gt 0 ] || fail "fc: no fast-commit area"
printf 'write %s A\nwrite %s B\n' "$WORK/a" "$WORK/b" > "$WORK/c"
dbg "$img" "$WORK/c"
fcarea() {
	i=$((total - fc))
	while [ $i -lt "$total" ]; do
		p=$(debugfs -R "bmap <8> $i" "$1" 2>/dev/null)
		dd if="$1" bs=1024 skip="$p" count=1 2>/dev/null | sha256sum
		i=$((i + 1))
	done
}
fcarea "$img" > "$WORK/fc.before"
testmove -r 100 "$img" /A /B > "$WORK/move.out" 2>&1 || fail "fc: testmove failed"
testmove -n -r 100 "$img" /A /B > "$WORK/move.out" 2>&1 || fail "fc: testmove -n failed"
fcarea "$img" > "$WORK/fc.after"
cmp -s "$WORK/fc.before" "$WORK/fc.after" || fail "fc: the fast-commit area was written"
replayed_ok fc "$img"
echo "ok fast-commit area untouched ($fc blocks)"

# With a fast-commit area the log never wraps: a transaction that ends
# exactly at its end leaves it full, and the next one must checkpoint
# before it starts again at s_first (else it overwrites the live log,
# whose transactions then never replay).  jtool fill logs blocks 9000...
# with byte k+1 in one-block transactions, one sized to end at the end of
# the log, then one more; e2fsck's replay must bring back every one.
img=$WORK/fcfill.img
mkimg "$img" 16384 -t ext4 -O fast_commit -b 1024 -J size=1
n=$(jtool "$img" fill 9000 2> "$WORK/jtool.out") || { cat "$WORK/jtool.out"; fail "fcfill: jtool failed"; }
replayed_ok fcfill "$WORK/fcfill.img"
python3 - "$WORK/user.img" 9000 "$n" <<'EOF2' || fail "fcfill: committed blocks lost by the replay"
import sys
img, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = open(img, 'rb')
bad = []
for k in range(n):
    f.seek((first + k) * 1024)
    if f.read(1024) != bytes([(k + 1) & 0xff]) * 1024:
        bad.append(first + k)
if bad:
    print("blocks without their logged contents: %d, first %d" % (len(bad), bad[0]))
    sys.exit(1)
EOF2
echo "ok fast-commit log filled to its end ($n blocks)"

# Revoke: block 9000 logged by one transaction, revoked by the next, then
# written with data.  Replay must leave the data ('D'), not the logged
# copy ('J'); the control without the revoke shows the difference.
for mode in revoke norevoke; do
	img=$WORK/$mode.img
	mkimg "$img" 16384 -t ext4 -b 1024
	jtool "$img" $mode 9000 > "$WORK/jtool.out" 2>&1 || fail "$mode: jtool failed"
	logdump "$img" > "$WORK/logdump"
	replayed_ok $mode "$img"
	got=$(dd if="$WORK/user.img" bs=1024 skip=9000 count=1 2>/dev/null | head -c 4)
	if [ $mode = revoke ]; then
		grep -q 'Revoke FS block 9000' "$WORK/logdump" || fail "revoke: no revoke record"
		[ "$got" = DDDD ] || fail "revoke: replay wrote the revoked copy back"
	else
		[ "$got" = JJJJ ] || fail "norevoke: control did not replay the copy"
	fi
done
echo "ok revoke"

# Refusals: a journal with transactions to replay, an external journal.
img=$WORK/ext3-1k.img
cp "$img" "$WORK/orig.img"
if testmove "$img" /s1 > "$WORK/move.out" 2>&1; then
	fail "needs_recovery: testmove ran"
fi
grep -q 'recovery' "$WORK/move.out" || { cat "$WORK/move.out"; fail "needs_recovery: wrong error"; }
cmp -s "$img" "$WORK/orig.img" || fail "needs_recovery: image changed"
img=$WORK/ext.img
mkimg "$img" 8192 -t ext3 -b 1024
printf 'write %s A\nssv journal_inum 0\nssv journal_dev 0x801\nssv journal_uuid 1b4e28ba-2fa1-11d2-883f-0016d3cca427\n' "$WORK/a" > "$WORK/c"
dbg "$img" "$WORK/c"
cp "$img" "$WORK/orig.img"
if testmove "$img" /A > "$WORK/move.out" 2>&1; then
	fail "external journal: testmove ran"
fi
grep -q 'external journal' "$WORK/move.out" || { cat "$WORK/move.out"; fail "external: wrong error"; }
cmp -s "$img" "$WORK/orig.img" || fail "external journal: image changed"
# A hole in the journal inode where the log starts (4 KiB blocks, so
# s_first_data_block is 0): the log block would go to block 0, over the
# superblock.  e2fsck -fn does not mind the hole; the writer must.
img=$WORK/hole.img
mkimg "$img" 16384 -t ext4 -b 4096
printf 'write %s A\npunch <8> 1 1\n' "$WORK/a" > "$WORK/c"
dbg "$img" "$WORK/c"
[ "$(debugfs -R 'bmap <8> 1' "$img" 2>/dev/null)" = 0 ] || fail "journal hole: not punched"
cp "$img" "$WORK/orig.img"
if testmove "$img" /A > "$WORK/move.out" 2>&1; then
	fail "journal hole: testmove ran"
fi
grep -qi 'journal' "$WORK/move.out" || { cat "$WORK/move.out"; fail "journal hole: wrong error"; }
cmp -s "$img" "$WORK/orig.img" || fail "journal hole: image changed"
echo "ok refusals"
