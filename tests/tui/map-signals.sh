#!/bin/sh
# e2fragmap and the signals that end it: ^C typed on the map or in the /
# prompt quits as q does (exit 0); SIGTERM and SIGHUP kill it (the shell
# says 143 and 129), and each time the terminal is given back as it was
# (canonical mode and echo, as stty -a tells).  Left to ncurses, ^C and
# SIGTERM exited 1, a status e2fragmap(1) does not list, and SIGHUP left
# the terminal as curses had it, the map on the screen.
set -u
maptest=signals
. "$top_srcdir/tests/tui/maptest.sh"

img=$tmp/e4.img
map_image_ext4 "$img" || fail "cannot build the image"

# ends HOW WANT: start e2fragmap (its pid in $tmp/pid), end it by HOW (keys:
# C-c, / C-c; or kill:SIG), and want "rc=WANT icanon echo" from the shell.
ends() {
	tm_start 100 30 || fail "tmux did not start"
	rm -f "$tmp/pid"
	tm_keys "sh -c 'echo \$\$ > $tmp/pid; exec e2fragmap $img'; echo rc=\$? \$(stty -a | grep -o -e '-\\?icanon' -e ' -\\?echo ' | tr -d ' ' | tr '\\n' ' ')" Enter
	tm_wait 'blocks?/cell' || fail "$1: no map"
	case $1 in
	kill:*)	kill -s "${1#kill:}" "$(cat "$tmp/pid")" || fail "$1: no process" ;;
	/*)	tm_keys /
		tm_wait 'find file \(name' || fail "$1: / asks for nothing"
		tm_keys C-c ;;
	*)	tm_keys "$1" ;;
	esac
	tm_wait '^rc=' 10 || fail "$1 did not end e2fragmap"
	line=$(tm_screen | grep '^rc=' | sed 's/ *$//')
	[ "$line" = "rc=$2 icanon echo" ] || fail "$1: '$line', want 'rc=$2 icanon echo'"
	tm_screen | grep -q 'blocks\?/cell' && fail "$1: the map is still on the screen"
	echo "$1: $line"
	tm_stop
}

ends C-c 0
ends "/ C-c" 0
ends kill:INT 0
ends kill:TERM 143
ends kill:HUP 129
exit 0
