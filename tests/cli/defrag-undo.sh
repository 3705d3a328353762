#!/bin/sh
# -z UNDO: e2defrag prints the e2undo command that rolls the run back, and
# running it restores the image byte for byte (ext4 with a journal, and
# ext2).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2undo >/dev/null 2>&1 || { echo "skip: no e2undo"; exit 77; }

# libext2fs 1.47's undo_io manager leaks its block map at close: it frees
# a 64-bit bitmap with ext2fs_free_generic_bitmap, which refuses those.
# Not ours to fix; under AddressSanitizer, leaks are not checked here
# (everything else is, and the other tests check e2defrag's own leaks).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

for type in ext4 ext2; do
	img=$T/$type.img
	small_image "$img" "$type"
	cp "$img" "$T/orig.img"
	rm -f "$T/undo"
	expect_rc 0 e2defrag -z "$T/undo" "$img"
	grep -q "e2undo $T/undo $img" "$T/out" || { cat "$T/out"; fail "no e2undo command printed"; }
	check_clean "$img"
	cmp -s "$img" "$T/orig.img" && fail "$type: the run changed nothing to undo"
	e2undo "$T/undo" "$img" > "$T/undo.out" 2>&1 || { cat "$T/undo.out"; fail "e2undo failed"; }
	cmp -s "$img" "$T/orig.img" || fail "$type: e2undo did not restore the image"
done

# The same undo file for the next run, after the filesystem changed (a
# PVR disk's nightly run): the old file is replaced, not refused, and
# e2undo rolls back that run.
img=$T/again.img
small_image "$img" ext4
rm -f "$T/undo"
expect_rc 0 e2defrag -z "$T/undo" "$img"
gen "$T/frag2" 245760 23
fragment "$img" "$T/frag2" /frag2 12288
check_clean "$img"
cp "$img" "$T/mid.img"
expect_rc 0 e2defrag -z "$T/undo" "$img"
cmp -s "$img" "$T/mid.img" && fail "again: the second run changed nothing to undo"
e2undo "$T/undo" "$img" > "$T/undo.out" 2>&1 || { cat "$T/undo.out"; fail "again: e2undo failed"; }
cmp -s "$img" "$T/mid.img" || fail "again: e2undo did not restore the image as the second run found it"

# A run the filesystem refuses (here: errors recorded) leaves the old undo
# file alone: it may be all that rolls the last run back.
img=$T/refused.img
small_image "$img" ext4
cp "$img" "$T/before-run.img"
rm -f "$T/undo"
expect_rc 0 e2defrag -z "$T/undo" "$img"
cp "$T/undo" "$T/undo.kept"
cp "$img" "$T/after-run.img"
debugfs -w -R "ssv state 3" "$img" >/dev/null 2>&1 || fail "debugfs ssv state"
expect_rc 8 e2defrag -z "$T/undo" "$img"
cmp -s "$T/undo" "$T/undo.kept" || fail "a refused run touched the old undo file"
cp "$T/after-run.img" "$img"
e2undo "$T/undo" "$img" > "$T/undo.out" 2>&1 || { cat "$T/undo.out"; fail "refused: e2undo failed"; }
cmp -s "$img" "$T/before-run.img" || fail "refused: the kept undo file does not roll back the run"

# An undo file that is the filesystem itself (by its name, a hard link or
# a symbolic link) or not a regular file is refused, the image untouched
# (-z IMAGE IMAGE deleted the image); one that cannot be created is an
# operational error (libext2fs' undo_io crashed on it), the image
# untouched too.
img=$T/self.img
small_image "$img" ext4
cp "$img" "$T/self.orig"
ln -f "$img" "$T/self.hard"
ln -sf "$img" "$T/self.soft"
for undo in "$img" "$T/self.hard" "$T/self.soft" "$T" /dev/null; do
	expect_rc 16 e2defrag -z "$undo" "$img"
	grep -q "the undo file $undo is" "$T/out" || { cat "$T/out"; fail "-z $undo: no message naming the undo file"; }
	cmp -s "$img" "$T/self.orig" || fail "-z $undo: the image changed"
done
[ -c /dev/null ] || fail "-z /dev/null: /dev/null is gone"
expect_rc 8 e2defrag -z "$T/no/such/dir/undo" "$img"
grep -q "while creating the undo file" "$T/out" || { cat "$T/out"; fail "uncreatable undo file: no message"; }
cmp -s "$img" "$T/self.orig" || fail "uncreatable undo file: the image changed"

# With --json the e2undo command goes to stderr, stdout stays JSON.
small_image "$T/j.img" ext4
rm -f "$T/undo"
e2defrag --json -z "$T/undo" "$T/j.img" > "$T/j.json" 2> "$T/j.err" || fail "json run"
json_get "$T/j.json" 'j["result"]["moves_done"]' > /dev/null || fail "stdout is not JSON"
grep -q "e2undo" "$T/j.err" || fail "no e2undo command on stderr"
exit 0
