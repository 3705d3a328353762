#!/bin/sh
# A block of /frag marked free in the block bitmap (a damaged bitmap on a
# filesystem whose superblock still says clean).  Moving /frag would
# release a block that is not in use, and any other move could be given
# that block: e2defrag's damage check (lib/sanity.c) refuses the whole
# run before anything is written: exit 8, one line that names the block
# and says to run e2fsck, the image byte for byte as it was.  After
# e2fsck -fy repairs the bitmap, a run defragments as usual.
# (Until the damage check, the metadata writer refused /frag's switch
# alone and the run went on: exit 4.  That path has no trigger left that
# the damage check does not catch first.)
. "$top_srcdir/tests/cli/defrag-lib.sh"

for type in ext4 ext2; do
	img=$T/$type.img
	small_image "$img" "$type"
	snapshot "$img" "$T/before.json"
	blk=$($ORACLE blocks "$img" /frag | head -1)
	[ -n "$blk" ] || fail "$type: no block of /frag"
	debugfs -w -R "freeb $blk" "$img" >/dev/null 2>&1
	$ORACLE blocks "$img" /frag > "$T/frag.before"
	[ "$(pieces "$img" /rec/a)" -gt 1 ] || fail "$type: /rec/a should be in pieces"

	cp "$img" "$T/damaged.img"
	e2defrag "$img" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 8 ] || { cat "$T/out" "$T/err"; fail "$type: exit $rc, expected 8 (damaged bitmap refused)"; }
	[ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; fail "$type: more than one line on stderr"; }
	grep -q "block $blk .*free in the block bitmap.*run e2fsck" "$T/err" ||
		{ cat "$T/err"; fail "$type: the refusal does not name block $blk and e2fsck"; }
	cmp -s "$img" "$T/damaged.img" || fail "$type: a refused run changed the image"
	# Nothing is wrong but the bitmap damage made for the test: e2fsck
	# repairs that, then e2defrag runs, and every file is as it was.
	e2fsck -fy "$img" > "$T/fsck.out" 2>&1
	[ $? -le 1 ] || { cat "$T/fsck.out"; fail "$type: e2fsck -fy"; }
	e2defrag "$img" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/out" "$T/err"; fail "$type: after e2fsck: exit $rc"; }
	for f in /rec/a /rec/b /frag; do
		[ "$(pieces "$img" $f)" -eq 1 ] || fail "$type: $f not moved"
	done
	check_clean "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
done
exit 0
