#!/bin/sh
# e2frag --color=auto|always|never and NO_COLOR (https://no-color.org):
# escape codes in the text report only when asked for, or on a terminal
# (a pty from script(1)) without NO_COLOR; --color=always wins over
# NO_COLOR; --json, --raw and the SVG never carry any.  The oracle is the
# bytes themselves: an ESC (0x1b) present or absent.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/tui/images.sh"
command -v script > /dev/null || skip "no script(1) to make a terminal"

img=$T/e2.img
map_image_ext2 "$img" || fail "cannot build the image"
esc=$(printf '\033')
has_esc() { grep -q "$esc" "$1"; }

# A terminal: script(1) runs the command on a pty and copies what it wrote.
on_tty() {	# OUT CMD...
	out=$1; shift
	script -qec "$*" /dev/null > "$out" < /dev/null
}

run_status e2frag --color=never "$img" > "$T/never"
[ "$status" -le 1 ] || fail "--color=never exited $status"
! has_esc "$T/never" || fail "--color=never wrote escape codes"
run_status e2frag --color=always "$img" > "$T/always"
has_esc "$T/always" || fail "--color=always wrote no escape codes"
# The colour only frames text: without the escapes it is the plain report.
sed "s/$esc\[[0-9;]*m//g" "$T/always" | cmp -s - "$T/never" ||
	fail "--color=always changes the report's text"
run_status e2frag "$img" > "$T/auto"
! has_esc "$T/auto" || fail "--color=auto (the default) coloured a pipe"
run_status e2frag --color "$img" > "$T/bare"
has_esc "$T/bare" || fail "--color without WHEN did not mean always"
run_status env NO_COLOR=1 e2frag --color=always "$img" > "$T/nc-always"
has_esc "$T/nc-always" || fail "--color=always lost to NO_COLOR"
echo "pipe: auto and never plain, always coloured (NO_COLOR or not)"

on_tty "$T/tty" "e2frag $img"
grep -q "Score" "$T/tty" || fail "no report through script(1): $(head -c 200 "$T/tty")"
has_esc "$T/tty" || fail "auto on a terminal wrote no escape codes"
on_tty "$T/tty-nc" "NO_COLOR=1 e2frag $img"
grep -q "Score" "$T/tty-nc" || fail "no report through script(1) with NO_COLOR"
! has_esc "$T/tty-nc" || fail "NO_COLOR=1 on a terminal still coloured"
on_tty "$T/tty-empty" "NO_COLOR= e2frag $img"
has_esc "$T/tty-empty" || fail "an empty NO_COLOR turned colour off"
on_tty "$T/tty-never" "e2frag --color=never $img"
! has_esc "$T/tty-never" || fail "--color=never on a terminal coloured"
echo "terminal: auto coloured, not with NO_COLOR=1 (but with NO_COLOR empty), never plain"

# Machine output stays clean whatever is asked.
run_status e2frag --color=always --json "$img" > "$T/j"
! has_esc "$T/j" || fail "--json carries escape codes"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/j" || fail "--json unreadable"
run_status e2frag --color=always --raw "$img" > "$T/raw"
! has_esc "$T/raw" || fail "--raw carries escape codes"
run_status e2frag --color=always --svg - "$img" > "$T/svg"
! has_esc "$T/svg" || fail "the SVG carries escape codes"

run_status e2frag --color=purple "$img" > "$T/out" 2> "$T/err"
[ "$status" -eq 16 ] || fail "--color=purple exited $status, expected 16"
grep -q "auto, always or never" "$T/err" || fail "--color=purple: '$(cat "$T/err")'"
echo "json, raw, svg: no escapes; --color=purple: exit 16"
exit 0
