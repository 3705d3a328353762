#!/bin/sh
# e2defrag-offline checks before it touches anything: with e2defrag
# missing from its PATH, or there but not running, or with units to stop
# and no systemctl, or no systemd to ask (a stand-in systemctl that says
# "offline", as systemctl does on a system not booted with systemd), it
# exits 8, names what is wrong, and the filesystem is never unmounted (the
# superblock's last mount time, dumpe2fs's, stays) nor checked (a stand-in
# e2fsck notes every call).  Then a relative mount point, and --max-time with a unit
# (1.5h) or 0 in the configuration file, reach e2defrag as given (a
# stand-in that notes its arguments), and the filesystem ends mounted as
# it was.
. "$top_srcdir/tests/cli/offline-lib.sh"

e2fragimg -q --workload streams --type ext4 --streams 3 --total 12M \
	--size 32M "$T/fs.img" || fail "e2fragimg"
attach "$T/fs.img" noatime
before=$(mounted_as)
at=$(mounted_at)
[ -n "$at" ] || fail "no last mount time for $LOOP"
settle

# Stand-ins: e2fsck notes its checks and runs the real one; e2defrag
# notes its calls, answers -V and -n with the real one and moves nothing.
cat > "$T/e2fsck" <<EOS
#!/bin/sh
[ "\$1" = -V ] || echo "\$*" >> '$T/e2fsck.log'
exec e2fsck "\$@"
EOS
cat > "$T/e2defrag" <<EOS
#!/bin/sh
echo "\$*" >> '$T/e2defrag.log'
case \$1 in -V|-n) exec '$top_builddir/defrag/e2defrag' "\$@" ;; esac
exit 0
EOS
chmod +x "$T/e2fsck" "$T/e2defrag"
cp "$CONF" "$T/base.conf"
echo "e2fsck=$T/e2fsck" >> "$T/base.conf"

# refused WHAT MESSAGE ARGS...: e2defrag-offline exits 8 saying MESSAGE,
# and the filesystem was neither unmounted nor checked.
refused() {
	what=$1 msg=$2; shift 2
	rm -f "$T/e2fsck.log"
	run_status "$OFFLINE" "$@" > "$T/out" 2>&1
	cat "$T/out"
	[ "$status" -eq 8 ] || fail "$what: exit $status, expected 8"
	grep -qF -- "$msg" "$T/out" || fail "$what: no '$msg'"
	[ "$(mounted_at)" = "$at" ] || fail "$what: mounted again (at $at, then $(mounted_at))"
	[ "$(mounted_as)" = "$before" ] || fail "$what: mounted as '$(mounted_as)', was '$before'"
	[ ! -e "$T/e2fsck.log" ] || fail "$what: e2fsck ran"
}

# e2defrag not on the PATH (where the system's e2fsck, mount... are).
path_without "$T/bin" e2defrag
{ cat "$T/base.conf"; echo "PATH=$T/bin"; echo "e2defrag=e2defrag"; } > "$CONF"
refused "no e2defrag" \
	"e2defrag-offline: cannot run: e2defrag (not found); nothing was stopped or unmounted (PATH=$T/bin)" "$MNT"
# There, but it does not run (its interpreter is missing).
printf '#!/nonexistent/sh\nexit 0\n' > "$T/bin/e2defrag"
chmod +x "$T/bin/e2defrag"
refused "e2defrag that does not run" "cannot run: e2defrag (does not run: 'e2defrag -V' failed)" "$MNT"
rm "$T/bin/e2defrag"
# Both e2defrag and systemctl missing, with units to stop: both named.
path_without "$T/bin2" e2defrag systemctl
{ cat "$T/base.conf"; echo "PATH=$T/bin2"; echo "e2defrag=e2defrag"; } > "$CONF"
refused "no e2defrag, no systemctl" "cannot run: e2defrag (not found) systemctl (not found);" \
	--stop recorder.service "$MNT"

# Units to stop and no systemd to ask.
cat > "$T/systemctl" <<EOS
#!/bin/sh
echo "\$*" >> '$T/systemctl.log'
case \$1 in is-system-running) echo offline; exit 1 ;; esac
EOS
chmod +x "$T/systemctl"
{ cat "$T/base.conf"; echo "e2defrag=$T/e2defrag"; echo "systemctl=$T/systemctl"; } > "$CONF"
refused "--stop without systemd" \
	"e2defrag-offline: --stop recorder.service: cannot ask systemd (systemctl is-system-running: offline; not booted with systemd?): nothing was stopped or unmounted" \
	--stop recorder.service "$MNT"
printf -- '--version\nis-system-running\n' > "$T/want.log"
diff "$T/want.log" "$T/systemctl.log" || fail "systemctl was asked more than whether systemd runs"

# A relative mount point, and --max-time 1.5h as given to e2defrag.
{ cat "$T/base.conf"; echo "e2defrag=$T/e2defrag"; } > "$CONF"
rm -f "$T/e2defrag.log" "$T/e2fsck.log"
run_status sh -c 'cd "$1" && exec "$2" --max-time 1.5h mnt' sh "$T" "$OFFLINE" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 0 ] || fail "relative mount point: exit $status, expected 0"
grep -qF "e2defrag-offline: $MNT: $LOOP (ext4, " "$T/out" || fail "'mnt' not resolved to $MNT"
grep -qxF -- "--max-time 1.5h $LOOP" "$T/e2defrag.log" || fail "e2defrag not run with --max-time 1.5h"
grep -qxF -- "-f -p $LOOP" "$T/e2fsck.log" || fail "e2fsck -f -p did not run"
[ "$(mounted_as)" = "$before" ] || fail "mounted as '$(mounted_as)', was '$before'"
# max_time=0 in the configuration file: no limit, no --max-time.
echo "max_time=0" >> "$CONF"
rm -f "$T/e2defrag.log"
expect_status 0 "$OFFLINE" "$MNT"
grep -qxF -- "$LOOP" "$T/e2defrag.log" || fail "max_time=0: e2defrag not run without --max-time"
[ "$(mounted_as)" = "$before" ] || fail "mounted as '$(mounted_as)', was '$before'"
# --max-time goes to the dry run too, as to the run: one of the form the
# script checks that e2defrag refuses (too large) is exit 16 there, before
# anything is stopped, unmounted or checked (it went as far as e2fsck).
sed -i '/^max_time=/d' "$CONF"
rm -f "$T/e2defrag.log" "$T/e2fsck.log"
before=$(mounted_as) at=$(mounted_at)
run_status "$OFFLINE" --max-time 99999999999999999999h "$MNT" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 16 ] || fail "--max-time 99999999999999999999h: exit $status, expected 16"
grep -qF "e2defrag refuses its options (--max-time 99999999999999999999h): nothing was stopped or unmounted" "$T/out" ||
	fail "--max-time too large: not said that nothing was touched"
grep -qxF -- "-n -J --max-time 99999999999999999999h $LOOP" "$T/e2defrag.log" ||
	fail "the dry run was not given --max-time"
[ ! -e "$T/e2fsck.log" ] || fail "--max-time too large: e2fsck ran"
[ "$(mounted_at)" = "$at" ] && [ "$(mounted_as)" = "$before" ] || fail "--max-time too large: the mount changed"
exit 0
