#!/bin/sh
# e2fragmap in tmux, following files: / finds a file, names it and marks
# exactly the cells of its blocks (debugfs blocks), and in another
# character those of the files it interleaves with; n steps to its next
# piece; Enter lists what is under the cursor; the worst-files list and
# the interleave-set list highlight the file chosen; g goes to a group
# (dumpe2fs); PgDn scrolls.
set -u
maptest=find
. "$top_srcdir/tests/tui/maptest.sh"

map_image_ext2 "$tmp/e2.img" || fail "cannot build the image"

# marks_match FILE PARTNERS...: '@' cells are FILE's blocks' cells, '&'
# cells those of the partners (less FILE's), every other cell as the oracle.
marks_match() {
	tm_screen "$tmp/screen"
	bpc=$($screen bpc "$tmp/screen") || fail "no blocks/cell"
	$screen cells "$tmp/screen" > "$tmp/got" || fail "unreadable screen"
	$oracle cells "$tmp/e2.img" "$bpc" --interleaved /a.ts,/b.ts,/c.ts > "$tmp/want"
	$oracle blocks "$tmp/e2.img" "$1" > "$tmp/file"
	shift
	$oracle blocks "$tmp/e2.img" "$@" | tr '\n' ' ' > "$tmp/partners"
	python3 - "$bpc" "$tmp/got" "$tmp/want" "$tmp/file" "$tmp/partners" <<'PY' || fail "highlight"
import sys
bpc = int(sys.argv[1])
got, want, file_blocks, partner_blocks = (open(p).read().split() for p in sys.argv[2:6])
got, want = got[0], want[0]
fc = {int(b) // bpc for b in file_blocks}
pc = {int(b) // bpc for b in partner_blocks} - fc
if not fc:
    sys.exit("the oracle lists no blocks")
at = {i for i, c in enumerate(got) if c == "@"}
amp = {i for i, c in enumerate(got) if c == "&"}
if at != fc:
    sys.exit("@ at %s, want %s" % (sorted(at), sorted(fc)))
if amp != pc:
    sys.exit("& at %s, want %s" % (sorted(amp), sorted(pc)))
rest = [i for i, c in enumerate(got) if c not in "@&" and c != want[i]]
if rest:
    sys.exit("cell %d: %r, want %r" % (rest[0], got[rest[0]], want[rest[0]]))
print("%d cells @, %d cells &, at %d blocks/cell" % (len(at), len(amp), bpc))
PY
}

# 140x40: the 4096 blocks fit one to a cell.
tm_start 140 40 || fail "tmux did not start"
tm_keys "NO_COLOR=1 e2fragmap $tmp/e2.img; echo rc=\$?" Enter
tm_wait '\b1 block/cell' || fail "no map at one block a cell"

tm_keys /
tm_wait 'find file \(name' || fail "/ asks for no path"
tm_keys a.ts Enter
tm_wait '@ /a\.ts' || fail "the legend does not name /a.ts"
grep -q '^/a.ts: 12 pieces' "$tmp/screen" 2>/dev/null || tm_screen "$tmp/screen"
tail -1 "$tmp/screen" | grep -q '/a.ts' || fail "the status line does not name /a.ts"
marks_match /a.ts /b.ts /c.ts

# n: the second piece, the second block debugfs lists.
second=$($oracle blocks "$tmp/e2.img" /a.ts | awk '{ print $2 }')
tm_keys n
tm_wait "piece 2 of 12, blocks $second-$second" || fail "n did not go to block $second"
tm_keys Enter
tm_wait 'under the cursor' || fail "Enter shows nothing"
tm_screen "$tmp/cell"
grep -q "^block $second, group 0" "$tmp/cell" || fail "Enter: not block $second"
grep -Eq '^  /a\.ts +file, 12 pieces' "$tmp/cell" || fail "Enter: /a.ts is not the owner"
[ "$(grep -c '^  /' "$tmp/cell")" -eq 1 ] || fail "Enter: more than one owner of one block"
tm_keys q
tm_wait '@ /a\.ts' || fail "q did not go back to the map"

# On a smaller screen, 2 blocks a cell: the marks cover the cells that hold
# the files' blocks.
tm resize-window -t t -x 100 -y 30
tm_wait '\b2 blocks/cell' || fail "100x30 does not take 2 blocks a cell"
marks_match /a.ts /b.ts /c.ts
tm resize-window -t t -x 140 -y 40
tm_wait '\b1 block/cell' || fail "140x40 does not take 1 block a cell"

# The worst files: choose /frag, which the map then highlights.
tm_keys c L
tm_wait 'files by read time lost' || fail "L shows no list"
tm_screen "$tmp/list"
row=$(awk '/^ +lost score/ { h = NR } h && / \/frag$/ { print NR - h - 1; exit }' "$tmp/list")
[ -n "$row" ] || fail "/frag is not in the list"
for _ in $(seq "$row"); do tm_keys Down; done
tm_keys Enter
tm_wait '@ /frag' || fail "choosing /frag did not highlight it"
marks_match /frag

# The interleave sets: one, the three streams; Enter highlights the first.
tm_keys i
tm_wait 'interleave sets' || fail "i shows no list"
tm_screen "$tmp/sets"
grep -Eq '^ +1 .* 3 +[0-9]+  /a\.ts /b\.ts /c\.ts$' "$tmp/sets" || fail "the set is not the 3 streams"
[ "$(grep -Ec '^ +[0-9]+ +[0-9.]+ m?s ' "$tmp/sets")" -eq 1 ] || fail "not one set"
tm_keys Enter
tm_wait '@ /a\.ts' || fail "choosing the set did not highlight /a.ts"

# ? lists the keys, among them the ones the map is driven with here.
tm_keys '?'
tm_wait 'e2fragmap keys' || fail "? shows no keys"
for k in '^/ ' '^n N ' '^g ' '^Enter ' '^L ' '^i ' '^q '; do
	tm_screen | grep -Eq "$k" || fail "help lacks $k"
done
tm_keys q
tm_wait 'blocks?/cell' || fail "q did not leave the help"
tm_keys q
tm_wait '^rc=0$' || fail "exit status"

# A 32 MiB image, 4 groups: g goes to group 2 where dumpe2fs says it starts.
map_image_ext2 "$tmp/big.img" 32M || fail "cannot build the 32 MiB image"
g2=$(dumpe2fs "$tmp/big.img" 2>/dev/null | sed -n 's/^Group 2: (Blocks \([0-9]*\)-.*/\1/p')
tm_keys clear Enter "NO_COLOR=1 e2fragmap $tmp/big.img; echo rc=\$?" Enter
tm_wait 'blocks?/cell' || fail "no map of the 32 MiB image"
tm_keys g
tm_wait 'go to group:' || fail "g asks for no group"
tm_keys 2 Enter
tm_wait '\(groups? ([0-9]+-)?2\)' || fail "g 2 did not go to group 2"
python3 - "$(tm_screen | tail -1)" "$g2" <<'PY' || fail "g 2"
import re, sys
m = re.match(r"blocks? (\d+)(?:-(\d+))? \(groups? (?:\d+-)?2\)", sys.argv[1])
first, last, want = int(m.group(1)), int(m.group(2) or m.group(1)), int(sys.argv[2])
if not first <= want <= last:
    sys.exit("cursor on %d-%d, group 2 starts at %d" % (first, last, want))
print("g 2: the cursor is on blocks %d-%d, group 2 starts at %d" % (first, last, want))
PY
tm_keys Home + +
tm_wait '^blocks 0-1 .*\b2 blocks/cell' || fail "+ + at block 0"
tm_screen "$tmp/screen"
[ "$($screen first "$tmp/screen")" -eq 0 ] || fail "not at the top"
tm_keys NPage
scrolled() { tm_screen "$tmp/paged" && [ "$($screen first "$tmp/paged")" -gt 0 ]; }
tm_until scrolled || fail "PgDn did not scroll"
tm_settle
tm_screen "$tmp/paged"
$screen cells "$tmp/paged" > /dev/null || fail "after PgDn"
echo "PgDn: the top row now starts at block $($screen first "$tmp/paged")"
tm_keys q
tm_wait '^rc=0$' || fail "exit status"
exit 0
