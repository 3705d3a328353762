#!/bin/sh
# e2fragmap typed bytes that are no character in its locale: \xff, a stray
# \x80, a lone \xc3 cut short by ASCII.  They are dropped and the keys after
# them work: q quits (exit 0), on the map and in the / prompt, in a UTF-8
# locale and in C.  ncurses' get_wch() took such a byte for the start of a
# character still coming and read on, so e2fragmap slept in read() and took
# no key again (q, Esc, Enter: only ^C ended it).  A valid é still reaches
# the prompt as one character.
set -u
maptest=bytes
. "$top_srcdir/tests/tui/maptest.sh"

img=$tmp/e4.img
map_image_ext4 "$img" || fail "cannot build the image"

# quits LOCALE KEYS: KEYS typed at once once the map is up, e2fragmap exits 0
# within 30 s (pty_run.py kills it and says 124 if not).
quits() {
	LC_ALL=$1 TERM=xterm python3 "$top_srcdir/tests/lib/pty_run.py" \
		--wait '?:keys' --keys "$2" --timeout 30 -- \
		e2fragmap "$img" > "$tmp/out" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: LC_ALL=$1, keys $2: exit $rc, want 0"; cat "$tmp/err"; exit 1; }
	echo "LC_ALL=$1: $2: exit 0"
}

for loc in C.UTF-8 C; do
	quits $loc '\xffq'
	quits $loc '\xc3q'
	quits $loc '\x80q'
	quits $loc '/\xfeq\x1bq'
done

# One key at a time, each once the one before has been read: the names are
# in by then (/ waits for them), so e2fragmap reads with no timeout, where
# one byte left it waiting for ever.
for loc in C.UTF-8 C; do
	tm_start 100 30 || fail "tmux did not start"
	tm_keys "LC_ALL=$loc NO_COLOR=1 e2fragmap $img; echo rc=\$?" Enter
	tm_wait 'blocks?/cell' || fail "$loc: no map"
	# In the prompt: \xc3 then 'b' keeps the 'b', \xff is dropped, Enter finds /big.
	tm_keys /
	tm_wait 'find file \(name' || fail "$loc: / asks for nothing"
	tm_keys -H c3
	tm_keys -l big
	tm_keys -H ff
	tm_keys Enter
	tm_wait '@ /big' || fail "$loc: \\xc3 big \\xff Enter did not find /big"
	echo "LC_ALL=$loc: / \\xc3 big \\xff Enter: /big found"
	if [ $loc = C.UTF-8 ]; then
		tm_keys /
		tm_wait 'find file \(name' || fail "$loc: / asks for nothing"
		tm_keys -H c3 a9
		tm_keys Enter
		tm_wait "no file with blocks matches 'é'" || fail "$loc: é did not reach the prompt"
		echo "LC_ALL=$loc: / é Enter: searched for é"
	fi
	# On the map: a lone \xc3, then \xff, then q.
	tm_keys -H c3
	tm_keys j
	tm_keys -H ff
	tm_keys q
	tm_wait '^rc=' 10 || fail "$loc: \\xc3 j \\xff q did not quit"
	tm_screen | grep -q '^rc=0$' || fail "$loc: \\xc3 j \\xff q: not exit 0"
	echo "LC_ALL=$loc: \\xc3 j \\xff q on the map: exit 0"
	tm_stop
done
exit 0
