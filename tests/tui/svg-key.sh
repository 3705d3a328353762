#!/bin/sh
# e2frag --svg's interleave sets and file boundaries, against e2frag -J
# (the sets, as the report's contract gives them) and debugfs (who owns
# each block):
# - the key has a row for each of the 6 largest sets (most blocks, per
#   -J), largest first, with the set's number, its file count and its
#   paths in full (the row's title) and shortened (its text), and one row
#   naming the rest, which share a neutral grey;
# - every interleaved cell is in the hue its set's row shows;
# - the keyed hues stay apart for a deuteranope: in the SVG's own fills,
#   simulated with Machado et al.'s (2009) deuteranopia matrix at severity
#   1 on linear sRGB, then CIELAB (D65), every two keyed hues, and each
#   and the grey, are at least 12 apart in CIEDE2000 (checked here against
#   Sharma, Wu and Dalal's published test pairs first), where 2.3 is a
#   just noticeable difference;
# - a line marks each cell edge where, inside a run of cells of one state
#   that files own, the file owning the last block before the edge is not
#   the one owning the first after it (one block a cell, and four).
set -u
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
. "$top_srcdir/tests/tui/images.sh"
oracle="python3 $top_srcdir/tests/tui/oracle.py"
svgcheck="python3 $top_srcdir/tests/tui/svgcheck.py"
tmp=$(mktemp -d "$TMPDIR/e2frag-svgkey.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# add_sets IMG BASE: eight sets of two files, /sN/a.ts and /sN/b.ts, N = 1
# .. 8, each file N + 2 blocks (direct blocks only), written block by
# block into each other from BASE + 100 N: sets of 6 to 20 blocks.  Set 1's
# pairs of blocks lie 45 blocks apart, so that it loses the most read time
# and e2frag numbers it first, though it is the smallest: the key must go
# by blocks, not by number.
add_sets() {
	{
		for n in 1 2 3 4 5 6 7 8; do
			echo "mkdir s$n"
			for f in a b; do
				echo "write /dev/null s$n/$f.ts"
				echo "sif s$n/$f.ts size $(((n + 2) * 1024))"
				echo "sif s$n/$f.ts blocks $(((n + 2) * 2))"
			done
			i=0
			while [ $i -lt $((n + 2)) ]; do
				b=$(($2 + 100 * n + (n == 1 ? 45 : 2) * i))
				echo "sif s$n/a.ts block[$i] $b"
				echo "sif s$n/b.ts block[$i] $((b + 1))"
				echo "setb $b 2"
				i=$((i + 1))
			done
		done
	} | debugfs -w "$1" > /dev/null 2>&1
	e2fsck -fy "$1" > /dev/null 2>&1
	e2fsck -fn "$1" > /dev/null 2>&1 || fail "$1 is not clean"
}

# The images: images.sh's (its /a.ts /b.ts /c.ts a ninth set) with the eight.
map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"
add_sets "$tmp/e2.img" 2000
map_image_ext2 "$tmp/big.img" 32M || fail "cannot build the 32 MiB image"
add_sets "$tmp/big.img" 20000
interleaved=/a.ts,/b.ts,/c.ts
for n in 1 2 3 4 5 6 7 8; do interleaved=$interleaved,/s$n/a.ts,/s$n/b.ts; done

# 1. The key and the hues, against e2frag -J.
e2frag -J "$tmp/e2.img" > "$tmp/r.json"
[ $? -le 1 ] || fail "e2frag -J"
e2frag --svg "$tmp/e2.svg" "$tmp/e2.img" > /dev/null
[ $? -le 1 ] || fail "e2frag --svg"
$svgcheck key "$tmp/e2.svg" > "$tmp/key" || fail "no key"
$svgcheck sets "$tmp/e2.svg" > "$tmp/sets" || fail "unreadable sets"
$svgcheck fills "$tmp/e2.svg" > "$tmp/fills" || fail "no fills"
python3 - "$tmp/r.json" "$tmp/key" "$tmp/sets" "$tmp/fills" <<'PY' || fail "the key"
import json, sys
sets = json.load(open(sys.argv[1]))["interleave_sets"]
rows = [json.loads(l) for l in open(sys.argv[2])]
if len(sets) != 9 or sets[0]["paths"] != ["/s1/a.ts", "/s1/b.ts"]:
    sys.exit("e2frag -J found %d sets, the image has 9, /s1's first" % len(sets))
# The six with the most blocks, largest first (ties: the lower number).
largest = sorted(sets, key=lambda s: (-s["blocks"], s["set"]))[:6]
keyed, rest = rows[:-1], rows[-1]
if [r["set"] for r in keyed] != [str(s["set"]) for s in largest]:
    sys.exit("keyed sets %s, the 6 largest are %s" %
             ([r["set"] for r in keyed], [s["set"] for s in largest]))
by_number = {s["set"]: s for s in sets}
for row in keyed:
    s = by_number[int(row["set"])]
    if row["files"] != len(s["paths"]) or row["title"] != s["paths"][:row["shown"]] \
            or row["shown"] != len(s["paths"]) or row["blocks"] != s["blocks"]:
        sys.exit("row %s says %s; e2frag -J: %s" % (row["set"], row, s))
    if not row["text"].startswith("set %d: %d files, " % (s["set"], len(s["paths"]))):
        sys.exit("row text %r" % row["text"])
    # The shared directory once, then each file's name.
    common = s["paths"][0].rsplit("/", 1)[0] + "/"
    names = [p[len(common):] for p in s["paths"]] if all(
        p.startswith(common) for p in s["paths"]) and common != "/" else s["paths"]
    if not row["text"].endswith(" ".join(names)) or (names != s["paths"] and
                                                     " in %s:" % common not in row["text"]):
        sys.exit("row text %r does not name %s" % (row["text"], s["paths"]))
others = [s for s in sets if s["set"] not in {x["set"] for x in largest}]
if rest["set"] != "other" or rest["hue"] != "kn" or rest["sets"] != len(others) \
        or rest["files"] != sum(len(s["paths"]) for s in others):
    sys.exit("the row of the rest: %s, want %d sets, %d files" %
             (rest, len(others), sum(len(s["paths"]) for s in others)))
hue = {r["set"]: r["hue"][1:] for r in keyed}
for line in open(sys.argv[3]):
    cell, st, h = line.split()
    if h != hue.get(st, "n"):
        sys.exit("cell %s of set %s in hue k%s, its row says k%s" % (cell, st, h, hue.get(st, "n")))
fills = dict(l.split() for l in open(sys.argv[4]))
grey = fills["kn"]
if not grey[1:3] == grey[3:5] == grey[5:7]:
    sys.exit("the rest's hue %s is not a grey" % grey)
print("key: sets %s keyed largest first, %d others in grey %s; every set cell in its row's hue"
      % (" ".join(r["set"] for r in keyed), len(others), grey))
print(" ".join(fills["k" + h] for h in sorted(hue.values())), file=open(sys.argv[4] + ".keyed", "w"))
PY

python3 - $(cat "$tmp/fills.keyed") "$(sed -n 's/^kn //p' "$tmp/fills")" <<'PY' || fail "the hues for a deuteranope"
import itertools, math, sys

MACHADO_DEUTERANOPIA = [[0.367322, 0.860646, -0.227968],   # Machado, Oliveira
                        [0.280085, 0.672501, 0.047413],    # and Fernandes 2009,
                        [-0.011820, 0.042940, 0.968881]]   # severity 1.0

def linear(c):
    c /= 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

def deuteranope(rgb):
    v = [linear(int(rgb[i:i + 2], 16)) for i in (1, 3, 5)]
    return [min(1, max(0, sum(m * x for m, x in zip(row, v)))) for row in MACHADO_DEUTERANOPIA]

def lab(lin):
    r, g, b = lin
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    f = lambda t: t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))

def ciede2000(p, q):
    (l1, a1, b1), (l2, a2, b2) = p, q
    cbar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(cbar ** 7 / (cbar ** 7 + 25 ** 7)))
    a1, a2 = a1 * (1 + g), a2 * (1 + g)
    c1, c2 = math.hypot(a1, b1), math.hypot(a2, b2)
    h1 = math.degrees(math.atan2(b1, a1)) % 360 if c1 else 0
    h2 = math.degrees(math.atan2(b2, a2)) % 360 if c2 else 0
    dh = 0 if not c1 * c2 else h2 - h1 - 360 if h2 - h1 > 180 else \
        h2 - h1 + 360 if h2 - h1 < -180 else h2 - h1
    dl, dc = l2 - l1, c2 - c1
    dhh = 2 * math.sqrt(c1 * c2) * math.sin(math.radians(dh / 2))
    lbar, cb = (l1 + l2) / 2, (c1 + c2) / 2
    hbar = h1 + h2 if not c1 * c2 else (h1 + h2) / 2 if abs(h1 - h2) <= 180 else \
        (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * math.cos(math.radians(hbar - 30)) + 0.24 * math.cos(math.radians(2 * hbar))
         + 0.32 * math.cos(math.radians(3 * hbar + 6)) - 0.20 * math.cos(math.radians(4 * hbar - 63)))
    rc = 2 * math.sqrt(cb ** 7 / (cb ** 7 + 25 ** 7))
    sl = 1 + 0.015 * (lbar - 50) ** 2 / math.sqrt(20 + (lbar - 50) ** 2)
    sc, sh = 1 + 0.045 * cb, 1 + 0.015 * cb * t
    rt = -math.sin(math.radians(60 * math.exp(-((hbar - 275) / 25) ** 2))) * rc
    return math.sqrt((dl / sl) ** 2 + (dc / sc) ** 2 + (dhh / sh) ** 2 + rt * dc / sc * dhh / sh)

# Sharma, Wu, Dalal (2005), "The CIEDE2000 color-difference formula", pairs 1, 7, 17, 25.
for p, q, want in [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
                   ((50, 0, 0), (50, -1, 2), 2.3669),
                   ((50, 2.5, 0), (73, 25, -18), 27.1492),
                   ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]:
    if abs(ciede2000(p, q) - want) > 1e-4:
        sys.exit("CIEDE2000%s = %.4f, Sharma et al. give %.4f" % ((p, q), ciede2000(p, q), want))
# The simulation merges what a deuteranope confuses: red and green.
if ciede2000(lab(deuteranope("#d62728")), lab(deuteranope("#2ca02c"))) > 15:
    sys.exit("the simulation keeps red and green apart")

keyed, grey = sys.argv[1:-1], sys.argv[-1]
if len(keyed) != 6:
    sys.exit("%d keyed hues" % len(keyed))
worst = min((ciede2000(lab(deuteranope(a)), lab(deuteranope(b))), a, b)
            for a, b in itertools.combinations(keyed + [grey], 2))
if worst[0] < 12:
    sys.exit("for a deuteranope %s and %s are %.1f apart in CIEDE2000, under 12" % worst[::-1][:2] + (worst[0],))
print("hues %s and grey %s: at least %.1f apart in CIEDE2000 for a deuteranope (%s, %s)"
      % (" ".join(keyed), grey, worst[0], worst[1], worst[2]))
PY

# 2. File boundaries: cells where debugfs says the owner changes inside a
# run of one state, at one block a cell and at four.
check_boundaries() {	# SVG IMG BPC
	$svgcheck boundaries "$1" > "$tmp/got" || fail "$1: unreadable boundaries"
	$oracle states "$2" --interleaved "$interleaved" > "$tmp/states" || fail "oracle states"
	$oracle owners "$2" > "$tmp/owners" || fail "oracle owners"
	python3 - "$tmp/got" "$tmp/states" "$tmp/owners" "$3" "$1" <<'PY' || fail "$1: boundaries"
import sys
got = [int(l) for l in open(sys.argv[1])]
states = open(sys.argv[2]).read().strip()
owner = {}
for line in open(sys.argv[3]):
    ino, *blocks = line.split()
    for b in blocks:
        owner[int(b)] = ino
bpc = int(sys.argv[4])
ncells = (len(states) + bpc - 1) // bpc
order = ".#J!dofx"
cell = [max(states[c * bpc:(c + 1) * bpc], key=order.index) for c in range(ncells)]
def ends(c):
    owned = [b for b in range(c * bpc, min((c + 1) * bpc, len(states))) if b in owner]
    return (owner[owned[0]], owner[owned[-1]]) if owned else (None, None)
want = [c for c in range(1, ncells) if cell[c] == cell[c - 1] and cell[c] in "dofx"
        and None not in (ends(c - 1)[1], ends(c)[0]) and ends(c - 1)[1] != ends(c)[0]]
if got != want:
    sys.exit("boundaries at %s\nwant %s" % (got[:40], want[:40]))
within = sum(1 for c in want if cell[c] == "x")
print("%s: %d boundaries where debugfs's owners change (%d inside interleaved runs), %d blocks a cell"
      % (sys.argv[5].rsplit("/", 1)[-1], len(want), within, bpc))
if len(want) < 20 or not within:
    sys.exit("too few boundaries to prove anything")
PY
}
check_boundaries "$tmp/e2.svg" "$tmp/e2.img" 1
e2frag --svg "$tmp/big.svg" "$tmp/big.img" > /dev/null
[ $? -le 1 ] || fail "e2frag --svg (32 MiB)"
[ "$($svgcheck attr "$tmp/big.svg" data-blocks-per-cell)" = 4 ] || fail "big.svg is not 4 blocks a cell"
check_boundaries "$tmp/big.svg" "$tmp/big.img" 4
exit 0
