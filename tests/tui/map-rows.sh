#!/bin/sh
# e2fragmap uses the whole terminal: the whole filesystem is on the map,
# in as many of the rows left by the legend and the status line as the
# cells need, at any size.  Blocks per cell need not be a power of two:
# they are the fewest with which the filesystem fits those rows (on this
# small image; a power of two filled 14 of 21 rows at 80x24), and every
# cell is in the state dumpe2fs and debugfs give its blocks
# (tests/tui/oracle.py).  Zooming in goes to the next power of two below,
# zooming out back to the whole filesystem.
set -u
maptest=rows
. "$top_srcdir/tests/tui/maptest.sh"

map_image_ext2 "$tmp/e2.img" 16M || fail "cannot build the image"
blocks=$(dumpe2fs -h "$tmp/e2.img" 2>/dev/null | sed -n 's/^Block count: *//p')
$oracle states "$tmp/e2.img" --interleaved /a.ts,/b.ts,/c.ts > "$tmp/states" || fail "oracle"

# check_size W H: the map at W x H fills its rows and shows every block.
check_size() {
	w=$1 h=$2
	tm resize-window -t t -x "$w" -y "$h"
	fits() { tm_screen "$tmp/s" && $screen check "$tmp/s" "$w" "$h" &&
		[ "$(wc -l < "$tmp/s")" -eq "$h" ]; }
	tm_until fits || fail "no map within ${w}x$h"
	tm_settle
	tm_screen "$tmp/s"
	bpc=$($screen bpc "$tmp/s")
	cells=$($screen cells "$tmp/s")
	rows=$(grep -Ec '^ *[0-9]+ ' "$tmp/s")
	# Below the map: blank rows, the legend, the status line.
	below=$(awk -v r="$rows" 'NR > r && NF' "$tmp/s" | wc -l)
	avail=$((h - below))
	[ ${#cells} -eq $(((blocks + bpc - 1) / bpc)) ] ||
		fail "${w}x$h: ${#cells} cells for $blocks blocks at $bpc a cell"
	[ "$rows" -le "$avail" ] || fail "${w}x$h: $rows rows of cells, only $avail free"
	# The fewest blocks a cell that fit: one fewer would not.
	width=$(head -n 1 "$tmp/s" | sed 's/^ *[0-9][0-9]* //' | awk '{ print length($0) }')
	[ "$bpc" -eq 1 ] || [ $(((blocks + bpc - 2) / (bpc - 1))) -gt $((width * avail)) ] ||
		fail "${w}x$h: $((bpc - 1)) blocks a cell would fit $rows of $avail rows too"
	python3 - "$tmp/states" "$bpc" "$cells" <<'PY' || fail "${w}x$h: cells"
import sys
order = ".#J!dofx"
states = open(sys.argv[1]).read().strip()
bpc, got = int(sys.argv[2]), sys.argv[3]
want = "".join(max(states[c:c + bpc], key=order.index) for c in range(0, len(states), bpc))
if got != want:
    i = next(i for i in range(len(want)) if i >= len(got) or got[i] != want[i])
    sys.exit("cell %d: got %r, want %r" % (i, got[i:i + 20], want[i:i + 20]))
PY
	echo "${w}x$h: $blocks blocks at $bpc a cell in $rows of $avail rows, each cell as debugfs says"
}

tm_start 80 24 || fail "tmux did not start"
tm_keys "NO_COLOR=1 e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait 'blocks?/cell' || fail "no map"
check_size 80 24
fit=$bpc
tm_keys +
tm_wait "\\b([0-9]+) blocks?/cell" || fail "+"
tm_until sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t t | grep -Eq '\\b[0-9]+ blocks?/cell' &&
	! tmux -S '$TMUX_SOCK' capture-pane -p -t t | grep -Eq '\\b$fit blocks?/cell'" || fail "+ did not zoom in"
tm_screen "$tmp/s"
finer=$($screen bpc "$tmp/s")
[ $((finer & (finer - 1))) -eq 0 ] && [ "$finer" -lt "$fit" ] && [ $((finer * 2)) -ge "$fit" ] ||
	fail "+ from $fit blocks a cell gave $finer, not the power of two below"
tm_keys -
tm_wait "\\b$fit blocks?/cell" || fail "- did not come back to $fit blocks a cell"
echo "zoom: $fit -> $finer -> $fit blocks a cell"
check_size 100 48
check_size 132 40
tm_keys q
tm_wait '^rc=0' || fail "e2fragmap did not exit 0"
exit 0
