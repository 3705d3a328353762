# tmux.sh --- drive e2fragmap in a private tmux server (sourced by the
# map's tests).  Every test gets its own socket and kills its server on
# exit; screens are polled until they show what is awaited, never waited
# for with long fixed sleeps.

command -v tmux > /dev/null || { echo "SKIP: no tmux"; exit 77; }
[ -x "$top_builddir/tui/e2fragmap" ] || { echo "SKIP: e2fragmap not built (configure --disable-tui)"; exit 77; }
# A socket of our own, under TMPDIR: never the user's server.
TMUX_SOCK=${TMPDIR:-/tmp}/e2fragtest-$$.sock
unset TMUX

tm() {
	tmux -S "$TMUX_SOCK" -f /dev/null "$@"
}

# tm_start W H: a W x H session running a plain sh with a fixed prompt.
tm_start() {
	tm new-session -d -x "$1" -y "$2" -s t "env PS1='$ ' sh" || return 1
	tm set-option -g status off > /dev/null
	tm resize-window -t t -x "$1" -y "$2"
	tm_wait '^\$' || return 1
}

tm_stop() {
	tm kill-server 2> /dev/null
	rm -f "$TMUX_SOCK"
}

tm_keys() {
	tm send-keys -t t "$@"
}

# tm_screen [FILE]: the visible screen as text.
tm_screen() {
	if [ $# -gt 0 ]; then tm capture-pane -p -t t > "$1"; else tm capture-pane -p -t t; fi
}

# tm_settle: poll until two captures in a row are the same (a redraw done).
tm_settle() {
	prev= j=0
	while [ $j -lt 100 ]; do
		cur=$(tm capture-pane -p -t t 2> /dev/null)
		[ -n "$prev" ] && [ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 0.05
		j=$((j + 1))
	done
}

# tm_wait REGEX [SECONDS]: poll until the screen matches (grep -E) and settles.
# 30 s by default: under sanitizers on a loaded CI machine a redraw can take
# seconds; a passing test waits only as long as the screen takes.
tm_wait() {
	i=0 limit=$((${2:-30} * 20))
	while [ $i -lt $limit ]; do
		if tm capture-pane -p -t t 2> /dev/null | grep -Eq -- "$1"; then
			tm_settle
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "timed out waiting for /$1/; the screen:"
	tm capture-pane -p -t t
	return 1
}

# tm_until COMMAND...: poll until COMMAND succeeds (it may read tm_screen).
tm_until() {
	i=0
	while [ $i -lt 200 ]; do
		"$@" > /dev/null 2>&1 && return 0
		sleep 0.05
		i=$((i + 1))
	done
	"$@"
}

# tm_wait_gone REGEX [SECONDS]: poll until the screen no longer matches.
tm_wait_gone() {
	i=0 limit=$((${2:-30} * 20))
	while [ $i -lt $limit ]; do
		tm capture-pane -p -t t 2> /dev/null | grep -Eq -- "$1" || return 0
		sleep 0.05
		i=$((i + 1))
	done
	echo "timed out waiting for /$1/ to go; the screen:"
	tm capture-pane -p -t t
	return 1
}
