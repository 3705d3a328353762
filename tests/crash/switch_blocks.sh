#!/bin/sh
# switch_file, without a journal (ordered writes) and with one
# (transactions, checkpointed): fragmented files moved by the test mover
# come out contiguous, byte-identical, the filesystem e2fsck-clean, and
# nothing but the blocks a switch may touch has changed on disk: the
# files' new blocks, block bitmaps, inode tables, the primary descriptors
# and superblock, the journal; never a backup superblock or descriptor.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum cmp
mkwork

# check_run NAME KIB MKE2FS-ARGS...: four interleaved streams, moved.
check_run() {
	name=$1 kib=$2
	shift 2
	img=$WORK/$name.img
	mkimg "$img" "$kib" "$@"
	make_streams "$img" 4 300 "$WORK"
	for k in 0 1 2 3; do
		[ "$(pieces "$img" /s$k)" -gt 1 ] || fail "$name: s$k not fragmented to begin with"
	done
	snapshot "$img" "$WORK/before"
	cp "$img" "$WORK/orig.img"
	testmove "$img" /s0 /s1 /s2 /s3 > "$WORK/move.out" 2>&1 ||
		{ cat "$WORK/move.out"; fail "$name: testmove failed"; }
	clean "$img" || { cat "$WORK/fsck.out"; fail "$name: e2fsck -fn not clean"; }
	dumpe2fs -h "$img" 2>/dev/null > "$WORK/sb"
	! grep -q needs_recovery "$WORK/sb" || fail "$name: needs_recovery left set"
	! grep -q '^Journal start: *[1-9]' "$WORK/sb" || fail "$name: journal not empty"
	grep -q '^Filesystem state: *clean$' "$WORK/sb" || fail "$name: not clean"
	snapshot "$img" "$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" || fail "$name: contents changed"
	for k in 0 1 2 3; do
		[ "$(pieces "$img" /s$k)" -eq 1 ] || fail "$name: s$k still in pieces"
	done
	# Which blocks changed, and were they allowed to?
	meta_blocks "$img" > "$WORK/meta"
	for k in 0 1 2 3; do
		file_blocks "$img" /s$k | sed 's/^/file /'
	done >> "$WORK/meta"
	file_blocks "$img" "<8>" | sed 's/^/journal /' >> "$WORK/meta"
	changed_blocks "$WORK/orig.img" "$img" > "$WORK/changed"
	[ -s "$WORK/changed" ] || fail "$name: nothing changed"
	bad=$(awk 'FNR == NR { kind[$2] = $1; next }
		   { k = ($1 in kind) ? kind[$1] : "free";
		     if (k != "file" && k != "bitmap" && k != "itable" &&
			 k != "gdt" && k != "super" && k != "journal")
			print $1 " (" k ")" }' "$WORK/meta" "$WORK/changed" | head -20)
	[ -z "$bad" ] || fail "$name: blocks written that a switch must not touch: $bad"
	grep -q bitmap "$WORK/meta" || fail "$name: dumpe2fs listing not understood"
	echo "ok $name: $(wc -l < "$WORK/changed") blocks changed, all allowed"
}

check_run ext2-1k 8192 -t ext2 -b 1024
check_run ext2-4k 16384 -t ext2 -b 4096
check_run ext4-nojournal-csum 16384 -t ext4 -O ^has_journal -b 4096
check_run ext4-nojournal-1k 8192 -t ext4 -O ^has_journal,^flex_bg -b 1024
check_run ext3-1k 8192 -t ext3 -b 1024
check_run ext4-4k 16384 -t ext4 -b 4096

# An extent file moved to scattered blocks needs an extent tree block:
# five runs of data and one block for the tree.
img=$WORK/etb.img
mkimg "$img" 8192 -t ext4 -O ^has_journal -b 1024
gen_file "$WORK/f" $((40 * 1024)) etb
echo "write $WORK/f f" > "$WORK/c"
dbg "$img" "$WORK/c"
snapshot "$img" "$WORK/before"
testmove -t 6000,6002-6009,6011-6018,6020-6027,6029-6036,6038-6045 "$img" /f \
	> "$WORK/move.out" 2>&1 || { cat "$WORK/move.out"; fail "etb: testmove failed"; }
clean "$img" || { cat "$WORK/fsck.out"; fail "etb: e2fsck -fn not clean"; }
snapshot "$img" "$WORK/after"
cmp -s "$WORK/before" "$WORK/after" || fail "etb: contents changed"
debugfs -R "stat /f" "$img" 2>/dev/null | grep -q '(ETB0):6000' ||
	fail "etb: no extent tree block at 6000"

# Gained blocks that are in use (testmove -u skips its own check) are
# refused by switch_file before anything is written.
cp "$img" "$WORK/orig.img"
ib=$(debugfs -R "stat /f" "$img" 2>/dev/null | sed -n 's/.*(0-7):\([0-9]*\)-.*/\1/p')
[ -n "$ib" ] || fail "refusal: cannot find /f's blocks"
if testmove -u -t "$ib-$((ib + 40))" "$img" /f > "$WORK/move.out" 2>&1; then
	fail "refusal: moving onto blocks in use succeeded"
fi
grep -q 'not free' "$WORK/move.out" || { cat "$WORK/move.out"; fail "refusal: wrong error"; }
# Only the superblock may differ (s_kbytes_written, counted at close).
sb=$(meta_blocks "$img" | awk '$1 == "super" { print $2 }')
bad=$(changed_blocks "$WORK/orig.img" "$img" | grep -v -x "$sb")
[ -z "$bad" ] || fail "refusal: blocks changed: $bad"
echo "ok etb and refusal"
