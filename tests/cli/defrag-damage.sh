#!/bin/sh
# A filesystem whose metadata disagree with themselves is never written,
# even when its superblock says clean: e2defrag (and -n, and -f) exits 8
# with one line that names the first problem and says to run e2fsck, and
# the image stays byte-identical.  Each image is damaged with debugfs in
# one way, and e2fsck -fn must call it damaged (the oracle): a block owned
# twice, in use but free in the bitmap, free counts, checksums of
# descriptors and inodes, link counts, and inode flags the features do
# not allow (an extent-mapped or inline-data inode on ext3).
. "$top_srcdir/tests/cli/defrag-lib.sh"

# damaged NAME PATTERN IMG: IMG is refused as damaged, PATTERN in the line.
damaged() {
	name=$1 pattern=$2 img=$3
	# e2fsck -n exits 0 on a bad descriptor checksum, but says so.
	if e2fsck -fn "$img" > "$T/fsck.out" 2>&1 && ! grep -qE '\? no$|IGNORED' "$T/fsck.out"; then
		cat "$T/fsck.out"; fail "$name: e2fsck -fn finds the image clean: the test did not damage it"
	fi
	cp "$img" "$T/orig.img"
	for opt in "" -n -f -v; do
		expect_rc 8 e2defrag $opt "$img"
		[ "$(wc -l < "$T/out")" -eq 1 ] || { cat "$T/out"; fail "$name: e2defrag $opt said more than one line"; }
		grep -q "^e2defrag: $img: .*$pattern.*; run e2fsck -f first\. Nothing was changed\.$" "$T/out" ||
			{ cat "$T/out"; fail "$name: e2defrag $opt: no '$pattern ... run e2fsck -f first'"; }
		cmp -s "$img" "$T/orig.img" || fail "$name: e2defrag $opt changed the image"
	done
	echo "# $name: $(sed "s|$img|IMG|" "$T/out")"
}

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
printf '\125\252' | dd of="$T/gdcsum.img" bs=1 seek=$((4096 + 30)) conv=notrunc 2>/dev/null
damaged gdcsum "the checksum of group 0's descriptor does not match" "$T/gdcsum.img"

# An inode checksum: one byte of /frag's i_mtime changed behind debugfs.
cp "$T/base4.img" "$T/icsum.img"
set -- $(debugfs -R "imap /frag" "$T/icsum.img" 2>/dev/null |
	 sed -n 's/.*located at block \([0-9]*\), offset \(0x[0-9a-f]*\).*/\1 \2/p')
[ $# -eq 2 ] || fail "icsum: no inode location for /frag"
printf '\001' | dd of="$T/icsum.img" bs=1 seek=$(($1 * 4096 + $2 + 16)) conv=notrunc 2>/dev/null
damaged icsum "the checksum of inode [0-9]* (/frag) does not match" "$T/icsum.img"

# A second name for /ok/one that its link count does not know.
cp "$T/base3.img" "$T/links.img"
debugfs -w -R "ln /ok/one /ok/two" "$T/links.img" >/dev/null 2>&1
damaged links "(/ok/one) has 1 link but 2 entries name it" "$T/links.img"

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
exit 0
