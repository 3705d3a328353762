#!/bin/sh
# The checksums e2defrag(8) SAFETY says are checked, each broken alone on
# an ext4 image with metadata_csum (behind debugfs, which would mend
# them): the superblock's, a block bitmap's, an inode bitmap's (the sums
# the group descriptor keeps, the descriptor's own checksum then made
# right again) and an extent tree block's.  e2fsck -fn must name the same
# problem (the oracle that the test broke what it says); e2defrag, -n, -f
# and -v each exit 8 with one line naming it and say to run e2fsck, and
# the image stays byte for byte as it was.  (Descriptor and inode
# checksums: defrag-damage.sh.)
. "$top_srcdir/tests/cli/defrag-lib.sh"
. "$top_srcdir/tests/lib/invert.sh"

small_image "$T/base.img" ext4
dumpe2fs -h "$T/base.img" 2>/dev/null | grep -q '^Filesystem features:.*metadata_csum' ||
	fail "the ext4 image has no metadata_csum"
[ "$(dumpe2fs -h "$T/base.img" 2>/dev/null | sed -n 's/^Group descriptor size: *//p')" = 64 ] ||
	fail "the descriptors are not 64 bytes"
# Group 0's descriptor: block 1 (4 KiB blocks), the first in its table.
gd=4096

# The superblock: a byte of its volume name (offset 0x78).  e2defrag -n
# and -z say so in the damage line; the run that would write (and -f, -v)
# fails to open the filesystem read-write and says so in libext2fs' words
# (see the report of issue 25): one line, exit 8, naming the superblock's
# checksum, nothing written.
cp "$T/base.img" "$T/sb.img"
invert "$T/sb.img" $((1024 + 0x78)) 1
fsck_damaged sb "$T/sb.img" "Superblock checksum does not match"
refused sb "^e2defrag: .*[Ss]uperblock.*checksum does not match.*Nothing was changed\.$" "$T/sb.img"
expect_rc 8 e2defrag -n "$T/sb.img"
grep -qx "e2defrag: $T/sb.img: the superblock's checksum does not match; run e2fsck -f first. Nothing was changed." "$T/out" ||
	{ cat "$T/out"; fail "sb: e2defrag -n: not the damage line"; }
echo "the undo file of an earlier run" > "$T/old.undo"
expect_rc 8 e2defrag -z "$T/old.undo" "$T/sb.img"
grep -qx "e2defrag: $T/sb.img: the superblock's checksum does not match; run e2fsck -f first. Nothing was changed." "$T/out" ||
	{ cat "$T/out"; fail "sb: e2defrag -z: not the damage line"; }
[ "$(cat "$T/old.undo")" = "the undo file of an earlier run" ] || fail "sb: -z replaced the old undo file"
cmp -s "$T/sb.img" "$T/orig.img" || fail "sb: e2defrag -n or -z changed the image"

# A bitmap's checksum: bg_block_bitmap_csum_lo (0x18) or
# bg_inode_bitmap_csum_lo (0x1a) of group 0, then the descriptor's
# checksum recomputed (debugfs -n: it would not open the image otherwise).
for which in block:24 inode:26; do
	kind=${which%%:*} off=${which#*:}
	cp "$T/base.img" "$T/$kind.img"
	invert "$T/$kind.img" $((gd + off)) 2
	debugfs -n -w -R "set_bg 0 checksum calc" "$T/$kind.img" > /dev/null 2>&1 ||
		fail "$kind: debugfs set_bg 0 checksum calc"
	damaged_exactly "${kind}bitmap" "the checksum of group 0's $kind bitmap does not match" \
		"$T/$kind.img" "Group 0 $kind bitmap does not match checksum"
	grep -q 'descriptor' "$T/fsck.out" && { cat "$T/fsck.out"; fail "$kind: the descriptor's checksum is wrong too"; }
done

# An extent tree block's: /frag (60 blocks in 21 extents) has one; its
# checksum is the last four bytes of the block (the extent tail).
cp "$T/base.img" "$T/etb.img"
etb=$(debugfs -R "stat /frag" "$T/etb.img" 2>/dev/null | sed -n 's/.*(ETB0):\([0-9]*\).*/\1/p')
[ -n "$etb" ] || fail "etb: /frag has no extent tree block"
ino=$(debugfs -R "stat /frag" "$T/etb.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
invert "$T/etb.img" $((etb * 4096 + 4092)) 1
damaged_exactly etb "the checksum of extent tree block $etb of inode $ino (/frag) does not match" \
	"$T/etb.img" "Inode $ino extent block passes checks, but checksum does not match extent"
exit 0
