#!/bin/sh
# e2defrag-offline's systemd units as built: systemd-analyze verify finds
# nothing to say about the service, its failure report and the timer
# (installed as make install would, in a root of their own beside a copy of
# this system's units), and systemd-analyze security --offline rates the
# service no more exposed than e2fsprogs' e2scrub@.service, the model
# (computed from this system's copy when it has one, else the 8.7 that
# systemd 252 gives e2scrub 1.47's).  Nor does the service set anything
# that gives it a mount namespace of its own, where its umount and mount
# would not reach the host's.  Skips (77) without systemd-analyze.
. "$top_srcdir/tests/lib/common.sh"

command -v systemd-analyze >/dev/null 2>&1 || skip "no systemd-analyze"
M=$top_builddir/misc
for u in e2defrag-offline@.service e2defrag-offline-fail@.service; do
	[ -f "$M/$u" ] || fail "$M/$u not built"
done
units=
for d in /usr/lib/systemd/system /lib/systemd/system; do
	[ -f "$d/sysinit.target" ] && { units=$d; break; }
done
[ -n "$units" ] || skip "no systemd units on this system to verify against"

# The root: this system's units, ours in /etc/systemd/system, and the
# programs where the units' ExecStart= looks for them.
R=$T/root
mkdir -p "$R/usr/lib/systemd" "$R/etc/systemd/system" || fail "mkdir"
cp -R "$units" "$R/usr/lib/systemd/system" || fail "cp $units"
cp "$M/e2defrag-offline@.service" "$top_srcdir/misc/e2defrag-offline@.timer" \
	"$M/e2defrag-offline-fail@.service" "$R/etc/systemd/system/" || fail "cp units"
for u in e2defrag-offline@.service e2defrag-offline-fail@.service; do
	exe=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$M/$u")
	prog=$M/$(basename "$exe")
	[ -x "$prog" ] || fail "$u runs $exe, which the build does not make"
	mkdir -p "$R$(dirname "$exe")" && cp "$prog" "$R$exe" || fail "cp $prog"
done

instance=$(systemd-escape -p /srv/recordings)
run_status systemd-analyze verify --man=no --root="$R" \
	"e2defrag-offline@$instance.service" "e2defrag-offline@$instance.timer" \
	"e2defrag-offline-fail@$instance.service" > "$T/verify" 2>&1
cat "$T/verify"
[ "$status" -eq 0 ] || fail "systemd-analyze verify exited $status"
[ ! -s "$T/verify" ] || fail "systemd-analyze verify has something to say"
note "systemd-analyze verify: nothing to say"

# exposure UNIT-ARGS...: the overall exposure systemd-analyze security gives.
exposure() {
	systemd-analyze security --offline=yes "$@" > "$T/security" 2>&1 ||
		{ cat "$T/security"; return 1; }
	sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p' "$T/security"
}
systemd-analyze security --help 2>&1 | grep -q -- --offline || skip "systemd-analyze security has no --offline"
ours=$(exposure --root="$R" "e2defrag-offline@$instance.service") || fail "systemd-analyze security failed"
[ -n "$ours" ] || { cat "$T/security"; fail "no exposure level for e2defrag-offline@.service"; }
cp "$T/security" "$T/security.ours"
e2scrub=
for d in /usr/lib/systemd/system /lib/systemd/system; do
	[ -f "$d/e2scrub@.service" ] && { e2scrub=$d/e2scrub@.service; break; }
done
if [ -n "$e2scrub" ]; then
	theirs=$(exposure "$e2scrub") || fail "systemd-analyze security $e2scrub failed"
	[ -n "$theirs" ] || fail "no exposure level for $e2scrub"
	note "exposure: e2defrag-offline@.service $ours, $e2scrub $theirs"
else
	theirs=8.7
	note "exposure: e2defrag-offline@.service $ours; no e2scrub@.service here, compared with 8.7 (systemd 252 on e2fsprogs 1.47's)"
fi
awk -v a="$ours" -v b="$theirs" 'BEGIN { exit !(a <= b) }' || {
	cat "$T/security.ours"
	fail "e2defrag-offline@.service is more exposed ($ours) than e2scrub@.service ($theirs)"
}

# Nothing that makes a mount namespace (systemd.exec(5)); PrivateNetwork=
# with PrivateMounts=no said, since systemd 254 makes the one imply the other.
grep -E '^(ProtectSystem|ProtectHome|PrivateTmp|PrivateDevices|PrivateIPC|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectProc|ProcSubset|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|ExecPaths|NoExecPaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|RootDirectory|RootImage|MountImages|ExtensionImages|MountFlags)=' \
	"$M/e2defrag-offline@.service" && fail "a setting that gives the service a mount namespace of its own"
grep -qx 'PrivateMounts=no' "$M/e2defrag-offline@.service" || fail "PrivateMounts=no is not said"
exit 0
