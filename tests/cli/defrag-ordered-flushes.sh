#!/bin/sh
# Without a journal an ordered commit costs two flushes, not three: the
# blocks it releases are marked free after the flush that makes its inode
# table blocks durable, and those writes go out with the next flush; and
# where the group descriptors hold only counts (ext2), they and the
# superblock are written once, at the end (writer/switch.c: lazy counts).
# On disks whose moves reuse the blocks the one before freed (a commit
# nearly every move: e2fragimg's aged ext2 and nearly full ext4, where
# the ext4 aged disk is packed in a few long commits), from the run's
# write log ($E2FRAG_IOLOG, a build with --enable-iolog):
#   flushes      at most two per commit, plus the run's three (the
#                superblock "not clean" at the start; the last release and
#                the counts, then "clean", at the end) and libext2fs's two
#                as it closes a filesystem that counts the kilobytes
#                written (ext4: s_kbytes_written, around its superblock
#                write), plus one per 32 MiB of data (the mover flushes
#                each --buffer of data between two commits, 64 MiB by
#                default: at most as many as the log holds 32 MiB); the
#                commits counted
#                in the log itself, as the stretches between two flushes
#                that write inode table blocks (with dumpe2fs's places:
#                tests/cli/defrag-ordered-flushes.py)
#   descriptors  ext2: at most three writes to the primary superblock and
#                descriptor blocks (the start's "not clean", the end's
#                counts and "clean"), and to the block bitmaps at most one
#                a commit (its gains) and one a group (the releases, at
#                the end); ext4 without a journal, whose descriptors hold
#                the bitmaps' checksums: at least one descriptor write a
#                commit, as before (they go with the bitmaps)
#   clean        e2fsck -fn clean (no block left marked in use, every
#                count right), every file's sha256 as in the manifest, a
#                second run byte for byte the same
# The power-cut sweeps (tests/crash/crash_sample.sh here, make crashtest in
# full) show that a cut between those flushes loses nothing.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
[ "${E2F_ENABLE_IOLOG:-}" = yes ] ||
	{ echo "skip: built without --enable-iolog: no write log to count flushes in"; exit 77; }

# run NAME MAX_DESCRIPTORS|-: one disk; "-": at least one a commit.
run() {
	img=$T/$1.img
	E2FRAG_IOLOG=$T/$1.log e2defrag "$img" > "$T/out" 2>&1 || { cat "$T/out"; fail "$1: e2defrag failed"; }
	set -- "$1" "$2" $(python3 "$top_srcdir/tests/cli/defrag-ordered-flushes.py" "$T/$1.log" "$img") ||
		fail "defrag-ordered-flushes.py"
	name=$1 most=$2 commits=$4 flushes=$6 descriptors=$8 buffers=${10} bitmaps=${12} ngroups=${14}
	echo "# $name: $commits commits, $flushes flushes, $descriptors superblock and descriptor writes, $bitmaps bitmap writes ($ngroups groups)"
	[ "$commits" -ge 20 ] || fail "$name: only $commits commits: the disk does not test what it should"
	[ "$flushes" -le $((2 * commits + 5 + buffers)) ] ||
		fail "$name: $flushes flushes for $commits commits and $buffers buffers of data: more than two a commit, one a buffer and five a run"
	if [ "$most" = - ]; then
		[ "$descriptors" -ge "$commits" ] ||
			fail "$name: $descriptors descriptor writes for $commits commits: checksummed descriptors left behind their bitmaps"
	else
		[ "$descriptors" -le "$most" ] ||
			fail "$name: $descriptors superblock and descriptor writes, more than $most"
		[ "$bitmaps" -le $((commits + ngroups)) ] ||
			fail "$name: $bitmaps bitmap writes, more than one a commit and one a group"
	fi
	check_clean "$img"
	check_manifest "$img"
	cp "$img" "$T/first.img"
	e2defrag "$img" > "$T/out2" 2>&1 || { cat "$T/out2"; fail "$name: second run failed"; }
	cmp -s "$img" "$T/first.img" || fail "$name: a second run changed the image"
	rm -f "$img" "$T/first.img" "$T/$name.log"
}

e2fragimg -q -w aged -t ext2 -s 64M -S 1 "$T/ext2.img" || fail "e2fragimg ext2"
run ext2 3
e2fragimg -q -w nearfull -t ext4 -s 64M --fill 90 -S 1 "$T/ext4.img" || fail "e2fragimg ext4"
tune2fs -O ^has_journal "$T/ext4.img" > /dev/null 2>&1 || fail "tune2fs -O ^has_journal"
dumpe2fs -h "$T/ext4.img" 2>/dev/null | grep -q "features:.*metadata_csum" ||
	fail "the ext4 disk has no metadata_csum: it does not test what it should"
run ext4 -
exit 0
