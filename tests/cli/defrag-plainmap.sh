#!/bin/sh
# e2defrag's planner takes a plain map (no holes, no spare mapping block;
# or extents all in the inode) from the scan's stream instead of reading
# the inode and indirect blocks again (fmap_from_stream): on every such
# file of these images that map is the one fmap_read reads from the disk,
# item by item (IND, DIND, TIND included), and files whose map is not plain
# (holes, a spare IND, a compression flag, an extent tree, unwritten
# extents) are read from the disk as before.
. "$top_srcdir/tests/cli/defrag-lib.sh"

check=$top_builddir/tests/unit/plainmap_image
[ -x "$check" ] || fail "no $check (make check builds it)"

# ext2 with 1 KiB blocks: 256 entries an indirect block, so a 70 MiB file
# reaches the triple indirect block.
img=$T/one.img
make_image "$img" ext2 1024 96M
gen "$T/big" $((70 << 20)) 1
gen "$T/mid" $((600 << 10)) 2
gen "$T/short" 5000 3
gen_sparse "$T/holey" $((1 << 20)) 4 0 524288
printf 'write %s /big\nwrite %s /short\nwrite %s /holey\nwrite %s /spare\nwrite %s /compr\n' \
	"$T/big" "$T/short" "$T/holey" "$T/short" "$T/short" > "$T/c"
dbg "$img" "$T/c"
fragment "$img" "$T/mid" /mid 8192
# A spare IND: i_block[12] set on a 5-block file, pointing at a zeroed block.
spare=$(debugfs -R "ffb 1 60000" "$img" 2>/dev/null | awk '{ print $NF }')
[ -n "$spare" ] || fail "no free block found"
printf 'setb %s\nsif /spare block[IND] %s\nsif /compr flags 0x4\n' "$spare" "$spare" > "$T/c"
dbg "$img" "$T/c"
ino() { debugfs -R "stat $1" "$img" 2>/dev/null | sed -n 's/^Inode: \([0-9]*\) .*/\1/p'; }
"$check" "$img" $(ino /big) $(ino /mid) $(ino /short) $(ino /holey) $(ino /spare) \
	$(ino /compr) > "$T/out" || { cat "$T/out"; fail "made maps differ from the disk's"; }
cat "$T/out" | sed 's/^/# /'
set -- $(sed -n 2,7p "$T/out" | awk '{ printf "%s,", $2 == "plain" ? "y" : "n" }')
[ "$1" = "y,y,y,n,n,n," ] || fail "plain: big, mid, short yes; holey, spare, compr no: got $1"
grep -q "with indirect blocks" "$T/out" && ! grep -q "(0 with indirect" "$T/out" ||
	fail "no plain file with indirect blocks"
# (e2defrag refuses this image: e2fsck would fix the spare IND's block count.)

# ext4: extents all in the inode are plain, one a piece; a tree below the
# inode, or unwritten (fallocated) extents, are read from the disk.
img=$T/four.img
make_image "$img" ext4 4096 64M
gen "$T/f3" $((24 << 10)) 5
gen "$T/f10" $((80 << 10)) 6
printf 'write %s /whole\nwrite /dev/null /prealloc\nfallocate /prealloc 0 15\n' "$T/short" > "$T/c"
dbg "$img" "$T/c"
fragment "$img" "$T/f3" /three 8192
fragment "$img" "$T/f10" /deep 8192
"$check" "$img" $(ino /whole) $(ino /three) $(ino /deep) $(ino /prealloc) > "$T/out" ||
	{ cat "$T/out"; fail "ext4: made maps differ from the disk's"; }
sed 's/^/# /' "$T/out"
set -- $(sed -n 2,5p "$T/out" | awk '{ printf "%s,", $2 == "plain" ? "y" : "n" }')
[ "$1" = "y,y,n,n," ] || fail "plain: whole, three yes; deep, prealloc no: got $1"
debugfs -R "ex /three" "$img" 2>/dev/null | grep -c '^ *0/ *0' | grep -qx 3 ||
	fail "/three is not 3 extents in the inode: $(debugfs -R "ex /three" "$img" 2>&1)"

# Workload images: small files of kernel-like ext3 and ext4 trees, and a
# big file written in turns with small ones on ext2 with 1 KiB blocks.
e2fragimg -q --workload kernel-tree --type ext3 --files 2000 "$T/kt.img" || fail "e2fragimg kernel-tree"
e2fragimg -q --workload kernel-tree --type ext4 --files 2000 "$T/kt4.img" || fail "e2fragimg kernel-tree ext4"
e2fragimg -q --workload turns --type ext2 --block-size 1024 "$T/turns.img" || fail "e2fragimg turns"
for name in kt kt4 turns; do
	"$check" "$T/$name.img" > "$T/out" || { cat "$T/out"; fail "$name: made maps differ"; }
	sed 's/^/# /' "$T/out"
	grep -q " 0 plain" "$T/out" && fail "$name: no plain map to compare"
done
# Plans that move them, from the made maps (the ext4 tree has nothing to do).
for name in kt turns; do
	e2defrag -n -v "$T/$name.img" > "$T/plan" 2>&1 || { cat "$T/plan"; fail "$name: e2defrag -n"; }
	grep -q "to best" "$T/plan" || { cat "$T/plan"; fail "$name: no plan"; }
done
exit 0
