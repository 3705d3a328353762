#!/bin/sh
# e2defrag-offline skips the window when a run would improve nothing: its
# e2defrag -n reads the mounted filesystem, and when no file would reach
# its best layout or fewer pieces it exits 0 without stopping a unit
# (a stand-in systemctl notes every call), without unmounting (the
# superblock's last mount time, dumpe2fs's, stays) and without e2fsck (a
# stand-in notes every check).
# Three such nights: fragmented files with no room to improve them (e2frag
# counts them avoidably fragmented, dumpe2fs no free block), a threshold
# no file reaches (--min-score 100 after --, above every file's score in
# e2frag), and a selection of nothing (e2defrag_opts in the configuration
# file).  And one night with work: room made by deleting a file through
# the mount, which the dry run sees, so the window goes ahead.
. "$top_srcdir/tests/cli/offline-lib.sh"

e2fragimg -q --workload streams --type ext4 --streams 3 --total 12M \
	--size 32M "$T/fs.img" || fail "e2fragimg"
free=$(dumpe2fs -h "$T/fs.img" 2>/dev/null | sed -n 's/^Free blocks: *//p')
head -c $((free * 4096)) /dev/urandom > "$T/filler"
debugfs -w -R "write $T/filler /filler" "$T/fs.img" >/dev/null 2>&1 || fail "debugfs write"
rm "$T/filler"
free=$(dumpe2fs -h "$T/fs.img" 2>/dev/null | sed -n 's/^Free blocks: *//p')
[ "$free" -eq 0 ] || fail "$free blocks still free"
fsck_clean "$T/fs.img"
e2frag --json "$T/fs.img" > "$T/e2frag.json"
python3 - "$T/e2frag.json" <<'EOS' || fail "the image is not as this test needs it"
import json, sys
d = json.load(open(sys.argv[1]))
n = d["summary"]["avoidably_fragmented_files"]
top = max(f["score"] for f in d["files"])
print("# %d files avoidably fragmented, the highest score %.1f" % (n, top))
sys.exit(n < 3 or top >= 100)
EOS
attach "$T/fs.img" noatime
before=$(mounted_as)
settle

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
cat > "$T/systemctl" <<EOS
#!/bin/sh
echo "\$*" >> '$T/systemctl.log'
case \$1 in is-system-running) echo running ;; esac
EOS
chmod +x "$T/e2fsck" "$T/e2defrag" "$T/systemctl"
{ echo "e2fsck=$T/e2fsck"; echo "e2defrag=$T/e2defrag"; echo "systemctl=$T/systemctl"; } >> "$CONF"
cp "$CONF" "$T/base.conf"

# skipped WHAT ARGS...: e2defrag-offline exits 0, saying why, having
# stopped nothing, unmounted nothing, checked nothing, run no e2defrag
# but -V and -n.
skipped() {
	what=$1; shift
	rm -f "$T/e2fsck.log" "$T/e2defrag.log" "$T/systemctl.log"
	at=$(mounted_at)
	run_status "$OFFLINE" --stop recorder.service "$@" > "$T/out" 2>&1
	cat "$T/out"
	[ "$status" -eq 0 ] || fail "$what: exit $status, expected 0"
	grep -q "nothing worth a window: a run would improve no file" "$T/out" || fail "$what: the skip is not said"
	[ "$(mounted_at)" = "$at" ] || fail "$what: mounted again (at $at, then $(mounted_at))"
	[ "$(mounted_as)" = "$before" ] || fail "$what: mounted as '$(mounted_as)', was '$before'"
	[ ! -e "$T/e2fsck.log" ] || fail "$what: e2fsck ran: $(cat "$T/e2fsck.log")"
	printf -- '--version\nis-system-running\n' > "$T/want.log"
	diff "$T/want.log" "$T/systemctl.log" || fail "$what: systemctl asked more than whether systemd runs"
	! grep -v -e '^-V$' -e '^-n -J ' "$T/e2defrag.log" || fail "$what: e2defrag ran for real"
}

skipped "no room" "$MNT"
grep -q "(3 selected, 3 of them beyond improving here)" "$T/out" || fail "no room: the files that cannot improve are not counted"

# Room again, made through the mount: the dry run sees it; the window
# goes ahead (the stand-in e2defrag moves nothing).
rm "$MNT/filler" || fail "rm filler"
rm -f "$T/e2fsck.log" "$T/e2defrag.log" "$T/systemctl.log"
at=$(mounted_at)
run_status "$OFFLINE" --stop recorder.service "$MNT" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 0 ] || fail "with room: exit $status, expected 0"
grep -q "a run would bring 3 files to their best layout" "$T/out" || fail "with room: the plan is not said"
[ "$(mounted_at)" != "$at" ] || fail "with room: never mounted again (last at $at)"
[ "$(mounted_as)" = "$before" ] || fail "with room: mounted as '$(mounted_as)', was '$before'"
grep -qxF -- "-f -p $LOOP" "$T/e2fsck.log" || fail "with room: e2fsck -f -p did not run"
grep -qxF -- "--max-time 1h $LOOP" "$T/e2defrag.log" || fail "with room: e2defrag did not run"
grep -qx "stop recorder.service" "$T/systemctl.log" || fail "with room: the recorder was not stopped"
settle

# A threshold no file reaches, after --; a selection of nothing, from the
# configuration file.
skipped "--min-score 100" "$MNT" -- --min-score 100
grep -q "(0 selected, 0 of them beyond improving here)" "$T/out" || fail "--min-score 100: counted wrong"
echo 'e2defrag_opts="--newer-than 2999-01-01"' >> "$CONF"
skipped "--newer-than 2999-01-01" "$MNT"
grep -qF "asking what a run would do: e2defrag -n --max-time 1h --newer-than 2999-01-01 $LOOP" "$T/out" ||
	fail "the configured options are not those of the dry run"
exit 0
