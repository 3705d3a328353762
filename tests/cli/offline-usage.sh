#!/bin/sh
# e2defrag-offline's command line, as any user: --max-time takes seconds or
# a number with the unit s, m or h (0, 90, 90s, 30m, 1h, 1.5h) and refuses
# anything else (1x) with exit 16 and a message naming the units, from the
# command line and from the configuration file (max_time) alike, before
# it looks at any mount.  Accepted, it goes on to find that a plain
# directory is no mount point (exit 8).
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
exit 0
