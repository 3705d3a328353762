#!/bin/sh
# e2fragmap in tmux: the map and its legend appear, each cell in the state
# dumpe2fs and debugfs give its blocks (tests/tui/oracle.py); the whole
# filesystem fits at the finest zoom that can hold it; + and - change the
# blocks per cell; a resize redraws within the new size (and a tiny one
# says so); q exits 0 and gives the shell its screen back.
set -u
maptest=screen
. "$top_srcdir/tests/tui/maptest.sh"

map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"
blocks=$(dumpe2fs -h "$tmp/e2.img" 2>/dev/null | sed -n 's/^Block count: *//p')
sum=$(md5sum < "$tmp/e2.img")

# cells_match BPC: the cells on screen are the oracle's, from block 0 on.
cells_match() {
	tm_screen "$tmp/screen"
	$screen cells "$tmp/screen" > "$tmp/got" || fail "unreadable screen"
	$oracle cells "$tmp/e2.img" "$1" --interleaved /a.ts,/b.ts,/c.ts > "$tmp/want" ||
		fail "oracle"
	python3 - "$tmp/got" "$tmp/want" <<'PY' || fail "cells at $1 blocks/cell"
import sys
got, want = (open(p).read().strip() for p in sys.argv[1:3])
if not got or want[:len(got)] != got:
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), len(got))
    sys.exit("cell %d: got %r, want %r" % (i, got[i:i + 20], want[i:i + 20]))
PY
}

tm_start 100 30 || fail "tmux did not start"
tm_keys "printf 'BEFORE-%s\\n' MARKER; NO_COLOR=1 e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait 'blocks?/cell' || fail "no map"
tm_screen "$tmp/screen"

# The legend: every state with its own character.
for entry in '\. free' '# metadata' 'J journal' '! unknown' 'd directory' \
	'o file' 'f fragmented' 'x interleaved'; do
	grep -Eq "(^|  )$entry( |\$)" "$tmp/screen" || fail "legend lacks '$entry'"
done
echo "legend: 8 states, 8 characters"

# Zoom: the finest level that holds the whole filesystem on the map rows.
$screen check "$tmp/screen" 100 30 || fail "screen layout"
bpc=$($screen bpc "$tmp/screen")
cells=$($screen cells "$tmp/screen")
maprows=$(grep -Ec '^ *[0-9]+ ' "$tmp/screen")
legend_and_status=$(awk 'NR > '"$maprows"' && NF' "$tmp/screen" | wc -l)
last=$((blocks - 1))
area=$(((100 - ${#last} - 1) * (30 - legend_and_status)))
[ ${#cells} -eq $(((blocks + bpc - 1) / bpc)) ] ||
	fail "${#cells} cells for $blocks blocks at $bpc a cell"
[ $(((blocks + bpc - 1) / bpc)) -le "$area" ] || fail "$bpc blocks/cell does not fit $area cells"
[ "$bpc" -eq 1 ] || [ $(((blocks + bpc / 2 - 1) / (bpc / 2))) -gt "$area" ] ||
	fail "$bpc blocks/cell: $((bpc / 2)) would fit too"
cells_match "$bpc"
echo "map: $blocks blocks in ${#cells} cells of $bpc, as dumpe2fs and debugfs say"

tm_keys +
tm_wait "\\b$((bpc / 2)) blocks?/cell" || fail "+ did not zoom in"
cells_match $((bpc / 2))
tm_keys -
tm_wait "\\b$bpc blocks?/cell" || fail "- did not zoom out"
tm_keys -
tm_wait "whole filesystem" || fail "zooming out past the whole filesystem"
tm_screen "$tmp/screen"
[ "$($screen bpc "$tmp/screen")" -eq "$bpc" ] || fail "zoomed out past the whole filesystem"
echo "zoom: + gives $((bpc / 2)) blocks/cell, - gives $bpc back and no more"

# Resize: everything within 60x15, the whole filesystem still on screen.
tm resize-window -t t -x 60 -y 15
fits_60x15() { tm_screen "$tmp/small" && $screen check "$tmp/small" 60 15; }
tm_until fits_60x15 || fail "after resizing to 60x15"
tm_settle
tm_screen "$tmp/small"
bpc2=$($screen bpc "$tmp/small")
cells2=$($screen cells "$tmp/small")
[ ${#cells2} -eq $(((blocks + bpc2 - 1) / bpc2)) ] || fail "60x15: ${#cells2} cells at $bpc2"
cells_match "$bpc2"
echo "resize to 60x15: $bpc2 blocks/cell, ${#cells2} cells, within the screen"

tm resize-window -t t -x 20 -y 5
tm_wait 'too small' || fail "no message on a 20x5 terminal"
tm resize-window -t t -x 100 -y 30
tm_wait "\\b$bpc blocks?/cell" || fail "no map after growing back"

# q: exit status 0, the shell's screen back, nothing of the map left.
tm_keys q
tm_wait '^rc=' || fail "e2fragmap did not exit"
tm_screen "$tmp/after"
grep -q '^rc=0$' "$tmp/after" || fail "exit status: $(grep '^rc=' "$tmp/after")"
grep -q 'BEFORE-MARKER' "$tmp/after" || fail "the screen before e2fragmap is not back"
! grep -q 'interleaved' "$tmp/after" || fail "the map is still on the screen"
[ "$(tm display -p -t t '#{alternate_on}')" = 0 ] || fail "still on the alternate screen"
[ "$(md5sum < "$tmp/e2.img")" = "$sum" ] || fail "the image changed"
echo "q: exit 0, screen restored, image unchanged"
exit 0
