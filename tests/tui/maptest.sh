# maptest.sh --- how every e2fragmap test in tmux starts (sourced after
# setting maptest=NAME): python3 for the oracles, the tmux driver, the
# image builders, $oracle and $screen (tests/tui/oracle.py, screen.py), a
# work directory $tmp removed on exit with the tmux server, and fail(),
# which shows the screen before it fails the test.
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
. "$top_srcdir/tests/tui/tmux.sh"
. "$top_srcdir/tests/tui/images.sh"
oracle="python3 $top_srcdir/tests/tui/oracle.py"
screen="python3 $top_srcdir/tests/tui/screen.py"
tmp=$(mktemp -d "$TMPDIR/e2fragmap-$maptest.XXXXXX") || exit 1
trap 'tm_stop; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; tm_screen; exit 1; }
