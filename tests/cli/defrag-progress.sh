#!/bin/sh
# e2defrag's progress.  -C FD writes "PHASE DONE TOTAL DEVICE" lines, the
# phases numbered in the order they run (1 inodes, 2 directories, 3
# planning, 4 moving), each ending with DONE = TOTAL, the totals those of
# the image: its inodes (dumpe2fs), its directories' blocks, the files to
# move and their blocks (debugfs).  -C 0, as e2fsck -C 0, and -C naming a
# terminal draw the bar instead, on a terminal (script(1) gives one): a
# line a phase, in that order, each ending at 100%, and no line for
# programs.
. "$top_srcdir/tests/lib/common.sh"
command -v script > /dev/null || skip "no script(1) for a terminal"

# Thirteen recorders round robin: 13 files to move whole into free space.
e2fragimg -q -w streams -t ext2 -b 1024 --streams 13 --total 2M "$T/orig.img" ||
	fail "e2fragimg streams"
inodes=$(dumpe2fs -h "$T/orig.img" 2>/dev/null | sed -n 's/^Inode count: *//p')
want=$($ORACLE layout "$T/orig.img" | python3 -c '
import json, sys
files = json.load(sys.stdin).values()
moved = [f for f in files if f["pieces"] > 1]
print(sum(f["blocks"] for f in files if f["type"] == "d"), len(moved),
      sum(f["blocks"] for f in moved))')
set -- $want
want_totals="1 $inodes
2 $1
3 $2
4 $3"

# 1. -C 3 into a file: the lines.
cp "$T/orig.img" "$T/img"
run_status e2defrag -C 3 "$T/img" 3> "$T/lines" > "$T/out" 2>&1
[ "$status" -eq 0 ] || fail "e2defrag -C 3 exited $status: $(cat "$T/out")"
python3 - "$T/lines" "$T/img" "$want_totals" <<'PY' || fail "-C 3's lines"
import sys
lines = [l.split() for l in open(sys.argv[1])]
want = {int(p): int(t) for p, t in (l.split() for l in sys.argv[3].split("\n"))}
seen, last = [], {}
for phase, done, total, dev in lines:
    phase, done, total = int(phase), int(done), int(total)
    if dev != sys.argv[2]:
        sys.exit("device %s" % dev)
    if seen and phase < seen[-1]:
        sys.exit("phase %d after phase %d" % (phase, seen[-1]))
    if not seen or phase != seen[-1]:
        seen.append(phase)
    elif total != last[phase][1] or done < last[phase][0]:
        sys.exit("phase %d went from %s to %d/%d" % (phase, last[phase], done, total))
    last[phase] = (done, total)
if seen != [1, 2, 3, 4]:
    sys.exit("phases %s, want 1 2 3 4 in that order" % seen)
for phase, (done, total) in sorted(last.items()):
    if done != total or total != want[phase]:
        sys.exit("phase %d ends at %d/%d, want %d/%d" % (phase, done, total,
                                                          want[phase], want[phase]))
print("-C 3: phases 1 2 3 4 in order, ending at %s" %
      ", ".join("%d/%d" % last[p] for p in sorted(last)))
PY
fsck_clean "$T/img"

# on_tty OUT CMD: run CMD (a shell command line) on a terminal; OUT gets
# the screen's lines as they are left: each line's last frame, drawn over
# the others with \r and cleared to its end.
on_tty() {
	out=$1
	shift
	script -qefc "$*" "$T/tty.raw" > /dev/null 2>&1 || fail "on a terminal: '$*' failed"
	python3 - "$T/tty.raw" > "$out" <<'PY'
import re, sys
text = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
for line in text.replace("\r\n", "\n").split("\n"):
    frames = [f for f in line.split("\r") if f]
    if frames:
        print(re.sub(r"\x1b\[K", "", frames[-1]))
PY
}

# check_bars SCREEN: a bar line a phase, in order, each full at 100%; no
# line for programs.
check_bars() {
	grep -Eq '^[0-9]+ [0-9]+ [0-9]+ ' "$1" && fail "progress lines on the terminal: $(grep -E '^[0-9]+ [0-9]+ [0-9]+ ' "$1" | head -2)"
	grep '^e2defrag: .* |' "$1" > "$T/bars"
	python3 - "$T/bars" "$2" <<'PY' || fail "$2: the bars"
import re, sys
bars = open(sys.argv[1]).read().splitlines()
labels = ["scanning inodes", "reading directories", "planning", "moving"]
full = "#" * 30
got = [re.match(r"e2defrag: (.*?) \|([#-]+)\| +(\d+)%(.*)$", b) for b in bars]
if None in got or [m.group(1) for m in got] != labels:
    sys.exit("bar lines %s, want one each: %s" % (bars, labels))
for m in got:
    if m.group(2) != full or m.group(3) != "100":
        sys.exit("the last frame of %s: |%s| %s%%" % (m.group(1), m.group(2), m.group(3)))
size = re.match(r" (\S+ \S+) of (\S+ \S+), ", got[3].group(4))
if not size or size.group(1) != size.group(2):
    sys.exit("moving ends at %r" % got[3].group(4))
print("%s: %d bars at 100%%, in order: %s; moved %s" % (sys.argv[2], len(got),
      ", ".join(labels), size.group(2)))
PY
}

# 2. -C 0 on a terminal: the bar, as e2fsck -C 0 draws one.
cp "$T/orig.img" "$T/img"
on_tty "$T/screen0" "e2defrag -C 0 '$T/img'"
check_bars "$T/screen0" "-C 0"
fsck_clean "$T/img"

# 3. -C 3 naming the terminal, stderr elsewhere: the bar on the terminal.
cp "$T/orig.img" "$T/img"
on_tty "$T/screen3" "e2defrag -C 3 '$T/img' 3>/dev/tty 2>'$T/err'"
check_bars "$T/screen3" "-C 3 on a terminal"
[ ! -s "$T/err" ] || fail "-C 3 on a terminal: stderr has $(head -c 200 "$T/err")"
exit 0
