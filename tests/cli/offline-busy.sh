#!/bin/sh
# e2defrag-offline leaves a busy filesystem alone: with a file held open
# under the mount point it exits 8, names the process, and the filesystem
# stays mounted from the same device with the same options (noatime), its
# layout untouched (e2frag's piece count).  Bad arguments: 16; a directory
# that is not a mount point: 8.
. "$top_srcdir/tests/cli/offline-lib.sh"

e2fragimg -q --workload streams --type ext4 --streams 3 --total 12M \
	--size 32M "$T/fs.img" || fail "e2fragimg"
attach "$T/fs.img" noatime
before=$(mounted_as)
case $before in *noatime*) ;; *) fail "not mounted noatime: $before" ;; esac
pieces_before=$(e2frag --json "$LOOP" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["summary"]["pieces"])')

sleep 600 < "$MNT/rec01.ts" &
holder=$!
sleep 0.2
run_status "$OFFLINE" "$MNT" > "$T/out" 2>&1
cat "$T/out"
[ "$status" -eq 8 ] || fail "a file held open: exit $status, expected 8"
grep -q "in use by.*sleep\[$holder\]" "$T/out" || fail "the process holding the file is not named"
[ "$(mounted_as)" = "$before" ] || fail "mount changed: '$(mounted_as)', was '$before'"
kill -0 "$holder" || fail "the process holding the file is gone"
pieces_after=$(e2frag --json "$LOOP" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["summary"]["pieces"])')
[ "$pieces_after" = "$pieces_before" ] || fail "pieces $pieces_before -> $pieces_after: defragmented while busy"

# The same with the process's current directory under the mount point.
kill "$holder"; wait "$holder" 2>/dev/null; holder=
(cd "$MNT" && exec sleep 600) &
holder=$!
sleep 0.2
expect_status 8 "$OFFLINE" "$MNT"
[ "$(mounted_as)" = "$before" ] || fail "mount changed (cwd): '$(mounted_as)'"

expect_status 16 "$OFFLINE"
expect_status 16 "$OFFLINE" --bogus "$MNT"
expect_status 16 "$OFFLINE" --max-time soon "$MNT"
expect_status 16 "$OFFLINE" "$MNT" "$MNT"
mkdir "$T/plain"
expect_status 8 "$OFFLINE" "$T/plain"
[ "$(mounted_as)" = "$before" ] || fail "mount changed (usage errors)"
exit 0
