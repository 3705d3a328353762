#!/bin/sh
# Logged moves (writer.h): a move into blocks its batch released writes
# them through the batch's transaction (switch_write), and a logged copy
# that is abandoned (switch_forget) never reaches its blocks.  The test
# mover (testmove -b) on ext4 with 1 KiB blocks, files /a /b /c of 24
# blocks each, one extent: /a moves away, /b is copied into the blocks /a
# left and abandoned, /c moves into them; per debugfs, afterwards /c lies
# in /a's old blocks with its own contents (sha256 of debugfs cat), /b is
# where and what it was, and e2fsck -fn is clean:
#   - abandoned after the batch committed (its copies are in the log):
#     checkpointed at the end, and left in the log for e2fsck to replay
#     (-n), where the revoke must keep /b's copy off /c's blocks; the
#     control (~/b: the copy dropped without switch_forget) must leave
#     /c with /b's data, or the test proves nothing;
#   - abandoned in the open batch, /c then logged in the same batch;
#   - the journal holds /c's data as copies (debugfs logdump) where /c
#     moved in the batch that freed its blocks, and e2fsck's replay, or
#     the kernel's when it mounts the image (root and loop mounts only),
#     puts them in place.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck sha256sum testmove python3
mkwork

base=$WORK/base.img
mkimg "$base" 8192 -t ext4 -b 1024
for f in a b c; do
	gen_file "$WORK/$f" 24576 "logged-$f"
	echo "write $WORK/$f $f" >> "$WORK/files.cmds"
done
dbg "$base" "$WORK/files.cmds"
clean "$base" || fail "the image is not clean to begin with"
A=$(debugfs -R "blocks /a" "$base" 2>/dev/null | awk '{ print $1 "-" $NF }')
[ "$(pieces "$base" /a)" = 1 ] && [ -n "$A" ] || fail "/a is not in one piece: $A"
T=7000-7023
[ "$(debugfs -R "testb 7000 24" "$base" 2>/dev/null | grep -c 'not in use')" = 24 ] ||
	fail "blocks $T are not free"
sha() { debugfs -R "cat $2" "$1" 2>/dev/null | sha256sum | cut -c1-64; }
sha_b=$(sha "$base" /b) sha_c=$(sha "$base" /c)

# check NAME IMG [CONTROL]: /c in /a's old blocks with its contents, /b
# as it was, clean; with CONTROL, /c must have /b's data instead.
check() {
	local name=$1 img=$2 control=${3:-}
	if [ -n "$control" ]; then
		[ "$(sha "$img" /c)" = "$sha_b" ] ||
			fail "$name: the control left /c's data whole: the check proves nothing"
		echo "ok $name: without switch_forget /b's logged copy overwrote /c"
		return
	fi
	clean "$img" || { cat "$WORK/fsck.out"; fail "$name: e2fsck -fn not clean"; }
	[ "$(debugfs -R "blocks /c" "$img" 2>/dev/null | awk '{ print $1 "-" $NF }')" = "$A" ] ||
		fail "$name: /c is not in /a's old blocks $A"
	[ "$(sha "$img" /c)" = "$sha_c" ] || fail "$name: /c's contents changed"
	[ "$(sha "$img" /b)" = "$sha_b" ] || fail "$name: /b's contents changed"
	echo "ok $name"
}

# run NAME ARGS...: testmove -b ARGS on a copy of the image, named IMG
# among ARGS.
run() {
	local name=$1 a
	shift
	img=$WORK/$name.img
	cp "$base" "$img"
	for a; do
		shift
		[ "$a" = IMG ] && a=$img
		set -- "$@" "$a"
	done
	testmove -b "$@" > "$WORK/$name.out" 2>&1 ||
		{ cat "$WORK/$name.out"; fail "$name: testmove failed"; }
}

for n in "" -n; do
	tag=committed${n:+-replayed}
	for how in - '~'; do
		run "$tag$how" $n -t $T -t "$A" -t "$A" IMG /a +/b :commit "$how/b" :commit /c
		if [ -n "$n" ]; then
			e2fsck -fy "$img" > "$WORK/replay.out" 2>&1
			[ $? -le 1 ] || { cat "$WORK/replay.out"; fail "$tag: e2fsck -fy failed"; }
		fi
		if [ "$how" = - ]; then
			check "$tag" "$img"
		else
			check "$tag control" "$img" control
		fi
	done
done

run open -t $T -t "$A" -t "$A" IMG /a +/b -/b /c
check "forgotten in the open batch" "$img"

run logged -n -t $T -t "$A" IMG /a /c
first=${A%-*}
debugfs -R "logdump -b $first" "$img" > "$WORK/logdump.out" 2>&1
grep -q "FS block $first logged" "$WORK/logdump.out" ||
	{ cat "$WORK/logdump.out"; fail "/c's first block $first is not in the log"; }
e2fsck -fy "$img" > "$WORK/replay.out" 2>&1
check "logged, then replayed by e2fsck" "$img"

# The kernel's jbd2 replays the same log (root and loop mounts only).
run kernel -n -t $T -t "$A" IMG /a /c
mnt=$WORK/mnt
mkdir "$mnt"
if [ "$(id -u)" -eq 0 ] && mount -o loop "$img" "$mnt" 2>/dev/null; then
	got=$(sha256sum < "$mnt/c" | cut -c1-64)
	umount "$mnt" || fail "kernel: cannot unmount"
	[ "$got" = "$sha_c" ] || fail "kernel: /c reads back wrong after the kernel's replay"
	check "logged, then replayed by the kernel" "$img"
else
	echo "# kernel replay not tried: needs root and loop mounts"
fi
