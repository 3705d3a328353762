#!/bin/sh
# e2defrag refuses a mounted filesystem, read-only mounts and loop mounts
# of an image file included; -f changes nothing about that.  -n reads it
# (e2defrag-offline asks it whether a window is worth having): it warns
# that it is mounted, plans the files e2frag finds avoidably fragmented,
# and writes nothing (the image of a read-only mount keeps its checksum).
# Its estimate is the one the run after unmounting would have: the same
# as on the unmounted image, which logs moves through the journal (a
# read-write mount leaves the journal in use: the estimate still counts
# its room); the image is one where logging changes the estimate (it
# differs with --verify, which logs nothing).
# Needs root and loop devices; skips (77) without them.
. "$top_srcdir/tests/cli/defrag-lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "skip: not root"; exit 77; }
command -v mount >/dev/null 2>&1 || { echo "skip: no mount"; exit 77; }
small_image "$T/fs.img" ext4
avoidable=$(e2frag --json "$T/fs.img" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["summary"]["avoidably_fragmented_files"])')
[ "$avoidable" -ge 2 ] || fail "the image has only $avoidable avoidably fragmented files"
estimate() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["estimated_seconds"])' "$1"
}
e2defrag -n -J "$T/fs.img" > "$T/plan0.json" 2>/dev/null
e2defrag -n -J --verify "$T/fs.img" > "$T/plan-verify.json" 2>/dev/null
est0=$(estimate "$T/plan0.json") || fail "-n: no estimate"
[ "$est0" != "$(estimate "$T/plan-verify.json")" ] ||
	fail "the image logs no move on the model: the estimate check below proves nothing"
mkdir "$T/mnt"
for opts in loop loop,ro; do
	mount -o "$opts" "$T/fs.img" "$T/mnt" 2>/dev/null || { echo "skip: cannot mount"; exit 77; }
	sum=$(sha256sum < "$T/fs.img")
	for opt in "" -f; do
		e2defrag $opt "$T/fs.img" > "$T/out" 2>&1
		rc=$?
		[ $rc -eq 8 ] || { umount "$T/mnt"; cat "$T/out"; fail "mounted ($opts) e2defrag $opt exited $rc"; }
		grep -q "mounted" "$T/out" || { umount "$T/mnt"; fail "no 'mounted' in the message"; }
	done
	e2defrag -n -J "$T/fs.img" > "$T/plan.json" 2> "$T/err"
	rc=$?
	cat "$T/err"
	[ $rc -le 1 ] || { umount "$T/mnt"; fail "mounted ($opts) e2defrag -n exited $rc"; }
	grep -q "warning: .* is mounted on $T/mnt" "$T/err" || { umount "$T/mnt"; fail "-n: no warning that it is mounted"; }
	selected=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plan"]["files_selected"])' "$T/plan.json") ||
		{ umount "$T/mnt"; fail "-n: no plan in its JSON"; }
	[ "$selected" -eq "$avoidable" ] || { umount "$T/mnt"; fail "-n planned $selected files, e2frag finds $avoidable avoidably fragmented"; }
	est=$(estimate "$T/plan.json")
	[ "$est" = "$est0" ] || { umount "$T/mnt"; fail "mounted ($opts) -n estimates $est s, unmounted $est0 s"; }
	if [ "$opts" = loop,ro ] && [ "$(sha256sum < "$T/fs.img")" != "$sum" ]; then
		umount "$T/mnt"
		fail "e2defrag wrote to the read-only mounted image"
	fi
	umount "$T/mnt" || fail "umount"
done
check_clean "$T/fs.img"
exit 0
