#!/bin/sh
# e2fragmap on what users have at hand besides an image: a qcow2 dump
# (e2image -Q) draws the same map as the image it was made from (screens
# compared, the file's name in the status line aside); a normal-format dump is
# refused, exit 8, with the message that says what it lacks; a mount
# point draws its device's map with the "mounted" note (root and loop
# devices only; that part skips, 77, without them).
set -u
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
command -v e2image > /dev/null || { echo "SKIP: no e2image"; exit 77; }
. "$top_srcdir/tests/tui/tmux.sh"
. "$top_srcdir/tests/tui/images.sh"
tmp=$(mktemp -d "$TMPDIR/e2fragmap-dumps.XXXXXX") || exit 1
mounted=
trap 'tm_stop; [ -n "$mounted" ] && umount "$tmp/mnt"; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tm_screen; exit 1; }

map_image_ext2 "$tmp/fs.img" || fail "cannot build the image"
e2image -Q "$tmp/fs.img" "$tmp/dump.qcow2" 2> /dev/null || fail "e2image -Q"
e2image "$tmp/fs.img" "$tmp/dump.e2i" 2> /dev/null || fail "e2image"

tm_start 80 24 || fail "tmux did not start"
# map SPEC OUT: e2fragmap's first screen for SPEC into OUT, lines naming
# $tmp left out; then quit, exit 0.
map() {
	tm_keys "clear; TERM=vt100 e2fragmap $1; echo rc=\$?" Enter
	tm_wait 'x interleaved' || fail "$1: no map"
	tm_settle
	tm_screen | grep -vF "$tmp" | sed -e 's/ *$//' \
		-e 's/  *\(fs\.img\|dump\.qcow2\|loop[0-9]*\)$//' > "$2"
	tm_screen > "$2.whole"
	tm_keys q
	tm_wait '^rc=0$' || fail "$1: exit status"
}
map "$tmp/fs.img" "$tmp/img.screen"
map "$tmp/dump.qcow2" "$tmp/qcow2.screen"
cmp -s "$tmp/img.screen" "$tmp/qcow2.screen" ||
	fail "the qcow2 dump's map differs: $(diff "$tmp/img.screen" "$tmp/qcow2.screen" | head -6)"
echo "qcow2 dump: the same map as the image ($(grep -c . "$tmp/img.screen") lines)"

tm_keys "clear; e2fragmap $tmp/dump.e2i; echo rc=\$?" Enter
tm_wait '^rc=' || fail "e2fragmap did not exit on a normal-format dump"
tm_screen | grep -q '^rc=8$' || fail "a normal-format dump: not exit 8"
tm_screen | tr -d '\n' | grep -q 'normal-format e2image dump' || fail "a normal-format dump: no message"
echo "normal-format dump: exit 8, named"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root: no mount point part"; exit 77; }
mkdir "$tmp/mnt"
mount -o loop,ro "$tmp/fs.img" "$tmp/mnt" 2> /dev/null || { echo "SKIP: cannot loop-mount"; exit 77; }
mounted=1
map "$tmp/mnt" "$tmp/mnt.screen"
grep -q "is mounted: the map may be out of date" "$tmp/mnt.screen.whole" ||
	fail "a mount point: no 'mounted' note: $(tail -1 "$tmp/mnt.screen.whole")"
# The map's rows and legend (the first 20 lines) as the image's.
head -n 20 "$tmp/mnt.screen" > "$tmp/mnt.rows"
head -n 20 "$tmp/img.screen" > "$tmp/img.rows"
cmp -s "$tmp/img.rows" "$tmp/mnt.rows" ||
	fail "the mount point's map differs: $(diff "$tmp/img.rows" "$tmp/mnt.rows" | head -6)"
echo "mount point: its device's map, with the mounted note"
exit 0
