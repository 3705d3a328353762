# best.sh --- sourced by the tests that count what is left to defragment
# (after tests/lib/common.sh or tests/cli/defrag-lib.sh, for $T).
#
# avoidable IMG: how many files are in more pieces than their best, per
# tests/lib/best_oracle.py (zones from dumpe2fs and debugfs, pieces from
# debugfs: never e2frag's own figures); the files, "path pieces best" a
# line, are left in $T/avoidable for the failure message.
avoidable() {
	python3 "$top_srcdir/tests/lib/best_oracle.py" left "$1" > "$T/avoidable" ||
		{ echo "best_oracle.py left $1 failed" >&2; return 1; }
	sed -n 's/^# \([0-9]*\) avoidably fragmented$/\1/p' "$T/avoidable"
}

# avoidable_list: the first files of the last avoidable call, on one line.
avoidable_list() {
	grep -v '^#' "$T/avoidable" | head -5 | tr '\n' ' '
}
