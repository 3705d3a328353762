#!/bin/sh
# e2defrag-offline-fail, which e2defrag-offline-fail@.service runs when a
# run of e2defrag-offline@.service failed: it names the failed unit, the
# disk (the mount point and, when mounted, its device, as findmnt says; or
# NOT MOUNTED), how the run ended and where its log is, from the MONITOR_*
# variables systemd gives an OnFailure= unit; and it mails that and the
# run's log (a stand-in journalctl's) through sendmail (a stand-in that
# keeps the mail) to root, to mail_to from the configuration file, or to
# nobody when mail_to is empty or there is no sendmail.  As any user.
. "$top_srcdir/tests/lib/common.sh"

FAILREP=$top_builddir/misc/e2defrag-offline-fail
[ -x "$FAILREP" ] || fail "$FAILREP not built"
mkdir "$T/bin" || fail "mkdir"
for p in cat findmnt tail uname; do
	w=$(command -v $p) || skip "no $p"
	ln -s "$w" "$T/bin/$p"
done
cat > "$T/bin/journalctl" <<'EOS'
#!/bin/sh
echo "the run's log (journalctl $*)"
EOS
printf '#!/bin/sh\necho box\n' > "$T/bin/hostname"
cat > "$T/sendmail" <<EOS
#!/bin/sh
echo "\$*" > '$T/sendmail.args'
cat > '$T/mail'
EOS
chmod +x "$T/bin/journalctl" "$T/bin/hostname" "$T/sendmail"
export E2DEFRAG_OFFLINE_CONF="$T/conf"
: > "$T/conf"
export MONITOR_UNIT=e2defrag-offline@srv-none.service MONITOR_EXIT_STATUS=8 \
	MONITOR_SERVICE_RESULT=exit-code MONITOR_INVOCATION_ID=0123abcd

# report ARGS...: run it with the stand-ins, its output in $T/out.
report() {
	rm -f "$T/mail" "$T/sendmail.args"
	run_status env PATH="$T/bin" "$FAILREP" "$@" > "$T/out" 2>&1
	cat "$T/out"
}

ln -s "$T/sendmail" "$T/bin/sendmail"
mkdir "$T/none"
report "$T/none"
[ "$status" -eq 0 ] || fail "exit $status, expected 0"
want="e2defrag-offline-fail: e2defrag-offline@srv-none.service failed on box: $T/none, NOT MOUNTED; exit-code, exit 8; its log: journalctl -u e2defrag-offline@srv-none.service _SYSTEMD_INVOCATION_ID=0123abcd"
grep -qxF "$want" "$T/out" || fail "not said which disk and how the run ended"
grep -qxF "e2defrag-offline-fail: mailed to root" "$T/out" || fail "no mail said"
[ "$(cat "$T/sendmail.args")" = "-t -i" ] || fail "sendmail $(cat "$T/sendmail.args")"
grep -qx "To: root" "$T/mail" || fail "the mail is not to root"
grep -qx "Subject: e2defrag-offline@srv-none.service failed on box ($T/none)" "$T/mail" || fail "subject"
grep -qxF "${want#e2defrag-offline-fail: }" "$T/mail" || fail "the mail does not say it"
grep -qxF "the run's log (journalctl --no-pager -o short-iso _SYSTEMD_INVOCATION_ID=0123abcd)" "$T/mail" ||
	fail "the mail has not the run's log"

# A mount point that is mounted: its device, as findmnt has it.
dev=$(findmnt -n -o SOURCE --mountpoint / | tail -n 1)
[ -n "$dev" ] || skip "findmnt names no device for /"
report /
grep -qF "failed on box: /, $dev, mounted;" "$T/out" || fail "the device of / ($dev) is not named"

# mail_to from the configuration file; empty: no mail; no sendmail: none.
echo "mail_to=ops@example.org" > "$T/conf"
report "$T/none"
grep -qx "To: ops@example.org" "$T/mail" || fail "mail_to not followed"
echo "mail_to=" > "$T/conf"
report "$T/none"
[ "$status" -eq 0 ] && [ ! -e "$T/mail" ] || fail "mail_to= empty: exit $status, mailed anyway"
: > "$T/conf"
rm "$T/bin/sendmail"
report "$T/none"
[ "$status" -eq 0 ] || fail "no sendmail: exit $status"
grep -qxF "e2defrag-offline-fail: no sendmail: no mail to root" "$T/out" || fail "no sendmail: not said"

report
[ "$status" -eq 16 ] || fail "no MOUNTPOINT: exit $status, expected 16"
exit 0
