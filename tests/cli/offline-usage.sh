#!/bin/sh
# e2defrag-offline's command line, as any user: --max-time takes seconds or
# a number with the unit s, m or h (0, 90, 90s, 30m, 1h, 1.5h) and refuses
# anything else (1x) with exit 16 and a message naming the units, from the
# command line and from the configuration file (max_time) alike, before
# it looks at any mount.  Accepted, it goes on to find that a plain
# directory is no mount point (exit 8).  And where its messages go: to
# syslog as well (logger), or, under systemd, only to the journal.
. "$top_srcdir/tests/lib/common.sh"

OFFLINE=$top_builddir/misc/e2defrag-offline
[ -x "$OFFLINE" ] || fail "$OFFLINE not built"
CONF=$T/offline.conf
printf 'e2defrag=%s\n' "$top_builddir/defrag/e2defrag" > "$CONF"
export E2DEFRAG_OFFLINE_CONF="$CONF"
mkdir "$T/plain"

for t in 1x 1h30m h 1d -1 1.5.5h 1e3 ""; do
	run_status "$OFFLINE" --max-time "$t" "$T/plain" > "$T/out" 2>&1
	[ "$status" -eq 16 ] || { cat "$T/out"; fail "--max-time '$t': exit $status, expected 16"; }
	grep -qF "e2defrag-offline: --max-time wants a duration: seconds, or a number with the unit s, m or h (90, 90s, 30m, 1.5h), not '$t'" "$T/out" ||
		{ cat "$T/out"; fail "--max-time '$t': no message naming the units"; }
done
for t in 0 90 90s 30m 1h 1.5h; do
	for form in "--max-time $t" "--max-time=$t"; do
		# shellcheck disable=SC2086
		run_status "$OFFLINE" $form "$T/plain" > "$T/out" 2>&1
		[ "$status" -eq 8 ] || { cat "$T/out"; fail "$form: exit $status, expected 8 (not a mount point)"; }
		grep -q "not a mount point" "$T/out" || { cat "$T/out"; fail "$form: refused for another reason"; }
	done
done

# The same words for the configuration file's max_time, which they name.
echo "max_time=1x" >> "$CONF"
run_status "$OFFLINE" "$T/plain" > "$T/out" 2>&1
[ "$status" -eq 16 ] || { cat "$T/out"; fail "max_time=1x: exit $status, expected 16"; }
grep -qF "max_time in $CONF wants a duration" "$T/out" || { cat "$T/out"; fail "max_time=1x: the message does not name the file"; }
# ... which the command line overrides.
expect_status 8 "$OFFLINE" --max-time 2h "$T/plain"
# A configuration file the shell cannot read: exit 16 naming it (the
# shell's own 2 before), nothing done.
cp "$CONF" "$T/conf.good"
echo "max_time=1h (" >> "$CONF"
run_status "$OFFLINE" "$T/plain" > "$T/out" 2>&1
[ "$status" -eq 16 ] || { cat "$T/out"; fail "a syntax error in the configuration: exit $status, expected 16"; }
grep -qF "$CONF is not a valid shell fragment" "$T/out" || { cat "$T/out"; fail "a syntax error in the configuration: not named"; }
cp "$T/conf.good" "$CONF"

# Its messages go to syslog too (a stand-in logger notes them), but not
# under systemd, where standard output and error are the journal already
# (JOURNAL_STREAM names them): there an error is marked <3> (err), without
# the program's name, which the unit's SyslogIdentifier= gives.
printf '#!/bin/sh\necho "$*" >> %s\n' "$T/logger.log" > "$T/logger"
chmod +x "$T/logger"
printf 'e2defrag=%s\nlogger=%s\n' "$top_builddir/defrag/e2defrag" "$T/logger" > "$CONF"
expect_status 8 "$OFFLINE" "$T/plain"
[ "$(cat "$T/logger.log")" = "-t e2defrag-offline -p daemon.err -- $T/plain: not a mount point" ] ||
	fail "not logged to syslog: '$(cat "$T/logger.log")'"
rm "$T/logger.log"
: > "$T/journal"
stream=$(stat -L -c %d:%i "$T/journal") || fail "stat $T/journal"
run_status env JOURNAL_STREAM="$stream" "$OFFLINE" "$T/plain" >> "$T/journal" 2>&1
[ "$status" -eq 8 ] || fail "under systemd: exit $status, expected 8"
[ "$(cat "$T/journal")" = "<3>$T/plain: not a mount point" ] ||
	fail "under systemd it says '$(cat "$T/journal")'"
[ ! -e "$T/logger.log" ] || fail "under systemd it logs twice: $(cat "$T/logger.log")"
# JOURNAL_STREAM naming another stream (a child's, say): syslog as before.
run_status env JOURNAL_STREAM=1:1 "$OFFLINE" "$T/plain" > /dev/null 2>&1
[ -s "$T/logger.log" ] || fail "JOURNAL_STREAM of another stream: not logged"
exit 0
