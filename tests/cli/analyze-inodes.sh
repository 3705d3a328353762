#!/bin/sh
# Inodes in use as e2fsck counts them: e2frag's "N of M inodes in use" and
# the JSON report's inodes_used / inodes equal the "N/M files" of
# e2fsck -fn's closing line (reserved inodes 1 to first_ino - 1 included),
# on several filesystems: fresh, with files and directories, with files
# deleted, ext2 (1k blocks), ext3 and ext4 (4k), an e2fragimg image, and
# (as root, when loop mounts work) one the kernel wrote.
. "$top_srcdir/tests/lib/common.sh"

printf 'data\n' > "$T/small"
check() {
	img=$1
	line=$(e2fsck -fn "$img" 2>/dev/null | tail -1)
	want=$(echo "$line" | sed -n 's|.*: \([0-9]*\)/\([0-9]*\) files.*|\1 \2|p')
	[ -n "$want" ] || fail "no 'N/M files' in e2fsck's '$line'"
	run_status e2frag "$img" > "$T/text"
	[ "$status" -le 1 ] || fail "e2frag $img exited $status"
	got=$(sed -n '1s|.*, \([0-9]*\) of \([0-9]*\) inodes in use$|\1 \2|p' "$T/text")
	[ "$got" = "$want" ] || fail "$img: e2frag says '$got' in use, e2fsck -fn '$want' ($line)"
	run_status e2frag -J "$img" > "$T/r.json"
	got=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["filesystem"]; print(f["inodes_used"], f["inodes"])' "$T/r.json")
	[ "$got" = "$want" ] || fail "$img: JSON inodes_used, inodes '$got', e2fsck -fn '$want'"
	note "$(basename "$img"): $want, as e2fsck -fn counts"
}

n=0
for spec in ext2:1024 ext3:4096 ext4:4096; do
	n=$((n + 1))
	img=$T/i$n.img
	mkfs_img "$img" "${spec%:*}" "${spec#*:}" 8M -N 512
	check "$img"
	{
		echo "mkdir /d"
		for i in 1 2 3 4 5 6 7; do echo "write $T/small /d/f$i"; done
		echo "symlink /l /d/f1"
		echo "rm /d/f3"
	} > "$T/cmds"
	dfs "$img" "$T/cmds"
	check "$img"
done
e2fragimg -q --workload streams --streams 2 --total 4M --size 12M --seed 3 "$T/streams.img" || fail "e2fragimg"
check "$T/streams.img"

# Written by the kernel, which keeps the free counts lazily: as root only.
if [ "$(id -u)" -eq 0 ] && command -v mount > /dev/null; then
	kimg=$T/kernel.img
	mkfs_img "$kimg" ext4 1024 16M
	mkdir "$T/mnt"
	trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
	if mount -o loop "$kimg" "$T/mnt" 2>/dev/null; then
		mkdir "$T/mnt/d"
		for i in 1 2 3 4 5 6 7 8 9; do echo "$i" > "$T/mnt/d/f$i"; done
		rm "$T/mnt/d/f3"
		umount "$T/mnt" || fail "umount $T/mnt"
		check "$kimg"
	else
		note "no loop mount here: the kernel-written case is left out"
	fi
fi
