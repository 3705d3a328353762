#!/bin/sh
# Every e2fragimg workload on every type makes an image e2fsck -fn finds
# clean, with the features of its type; block-mapped files on ext2/ext3,
# extent-mapped ones on ext4.  Also the corners: 1K blocks with a file
# that needs a triple-indirect block, an extent tree three levels deep, a
# directory with an indirect block, 2K blocks, reservation windows.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"

args_for() {
	case $1 in
	streams|parallel-writers) echo "--total 6M" ;;
	tree) echo "--files 300" ;;
	aged) echo "--size 16M --rounds 2" ;;
	mixed) echo "--size 24M" ;;
	esac
}

for w in streams parallel-writers tree aged mixed; do
	for t in ext2 ext3 ext4; do
		img=$tmp/$w-$t.img
		# shellcheck disable=SC2046
		if ! e2fragimg -q --workload "$w" --type "$t" $(args_for "$w") "$img"; then
			fail "$w $t: e2fragimg failed"
			continue
		fi
		fsck_clean "$img" || fail "$w $t: e2fsck -fn not clean"
		features=$(dumpe2fs -h "$img" 2>/dev/null | grep '^Filesystem features:')
		case $t in
		ext2) want="ext_attr resize_inode dir_index filetype sparse_super large_file"
		      unwanted="has_journal extent" ;;
		ext3) want="has_journal ext_attr resize_inode dir_index filetype sparse_super large_file"
		      unwanted="extent flex_bg" ;;
		ext4) want="has_journal extent 64bit flex_bg metadata_csum huge_file dir_nlink extra_isize"
		      unwanted="" ;;
		esac
		for f in $want; do
			echo "$features" | grep -qw -- "$f" || fail "$w $t: feature $f missing"
		done
		for f in $unwanted; do
			echo "$features" | grep -qw -- "$f" && fail "$w $t: has feature $f"
		done
		# The first file of the manifest: extents on ext4 only.
		first=$(sed -n 's/^ *"path": "\(.*\)",$/\1/p' "$img.json" | head -1)
		flags=$(debugfs -R "stat \"$first\"" "$img" 2>/dev/null | sed -n 's/.*Flags: \(0x[0-9a-f]*\).*/\1/p')
		if [ "$t" = ext4 ]; then
			[ $((flags & 0x80000)) -ne 0 ] || fail "$w $t: $first not extent-mapped ($flags)"
		else
			[ $((flags & 0x80000)) -eq 0 ] || fail "$w $t: $first extent-mapped ($flags)"
		fi
		rm -f "$img" "$img.json"
	done
done

corner() {
	name=$1
	shift
	if ! e2fragimg -q "$@" "$tmp/c.img"; then
		fail "$name: e2fragimg failed"
		return
	fi
	fsck_clean "$tmp/c.img" || fail "$name: e2fsck -fn not clean"
}

# 66 MiB in 1K blocks: past 12 + 256 + 65536 blocks, so a TIND.
corner tind --workload streams --type ext3 --block-size 1024 --streams 1 --total 66M
debugfs -R 'stat /rec00.ts' "$tmp/c.img" 2>/dev/null | grep -q '(TIND):' ||
	fail "tind: no TIND block"
# 2 x 32768 one-block extents, 84 to a 1K leaf: depth 3.
corner deep --workload streams --type ext4 --block-size 1024 --streams 2 --total 64M
debugfs -R 'ex /rec00.ts' "$tmp/c.img" 2>/dev/null | grep -q '^ *0/ *3 ' ||
	fail "deep: extent tree is not 3 levels deep"
# 1000 names in the root of a 1K-block ext3: a directory with an IND.
corner bigdir --workload streams --type ext3 --block-size 1024 --streams 1000 --total 2M
debugfs -R 'stat /' "$tmp/c.img" 2>/dev/null | grep -q '(IND):' ||
	fail "bigdir: the root directory has no IND block"
corner 2k-aged --workload aged --type ext3 --block-size 2048 --size 24M
corner 2k-tree --workload tree --type ext4 --block-size 2048 --files 200
corner rsv-ext3 --workload parallel-writers --type ext3 --total 8M --reservation 64
corner rsv-aged --workload aged --type ext4 --size 16M --reservation 32
corner rsv-mixed --workload mixed --type ext2 --size 24M --reservation 16
finish
