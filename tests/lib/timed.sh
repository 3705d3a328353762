#!/bin/sh
# Runs one shell test and writes its wall and CPU time as the last line of
# its log, so that tests/summary can name the slowest tests: CI's time
# budget is tight, and a CI log is all we see of a run on another machine.
# (CPU time, of the test and everything it ran, is what a loaded machine
# does not inflate.)
#
# A test that has not ended after E2F_TEST_TIMEOUT seconds (1800 unless
# set; 0 for none) is killed with everything it started and fails, so that
# a hang shows as one failed test with its log, not as a CI run that never
# ends and says nothing.  The slowest test takes under 150 s of CPU here,
# and up to 400 s of wall time when others load the disk (defrag-wide.sh).
start=$(date +%s)
limit=${E2F_TEST_TIMEOUT:-1800}
if [ "$limit" -gt 0 ] 2>/dev/null && command -v timeout > /dev/null; then
	timeout -k 30 "$limit" "$@"
	rc=$?
	[ $rc -ne 124 ] && [ $rc -ne 137 ] ||
		echo "killed after $limit s (E2F_TEST_TIMEOUT): a hang, or a machine far slower than expected" >&2
else
	"$@"
	rc=$?
fi
# (`times` in this shell, not in a $(...) subshell that has no children.)
tf=$(mktemp "${TMPDIR:-/tmp}/e2frag-times.XXXXXX") && times > "$tf"
cpu=$(awk 'NR == 2 {
	n = split($1 " " $2, t, " "); s = 0
	for (i = 1; i <= n; i++) { split(t[i], ms, "m"); s += ms[1] * 60 + ms[2] }
	printf "%.1f", s }' "$tf")
rm -f "$tf"
echo "test time: $(($(date +%s) - start)) s, CPU $cpu s" >&2
exit $rc
