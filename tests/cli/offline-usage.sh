#!/bin/sh
# e2defrag-offline's command line, as any user: --max-time takes seconds or
# a number with the unit s, m or h (0, 90, 90s, 30m, 1h, 1.5h) and refuses
# anything else (1x) with exit 16 and a message naming the units, from the
# command line and from the configuration file (max_time) alike, before
# it looks at any mount; so are a configuration file that is not there
# or cannot be read and e2fsck_opts that e2fsck would refuse or that
# would check nothing.  Accepted, it goes on to find that a plain
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
# E2DEFRAG_OFFLINE_CONF naming no file: exit 16 naming it (it was
# ignored, and the run went on with the defaults).
run_status env E2DEFRAG_OFFLINE_CONF="$T/no.conf" "$OFFLINE" "$T/plain" > "$T/out" 2>&1
[ "$status" -eq 16 ] || { cat "$T/out"; fail "a missing configuration file: exit $status, expected 16"; }
grep -qF "E2DEFRAG_OFFLINE_CONF names $T/no.conf, which is not a file" "$T/out" ||
	{ cat "$T/out"; fail "a missing configuration file: not named"; }
if [ "$(id -u)" -ne 0 ]; then
	chmod 0 "$CONF"
	run_status "$OFFLINE" "$T/plain" > "$T/out" 2>&1
	chmod 644 "$CONF"
	[ "$status" -eq 16 ] || { cat "$T/out"; fail "an unreadable configuration file: exit $status, expected 16"; }
	grep -qF "cannot read $CONF" "$T/out" || { cat "$T/out"; fail "an unreadable configuration file: not named"; }
fi

# e2fsck_opts, read with e2fsck's option letters before anything is looked
# at (so exit 16 here, where a plain directory is otherwise exit 8):
# before, each was found by e2fsck after the unmount (-n, -y: exit 16
# there, reported as errors it could not fix), or not at all (-V: exit 0,
# nothing checked; -E nosuch: e2fsck's help and exit 1, taken for errors
# corrected, and e2defrag ran).
e2fsck_opts_refused() {
	printf 'e2defrag=%s\ne2fsck_opts="%s"\n' "$top_builddir/defrag/e2defrag" "$1" > "$CONF"
	run_status "$OFFLINE" "$T/plain" > "$T/out" 2>&1
	[ "$status" -eq 16 ] || { cat "$T/out"; fail "e2fsck_opts '$1': exit $status, expected 16"; }
	grep -qF "e2fsck_opts ($1): $2" "$T/out" || { cat "$T/out"; fail "e2fsck_opts '$1': not '$2'"; }
}
e2fsck_opts_refused "-n" "-n contradicts e2fsck's -p"
e2fsck_opts_refused "-v -y" "-y contradicts e2fsck's -p"
e2fsck_opts_refused "-V" "-V checks nothing"
e2fsck_opts_refused "-Q" "e2fsck has no option -Q"
e2fsck_opts_refused "-C" "-C needs a value"
e2fsck_opts_refused "-v /dev/sdz" "'/dev/sdz' is no option"
e2fsck_opts_refused "-E nosuch" "e2fsck does not take -E nosuch"
e2fsck_opts_refused "-E discard,ea_ver=3" "e2fsck does not take -E discard,ea_ver=3"
# What e2fsck takes passes, on to the plain directory's exit 8.
for o in "-C 0 -v" "-E fragcheck" "-tt -E discard"; do
	printf 'e2defrag=%s\ne2fsck_opts="%s"\n' "$top_builddir/defrag/e2defrag" "$o" > "$CONF"
	run_status "$OFFLINE" "$T/plain" > "$T/out" 2>&1
	[ "$status" -eq 8 ] || { cat "$T/out"; fail "e2fsck_opts '$o': exit $status, expected 8 (not a mount point)"; }
done
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
