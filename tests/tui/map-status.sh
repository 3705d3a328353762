#!/bin/sh
# e2fragmap at 80x24: the legend's glyph for unknown blocks is not '?',
# which the "?:keys" hint beside it means, and the status line fits the 80
# columns whole.  What it says comes first, then the blocks a cell, then
# the device: a device path too long for the line is named by its last
# component, left out when even that does not fit, and only then is the
# message cut, in its middle, keeping both ends.  The pieces it names are
# debugfs's.
set -u
maptest=status
. "$top_srcdir/tests/tui/maptest.sh"

# A device path of 100 characters and more: it cannot fit beside anything.
dir=$tmp/a-directory-whose-name-is-long-enough-that-no-status-line-of-eighty-columns-can-hold-it
mkdir -p "$dir"
img=$dir/recorder.img
map_image_ext2 "$img" || fail "cannot build the image"
# /a.ts's 12 pieces under a path of 27 characters, /b.ts's under one of 101.
mid=/recordings/evening-news.ts
long=/recordings/channel-one/an-evening-news-programme-with-a-title-long-enough-to-fill-a-line/part-1.ts
{
	echo "mkdir recordings"
	echo "mkdir recordings/channel-one"
	echo "mkdir recordings/channel-one/an-evening-news-programme-with-a-title-long-enough-to-fill-a-line"
	echo "ln a.ts $mid"
	echo "unlink a.ts"
	echo "ln b.ts $long"
	echo "unlink b.ts"
} | debugfs -w "$img" > /dev/null 2>&1
e2fsck -fn "$img" > /dev/null 2>&1 || fail "the image is not clean"
pieces=$($oracle blocks "$img" "$mid" | wc -w)
[ "$pieces" -eq 12 ] || fail "debugfs lists $pieces blocks of $mid"

# status_is REGEX: the last line of the screen, spaces at its end dropped,
# matches REGEX whole and takes at most 80 columns.
status_is() {
	tm_screen "$tmp/screen"
	last=$(sed 's/ *$//' "$tmp/screen" | awk 'NF { line = $0 } END { print line }')
	[ ${#last} -le 80 ] || fail "a status line of ${#last} columns: '$last'"
	printf '%s\n' "$last" | grep -Eqx -- "$1" || fail "status line '$last', want /$1/"
	echo "status: $last"
}

tm_start 80 24 || fail "tmux did not start"
tm_keys "NO_COLOR=1 e2fragmap $img; echo rc=\$?" Enter
tm_wait 'blocks?/cell' || fail "no map"
tm_screen "$tmp/screen"

# The legend: '!' for unknown, '?' only in the hint.
grep -Eq '(^|  )! unknown( |$)' "$tmp/screen" || fail "the legend has no '! unknown'"
grep -Eq '(^|  )\?:keys( |$)' "$tmp/screen" || fail "the legend has no '?:keys'"
grep -Eq '(^|  )\? [a-z]' "$tmp/screen" && fail "a legend entry still has the glyph '?'"
echo "legend: '! unknown', and '?' only in '?:keys'"

# 1. The device's last component, whole.
status_is "blocks? 0(-[0-9]+)? \(group 0\): metadata  \|  [0-9]+ blocks?/cell  recorder\.img"

# piece_is LAST PATH: the piece LAST names is where debugfs has it (each of
# the streams' pieces is one block).
piece_is() {
	n=$(printf '%s\n' "$1" | sed -n 's/.*: piece \([0-9]*\) of 12, blocks.*/\1/p')
	b=$(printf '%s\n' "$1" | sed -n 's/.*, blocks \([0-9]*\)-\1  |.*/\1/p')
	want=$($oracle blocks "$img" "$2" | awk -v n="$n" '{ print $n }')
	[ -n "$n" ] && [ "$b" = "$want" ] || fail "'$1': piece $n is block $want (debugfs)"
}

# 2. A message of 60 columns: the device goes, the message stays whole.
tm_keys / && tm_wait 'find file' || fail "/ asks for nothing"
tm_keys "$mid" Enter
tm_wait "@ $mid" || fail "$mid not found"
tm_keys p
tm_wait ': piece [0-9]+ of 12' || fail "p does not walk the pieces"
status_is "$mid: piece [0-9]+ of 12, blocks [0-9]+-[0-9]+  \|  [0-9]+ blocks?/cell"
piece_is "$last" "$mid"

# 3. A message longer than the line: cut in its middle, both ends kept.
tm_keys / && tm_wait 'find file' || fail "/ asks for nothing"
tm_keys "$long" Enter
tm_wait "@ /recordings/channel-one/an-" || fail "$long not found"
tm_keys p
tm_wait '\.\.\..*, blocks [0-9]+-[0-9]+  \|' || fail "p does not walk the pieces"
status_is "/recordings/channel-one/.*\.\.\..*, blocks ([0-9]+)-\\1  \|  [0-9]+ blocks?/cell"
b=$(printf '%s\n' "$last" | sed -n 's/.*, blocks \([0-9]*\)-.*/\1/p')
n=$($oracle blocks "$img" "$long" | tr ' ' '\n' | grep -nx "$b" | cut -d: -f1)
[ -n "$n" ] || fail "block $b is not $long's (debugfs)"
msg="$long: piece $n of 12, blocks $b-$b"
python3 - "$last" "$msg" <<'PY' || fail "the cut message"
import sys
last, msg = sys.argv[1], sys.argv[2]
cut = last.rsplit("  |  ", 1)[0]
head, tail = cut.split("...", 1)
if not (msg.startswith(head) and msg.endswith(tail) and len(head) + len(tail) < len(msg)):
    sys.exit("'%s' is not the ends of '%s'" % (cut, msg))
if len(last) < 78:
    sys.exit("cut to %d columns where 80 were free" % len(last))
print("cut: %d of %d characters kept, both ends" % (len(head) + len(tail), len(msg)))
PY
# The legend's entry for the file is cut the same way, within the line.
grep -q '^@ /recordings/channel-one/.*\.\.\..*part-1\.ts' "$tmp/screen" ||
	fail "the legend's entry for $long is not its two ends"
awk 'length($0) > 80 { exit 1 }' "$tmp/screen" || fail "a line longer than 80 columns"

tm_keys q
tm_wait '^rc=0' || fail "q did not exit 0"
exit 0
