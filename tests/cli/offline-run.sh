#!/bin/sh
# e2defrag-offline's whole run on a loop-mounted image of interleaved
# recordings (e2fragimg), with a recorder holding a file open whose unit is
# named with --stop: the unit is stopped before the unmount and started
# again after the mount (a stand-in systemctl records both, and whether the
# filesystem was mounted then); the filesystem ends mounted again from the
# same device with the same options (noatime), every file reads back with
# the manifest's SHA-256, e2fsck -fn finds it clean, and no file is left
# avoidably fragmented (tests/lib/best_oracle.py: best from dumpe2fs and
# debugfs).  The exit status is e2defrag's.
. "$top_srcdir/tests/cli/offline-lib.sh"

. "$top_srcdir/tests/lib/best.sh"

e2fragimg -q --workload streams --type ext4 --streams 3 --total 24M \
	--size 48M "$T/fs.img" || fail "e2fragimg"
n=$(avoidable "$T/fs.img")
[ "$n" -ge 3 ] || fail "the image has only $n avoidably fragmented files"
attach "$T/fs.img" noatime
before=$(mounted_as)

# The recorder, and a systemctl that stops it by killing it.
sleep 600 < "$MNT/rec00.ts" &
holder=$!
cat > "$T/systemctl" <<EOS
#!/bin/sh
echo "\$* mounted=\$(findmnt -n -o TARGET --mountpoint '$MNT')" >> '$T/systemctl.log'
case \$1 in
is-system-running) echo running ;;
is-active) kill -0 $holder 2>/dev/null ;;
stop) kill $holder; while [ -n "\$(ls /proc/$holder/fd 2>/dev/null)" ]; do sleep 0.05; done ;;
esac
EOS
chmod +x "$T/systemctl"
echo "systemctl=$T/systemctl" >> "$CONF"

run_status "$OFFLINE" --stop recorder.service --max-time 60 "$MNT" -- -v > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 0 ] || fail "exit $status, expected 0"
holder=
[ "$(mounted_as)" = "$before" ] || fail "mounted as '$(mounted_as)', was '$before'"
cat > "$T/want.log" <<EOS
--version mounted=$MNT
is-system-running mounted=$MNT
is-active --quiet recorder.service mounted=$MNT
stop recorder.service mounted=$MNT
start recorder.service mounted=$MNT
EOS
diff "$T/want.log" "$T/systemctl.log" || fail "systemctl calls"
for step in "asking what a run would do: e2defrag -n --max-time 60 $LOOP -v" \
	    "a run would bring 3 files to their best layout" \
	    "stopping recorder.service" "unmounting $MNT" "checking $LOOP" \
	    "defragmenting $LOOP: e2defrag --max-time 60" "e2defrag exited 0" \
	    "mounted $LOOP on $MNT again" "started recorder.service again"; do
	grep -qF "e2defrag-offline: $step" "$T/out" || fail "step not logged: $step"
done

python3 - "$T/fs.img.json" "$MNT" <<'EOS' || fail "contents differ from the manifest"
import hashlib, json, sys
m = json.load(open(sys.argv[1]))
for f in m["files"]:
    h = hashlib.sha256(open(sys.argv[2] + f["path"], "rb").read()).hexdigest()
    if h != f["sha256"]:
        sys.exit("%s: sha256 %s, manifest %s" % (f["path"], h, f["sha256"]))
print("# %d files match the manifest" % len(m["files"]))
EOS
umount "$MNT" || fail "umount"
fsck_clean "$LOOP"
n=$(avoidable "$LOOP")
[ "$n" -eq 0 ] || fail "$n files still avoidably fragmented: $(avoidable_list)"
exit 0
