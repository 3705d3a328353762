#!/bin/sh
# e2fragmap and e2frag --svg on bad input: one clear message, the
# documented exit code (8 operational, 16 usage), nothing written.  And
# the terminal cases: without colour (NO_COLOR, TERM=vt100) every state
# keeps its own character; with colour the map is drawn in colours; a
# tiny terminal gets a message instead of a map.
set -u
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
. "$top_srcdir/tests/tui/tmux.sh"
. "$top_srcdir/tests/tui/images.sh"
tmp=$(mktemp -d "$TMPDIR/e2fragmap-errors.XXXXXX") || exit 1
trap 'tm_stop; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"
echo "write /dev/null empty" | debugfs -w "$tmp/e2.img" > /dev/null 2>&1
sum=$(md5sum < "$tmp/e2.img")

# expect CODE PATTERN COMMAND...: exit CODE, one line on stderr matching PATTERN.
expect() {
	code=$1 pattern=$2
	shift 2
	"$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
	rc=$?
	[ $rc -eq "$code" ] || fail "$*: exit $rc, want $code ($(cat "$tmp/err"))"
	grep -Eq -- "$pattern" "$tmp/err" || fail "$*: stderr lacks /$pattern/: $(cat "$tmp/err")"
	[ "$(grep -vc '^Try ' "$tmp/err")" -eq 1 ] || fail "$*: more than one message: $(cat "$tmp/err")"
	echo "$*: exit $code, $(head -1 "$tmp/err")"
}

expect 16 'no filesystem given' e2fragmap
expect 16 'one filesystem at a time' e2fragmap "$tmp/e2.img" "$tmp/e2.img"
expect 16 'unrecognized option' e2fragmap --bogus "$tmp/e2.img"
expect 8 'needs a terminal' e2fragmap "$tmp/e2.img"
e2fragmap --help | grep -q '^Usage: e2fragmap' || fail "--help"
e2fragmap --version | grep -q '^e2fragmap ' || fail "--version"

expect 16 'give --svg too' e2frag --highlight /a.ts "$tmp/e2.img"
expect 16 "requires an argument" e2frag "$tmp/e2.img" --svg
expect 8 '/nope' e2frag --svg "$tmp/x.svg" --highlight /nope "$tmp/e2.img"
[ ! -e "$tmp/x.svg" ] || fail "an SVG was written for a file that does not exist"
expect 8 '/empty owns no blocks' e2frag --svg "$tmp/x.svg" --highlight /empty "$tmp/e2.img"
expect 8 'cannot write' e2frag --svg "$tmp/no/such/dir.svg" "$tmp/e2.img"
head -c 1048576 /dev/zero > "$tmp/zero.img"
expect 8 'while opening' e2frag --svg "$tmp/x.svg" "$tmp/zero.img"
[ "$(md5sum < "$tmp/e2.img")" = "$sum" ] || fail "the image changed"

# In a terminal: an image that is no filesystem, a file that is not there.
tm_start 80 24 || fail "tmux did not start"
tm_keys "e2fragmap $tmp/zero.img; echo rc=\$?" Enter
tm_wait '^rc=' || fail "e2fragmap did not exit on a zeroed image"
tm_screen | grep -q '^rc=8$' || fail "a zeroed image: not exit 8"
tm_screen | grep -q 'e2fragmap: .*while opening' || fail "a zeroed image: no message"
tm_keys "clear; e2fragmap $tmp/missing.img; echo rc=\$?" Enter
tm_wait '^rc=' || fail "e2fragmap did not exit on a missing image"
tm_screen | grep -q '^rc=8$' || fail "a missing image: not exit 8"

# TERM=vt100: no colour, so the states are told apart by their characters.
tm_keys "clear; TERM=vt100 e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait 'x interleaved' || fail "vt100: no legend"
screen=$(tm_screen)
for c in '#' 'd' 'o' 'f' 'x' '\.'; do
	echo "$screen" | grep -Eq "^ *[0-9]+ .*$c" || fail "vt100: no '$c' cells"
done
echo "vt100: states drawn as # d o f x ."
tm_keys q
tm_wait '^rc=0$' || fail "vt100: exit status"

# Colour, UTF-8: block glyphs in colours (SGR 3x), the legend the same.
tm_keys "clear; LC_ALL=C.UTF-8 TERM=screen e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait 'interleaved' || fail "colour: no legend"
tm capture-pane -p -e -t t > "$tmp/colour"
grep -q '█' "$tmp/colour" || fail "colour: no block glyphs"
python3 - "$tmp/colour" <<'PY' || fail "colour"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
colours = set(re.findall(r"\x1b\[(?:[0-9;]*;)?3([0-7])(?:;[0-9;]*)?m", text))
if len(colours) < 5:
    sys.exit("only colours %s on the screen" % sorted(colours))
print("colour: %d colours on the screen" % len(colours))
PY
tm_keys q
tm_wait '^rc=0$' || fail "colour: exit status"

# Too small from the start: a message, and q still quits.
tm resize-window -t t -x 20 -y 5
tm_keys "clear; e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait 'too small' || fail "20x5: no message"
tm_keys q
tm_wait '^rc=0$' || fail "20x5: exit status"
[ "$(md5sum < "$tmp/e2.img")" = "$sum" ] || fail "the image changed"
exit 0
