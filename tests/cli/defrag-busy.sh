#!/bin/sh
# e2defrag refuses a busy block device: while another process holds the
# device open exclusively (O_EXCL, as mkfs, e2fsck and the kernel's mounts
# do), e2defrag, -n and -f exit 8 with one line saying the device is busy,
# and nothing is written (the device and its backing file byte for byte
# as before, cmp).  Once the other process has let go, the same device is
# defragmented: the refusal was the holder's doing.  Needs root and a
# loop device; skips (77) without them.
. "$top_srcdir/tests/cli/defrag-lib.sh"

[ "$(id -u)" -eq 0 ] || { echo "skip: not root: a loop device is needed"; exit 77; }
command -v losetup >/dev/null 2>&1 || { echo "skip: no losetup"; exit 77; }
command -v mkfifo >/dev/null 2>&1 || { echo "skip: no mkfifo"; exit 77; }

LOOP= holder=
busy_cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	rm -rf "$T"
}
trap busy_cleanup EXIT

small_image "$T/fs.img" ext4
LOOP=$(losetup -f --show "$T/fs.img" 2>/dev/null) || { LOOP=; echo "skip: no loop device"; exit 77; }
cp "$T/fs.img" "$T/orig.img"

# The holder opens the device with O_EXCL, says so on the fifo, and waits
# to be killed; the test goes on when it has said so (not after a sleep).
mkfifo "$T/ready"
python3 -c 'import os, signal, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
sys.stdout.close()
while True:
    signal.pause()' "$LOOP" > "$T/ready" 2> "$T/holder.err" &
holder=$!
read -r state < "$T/ready"
[ "$state" = held ] || { cat "$T/holder.err"; fail "the holder could not open $LOOP exclusively"; }

for opt in "" -n -f; do
	expect_rc 8 e2defrag $opt "$LOOP"
	[ "$(wc -l < "$T/out")" -eq 1 ] || { cat "$T/out"; fail "busy: e2defrag $opt said more than one line"; }
	grep -qx "e2defrag: Device is busy (opened exclusively by another program) while opening $LOOP for defragmentation\. Nothing was changed\." "$T/out" ||
		{ cat "$T/out"; fail "busy: e2defrag $opt does not say the device is busy"; }
	cmp -s "$LOOP" "$T/orig.img" || fail "busy: e2defrag $opt changed the device"
	cmp -s "$T/fs.img" "$T/orig.img" || fail "busy: e2defrag $opt changed the image file"
	echo "# e2defrag $opt: $(cat "$T/out")"
done

kill "$holder"
wait "$holder" 2>/dev/null
holder=
# Let go, the same device is defragmented.
[ "$(avoidable "$LOOP")" -gt 0 ] || fail "nothing to defragment on $LOOP"
expect_rc 0 e2defrag "$LOOP"
check_clean "$LOOP"
[ "$(avoidable "$LOOP")" -eq 0 ] || fail "not defragmented once free: $(avoidable_list)"
cmp -s "$LOOP" "$T/orig.img" && fail "the run on the free device wrote nothing"
echo "# once let go: e2defrag exit 0, nothing avoidably fragmented left"
exit 0
