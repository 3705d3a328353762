#!/bin/sh
# e2frag --svg, read as a person would need it: each interleave set in a
# hue of its own (the sets e2frag -j reports, each cell in the set of the
# file debugfs says owns it; svg-key.sh proves the hues and the key), the
# highlighted file's own blocks as bars as high as its share of each cell
# (debugfs blocks), a legend of exactly the states the cells show, and a
# scale bar of data-mib MiB that is as long as the MiB a pixel (block size
# from dumpe2fs) make it.
set -u
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
. "$top_srcdir/tests/tui/images.sh"
oracle="python3 $top_srcdir/tests/tui/oracle.py"
svgcheck="python3 $top_srcdir/tests/tui/svgcheck.py"
tmp=$(mktemp -d "$TMPDIR/e2frag-svgread.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# check_legend SVG: the legend's states are those of the cells, in map
# order, then file and partners.  (svg.sh proves the cells' states against
# dumpe2fs and debugfs.)
check_legend() {
	cells=$($svgcheck cells "$1") || fail "$1: unreadable cells"
	want=$(python3 -c '
import sys
names = ["free", "metadata", "journal", "unknown", "directory", "file",
         "fragmented", "interleaved"]
print(" ".join(n for l, n in zip(".#J!dofx", names) if l in sys.argv[1]))' "$cells")
	got=$($svgcheck legend "$1" | sed 's/ file partners$//')
	[ "$got" = "$want" ] || fail "$1: legend '$got', states present '$want'"
	echo "$1: legend of the states present: $got"
}

# check_scale SVG IMG: MiB a pixel from the block size and blocks a cell.
check_scale() {
	bs=$(dumpe2fs -h "$2" 2>/dev/null | sed -n 's/^Block size: *//p')
	python3 - "$1" "$bs" $($svgcheck attr "$1" data-blocks-per-cell) \
		$($svgcheck attr "$1" data-cell-px) $($svgcheck scale "$1") <<'PY' || fail "$1: scale"
import sys
bs, bpc, px = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
mib, per_px, width = (float(x) for x in sys.argv[5:8])
want = bpc * bs / 2**20 / px
if abs(per_px - want) > want * 1e-6:
    sys.exit("%g MiB a pixel, want %g" % (per_px, want))
if abs(width - mib / want) > 0.01:
    sys.exit("a bar of %g MiB is %g px, want %g" % (mib, width, mib / want))
if not 20 <= width <= 400:
    sys.exit("a scale bar %g px long" % width)
print("%s: scale bar %g MiB, %g px at %g MiB a pixel" % (sys.argv[1], mib, width, want))
PY
}

# 1. Two interleave sets: /a.ts /b.ts /c.ts (images.sh) and /d.ts /e.ts
# written the same way at 3100-3123; one block a cell.
map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"
{
	for s in d e; do
		echo "write /dev/null $s.ts"
		echo "sif $s.ts size 12288"
		echo "sif $s.ts blocks 24"
	done
	for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
		echo "sif d.ts block[$i] $((3100 + 2 * i))"
		echo "sif e.ts block[$i] $((3101 + 2 * i))"
		echo "setb $((3100 + 2 * i)) 2"
	done
} | debugfs -w "$tmp/e2.img" > /dev/null 2>&1
e2fsck -fy "$tmp/e2.img" > /dev/null 2>&1
e2fsck -fn "$tmp/e2.img" > /dev/null 2>&1 || fail "the image is not clean"
e2frag -j "$tmp/e2.img" > "$tmp/r.json"
[ $? -le 1 ] || fail "e2frag -j"
e2frag --svg "$tmp/e2.svg" --highlight /a.ts "$tmp/e2.img" > /dev/null
[ $? -le 1 ] || fail "e2frag --svg"
$svgcheck sets "$tmp/e2.svg" > "$tmp/sets" || fail "unreadable sets"
$oracle blocks "$tmp/e2.img" /a.ts /b.ts /c.ts /d.ts /e.ts | {
	for p in a b c d e; do read -r blocks; echo "/$p.ts $blocks"; done
} > "$tmp/owners"
python3 - "$tmp/r.json" "$tmp/owners" "$tmp/sets" <<'PY' || fail "set hues"
import json, sys
sets = json.load(open(sys.argv[1]))["interleave_sets"]
owner = {}
for line in open(sys.argv[2]):
    path, *blocks = line.split()
    for b in blocks:
        owner[int(b)] = path
want = {}                      # cell (= block) -> set
for s in sets:
    for path in s["paths"]:
        for b, p in owner.items():
            if p == path:
                want[b] = s["set"]
if sorted(len(s["paths"]) for s in sets) != [2, 3] or len(want) != 60:
    sys.exit("e2frag -j: sets %s; debugfs: %d blocks" % (sets, len(want)))
got, hue_of = {}, {}
for line in open(sys.argv[3]):
    cell, st, hue = line.split()
    got[int(cell)] = int(st)
    hue_of.setdefault(int(st), set()).add(hue)
if got != want:
    diff = sorted(set(got.items()) ^ set(want.items()))[:6]
    sys.exit("cells in set hues differ from debugfs + e2frag -j: %s" % diff)
if any(len(h) != 1 for h in hue_of.values()) or len(set().union(*hue_of.values())) != 2:
    sys.exit("hues per set: %s" % hue_of)
print("sets: %s, each cell in its file's set, hues %s" %
      (" / ".join(",".join(s["paths"]) for s in sets), hue_of))
PY
check_legend "$tmp/e2.svg"
check_scale "$tmp/e2.svg" "$tmp/e2.img"
# One block a cell: the file's bars are whole cells, exactly its blocks.
want=$(grep '^/a.ts ' "$tmp/owners" | tr ' ' '\n' | awk 'NR > 1 { print $1, 1, "6.00" }')
[ "$($svgcheck bars "$tmp/e2.svg")" = "$want" ] || fail "/a.ts bars at one block a cell"

# 2. 32 MiB, 4 blocks a cell: /b.ts has 1 or 2 of each cell's 4 blocks
# between /a.ts's and /c.ts's; its bars must say so, not fill the cells.
map_image_ext2 "$tmp/big.img" 32M || fail "cannot build the 32 MiB image"
e2frag --svg "$tmp/big.svg" --highlight /b.ts "$tmp/big.img" > /dev/null
[ $? -le 1 ] || fail "e2frag --svg (32 MiB)"
$svgcheck bars "$tmp/big.svg" > "$tmp/bars"
python3 - "$tmp/bars" "$($oracle blocks "$tmp/big.img" /b.ts)" \
	"$($svgcheck attr "$tmp/big.svg" data-blocks-per-cell)" <<'PY' || fail "partial cells"
import sys
bpc = int(sys.argv[3])
want = {}
for b in sys.argv[2].split():
    want[int(b) // bpc] = want.get(int(b) // bpc, 0) + 1
got = {}
for line in open(sys.argv[1]):
    cell, n, h = line.split()
    got[int(cell)] = int(n)
    full = int(n) == bpc
    if (float(h) == 6) != full or abs(float(h) - max(1, 6 * int(n) / bpc)) > 0.01 and not (
            not full and float(h) == 5):
        sys.exit("cell %s: %s of %d blocks drawn %s px high" % (cell, n, bpc, h))
if got != want or bpc != 4:
    sys.exit("bars %s, debugfs %s (%d blocks a cell)" % (got, want, bpc))
print("/b.ts: %d cells, each bar %s of 4 blocks high: none whole" %
      (len(got), "/".join(sorted({str(n) for n in got.values()}))))
PY
check_legend "$tmp/big.svg"
check_scale "$tmp/big.svg" "$tmp/big.img"
exit 0
