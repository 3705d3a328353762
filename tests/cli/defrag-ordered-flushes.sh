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
#                the counts, then "clean", at the end: the kilobytes
#                written, s_kbytes_written, go with "clean", not in a
#                superblock write and two flushes of libext2fs's as it
#                closes), and none for the data: a batch's data goes out
#                with its commit's first flush, however many buffers it
#                fills (the aged disk again with --buffer 256k, where a
#                flush each buffer made 2.5 times as many); the commits
#                counted in the log itself, as the stretches between two flushes
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
# With a journal (e2fragimg's aged ext3 and nearly full ext4, in many
# commits), from the same log:
#   flushes      two per commit (copies, then the commit block) and two
#                per checkpoint (the blocks in place, then the log marked
#                empty), plus one: the superblock that clears
#                needs_recovery, with the kilobytes written.  Setting
#                needs_recovery costs no flush of its own: it goes out with
#                the first commit's copies.  None for the data (the
#                aged disk again with --buffer 256k: 311 flushes for 22
#                commits when the data was flushed each buffer, 47 now).
#                Commits and checkpoints counted in the log itself (JBD2
#                commit blocks, journal superblocks with s_start 0).
#   lifetime     the superblock's s_kbytes_written grew by the kilobytes
#                the log shows written, give or take one
# The power-cut sweeps (tests/crash/crash_sample.sh here, make crashtest in
# full) show that a cut between those flushes loses nothing.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
[ "${E2F_ENABLE_IOLOG:-}" = yes ] ||
	{ echo "skip: built without --enable-iolog: no write log to count flushes in"; exit 77; }

# run NAME MAX_DESCRIPTORS|- [OPTION]: one disk; "-": at least one a commit.
run() {
	img=$T/$1.img
	E2FRAG_IOLOG=$T/$1.log e2defrag ${3:-} "$img" > "$T/out" 2>&1 || { cat "$T/out"; fail "$1: e2defrag failed"; }
	set -- "$1" "$2" $(python3 "$top_srcdir/tests/cli/defrag-ordered-flushes.py" "$T/$1.log" "$img") ||
		fail "defrag-ordered-flushes.py"
	name=$1 most=$2 commits=$4 flushes=$6 descriptors=$8 buffers=${10} bitmaps=${12} ngroups=${14}
	echo "# $name: $commits commits, $flushes flushes, $descriptors superblock and descriptor writes, $bitmaps bitmap writes ($ngroups groups)"
	[ "$commits" -ge 20 ] || fail "$name: only $commits commits: the disk does not test what it should"
	[ "$flushes" -le $((2 * commits + 3)) ] ||
		fail "$name: $flushes flushes for $commits commits ($buffers buffers of data): more than two a commit and three a run"
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
cp "$T/ext2.img" "$T/ext2-small.img" && cp "$T/ext2.img.json" "$T/ext2-small.img.json" ||
	fail "cp ext2.img"
run ext2 3
run ext2-small 3 "--buffer 256k"
e2fragimg -q -w nearfull -t ext4 -s 64M --fill 90 -S 1 "$T/ext4.img" || fail "e2fragimg ext4"
tune2fs -O ^has_journal "$T/ext4.img" > /dev/null 2>&1 || fail "tune2fs -O ^has_journal"
dumpe2fs -h "$T/ext4.img" 2>/dev/null | grep -q "features:.*metadata_csum" ||
	fail "the ext4 disk has no metadata_csum: it does not test what it should"
run ext4 -

# kbytes IMG: the superblock's s_kbytes_written (le64 at byte 1024 + 0x178).
kbytes() {
	python3 -c 'import struct, sys
f = open(sys.argv[1], "rb"); f.seek(1024 + 0x178)
print(struct.unpack("<Q", f.read(8))[0])' "$1"
}

# journalled NAME [OPTION]: one disk with a journal.
journalled() {
	img=$T/$1.img
	# A superblock that counts them (mke2fs's do; e2fragimg's ext3 not).
	debugfs -w -R "ssv kbytes_written 1000" "$img" > /dev/null 2>&1 ||
		fail "$1: debugfs ssv kbytes_written"
	before=$(kbytes "$img")
	[ "$before" -gt 0 ] || fail "$1: the superblock counts no kilobytes written: it does not test what it should"
	E2FRAG_IOLOG=$T/$1.log e2defrag ${2:-} "$img" > "$T/out" 2>&1 || { cat "$T/out"; fail "$1: e2defrag failed"; }
	set -- "$1" $(python3 "$top_srcdir/tests/cli/defrag-ordered-flushes.py" "$T/$1.log" "$img" --journal) ||
		fail "defrag-ordered-flushes.py --journal"
	name=$1 commits=$3 flushes=$5 checkpoints=$7 buffers=$9 written=${11}
	after=$(kbytes "$img")
	echo "# $name: $commits commits, $checkpoints checkpoints, $flushes flushes; $written KiB written, s_kbytes_written $before -> $after"
	[ "$commits" -ge 10 ] || fail "$name: only $commits commits: the disk does not test what it should"
	[ "$checkpoints" -ge 1 ] || fail "$name: no checkpoint in the log"
	[ "$flushes" -le $((2 * commits + 2 * checkpoints + 1)) ] ||
		fail "$name: $flushes flushes for $commits commits and $checkpoints checkpoints ($buffers buffers of data): more than two a commit and a checkpoint and one a run"
	d=$((after - before - written))
	[ $d -ge -1 ] && [ $d -le 1 ] ||
		fail "$name: s_kbytes_written grew by $((after - before)), the log shows $written KiB written"
	check_clean "$img"
	check_manifest "$img"
	rm -f "$img" "$T/$name.log"
}

e2fragimg -q -w aged -t ext3 -s 64M -S 1 "$T/ext3.img" || fail "e2fragimg ext3"
cp "$T/ext3.img" "$T/ext3-small.img" && cp "$T/ext3.img.json" "$T/ext3-small.img.json" ||
	fail "cp ext3.img"
journalled ext3
journalled ext3-small "--buffer 256k"
e2fragimg -q -w nearfull -t ext4 -s 64M --fill 90 -S 1 "$T/ext4j.img" || fail "e2fragimg ext4"
journalled ext4j
exit 0
