#!/bin/sh
# A filesystem whose metadata disagree with themselves is never written,
# even when its superblock says clean: e2defrag (and -n, and -f) exits 8
# with one line that names the first problem and says to run e2fsck, and
# the image stays byte-identical.  Each image is damaged with debugfs in
# one way, and e2fsck -fn must call it damaged (the oracle): a block owned
# twice, in use but free in the bitmap, free counts, checksums of
# descriptors and inodes, link counts, and inode flags the features do
# not allow (an extent-mapped or inline-data inode on ext3).  Of two
# problems the lower inode's is named, though the checks meet it last (a
# map walked after the inode table, directories read in disk order).
. "$top_srcdir/tests/cli/defrag-lib.sh"
. "$top_srcdir/tests/lib/invert.sh"

# A block of /frag also given to /other: owned twice.
small_image "$T/base3.img" ext3
small_image "$T/base4.img" ext4
blk=$($ORACLE blocks "$T/base3.img" /frag | head -1)
cp "$T/base3.img" "$T/dup.img"
printf 'hello\n' > "$T/small"
printf 'write %s /other\n' "$T/small" > "$T/c"
dbg "$T/dup.img" "$T/c"
ino=$(debugfs -R "stat /other" "$T/dup.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
fino=$(debugfs -R "stat /frag" "$T/dup.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
debugfs -w -R "sif /other block[0] $blk" "$T/dup.img" >/dev/null 2>&1
# With -z, an old undo file stays as it was: it may be all that undoes
# the last run.
cp "$T/dup.img" "$T/dup.orig"
echo "the undo file of an earlier run" > "$T/old.undo"
expect_rc 8 e2defrag -z "$T/old.undo" "$T/dup.img"
grep -q "run e2fsck -f first" "$T/out" || { cat "$T/out"; fail "-z: not refused as damaged"; }
[ "$(cat "$T/old.undo")" = "the undo file of an earlier run" ] || fail "-z: the old undo file was replaced"
cmp -s "$T/dup.img" "$T/dup.orig" || fail "-z: the image changed"
damaged dup "block $blk is owned by inodes \($fino and $ino\|$ino and $fino\)" "$T/dup.img"

# A block of /frag marked free in the bitmap.
cp "$T/base3.img" "$T/free.img"
debugfs -w -R "freeb $blk" "$T/free.img" >/dev/null 2>&1
damaged free "block $blk is in use by inode $fino (/frag) but free in the block bitmap" "$T/free.img"

# A group's free block count off by one.
cp "$T/base3.img" "$T/count.img"
n=$(dumpe2fs "$T/count.img" 2>/dev/null | sed -n 's/^ *\([0-9]*\) free blocks, .*/\1/p' | head -1)
debugfs -w -R "set_bg 0 free_blocks_count $((n + 1))" "$T/count.img" >/dev/null 2>&1
damaged count "group 0 records $((n + 1)) free blocks, its bitmap $n" "$T/count.img"

# A descriptor checksum (metadata_csum): bg_checksum (offset 0x1e) of
# group 0, in the table at block 1, changed behind debugfs.
cp "$T/base4.img" "$T/gdcsum.img"
invert "$T/gdcsum.img" $((4096 + 30)) 2
damaged gdcsum "the checksum of group 0's descriptor does not match" "$T/gdcsum.img"

# An inode checksum: one byte of /frag's i_mtime inverted behind debugfs.
cp "$T/base4.img" "$T/icsum.img"
set -- $(debugfs -R "imap /frag" "$T/icsum.img" 2>/dev/null |
	 sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
[ $# -eq 2 ] || fail "icsum: no inode location for /frag"
invert "$T/icsum.img" $(($1 * 4096 + $2 + 16)) 1
damaged icsum "the checksum of inode [0-9]* (/frag) does not match" "$T/icsum.img"

# A second name for /ok/one that its link count does not know.
cp "$T/base3.img" "$T/links.img"
debugfs -w -R "ln /ok/one /ok/two" "$T/links.img" >/dev/null 2>&1
damaged links "(/ok/one) has 1 link but 2 entries name it" "$T/links.img"

# The first problem in inode order is the one named, whatever order the
# checks meet them in.  /big's map (an indirect block) is walked after
# every inode is read, and its size disagrees with it; /late, a later
# inode, has an attribute block outside the filesystem.
make_image "$T/order.img" ext3 4096 32M
gen "$T/big20" $((4096 * 20)) 23
printf 'x\n' > "$T/small"
printf 'write %s /big\nwrite %s /late\n' "$T/big20" "$T/small" > "$T/c"
dbg "$T/order.img" "$T/c"
$ORACLE blocks "$T/order.img" /big | wc -l | grep -qx 21 || fail "order: /big has no indirect block"
bino=$(debugfs -R "stat /big" "$T/order.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
lino=$(debugfs -R "stat /late" "$T/order.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
[ "$bino" -lt "$lino" ] || fail "order: /big ($bino) is not before /late ($lino)"
printf 'sif /big size 100\nsif /late file_acl 99999999\n' > "$T/c"
dbg "$T/order.img" "$T/c"
damaged order "inode $bino (/big) has a size of 100 bytes but blocks up to 81920 (and 1 more problem)" "$T/order.img"

# Directories: /a, the lower inode, lies after /b on the disk (its block
# moved there), and both have an entry naming an unused inode; /a's is
# named.
make_image "$T/dirs.img" ext3 4096 32M
printf 'mkdir /a\nmkdir /b\n' > "$T/c"
dbg "$T/dirs.img" "$T/c"
x=$($ORACLE blocks "$T/dirs.img" /a)
z=$(($($ORACLE blocks "$T/dirs.img" /b) + 100))
debugfs -R "testb $z" "$T/dirs.img" 2>&1 | grep -q "not in use" || fail "dirs: block $z in use"
dd if="$T/dirs.img" bs=4096 skip="$x" count=1 2>/dev/null |
	dd of="$T/dirs.img" bs=4096 seek="$z" conv=notrunc 2>/dev/null
printf 'sif /a block[0] %s\nsetb %s\nfreeb %s\n' "$z" "$z" "$x" > "$T/c"
dbg "$T/dirs.img" "$T/c"
check_clean "$T/dirs.img"
aino=$(debugfs -R "stat /a" "$T/dirs.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
bino=$(debugfs -R "stat /b" "$T/dirs.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
[ "$aino" -lt "$bino" ] && [ "$($ORACLE blocks "$T/dirs.img" /a)" -gt "$($ORACLE blocks "$T/dirs.img" /b)" ] ||
	fail "dirs: /a ($aino) is not the lower inode lying after /b ($bino)"
printf 'ln <5000> /a/ghosta\nln <5000> /b/ghostb\n' > "$T/c"
dbg "$T/dirs.img" "$T/c"
damaged dirs "entry 'ghosta' of directory inode $aino (/a) names inode 5000, which is not in use (and 1 more problem)" "$T/dirs.img"

# Flags the features do not allow: the file is left exactly as it was
# (debugfs stat), and e2frag counts it corrupt instead of reading its map.
for flag in extents:0x80000 inline:0x10000000; do
	name=${flag%%:*} bits=${flag#*:}
	cp "$T/base3.img" "$T/$name.img"
	old=$(debugfs -R "stat /frag" "$T/$name.img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
	debugfs -w -R "sif /frag flags $(printf '0x%x' $((old | bits)))" "$T/$name.img" >/dev/null 2>&1
	debugfs -R "stat /frag" "$T/$name.img" 2>/dev/null | grep -v time > "$T/stat.before"
	grep -q "Flags: $(printf '0x%x' $((old | bits)))" "$T/stat.before" || fail "$name: flag not set"
	case $name in
	extents) pattern="inode $fino has the extents flag but the filesystem lacks the extent feature" ;;
	inline) pattern="inode $fino has the inline data flag but the filesystem lacks the inline_data feature" ;;
	esac
	damaged "$name" "$pattern" "$T/$name.img"
	debugfs -R "stat /frag" "$T/$name.img" 2>/dev/null | grep -v time | cmp -s - "$T/stat.before" ||
		fail "$name: /frag changed"
	e2frag --json "$T/$name.img" > "$T/j" 2>/dev/null
	[ "$(json_get "$T/j" 'j["summary"]["corrupt_files"]')" -eq 1 ] ||
		fail "$name: e2frag does not count /frag corrupt"
done

# An extent tree whose index disagrees with the leaves below it, while the
# leaves still go forward (e2fsck's pass 1 checks the bounds; a walk of the
# leaves alone did not, and a run rewrote the file as libext2fs read it):
# the second entry of the inode's index moved back over the first leaf's
# last extents ("end of extent exceeds allowed value"), or on past the
# second leaf's first ("Logical start ... does not match"), and a leaf
# extent of no length.  /f: 200 one-block extents, three leaves of 1 KiB
# (debugfs ex says where the second starts).
make_image "$T/tree.img" ext4 1024 16M -O ^metadata_csum
gen "$T/f" 204800 31
fragment "$T/tree.img" "$T/f" /f 1024
tino=$(debugfs -R "stat /f" "$T/tree.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
second=$(debugfs -R "ex /f" "$T/tree.img" 2>/dev/null | awk '$1 == "0/" && $3 == "2/" { print $5 }')
[ -n "$second" ] && [ "$second" -gt 10 ] || fail "tree: /f has no second leaf (debugfs ex)"
e2fsck -fn "$T/tree.img" > /dev/null 2>&1 || fail "tree: not clean before the damage"
for shift in -5 3; do
	cp "$T/tree.img" "$T/tree$shift.img"
	# i_block: the header (3 words), then 3 words an entry, ei_block first.
	debugfs -w -R "sif /f block[6] $((second + shift))" "$T/tree$shift.img" >/dev/null 2>&1
	damaged "tree$shift" "the block map of inode $tino (/f) is corrupt" "$T/tree$shift.img"
done
leaf=$(debugfs -R "ex /f" "$T/tree.img" 2>/dev/null | awk '$1 == "0/" && $3 == "1/" { print $8 }')
[ -n "$leaf" ] || fail "tree: no first leaf block"
cp "$T/tree.img" "$T/zero.img"
# The first leaf's third extent: header 12 bytes, 12 an extent, ee_len at 4.
printf '\0\0' | dd of="$T/zero.img" bs=1 seek=$((leaf * 1024 + 12 + 2 * 12 + 4)) conv=notrunc 2>/dev/null
damaged zero "the block map of inode $tino (/f) is corrupt" "$T/zero.img"

# Not a false alarm where e2fsck finds nothing: a depth-2 tree whose last
# index entry below the root starts at the end of the file (its length,
# as libext2fs gives it, 0), the extents under it uninitialized (as
# fallocate --keep-size leaves them).  /e: 600 one-block extents.
make_image "$T/eof.img" ext4 1024 32M -O ^metadata_csum
gen "$T/e" 614400 32
fragment "$T/eof.img" "$T/e" /e 1024
set -- $(debugfs -R "ex /e" "$T/eof.img" 2>/dev/null | awk '$1 == "1/" && $2 == "2" { s = $5; b = $8 }
	END { print s, b }')
[ $# -eq 2 ] && [ "$1" -gt 0 ] || fail "eof: /e has no depth-2 tree (debugfs ex)"
debugfs -w -R "sif /e size $(($1 * 1024))" "$T/eof.img" >/dev/null 2>&1
python3 - "$T/eof.img" "$2" <<'PY' || fail "eof: marking the last leaf's extents uninitialized"
import struct, sys
f = open(sys.argv[1], "r+b"); at = int(sys.argv[2]) * 1024
f.seek(at); magic, n = struct.unpack("<HH", f.read(4))
assert magic == 0xF30A and n > 0
for i in range(n):
    f.seek(at + 12 + 12 * i + 4); ln = struct.unpack("<H", f.read(2))[0]
    f.seek(at + 12 + 12 * i + 4); f.write(struct.pack("<H", ln | 0x8000))
PY
e2fsck -fn "$T/eof.img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; fail "eof: e2fsck -fn does not find it clean"; }
expect_rc 0 e2defrag -n "$T/eof.img"
e2frag --json "$T/eof.img" > "$T/j" 2>/dev/null
[ "$(json_get "$T/j" 'j["summary"]["corrupt_files"]')" -eq 0 ] || fail "eof: e2frag counts /e corrupt"
exit 0
