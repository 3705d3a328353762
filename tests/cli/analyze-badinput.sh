#!/bin/sh
# Bad input: every case gets exit 8 and exactly one line on stderr naming
# what is wrong, nothing on stdout, and the input is left byte-identical.
. "$top_srcdir/tests/lib/common.sh"

# bad WHAT PATTERN INPUT: e2frag INPUT must fail as described.
bad() {
	what=$1 pattern=$2 input=$3
	before=$( [ -f "$input" ] && sha256sum < "$input")
	run_status e2frag "$input" > "$T/out" 2> "$T/err"
	[ "$status" -eq 8 ] || fail "$what: exit $status, expected 8"
	[ ! -s "$T/out" ] || fail "$what: printed a report: $(head -3 "$T/out")"
	[ "$(wc -l < "$T/err")" -eq 1 ] || fail "$what: expected one line, got: $(cat "$T/err")"
	grep -qiE "$pattern" "$T/err" || fail "$what: message '$(cat "$T/err")' does not match '$pattern'"
	after=$( [ -f "$input" ] && sha256sum < "$input")
	[ "$before" = "$after" ] || fail "$what: the input changed"
	note "$what: $(cat "$T/err")"
}

head -c 1048576 /dev/zero > "$T/zeros"
bad "zeros" "not an ext2/ext3/ext4 filesystem" "$T/zeros"
head -c 1048576 /dev/urandom > "$T/random"
bad "random bytes" "not an ext2/ext3/ext4 filesystem" "$T/random"
: > "$T/empty"
bad "empty file" "empty" "$T/empty"
mkdir "$T/dir"
bad "a directory" "directory" "$T/dir"
bad "a missing path" "no such file" "$T/missing"
bad "a FIFO" "not a regular file or block device" "$(mkfifo "$T/fifo" && echo "$T/fifo")"
bad "an unknown label" "no device" "LABEL=e2frag-no-such-label-$$"

mkfs_img "$T/ext4.img" ext4 4096 64M
head -c 10485760 "$T/ext4.img" > "$T/trunc.img"
bad "a truncated ext4 image" "shorter than the filesystem" "$T/trunc.img"

# Superblock: s_log_block_size (offset 24) made absurd, on ext2 (no checksum).
mkfs_img "$T/sb.img" ext2 1024 16M
printf '\036' | dd of="$T/sb.img" bs=1 seek=$((1024 + 24)) conv=notrunc status=none
bad "a corrupt superblock" "superblock|block size|corrupt" "$T/sb.img"

# Group descriptors: group 1's inode table pointed past the end.
mkfs_img "$T/gd.img" ext2 1024 16M
printf '\377\377\377\177' | dd of="$T/gd.img" bs=1 seek=$((2048 + 32 + 8)) conv=notrunc status=none
bad "corrupt group descriptors" "group descriptors are corrupt" "$T/gd.img"

# Inode table: the inodes of 100 files (12..111 of group 0, in use in the
# bitmap) overwritten with regular files whose block pointers lie far
# outside the filesystem.
mkdir "$T/files"
i=0
while [ $i -lt 100 ]; do echo $i > "$T/files/f$i"; i=$((i + 1)); done
mkfs_img "$T/it.img" ext2 1024 16M -d "$T/files"
itable=$(dumpe2fs "$T/it.img" 2>/dev/null | awk '/Inode table at/ { split($4, a, "-"); print a[1]; exit }')
isize=$(dumpe2fs -h "$T/it.img" 2>/dev/null | awk '/^Inode size:/ { print $3 }')
[ -n "$itable" ] && [ -n "$isize" ] || fail "precondition: no inode table found"
python3 - "$T/it.img" $((itable * 1024 + 11 * isize)) "$isize" <<'PY'
import struct, sys
path, offset, isize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inode = bytearray(isize)
struct.pack_into("<HHI", inode, 0, 0o100644, 0, 4096)	# mode, uid, size
struct.pack_into("<H", inode, 26, 1)			# links_count
struct.pack_into("<I", inode, 28, 8)			# i_blocks
struct.pack_into("<15I", inode, 40, *([0xdeadbeef] * 15))	# i_block[]
with open(path, "r+b") as f:
    f.seek(offset)
    f.write(bytes(inode) * 100)
PY
run_status e2frag "$T/it.img" > "$T/out" 2> "$T/err"
[ "$status" -eq 8 ] || fail "corrupt inode table: exit $status, expected 8"
[ "$(wc -l < "$T/err")" -eq 1 ] && grep -q "100 with corrupt block maps.*run e2fsck" "$T/err" ||
	fail "corrupt inode table: expected one line naming the errors, got: $(cat "$T/err")"
note "corrupt inode table: $(cat "$T/err")"

# The same inodes written where the bitmap says the inodes are free, past
# the last one in use (e2fsck's "disconnected inodes"): e2frag reads a
# clean filesystem's tables only as far as the bitmap has inodes in use
# (lib/itable_used.c), so to it they are free, as to the kernel; e2defrag,
# whose checks read every inode, refuses the filesystem: exit 8 and the
# one damage line of e2defrag(8) SAFETY (the first problem is the inodes'
# corrupt block maps; an inode in use but free in the bitmap alone is
# defrag-damage-bitmaps.sh's), the image byte-identical.
mkfs_img "$T/free.img" ext2 1024 16M
python3 - "$T/free.img" $((itable * 1024 + 11 * isize)) "$isize" <<'PY'
import struct, sys
path, offset, isize = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inode = bytearray(isize)
struct.pack_into("<HHI", inode, 0, 0o100644, 0, 4096)
struct.pack_into("<H", inode, 26, 1)
struct.pack_into("<I", inode, 28, 8)
struct.pack_into("<15I", inode, 40, *([0xdeadbeef] * 15))
with open(path, "r+b") as f:
    f.seek(offset)
    f.write(bytes(inode) * 100)
PY
run_status e2frag "$T/free.img" > "$T/out" 2> "$T/err"
[ "$status" -eq 0 ] && [ ! -s "$T/err" ] ||
	fail "inodes in use past the bitmap's: e2frag exit $status, $(cat "$T/err")"
mkfs_img "$T/fresh.img" ext2 1024 16M
e2frag "$T/fresh.img" > "$T/fresh.out" 2>/dev/null
[ "$(grep '^Files' "$T/out")" = "$(grep '^Files' "$T/fresh.out")" ] ||
	fail "inodes in use past the bitmap's: e2frag counted them: $(grep '^Files' "$T/out")"
# The oracle: debugfs finds inodes 12 and 111 free in the bitmap yet with
# a link (e2fsck -fn aborts on the maps before it compares the bitmaps).
for i in 12 111; do
	debugfs -R "testi <$i>" "$T/free.img" 2>&1 | grep -q "Inode $i is not in use" &&
	debugfs -R "stat <$i>" "$T/free.img" 2>/dev/null | grep -q 'Links: 1 ' ||
		fail "inodes in use past the bitmap's: inode $i is not in use and free in the bitmap"
done
e2fsck -fn "$T/free.img" > /dev/null 2>&1 && fail "inodes in use past the bitmap's: e2fsck -fn finds nothing"
debugfs -w -R "ssv lastcheck now" "$T/free.img" >/dev/null 2>&1
before=$(sha256sum < "$T/free.img")
for opt in -n "" -f; do
	run_status e2defrag $opt "$T/free.img" > "$T/out" 2> "$T/err"
	[ "$status" -eq 8 ] ||
		fail "inodes in use past the bitmap's: e2defrag $opt exited $status, expected 8: $(head -3 "$T/err")"
	[ ! -s "$T/out" ] || fail "inodes in use past the bitmap's: e2defrag $opt printed: $(head -3 "$T/out")"
	[ "$(wc -l < "$T/err")" -eq 1 ] &&
	grep -q "^e2defrag: $T/free.img: .*block map .*is corrupt .*; run e2fsck -f first\. Nothing was changed\.\$" "$T/err" ||
		fail "inodes in use past the bitmap's: e2defrag $opt: not one line naming the corrupt maps: $(cat "$T/err")"
	[ "$(sha256sum < "$T/free.img")" = "$before" ] ||
		fail "inodes in use past the bitmap's: e2defrag $opt changed the image"
done
note "inodes in use past the bitmap's: e2defrag: exit 8, $(head -1 "$T/err")"
