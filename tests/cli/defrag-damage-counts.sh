#!/bin/sh
# Damage that make fuzz-replay found e2defrag kept through a run, which
# e2defrag(8) SAFETY now lists: an inode whose block count (i_blocks) is
# not what its map holds, an attribute block's header, a reserved
# inode's checksum (the resize inode's), a directory entry with no name.  Each is confirmed apart from
# e2defrag by e2fsck -fn naming it; e2defrag, -n, -f and -v then each exit
# 8 with one line naming it and saying to run e2fsck, and the image stays
# byte for byte as it was.
. "$top_srcdir/tests/cli/defrag-lib.sh"

ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }

# i_blocks: a 20 KiB file on 1 KiB blocks (20 data blocks and an indirect
# one: 42 sectors), said to hold 100.
make_image "$T/blocks.img" ext2 1024 4M
gen "$T/data" 20480 7
printf 'write %s /file\n' "$T/data" > "$T/c"
dbg "$T/blocks.img" "$T/c"
check_clean "$T/blocks.img"
file=$(ino "$T/blocks.img" /file)
debugfs -w -R "sif /file blocks 100" "$T/blocks.img" >/dev/null 2>&1
damaged_exactly blocks "inode $file (/file) records 100 sectors in use (i_blocks) but maps 42" \
	"$T/blocks.img" "Inode $file, i_blocks is 100, should be 42"

# An attribute block whose header says it spans 2 blocks (e2fsck clears
# it, and the attributes with it).
make_image "$T/xattr.img" ext2 1024 4M -I 128
printf 'write %s /file\nea_set /file user.note %s\n' "$T/data" \
	"$(python3 -c 'print("v" * 300)')" > "$T/c"
dbg "$T/xattr.img" "$T/c"
check_clean "$T/xattr.img"
file=$(ino "$T/xattr.img" /file)
acl=$(debugfs -R "stat /file" "$T/xattr.img" 2>/dev/null | sed -n 's/^File ACL: \([0-9]*\).*/\1/p')
[ "${acl:-0}" -gt 0 ] || fail "xattr: /file has no attribute block"
printf '\002' | dd of="$T/xattr.img" bs=1 seek=$((acl * 1024 + 8)) conv=notrunc 2>/dev/null
damaged_exactly xattr "the header of attribute block $acl of inode $file (/file) is bad (magic, block count or checksum)" \
	"$T/xattr.img" "Extended attribute block $acl has h_blocks > 1"

# The resize inode's checksum (metadata_csum), its fields as they were.
make_image "$T/csum.img" ext4 1024 8M
check_clean "$T/csum.img"
debugfs -w -R "sif <7> checksum 0x1234" "$T/csum.img" >/dev/null 2>&1
damaged_exactly csum "the checksum of inode 7 does not match" "$T/csum.img" \
	"Inode 7 passes checks, but checksum does not match inode"

# A name of no length: the root's fourth entry (after ".", ".." and
# "lost+found", 12, 12 and 20 bytes on ext2) gets name_len 0.
make_image "$T/name.img" ext2 1024 4M
printf 'mkdir /x\n' > "$T/c"
dbg "$T/name.img" "$T/c"
check_clean "$T/name.img"
root=$(debugfs -R "blocks /" "$T/name.img" 2>/dev/null | awk '{ print $1 }')
[ -n "$root" ] || fail "name: no block for /"
debugfs -R "ls -l /" "$T/name.img" 2>/dev/null | grep -q ' x *$' || fail "name: no /x"
printf '\000' | dd of="$T/name.img" bs=1 seek=$((root * 1024 + 44 + 6)) conv=notrunc 2>/dev/null
damaged name "directory" "$T/name.img"
fsck_damaged name "$T/name.img" "has a zero-length name"
exit 0
