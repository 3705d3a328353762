#!/bin/sh
# e2fragmap's / by name and glob, in tmux: a name that one file has
# highlights exactly that file's blocks (debugfs blocks); a name or glob
# several files match lists exactly the paths debugfs finds for it (ls -p
# of every directory, fnmatch in the oracle), in their order; choosing
# one highlights its blocks, n steps to the next match; a pattern with a
# '/' matches whole paths; no match says so.
set -u
maptest=search
. "$top_srcdir/tests/tui/maptest.sh"

# Recordings in two directories, two of them named alike, an empty one
# (no blocks: never found), and a few others.
img=$tmp/rec.img
mke2fs -q -F -t ext2 -b 1024 -N 64 -E root_owner=0:0 "$img" 4M > /dev/null ||
	fail "mke2fs"
for k in 2 3 4 5 7; do map_fill "$tmp/k$k" $k; done
{
	echo "mkdir tv"
	echo "mkdir radio"
	echo "write $tmp/k5 tv/rec0016.ts"
	echo "write $tmp/k3 tv/rec0001.ts"
	echo "write $tmp/k7 tv/news.mp3"
	echo "write /dev/null tv/empty.ts"
	echo "write $tmp/k2 radio/rec0016.ts"
	echo "write $tmp/k4 radio/talk.ts"
	echo "write $tmp/k3 notes.txt"
} | debugfs -w "$img" > /dev/null 2>&1 || fail "debugfs -w"
e2fsck -fn "$img" > /dev/null 2>&1 || fail "the image is not clean"

# highlighted PATH: the '@' cells are exactly those of PATH's blocks.
highlighted() {
	tm_screen "$tmp/screen"
	bpc=$($screen bpc "$tmp/screen") || fail "no blocks/cell"
	$screen cells "$tmp/screen" > "$tmp/got" || fail "unreadable screen"
	$oracle blocks "$img" "$1" > "$tmp/file"
	python3 - "$bpc" "$tmp/got" "$tmp/file" "$1" <<'PY' || fail "highlight of $1"
import sys
bpc = int(sys.argv[1])
got = open(sys.argv[2]).read().split()[0]
want = {int(b) // bpc for b in open(sys.argv[3]).read().split()}
at = {i for i, c in enumerate(got) if c == "@"}
if not want or at != want:
    sys.exit("@ at %s, want %s" % (sorted(at), sorted(want)))
print("%s: %d cells @, as debugfs lists its blocks" % (sys.argv[4], len(at)))
PY
}

# listed PATTERN: the list on the screen is exactly the oracle's, in order.
listed() {
	tm_screen "$tmp/list"
	awk '/^ pieces +best +inter +path/ { on = 1; next } on && /^ +[0-9]+ +[0-9]+ +[0-9]+  \// { print $4 }' \
		"$tmp/list" > "$tmp/shown"
	$oracle matches "$img" "$1" > "$tmp/want"
	[ -s "$tmp/want" ] || fail "the oracle finds nothing for $1"
	diff "$tmp/want" "$tmp/shown" > /dev/null || {
		echo "want:"; cat "$tmp/want"; echo "shown:"; cat "$tmp/shown"
		fail "the list for $1"
	}
	echo "$1: $(wc -l < "$tmp/want") matches listed, as debugfs finds them"
}

# find TEXT: / TEXT Enter.
find() {
	tm_keys /
	tm_wait 'find file \(name' || fail "/ asks for nothing"
	tm_keys -l "$1"
	tm_keys Enter
}

tm_start 140 40 || fail "tmux did not start"
tm_keys "NO_COLOR=1 e2fragmap $img; echo rc=\$?" Enter
tm_wait 'blocks?/cell' || fail "no map"

# A name one file has: shown at once.
find news.mp3
tm_wait '@ /tv/news\.mp3' || fail "news.mp3 is not highlighted"
highlighted /tv/news.mp3

# A name two files have: listed, and the second chosen.
find rec0016.ts
tm_wait 'files matching rec0016\.ts \(2\)' || fail "rec0016.ts lists no matches"
listed rec0016.ts
tm_keys Down Enter
tm_wait '@ /tv/rec0016\.ts' || fail "choosing /tv/rec0016.ts"
tm_screen | tail -1 | grep -q 'match 2 of 2: /tv/rec0016\.ts' || fail "the status line does not say match 2 of 2"
highlighted /tv/rec0016.ts
# n wraps round to the first match.
tm_keys n
tm_wait 'match 1 of 2: /radio/rec0016\.ts' || fail "n did not go to the first match"
highlighted /radio/rec0016.ts

# A glob: every .ts with blocks (not the empty one), by directory then name.
find '*.ts'
tm_wait 'files matching \*\.ts \(4\)' || fail "*.ts does not list 4 files"
listed '*.ts'
tm_keys Enter
tm_wait '@ /radio/rec0016\.ts' || fail "choosing the first .ts"
tm_keys n n
tm_wait 'match 3 of 4: /tv/rec0001\.ts' || fail "n n did not go to the third match"
highlighted /tv/rec0001.ts
tm_keys m
tm_wait 'files matching \*\.ts \(4\)' || fail "m does not list the matches again"
tm_keys q

# A path: '*' stays within one directory.
find '/t*/rec*'
tm_wait 'files matching /t\*/rec\* \(2\)' || fail "/t*/rec* does not list 2 files"
listed '/t*/rec*'
tm_keys q
find 'tv/news.mp3'
tm_wait '@ /tv/news\.mp3' || fail "tv/news.mp3 is not highlighted"

# No match: said so, and the map stays as it was.
find 'zzz*'
tm_wait "no file with blocks matches 'zzz\*'" || fail "no message for no match"
find empty.ts
tm_wait "no file with blocks matches 'empty\.ts'" || fail "empty.ts (no blocks) was found"
tm_keys q
tm_wait '^rc=0$' || fail "exit status"
exit 0
