#!/bin/sh
# The verdict's command can be pasted into a shell: an image path or a
# mount point with a space or a quote in it is one shell word.  The
# oracle is sh itself: the arguments of the command after "run: " are
# parsed by sh and printed one a line, which must be the path and nothing
# else.  The mount point part needs root and loop devices and skips (77)
# without them.
. "$top_srcdir/tests/lib/common.sh"

# words VERDICT PROG: the arguments sh makes of VERDICT's command, which
# must be PROG's, one a line.
words() {
	cmd=${1#*run: }
	[ "$cmd" != "$1" ] || fail "no command in the verdict: $1"
	case $cmd in "$2 "*) ;; *) fail "not $2: $cmd" ;; esac
	sh -c "set -- ${cmd#"$2 "}; printf '%s\n' \"\$@\""
}

mkdir "$T/a b"
img="$T/a b/it's.img"
e2fragimg -q -w streams -t ext4 -b 1024 --size 32M --streams 4 --chunk 4K \
	--total 8M "$img" || fail "e2fragimg"
e2frag --threshold 0.001 "$img" 2> /dev/null | tail -1 > "$T/verdict"
grep -q "defragmentation recommended" "$T/verdict" || fail "no recommendation: $(cat "$T/verdict")"
note "verdict: $(cat "$T/verdict")"
words "$(cat "$T/verdict")" e2defrag > "$T/args" || fail "sh cannot parse: $(cat "$T/verdict")"
printf '%s\n' "$img" | cmp -s - "$T/args" || fail "the image path: $(cat "$T/args")"

# A plain path stays as it is.
cp "$img" "$T/plain.img"
e2frag --threshold 0.001 "$T/plain.img" 2> /dev/null | tail -1 | grep -q "run: e2defrag $T/plain.img\$" ||
	fail "a plain path was changed"

[ "$(id -u)" -eq 0 ] || skip "not root: cannot loop-mount an image"
command -v mount > /dev/null || skip "no mount"
mnt="$T/mount point's"
mkdir "$mnt"
mount -o loop,ro "$img" "$mnt" 2> /dev/null || skip "cannot loop-mount an image here"
trap 'umount "$mnt" 2> /dev/null; rm -rf "$T"' EXIT
e2frag --threshold 0.001 "$mnt" 2> /dev/null | tail -1 > "$T/verdict"
note "verdict: $(cat "$T/verdict")"
words "$(cat "$T/verdict")" e2defrag-offline > "$T/args" || fail "sh cannot parse: $(cat "$T/verdict")"
printf '%s\n' "$mnt" | cmp -s - "$T/args" || fail "the mount point: $(cat "$T/args")"
exit 0
