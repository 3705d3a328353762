#!/bin/sh
# A move the metadata writer refuses before changing anything fails that
# file alone (exit 4, the file named on stderr, its old layout kept); the
# run goes on with the other files and ends cleanly.  The refusal here:
# the block bitmap says one of /frag's blocks is free (a damaged bitmap on
# a filesystem whose superblock still says clean), so switching /frag
# would release a block that is not in use.
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

	e2defrag "$img" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 4 ] || { cat "$T/out" "$T/err"; fail "$type: exit $rc, expected 4 (a file failed to move)"; }
	grep -q "/frag (inode [0-9]*) not moved" "$T/err" ||
		{ cat "$T/err"; fail "$type: /frag not named as failed"; }
	grep -q "power cut" "$T/err" && { cat "$T/err"; fail "$type: a refused switch reported as a failed write"; }
	$ORACLE blocks "$img" /frag > "$T/frag.after"
	cmp -s "$T/frag.before" "$T/frag.after" || fail "$type: /frag was moved"
	for f in /rec/a /rec/b; do
		[ "$(pieces "$img" $f)" -eq 1 ] || fail "$type: $f not moved"
	done
	# Nothing is wrong but the bitmap damage made for the test: e2fsck
	# repairs that, then finds nothing, and every file is as it was.
	e2fsck -fy "$img" > "$T/fsck.out" 2>&1
	[ $? -le 1 ] || { cat "$T/fsck.out"; fail "$type: e2fsck -fy"; }
	check_clean "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
done
exit 0
