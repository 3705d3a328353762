#!/bin/sh
# e2defrag refuses a mounted filesystem, read-only mounts and loop mounts
# of an image file included, and -n too; -f changes nothing about that.
# Needs root and loop devices; skips (77) without them.
. "$top_srcdir/tests/cli/defrag-lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "skip: not root"; exit 77; }
command -v mount >/dev/null 2>&1 || { echo "skip: no mount"; exit 77; }
small_image "$T/fs.img" ext4
mkdir "$T/mnt"
for opts in loop loop,ro; do
	mount -o "$opts" "$T/fs.img" "$T/mnt" 2>/dev/null || { echo "skip: cannot mount"; exit 77; }
	for opt in "" -n -f; do
		e2defrag $opt "$T/fs.img" > "$T/out" 2>&1
		rc=$?
		[ $rc -eq 8 ] || { umount "$T/mnt"; cat "$T/out"; fail "mounted ($opts) e2defrag $opt exited $rc"; }
		grep -q "mounted" "$T/out" || { umount "$T/mnt"; fail "no 'mounted' in the message"; }
	done
	umount "$T/mnt" || fail "umount"
done
check_clean "$T/fs.img"
exit 0
