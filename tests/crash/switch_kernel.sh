#!/bin/sh
# The kernel as the judge of the journal (root and loop mounts needed, else
# skipped): transactions committed and left in the log (testmove -n) are
# replayed by the kernel's jbd2 when it mounts the image; after unmounting,
# e2fsck -fn finds it clean, the files read back through the kernel and
# through debugfs are byte-identical, and the new layout is in place.
# ext3 (1 KiB, no checksums) and ext4 (4 KiB, checksum v3, 64-bit tags),
# with the log wrapped around on the ext3 image.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum mount umount testmove
[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root"; exit 77; }
mkwork
mnt=$WORK/mnt
mkdir "$mnt"
mounted=
cleanup() {
	[ -n "$mounted" ] && umount "$mnt" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# Can this machine loop-mount at all?  (Containers often cannot.)
mkimg "$WORK/probe.img" 4096 -t ext4 -b 1024
mount -o loop "$WORK/probe.img" "$mnt" 2>/dev/null || { echo "SKIP: cannot loop-mount"; exit 77; }
umount "$mnt" || fail "cannot unmount the probe"

# kernel_case NAME KIB REPEAT MKE2FS-ARGS...
kernel_case() {
	name=$1 kib=$2 repeat=$3
	shift 3
	img=$WORK/$name.img
	mkimg "$img" "$kib" "$@"
	make_streams "$img" 3 100 "$WORK"
	snapshot "$img" "$WORK/before"
	testmove -n -r "$repeat" "$img" /s0 /s1 /s2 > "$WORK/move.out" 2>&1 ||
		{ cat "$WORK/move.out"; fail "$name: testmove -n failed"; }
	dumpe2fs -h "$img" 2>/dev/null | grep -q needs_recovery ||
		fail "$name: nothing left for the kernel to replay"
	case $name in
	*wrap*)	logdump "$img" |
		sed -n 's/.*at block \([0-9]*\)$/\1/p; s/.*logged at journal block \([0-9]*\).*/\1/p' |
		awk 'NR > 1 && $1 < last { w = 1 } { last = $1 } END { exit !w }' ||
			fail "$name: the log does not wrap around" ;;
	esac
	mount -o loop "$img" "$mnt" || fail "$name: the kernel refused to mount"
	mounted=1
	( cd "$mnt" && for f in s0 s1 s2; do
		printf '%s %s\n' "$(stat -c %s "$f")" "$(sha256sum < "$f" | cut -d' ' -f1)"
	  done ) > "$WORK/kernel.sums"
	umount "$mnt" || fail "$name: cannot unmount"
	mounted=
	clean "$img" || { cat "$WORK/fsck.out"; fail "$name: not clean after the kernel's replay"; }
	snapshot "$img" "$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" || fail "$name: contents changed"
	for f in s0 s1 s2; do
		want=$(snapshot_sha "$WORK/before" "/$f")
		[ -n "$want" ] || fail "$name: no checksum of /$f in the snapshot"
		grep -q " $want\$" "$WORK/kernel.sums" || fail "$name: /$f reads back wrong through the kernel"
		last=$(grep "^moved /$f " "$WORK/move.out" | tail -1 | sed 's/.* to //')
		got=$(file_blocks "$img" /$f | sort -n | awk 'NR == 1 { s = $1 } { e = $1 } END { print s "-" e }')
		[ "$last" = "$got" ] || fail "$name: /$f at $got, last moved to $last"
	done
	echo "ok $name"
}

kernel_case ext3-1k-wrap 8192 60 -t ext3 -b 1024 -J size=1
kernel_case ext4-4k-v3 16384 1 -t ext4 -b 4096

# Escaping, replayed by the kernel: group 4's bitmap made to start with
# the journal magic (see switch_journal.sh).
img=$WORK/escape.img
mkimg "$img" 40960 -t ext4 -b 1024
gen_file "$WORK/f" $((13 * 1024)) escape
echo "write $WORK/f f" > "$WORK/c"
dbg "$img" "$WORK/c"
b=$((1 + 4 * 8192))
bb=$(dumpe2fs "$img" 2>/dev/null | awk '/^Group 4:/ { g = 1 } g && /Block bitmap at/ { sub(/.*Block bitmap at /, ""); sub(/ .*/, ""); print; exit }')
testmove -n -t $((b+6))-$((b+9)),$((b+11))-$((b+13)),$((b+16)),$((b+19))-$((b+21)),$((b+27))-$((b+28)),$((b+31)) \
	"$img" /f > "$WORK/move.out" 2>&1 || { cat "$WORK/move.out"; fail "escape: testmove failed"; }
logdump "$img" | grep -q "FS block $bb logged.*flags 0x[0-9a-f]*[13579bdf])" ||
	fail "escape: bitmap block not logged escaped"
mount -o loop "$img" "$mnt" || fail "escape: the kernel refused to mount"
mounted=1
umount "$mnt" || fail "escape: cannot unmount"
mounted=
clean "$img" || { cat "$WORK/fsck.out"; fail "escape: not clean after the kernel's replay"; }
[ "$(dd if="$img" bs=1024 skip="$bb" count=1 2>/dev/null | od -An -tx1 -N4 | tr -d ' ')" = c03b3998 ] ||
	fail "escape: the kernel's replay did not restore the magic"
echo "ok escape"
