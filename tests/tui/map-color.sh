#!/bin/sh
# e2fragmap's colour: --color=auto (the default) colours unless NO_COLOR
# is set, --color=always wins over NO_COLOR, --color=never never colours;
# without colour every state has its own ASCII character.  With colour
# each state still has a glyph of its own (colour is never the only
# difference, for red-green colour blindness) and the Okabe-Ito hue of
# lib/color.c (xterm-256 numbers, read back from tmux capture-pane -e).
set -u
maptest=color
. "$top_srcdir/tests/tui/maptest.sh"
map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"

# show ENV ARGS: run e2fragmap so, capture the screen with its escapes, quit.
show() {
	tm_keys "clear; env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 $1 e2fragmap $2 $tmp/e2.img; echo rc=\$?" Enter
	tm_wait 'blocks?/cell' || fail "no map ($1 $2)"
	tm capture-pane -e -p -t t > "$tmp/esc"
	tm capture-pane -p -t t > "$tmp/text"
	tm_keys q
	tm_wait '^rc=0' || fail "no exit 0 ($1 $2)"
}
# colored: the map's screen carries SGR colours (38;5;N or 3N).
colored() { grep -Eq "$(printf '\033')\\[[0-9;]*(38;5;[0-9]+|3[1-7])[;m]" "$tmp/esc"; }
ascii_legend() {
	for entry in '\. free' '# metadata' 'J journal' '! unknown' 'd directory' \
		'o file' 'f fragmented' 'x interleaved'; do
		grep -Eq "(^|  )$entry( |\$)" "$tmp/text" || return 1
	done
}

tm_start 100 30 || fail "tmux did not start"
show "NO_COLOR=1" ""
! colored || fail "NO_COLOR=1: colours on the screen"
ascii_legend || fail "NO_COLOR=1: the legend is not one ASCII character a state"
show "" "--color=never"
! colored || fail "--color=never: colours on the screen"
ascii_legend || fail "--color=never: the legend is not one ASCII character a state"
show "NO_COLOR=1" "--color=always"
colored || fail "--color=always with NO_COLOR=1: no colours"
echo "NO_COLOR and --color=never: ASCII, no colour; --color=always wins over NO_COLOR"

show "" ""
colored || fail "auto on a 256-colour terminal: no colours"
# Each state's legend glyph is its own, and drawn in the state's hue.
python3 - "$tmp/text" "$tmp/esc" <<'PY' || fail "glyphs and hues"
import re, sys
text, esc = (open(p, encoding="utf-8").read() for p in sys.argv[1:3])
names = ["free", "metadata", "journal", "unknown", "directory", "file",
         "fragmented", "interleaved"]
glyph = {}
for n in names:
    m = re.search(r"(\S) %s(?= |$)" % n, text, re.M)
    if not m:
        sys.exit("legend lacks %s" % n)
    glyph[n] = m.group(1)
if len(set(glyph.values())) != len(names):
    sys.exit("states share glyphs: %s" % glyph)
# lib/color.c: Okabe-Ito in xterm-256 numbers.
hue = {"metadata": 25, "directory": 36, "file": 74, "fragmented": 221,
       "interleaved": 166}
for n, h in hue.items():
    if not re.search(r"\x1b\[[0-9;]*38;5;%d[0-9;]*m%s" % (h, re.escape(glyph[n])), esc):
        sys.exit("%s (%s) is not drawn in colour %d" % (n, glyph[n], h))
print("legend: " + "  ".join("%s %s" % (glyph[n], n) for n in names))
PY
grep -q 'x interleaved' "$tmp/text" && fail "auto with colour: ASCII legend"
echo "auto: colour, a glyph of its own and an Okabe-Ito hue for each state"
exit 0
