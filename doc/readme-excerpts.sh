#!/bin/sh
# readme-excerpts.sh BUILDDIR [--check] --- the README's excerpts, made by
# the programs, so that they cannot drift from what the programs print.
#
# Each excerpt in README.md sits between two comments,
#     <!-- excerpt NAME ... -->  and  <!-- /excerpt -->
# and is made here from the demo image (e2fragimg --workload mixed --seed
# 1, as `make demo` builds it), in a scratch directory so that paths read
# images/demo-mixed.img:
#   demo-table      the before/after table `make demo` ends with
#   e2frag-report   e2frag's report, cut where the README says "..."
#   e2fragmap       e2fragmap's screen at 80x24, NO_COLOR, after
#                   /rec0016.ts and p, blank rows left out (needs tmux)
# and doc/map-demo.svg is e2frag --svg's picture of the same image.
#
# Without --check (make readme-excerpts) README.md and doc/map-demo.svg
# are rewritten; with it they are compared (tests/cli/readme-excerpts.sh),
# a difference shown, exit 1.  Exit 77 when tmux is missing for --check.
set -eu
b=$(cd "$1" && pwd)
mode=${2:-write}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/readme-excerpts.XXXXXX")
sock=$work/tmux.sock
trap 'tmux -S "$sock" kill-server 2> /dev/null || :; rm -rf "$work"' EXIT
if ! command -v tmux > /dev/null || [ ! -x "$b/tui/e2fragmap" ]; then
	echo "readme-excerpts: no tmux or no e2fragmap (configure --disable-tui) for the map's excerpt"
	[ "$mode" != --check ] || exit 77
fi
mkdir "$work/images" "$work/x"
cd "$work"

# demo-table: demo.sh's last lines, from "=== before and after" on.
sh "$src/demo/demo.sh" "$b" "$work/images" > demo.out 2>&1 ||
	{ cat demo.out; echo "readme-excerpts: make demo failed" >&2; exit 1; }
sed -n '/^=== before and after/,$p' demo.out | sed 1d > x/demo-table

# e2frag-report: the first set and the first file, then "...".
"$b/analyze/e2frag" images/demo-mixed.img > report.out || [ $? -eq 1 ]
python3 - report.out > x/e2frag-report <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
out, i = [], 0
def indent(s):
    return s[:len(s) - len(s.lstrip())]
while i < len(lines) and "set 1:" not in lines[i]:
    out.append(lines[i]); i += 1
out += lines[i:i + 2]                       # set 1 and its members
out.append(indent(lines[i]) + "...")
while not lines[i].startswith("Read time"):
    i += 1
while not lines[i].lstrip().startswith("PATH"):
    out.append(lines[i]); i += 1
out += lines[i:i + 2]                       # the column titles, the worst file
out.append(indent(lines[i + 1]) + "...")
while not lines[i].startswith("Score"):
    i += 1
out += ["", lines[i]]
print("\n".join(out))
PY

# e2fragmap: its screen, in tmux.
if command -v tmux > /dev/null && [ -x "$b/tui/e2fragmap" ]; then
	tm() { tmux -S "$sock" -f /dev/null "$@"; }
	unset TMUX
	tm new-session -d -x 80 -y 24 -s t \
		"env NO_COLOR=1 LC_ALL=C.UTF-8 TERM=xterm $b/tui/e2fragmap images/demo-mixed.img; sleep 60"
	tm set-option -g status off > /dev/null
	tm resize-window -t t -x 80 -y 24
	wait_for() {	# REGEX: poll the screen until it matches, then let it settle
		i=0
		until tm capture-pane -p -t t | grep -Eq -- "$1"; do
			i=$((i + 1))
			[ $i -lt 400 ] || { tm capture-pane -p -t t; echo "readme-excerpts: no /$1/ on the map" >&2; exit 1; }
			sleep 0.05
		done
		prev= cur=$(tm capture-pane -p -t t)
		while [ "$cur" != "$prev" ]; do sleep 0.2; prev=$cur; cur=$(tm capture-pane -p -t t); done
	}
	wait_for 'blocks?/cell'
	# The search needs the names, read behind the first screen.
	tm send-keys -t t /
	wait_for 'find file'
	tm send-keys -t t rec0016.ts Enter
	wait_for 'rec0016.ts: [0-9]+ pieces'
	tm send-keys -t t p
	wait_for 'piece [0-9]+ of'
	tm capture-pane -p -t t | sed 's/ *$//' | grep -v '^$' > x/e2fragmap
	tm kill-server
fi

# map-demo.svg
"$b/analyze/e2frag" --svg x/map-demo.svg --highlight /tv/rec0016.ts images/demo-mixed.img > /dev/null ||
	[ $? -eq 1 ]

python3 - "$src/README.md" x "$mode" <<'PY'
import os, re, sys
readme, xdir, mode = sys.argv[1:4]
text = open(readme).read()
block = re.compile(r"(<!-- excerpt ([a-z0-9-]+)[^>]*-->\n\n)(.*?)(\n<!-- /excerpt -->)", re.S)
found, drift = [], []
def fill(m):
    name = m.group(2)
    path = os.path.join(xdir, name)
    if not os.path.exists(path):
        return m.group(0)               # the map without tmux: left alone
    found.append(name)
    body = "".join("    " + l + "\n" if l else "\n"
                   for l in open(path).read().rstrip("\n").split("\n"))
    if body != m.group(3):
        drift.append((name, m.group(3), body))
    return m.group(1) + body + m.group(4)
new = block.sub(fill, text)
if mode == "--check":
    for name, old, body in drift:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(
            old.splitlines(True), body.splitlines(True),
            "README.md (%s)" % name, "made now (%s)" % name))
    if drift:
        sys.exit("README.md: excerpts %s differ from what the programs print; "
                 "run make readme-excerpts" % ", ".join(d[0] for d in drift))
    print("README.md: excerpts %s are what the programs print" % ", ".join(found))
else:
    open(readme, "w").write(new)
    print("README.md: excerpts %s written" % ", ".join(found))
PY
if [ "$mode" = --check ]; then
	cmp -s x/map-demo.svg "$src/doc/map-demo.svg" ||
		{ echo "doc/map-demo.svg differs from what e2frag --svg draws; run make readme-excerpts" >&2; exit 1; }
	echo "doc/map-demo.svg: what e2frag --svg draws"
else
	cp x/map-demo.svg "$src/doc/map-demo.svg"
	echo "doc/map-demo.svg written"
fi
