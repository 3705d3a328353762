#!/bin/sh
# Inode flags the features do not allow, as e2defrag(8) SAFETY lists them
# beyond the extents and inline data flags (defrag-damage.sh): a hashed
# directory on a filesystem without dir_index (an htree directory made by
# e2fsck -D, then the feature taken away), a directory with the casefold
# flag and a file with the verity flag on a filesystem without those
# features.  The damage is confirmed apart from e2defrag: e2fsck -fn
# names the first two; it says nothing of the third (e2fsprogs 1.47.0), so
# there debugfs stat shows the flag and dumpe2fs the feature missing.
# e2defrag, -n, -f and -v each exit 8 with one line naming the inode and
# the flag and saying to run e2fsck, and the image stays byte for byte
# as it was.
. "$top_srcdir/tests/cli/defrag-lib.sh"

# ino IMG PATH, flags IMG PATH: per debugfs stat.
ino() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p'; }
flags() { debugfs -R "stat $2" "$1" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p'; }
# add_flag IMG PATH BITS: PATH's flags with BITS set (debugfs sif keeps the
# inode's checksum right).
add_flag() {
	debugfs -w -R "sif $2 flags $(printf '0x%x' $(($(flags "$1" "$2") | $3)))" "$1" >/dev/null 2>&1
	[ $(($(flags "$1" "$2") & $3)) -ne 0 ] || fail "$1: $2: flag $3 not set"
}

# A hashed directory: 200 names in /big, indexed by e2fsck -fD.
make_image "$T/htree.img" ext3 1024 8M
{
	echo "mkdir /big"
	i=0
	while [ $i -lt 200 ]; do echo "write /dev/null /big/name-of-some-length-$i"; i=$((i + 1)); done
} > "$T/c"
dbg "$T/htree.img" "$T/c"
e2fsck -fyD "$T/htree.img" > /dev/null 2>&1
check_clean "$T/htree.img"
debugfs -R "htree /big" "$T/htree.img" 2>/dev/null | grep -q '^Root node dump' || fail "htree: /big is not hashed"
[ $(($(flags "$T/htree.img" /big) & 0x1000)) -ne 0 ] || fail "htree: /big has no index flag"
big=$(ino "$T/htree.img" /big)
debugfs -w -R "feature -dir_index" "$T/htree.img" >/dev/null 2>&1
dumpe2fs -h "$T/htree.img" 2>/dev/null | grep -q '^Filesystem features:.*dir_index' && fail "htree: dir_index still there"
fsck_damaged htree "$T/htree.img" "Inode $big has INDEX_FL flag set on filesystem without htree support"
damaged htree "inode $big is a hashed directory but the filesystem lacks the dir_index feature" "$T/htree.img"

# Casefold and verity, on ext4 (metadata_csum) without those features.
make_image "$T/base.img" ext4 4096 32M
gen "$T/data" 100000 51
printf 'mkdir /dir\nwrite %s /file\n' "$T/data" > "$T/c"
dbg "$T/base.img" "$T/c"
check_clean "$T/base.img"
dumpe2fs -h "$T/base.img" 2>/dev/null | grep -qE '^Filesystem features:.*(casefold|verity)' &&
	fail "the ext4 image has casefold or verity"

cp "$T/base.img" "$T/casefold.img"
add_flag "$T/casefold.img" /dir 0x40000000
fsck_damaged casefold "$T/casefold.img" "has the casefold flag"
damaged casefold "inode $(ino "$T/casefold.img" /dir) has the casefold flag but the filesystem lacks the casefold feature" "$T/casefold.img"

cp "$T/base.img" "$T/verity.img"
add_flag "$T/verity.img" /file 0x100000
refused verity "^e2defrag: $T/verity.img: inode $(ino "$T/verity.img" /file) has the verity flag but the filesystem lacks the verity feature.*; run e2fsck -f first\. Nothing was changed\.\$" "$T/verity.img"
exit 0
