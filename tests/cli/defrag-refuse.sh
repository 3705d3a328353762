#!/bin/sh
# e2defrag refuses, with exit 8, a clear message and the image
# byte-identical, every filesystem it must not write: needs journal
# recovery, errors, not clean, orphans, not checked since mounted (-f
# overrides only that), a feature it does not understand; -n refuses the
# same way.
. "$top_srcdir/tests/cli/defrag-lib.sh"

small_image "$T/base.img" ext4

# refuse NAME PATTERN DEBUGFS-COMMAND...: the image so changed is refused.
refuse() {
	name=$1 pattern=$2
	shift 2
	cp "$T/base.img" "$T/$name.img"
	for c in "$@"; do
		debugfs -w -R "$c" "$T/$name.img" >/dev/null 2>&1 || fail "debugfs $c"
	done
	cp "$T/$name.img" "$T/$name.orig"
	for opt in "" -n -f; do
		expect_rc 8 e2defrag $opt "$T/$name.img"
		grep -qi "$pattern" "$T/out" || { cat "$T/out"; fail "$name: no '$pattern' in the message"; }
		cmp -s "$T/$name.img" "$T/$name.orig" || fail "$name: e2defrag $opt changed the image"
	done
}

refuse recovery "journal recovery" "feature needs_recovery"
refuse errors "errors" "ssv state 3"
refuse unclean "not cleanly unmounted" "ssv state 0"
refuse orphans "orphan" "ssv last_orphan 12"
refuse shared "shared_blocks" "feature shared_blocks"

# A feature this project does not know, named (FEATURE_C31 and the like,
# as dumpe2fs names one), also where libext2fs itself refuses to open it
# (an incompat one): e2frag names it too.  The bit is added to the
# filesystem's own (ssv sets the field whole, checksum redone).
feature_word() {	# OFFSET IMAGE: the superblock's 32-bit field there
	python3 -c 'import struct, sys
f = open(sys.argv[2], "rb"); f.seek(1024 + int(sys.argv[1], 0))
print(struct.unpack("<I", f.read(4))[0])' "$1" "$2"
}
for kind in compat:0x5c:C incompat:0x60:I ro_compat:0x64:R; do
	field=${kind%%:*} letter=${kind##*:} off=${kind#*:}
	off=${off%:*}
	word=$(feature_word "$off" "$T/base.img") || fail "read s_feature_$field"
	refuse "unknown-$field" "uses the feature 'FEATURE_${letter}31'" \
		"ssv feature_$field $((word | 0x80000000))"
done
expect_rc 8 e2frag "$T/unknown-incompat.img"
grep -q "uses the feature 'FEATURE_I31'" "$T/out" || { cat "$T/out"; fail "e2frag does not name FEATURE_I31"; }

# An aborted journal (s_errno set in the journal superblock, as the
# kernel leaves it) while the superblock still says clean: errors, refused
# by -n as by a real run.  (ext3: no journal checksum to redo.)
small_image "$T/jerr.img" ext3
jsb=$(debugfs -R "bmap <8> 0" "$T/jerr.img" 2>/dev/null)
[ -n "$jsb" ] || fail "jerr: no journal superblock"
printf '\377\377\377\373' | dd of="$T/jerr.img" bs=1 seek=$((jsb * 4096 + 32)) conv=notrunc 2>/dev/null
cp "$T/jerr.img" "$T/jerr.orig"
for opt in "" -n; do
	expect_rc 8 e2defrag $opt "$T/jerr.img"
	grep -qi "errors" "$T/out" || { cat "$T/out"; fail "jerr: e2defrag $opt does not say errors"; }
	cmp -s "$T/jerr.img" "$T/jerr.orig" || fail "jerr: e2defrag $opt changed the image"
done

# Not checked since it was last mounted: refused, but -f goes ahead.
cp "$T/base.img" "$T/unchecked.img"
debugfs -w -R "ssv lastcheck 20200101" "$T/unchecked.img" >/dev/null 2>&1
debugfs -w -R "ssv mtime 20210101" "$T/unchecked.img" >/dev/null 2>&1
cp "$T/unchecked.img" "$T/unchecked.orig"
expect_rc 8 e2defrag "$T/unchecked.img"
grep -q "not been checked" "$T/out" || fail "unchecked: message"
cmp -s "$T/unchecked.img" "$T/unchecked.orig" || fail "unchecked: image changed"
expect_rc 0 e2defrag -f "$T/unchecked.img"
check_clean "$T/unchecked.img"

# bigalloc: the whole filesystem is refused, naming the feature.
make_image "$T/bigalloc.img" ext4 4096 64M -O bigalloc -C 16384
cp "$T/bigalloc.img" "$T/bigalloc.orig"
expect_rc 8 e2defrag "$T/bigalloc.img"
grep -q "bigalloc" "$T/out" || fail "bigalloc not named"
cmp -s "$T/bigalloc.img" "$T/bigalloc.orig" || fail "bigalloc image changed"

# Not a filesystem, missing, a directory: exit 8, nothing written.
head -c 1048576 /dev/zero > "$T/zero.img"
expect_rc 8 e2defrag "$T/zero.img"
[ "$(tr -d '\0' < "$T/zero.img" | wc -c)" -eq 0 ] || fail "zero image written"
expect_rc 8 e2defrag "$T/missing.img"
expect_rc 8 e2defrag "$T"
exit 0
