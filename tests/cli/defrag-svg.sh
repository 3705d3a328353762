#!/bin/sh
# e2defrag --svg-before FILE --svg-after FILE: the block map before any
# move and after the run, each cell in the state dumpe2fs and debugfs give
# its blocks on the image as it was and as it is (tests/tui/oracle.py),
# so the interleaved /a.ts /b.ts /c.ts show block by block in each other's
# way before and in one piece each after, where debugfs says they are.
# With -n nothing is written and the picture after is the one before.  A
# picture that cannot be written before the run stops it with nothing
# changed (exit 8).  --svg FILE puts both maps side by side in one
# picture, each with its caption, the same cells as the two pictures.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/tui/images.sh"
oracle="python3 $top_srcdir/tests/tui/oracle.py"
svgcheck="python3 $top_srcdir/tests/tui/svgcheck.py"
streams=/a.ts,/b.ts,/c.ts

img=$T/e2.img
map_image_ext2 "$img" || fail "cannot build the image"
cp "$img" "$T/orig.img"
sum=$(md5sum < "$img")

# -n: nothing written, after = before.
run_status e2defrag -n --svg-before "$T/n-before.svg" --svg-after "$T/n-after.svg" \
	--svg "$T/n-both.svg" "$img" > "$T/plan"
[ "$status" -le 1 ] || fail "e2defrag -n exited $status"
[ "$(md5sum < "$img")" = "$sum" ] || fail "-n changed the image"
$svgcheck cells "$T/n-before.svg" > "$T/nb" || fail "n-before.svg unreadable"
$svgcheck cells "$T/n-after.svg" > "$T/na" || fail "n-after.svg unreadable"
cmp -s "$T/nb" "$T/na" || fail "-n: the picture after differs from the one before"
grep -q 'unchanged (e2defrag -n)' "$T/n-after.svg" || fail "-n: the picture after does not say it is unchanged"
$svgcheck cells "$T/n-both.svg#before" > "$T/nbb" || fail "n-both.svg: no picture before"
$svgcheck cells "$T/n-both.svg#after" > "$T/nba" || fail "n-both.svg: no picture after"
cmp -s "$T/nbb" "$T/nb" && cmp -s "$T/nba" "$T/nb" || fail "-n: --svg's pictures are not the disk as it is"

# A picture before that cannot be written: exit 8, nothing written.
for opt in --svg-before --svg; do
	run_status e2defrag $opt "$T/no/such/dir.svg" "$img" > /dev/null 2> "$T/err"
	[ "$status" -eq 8 ] || fail "an unwritable $opt exited $status, expected 8"
	grep -q 'cannot write' "$T/err" || fail "no message for an unwritable $opt: $(cat "$T/err")"
	[ "$(md5sum < "$img")" = "$sum" ] || fail "an unwritable $opt let the run write"
done

# The run.
run_status e2defrag --svg-before "$T/before.svg" --svg-after "$T/after.svg" \
	--svg "$T/both.svg" "$img" > "$T/out"
[ "$status" -eq 0 ] || fail "e2defrag exited $status: $(cat "$T/out")"
fsck_clean "$img"
for f in before after; do
	python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])' "$T/$f.svg" ||
		fail "$f.svg does not parse"
done
grep -q 'before e2defrag' "$T/before.svg" || fail "before.svg does not say it is before"
grep -q 'after e2defrag' "$T/after.svg" || fail "after.svg does not say it is after"
$svgcheck cells "$T/before.svg" > "$T/got-before" || fail "before.svg cells"
$oracle cells "$T/orig.img" 1 --interleaved $streams > "$T/want-before" || fail "oracle (before)"
cmp -s "$T/got-before" "$T/want-before" || fail "before.svg is not the image before the run"
$svgcheck cells "$T/after.svg" > "$T/got-after" || fail "after.svg cells"
$oracle cells "$img" 1 > "$T/want-after" || fail "oracle (after)"
cmp -s "$T/got-after" "$T/want-after" || fail "after.svg is not the image after the run"

# --svg: the two maps side by side, each the image as it was or is, with
# its caption; the one after to the right of the one before.
python3 - "$T/both.svg" "$img" <<'PY' || fail "both.svg"
import sys, xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
pictures = {g.get("data-picture"): g for g in root.iter(NS + "g") if g.get("data-picture")}
if sorted(pictures) != ["after", "before"]:
    sys.exit("pictures %s" % sorted(pictures))
place = {}
for name, g in pictures.items():
    caption = g.find(NS + "text[@class='caption']").text
    if caption != "%s: %s e2defrag" % (sys.argv[2], name):
        sys.exit("the picture %s is captioned %r" % (name, caption))
    x, y = (float(v) for v in g.get("transform")[len("translate("):-1].split(","))
    place[name] = (x, y, float(g.get("data-width")), float(g.get("data-height")))
(bx, by, bw, bh), (ax, ay, aw, ah) = place["before"], place["after"]
if not (bx == by == ay == 0 and ax >= bw and float(root.get("width")) >= ax + aw
        and float(root.get("height")) >= max(bh, ah)):
    sys.exit("not side by side: %s in %sx%s" % (place, root.get("width"), root.get("height")))
print("both.svg: 'before e2defrag' at x 0, 'after e2defrag' at x %g, %sx%s" %
      (ax, root.get("width"), root.get("height")))
PY
$svgcheck cells "$T/both.svg#before" > "$T/both-before" || fail "both.svg: cells before"
$svgcheck cells "$T/both.svg#after" > "$T/both-after" || fail "both.svg: cells after"
cmp -s "$T/both-before" "$T/want-before" || fail "both.svg's map before is not the image before the run"
cmp -s "$T/both-after" "$T/want-after" || fail "both.svg's map after is not the image after the run"

# Each stream: its blocks (debugfs) in interleaved cells before, and in
# one run of file cells after.
python3 - "$T/got-before" "$T/got-after" \
	"$($oracle blocks "$T/orig.img" /a.ts /b.ts /c.ts | tr '\n' ';')" \
	"$($oracle blocks "$img" /a.ts /b.ts /c.ts | tr '\n' ';')" <<'PY' || fail "the streams' pieces"
import sys
before, after = (open(p).read().strip() for p in sys.argv[1:3])
old, new = ([[int(b) for b in l.split()] for l in s.split(";")[:3]] for s in sys.argv[3:5])
for name, o, n in zip(("/a.ts", "/b.ts", "/c.ts"), old, new):
    runs = lambda bl: 1 + sum(1 for x, y in zip(bl, bl[1:]) if y != x + 1)
    if len(o) != 12 or len(n) != 12:
        sys.exit("%s: %d blocks before, %d after" % (name, len(o), len(n)))
    if {before[b] for b in o} != {"x"}:
        sys.exit("%s before: cells %s" % (name, "".join(before[b] for b in o)))
    if runs(n) != 1 or {after[b] for b in n} != {"o"}:
        sys.exit("%s after: %d runs, cells %s" % (name, runs(n), "".join(after[b] for b in n)))
    print("%s: %d pieces drawn interleaved before, 1 piece drawn as a file after (blocks %d-%d)"
          % (name, runs(o), n[0], n[-1]))
PY
exit 0
