#!/bin/sh
# e2frag --svg draws the block map: well-formed XML, as many cells as the
# block count (dumpe2fs) calls for at the finest zoom with at most 8192
# cells, every cell in the state dumpe2fs and debugfs give its blocks
# (tests/tui/oracle.py), group boundaries where dumpe2fs has groups, and
# with --highlight exactly the cells holding the file's blocks (debugfs
# blocks) and, in the other colour, those of the files it interleaves with.
set -u
command -v xmllint > /dev/null || { echo "SKIP: no xmllint"; exit 77; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
. "$top_srcdir/tests/tui/images.sh"
oracle="python3 $top_srcdir/tests/tui/oracle.py"
svgcheck="python3 $top_srcdir/tests/tui/svgcheck.py"
tmp=$(mktemp -d "$TMPDIR/e2frag-svg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
streams=/a.ts,/b.ts,/c.ts
fail() { echo "FAIL: $*"; exit 1; }

# The cells an SVG should have for IMG: bpc is the smallest power of two
# that brings ceil(blocks / bpc) to 8192 or fewer.
check_counts() {	# SVG IMG
	blocks=$(dumpe2fs -h "$2" 2>/dev/null | sed -n 's/^Block count: *//p')
	bpc=1
	while [ $(((blocks + bpc - 1) / bpc)) -gt 8192 ]; do bpc=$((bpc * 2)); done
	want=$(((blocks + bpc - 1) / bpc))
	[ "$($svgcheck attr "$1" data-blocks)" = "$blocks" ] || fail "$1: data-blocks is not $blocks"
	[ "$($svgcheck attr "$1" data-blocks-per-cell)" = "$bpc" ] || fail "$1: not $bpc blocks per cell"
	[ "$($svgcheck attr "$1" data-cells)" = "$want" ] || fail "$1: data-cells is not $want"
	got=$($svgcheck cells "$1") || fail "$1: cells overlap or are missing"
	[ ${#got} -eq "$want" ] || fail "$1: ${#got} cells drawn, want $want"
	echo "$1: $want cells of $bpc blocks for $blocks blocks"
}

check_states() {	# SVG IMG BPC [--interleaved ...]
	svg=$1 img=$2 bpc=$3
	shift 3
	$svgcheck cells "$svg" > "$tmp/got" || fail "$svg: unreadable"
	$oracle cells "$img" "$bpc" "$@" > "$tmp/want" || fail "oracle failed on $img"
	cmp -s "$tmp/got" "$tmp/want" || {
		echo "$svg: cell states differ from dumpe2fs/debugfs (got, want):"
		head -c 400 "$tmp/got"; echo; head -c 400 "$tmp/want"; echo
		fail "$svg: states"
	}
	echo "$svg: every cell in the state of its worst block"
}

# 1. A 4 MiB ext2 image: one block a cell, a file highlighted.
map_image_ext2 "$tmp/e2.img" || fail "cannot build the ext2 image"
sum=$(md5sum < "$tmp/e2.img")
e2frag --svg "$tmp/e2.svg" --highlight /a.ts "$tmp/e2.img" > "$tmp/report"
rc=$?
[ $rc -le 1 ] || fail "e2frag --svg exited $rc"
[ "$(md5sum < "$tmp/e2.img")" = "$sum" ] || fail "the image changed"
grep -q '/a.ts' "$tmp/report" || fail "the text report is missing beside --svg FILE"
xmllint --noout "$tmp/e2.svg" || fail "e2.svg is not well-formed XML"
check_counts "$tmp/e2.svg" "$tmp/e2.img"
check_states "$tmp/e2.svg" "$tmp/e2.img" 1 --interleaved $streams

# Highlighted: exactly a.ts's blocks; partners: exactly b.ts's and c.ts's.
$svgcheck marks "$tmp/e2.svg" > "$tmp/marks" || fail "highlight runs overlap"
python3 - "$tmp/marks" "$($oracle blocks "$tmp/e2.img" /a.ts)" \
	"$($oracle blocks "$tmp/e2.img" /b.ts /c.ts | tr '\n' ' ')" <<'PY' || fail "highlight"
import sys
marks = open(sys.argv[1]).read().strip()
file_blocks = {int(b) for b in sys.argv[2].split()}
partner_blocks = {int(b) for b in sys.argv[3].split()}
got_file = {i for i, m in enumerate(marks) if m == "@"}
got_partner = {i for i, m in enumerate(marks) if m == "&"}
assert len(file_blocks) == 12 and len(partner_blocks) == 24, "oracle lists too few blocks"
if got_file != file_blocks:
    sys.exit("highlighted %s, want %s" % (sorted(got_file), sorted(file_blocks)))
if got_partner != partner_blocks - file_blocks:
    sys.exit("partners %s, want %s" % (sorted(got_partner), sorted(partner_blocks)))
print("highlight: the 12 cells of /a.ts, the 24 of /b.ts and /c.ts")
PY
grep -q '>/a.ts<' "$tmp/e2.svg" || fail "the legend does not name /a.ts"

# 2. --svg - : the picture alone on stdout.  A contiguous file, which the
# summary's scan does not name, is still named and marked.
e2frag --svg - --highlight /contig "$tmp/e2.img" > "$tmp/out.svg"
xmllint --noout "$tmp/out.svg" || fail "--svg - does not write just the SVG"
grep -q '>/contig<' "$tmp/out.svg" || fail "the legend does not name /contig"
want=$($oracle blocks "$tmp/e2.img" /contig)
got=$($svgcheck marks "$tmp/out.svg" | python3 -c 'import sys; print(" ".join(str(i) for i, m in enumerate(sys.stdin.read()) if m == "@"))')
[ "$got" = "$want" ] || fail "/contig: marked $got, want $want"

# 3. ext4 with a journal: journal blocks apart from the other metadata.
map_image_ext4 "$tmp/e4.img" || fail "cannot build the ext4 image"
e2frag --svg "$tmp/e4.svg" "$tmp/e4.img" > /dev/null
xmllint --noout "$tmp/e4.svg" || fail "e4.svg is not well-formed XML"
check_counts "$tmp/e4.svg" "$tmp/e4.img"
grep -q 'class="s2"' "$tmp/e4.svg" || fail "no journal cells in e4.svg"
check_states "$tmp/e4.svg" "$tmp/e4.img" 1

# 4. 32 MiB: 4 blocks a cell, each the worst of its blocks; 4 groups,
# and /span, larger than a group: in pieces the group metadata cuts it
# into, no more than its best, so drawn as a file, not a fragmented one.
map_image_ext2 "$tmp/big.img" 32M || fail "cannot build the 32 MiB image"
yes span | head -c $((10 * 1048576)) > "$tmp/span"
debugfs -w -R "write $tmp/span span" "$tmp/big.img" > /dev/null 2>&1
rm -f "$tmp/span"
e2fsck -fn "$tmp/big.img" > /dev/null 2>&1 || fail "big.img is not clean with /span"
python3 "$top_srcdir/tests/lib/best_oracle.py" files "$tmp/big.img" | python3 -c 'import json, sys
f = [f for f in json.load(sys.stdin).values() if f["path"] == "/span"][0]
sys.exit(0 if f["best"] >= 2 and f["pieces"] == f["best"] else "/span: %d pieces, best %d" % (f["pieces"], f["best"]))' ||
	fail "/span is not in as many pieces as zones it needs"
e2frag --svg "$tmp/big.svg" --highlight /b.ts "$tmp/big.img" > /dev/null
xmllint --noout "$tmp/big.svg" || fail "big.svg is not well-formed XML"
check_counts "$tmp/big.svg" "$tmp/big.img"
check_states "$tmp/big.svg" "$tmp/big.img" 4 --interleaved $streams
groups=$(dumpe2fs -h "$tmp/big.img" 2>/dev/null | awk -F: '
	/^Block count/ { b = $2 } /^Blocks per group/ { g = $2 } /^First block/ { f = $2 }
	END { n = int((b - f + g - 1) / g); for (i = 1; i < n; i++) printf "%s%d", (i > 1 ? " " : ""), i }')
[ "$($svgcheck groups "$tmp/big.svg")" = "$groups" ] || fail "group lines are not at groups $groups"
$svgcheck marks "$tmp/big.svg" > "$tmp/marks"
want=$($oracle blocks "$tmp/big.img" /b.ts | tr ' ' '\n' | awk '{ print int($1 / 4) }' | sort -nu | tr '\n' ' ')
got=$(python3 -c 'import sys; print(" ".join(str(i) for i, m in enumerate(open(sys.argv[1]).read()) if m == "@"))' "$tmp/marks")
[ "$got " = "$want" ] || fail "4 blocks a cell: highlighted cells $got, want $want"
echo "32 MiB: group lines at $groups; /b.ts highlighted in cells $got"
exit 0
