#!/bin/sh
# Runs one shell test and writes its wall and CPU time as the last line of
# its log, so that tests/summary can name the slowest tests: CI's time
# budget is tight, and a CI log is all we see of a run on another machine.
# (CPU time, of the test and everything it ran, is what a loaded machine
# does not inflate.)
start=$(date +%s)
"$@"
rc=$?
# (`times` in this shell, not in a $(...) subshell that has no children.)
tf=$(mktemp "${TMPDIR:-/tmp}/e2frag-times.XXXXXX") && times > "$tf"
cpu=$(awk 'NR == 2 {
	n = split($1 " " $2, t, " "); s = 0
	for (i = 1; i <= n; i++) { split(t[i], ms, "m"); s += ms[1] * 60 + ms[2] }
	printf "%.1f", s }' "$tf")
rm -f "$tf"
echo "test time: $(($(date +%s) - start)) s, CPU $cpu s" >&2
exit $rc
