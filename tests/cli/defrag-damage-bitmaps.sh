#!/bin/sh
# The bitmaps and counts e2defrag(8) SAFETY says are checked, each made
# to disagree alone on an ext3 image (debugfs; the group's counts then
# set to agree with the bitmaps, so that nothing else is found): a block
# marked in use that nothing owns; an inode in use but free in the inode
# bitmap, and a free one marked in use; a group's free inode count and its
# directory count.  e2fsck -fn must name the same problem (the oracle that
# the test damaged what it says); e2defrag, -n, -f and -v each exit 8 with
# exactly that problem on one line and say to run e2fsck, and the image
# stays byte for byte as it was.  (Blocks owned twice or in use but free,
# free block counts: defrag-damage.sh.)
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/base.img" ext3
[ "$(groups "$T/base.img")" -eq 1 ] || fail "the image has more than one group"
# group0 FIELD: a figure of group 0's line in dumpe2fs ("N free blocks,
# N free inodes, N directories").
group0() {
	dumpe2fs "$1" 2>/dev/null | sed -n "s/^ *\\([0-9]*\\) free blocks, \\([0-9]*\\) free inodes, \\([0-9]*\\) directories.*/\\1 \\2 \\3/p" |
		head -1 | cut -d' ' -f"$2"
}
fb=$(group0 "$T/base.img" 1) fi=$(group0 "$T/base.img" 2) dirs=$(group0 "$T/base.img" 3)
[ -n "$fb" ] && [ -n "$fi" ] && [ -n "$dirs" ] || fail "no figures for group 0"

# dbgw IMG COMMAND...: debugfs -w, one command after another.
dbgw() {
	_img=$1
	shift
	printf '%s\n' "$@" > "$T/c"
	dbg "$_img" "$T/c"
}

# A free block marked in use, the free block count lowered to match.
blk=$(dumpe2fs "$T/base.img" 2>/dev/null | sed -n 's/^  Free blocks: \([0-9]*\).*/\1/p' | head -1)
[ -n "$blk" ] || fail "no free block"
debugfs -R "testb $blk" "$T/base.img" 2>&1 | grep -q "not in use" || fail "block $blk is in use"
cp "$T/base.img" "$T/noowner.img"
dbgw "$T/noowner.img" "setb $blk" "set_bg 0 free_blocks_count $((fb - 1))" "ssv free_blocks_count $((fb - 1))"
damaged_exactly noowner "block $blk is in use in the block bitmap but nothing owns it" \
	"$T/noowner.img" "Block bitmap differences: +-$blk\$"

# /ok/one's inode marked free in the inode bitmap, the count raised to match.
ino=$(debugfs -R "stat /ok/one" "$T/base.img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\).*/\1/p')
cp "$T/base.img" "$T/inofree.img"
dbgw "$T/inofree.img" "freei <$ino>" "set_bg 0 free_inodes_count $((fi + 1))" "ssv free_inodes_count $((fi + 1))"
damaged_exactly inofree "inode $ino is in use but free in the inode bitmap" \
	"$T/inofree.img" "Inode bitmap differences: +\\+$ino\$"

# A free inode marked in use, the count lowered to match.
free_ino=$((ino + 40))
debugfs -R "testi <$free_ino>" "$T/base.img" 2>&1 | grep -q "not in use" || fail "inode $free_ino is in use"
cp "$T/base.img" "$T/inoused.img"
dbgw "$T/inoused.img" "seti <$free_ino>" "set_bg 0 free_inodes_count $((fi - 1))" "ssv free_inodes_count $((fi - 1))"
damaged_exactly inoused "inode $free_ino is free but in use in the inode bitmap" \
	"$T/inoused.img" "Inode bitmap differences: +-$free_ino\$"

# Group 0's free inode count, then its directory count, one off.
cp "$T/base.img" "$T/freeinodes.img"
dbgw "$T/freeinodes.img" "set_bg 0 free_inodes_count $((fi + 1))"
damaged_exactly freeinodes "group 0 records $((fi + 1)) free inodes, its bitmap $fi" \
	"$T/freeinodes.img" "Free inodes count wrong for group #0 \\($((fi + 1)), counted=$fi\\)"
cp "$T/base.img" "$T/dirs.img"
dbgw "$T/dirs.img" "set_bg 0 used_dirs_count $((dirs + 1))"
damaged_exactly dirs "group 0 records $((dirs + 1)) directories, its inodes $dirs" \
	"$T/dirs.img" "Directories count wrong for group #0 \\($((dirs + 1)), counted=$dirs\\)"
exit 0
