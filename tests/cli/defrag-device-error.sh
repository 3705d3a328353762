#!/bin/sh
# e2defrag on a device that fails its writes part way: the image is a
# sparse file on a tmpfs with little room, so that writes into the
# image's holes (free blocks, the journal) fail with ENOSPC once the
# room is used up, at a different point of the run for each room size
# of the sweep.  Whatever the point: the run stops with exit 8 and a
# message that names the device's error (not a cascade of later moves
# failing with "not free" or "internal error"); e2fsck -fn is clean, or
# clean after the e2fsck -fy the message asks for when the failure hit
# the metadata; every file's contents are as before (debugfs, sha256).
# At least one room size must fail a write of file data and one must let
# the run finish, or the sweep proved nothing.  Needs root (tmpfs).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: needs root to mount a tmpfs"; exit 77; }
mnt=$T/mnt
mkdir "$mnt"
trap 'umount "$mnt" 2>/dev/null; rm -rf "$T"' EXIT

# sweep TYPE: one image, runs with 1..8 MiB of room past its allocated size.
sweep() {
	type=$1
	e2fragimg -q -w streams -t "$type" -b 1024 -s 32M --streams 4 --chunk 64K \
		--total 19M "$T/orig.img" || fail "e2fragimg -t $type"
	snapshot "$T/orig.img" "$T/orig.snap"
	used=$(du -k "$T/orig.img" | cut -f1)
	data_failed=0 finished=0
	for extra in 1024 2048 3072 4096 5120 6144 7168 8192; do
		mount -t tmpfs -o size=$((used + extra))k tmpfs "$mnt" ||
			{ echo "skip: cannot mount a tmpfs"; exit 77; }
		cp --sparse=always "$T/orig.img" "$mnt/x.img" || fail "copy to the tmpfs"
		rc=0
		E2D_NO_SECOND_RUN=1 e2defrag --buffer 64K "$mnt/x.img" > "$T/out" 2> "$T/err" || rc=$?
		cp "$mnt/x.img" "$T/x.img" || fail "copy back"
		umount "$mnt" || fail "umount"
		case $rc in
		0|1)
			finished=$((finished + 1)) ;;
		8)
			grep -q "No space left on device\|short write" "$T/err" ||
				{ cat "$T/err"; fail "$type +${extra}k: exit 8 without the device's error"; }
			! grep -q "not free\|internal error" "$T/err" ||
				{ cat "$T/err"; fail "$type +${extra}k: later moves failed after the device did"; }
			if grep -q "reading or writing the data of a move failed" "$T/err"; then
				data_failed=$((data_failed + 1))
				[ "$(grep -c "not moved" "$T/err")" -eq 0 ] ||
					{ cat "$T/err"; fail "$type +${extra}k: moves tried after the device failed"; }
			elif grep -q "run e2fsck -f" "$T/err"; then
				# A metadata write failed: as a power cut, which e2fsck mends.
				e2fsck -fy "$T/x.img" > "$T/fsck.y" 2>&1
				[ $? -le 1 ] || { cat "$T/fsck.y"; fail "$type +${extra}k: e2fsck -fy"; }
			else
				cat "$T/err"; fail "$type +${extra}k: exit 8 with neither message"
			fi ;;
		*)
			cat "$T/err"; fail "$type +${extra}k: exit $rc" ;;
		esac
		check_clean "$T/x.img"
		snapshot "$T/x.img" "$T/x.snap"
		same_snapshot "$T/orig.snap" "$T/x.snap"
		echo "# $type +${extra}k: exit $rc$(grep -o '(No space left on device)\|(Attempt to write[^)]*)' "$T/err" | head -n 1 | sed 's/^/ /')"
	done
	[ "$data_failed" -gt 0 ] || fail "$type: no room size failed a write of file data"
	[ "$finished" -gt 0 ] || fail "$type: no room size let the run finish"
}
sweep ext4
sweep ext2
exit 0
