#!/bin/sh
# e2frag's per-file best and pieces, its count of avoidably fragmented
# files, its best_pieces and its number of zones equal what
# tests/lib/best_oracle.py works out from dumpe2fs and debugfs alone (the
# zones between the fixed metadata, the journal and every reserved inode's
# blocks among it; each file's stream and pieces from debugfs stat), on
# e2fragimg's workloads (ext2, ext3, ext4; 1 KiB and 4 KiB blocks; near-full
# disks whose recordings are larger than a zone) and on an image with quota
# files, an MMP block and meta_bg descriptors, and after e2defrag has moved
# files.  Any disagreement fails.  (analyze-layout.sh checks the same on
# build_varied's images: IND, DIND, TIND, holes, extent trees.)
. "$top_srcdir/tests/lib/common.sh"
command -v e2fragimg >/dev/null 2>&1 || skip "e2fragimg not built"
BEST="python3 $top_srcdir/tests/lib/best_oracle.py"

# check NAME IMG: e2frag --json against the oracle.
check() {
	run_status e2frag --json "$2" > "$T/report.json" 2> "$T/err"
	[ "$status" -le 1 ] || fail "$1: e2frag exited $status: $(cat "$T/err")"
	$BEST check "$2" "$T/report.json" > "$T/cmp" ||
		{ cat "$T/cmp"; fail "$1: e2frag's best or pieces disagree with the oracle"; }
	note "$1: $(tail -1 "$T/cmp")"
}

# maxbest IMG: the largest best of any file, per the oracle.
maxbest() {
	$BEST files "$1" | python3 -c 'import json, sys
print(max(f["best"] for f in json.load(sys.stdin).values()))'
}

# workload NAME E2FRAGIMG-ARGS...
workload() {
	name=$1
	shift
	rm -f "$T/$name.img" "$T/$name.img.json"
	e2fragimg -q -S 1 "$@" "$T/$name.img" || fail "e2fragimg $*"
	check "$name" "$T/$name.img"
}

workload streams-ext2-1k -w streams -t ext2 -b 1024 -s 16M --total 4M
workload aged-ext3-4k -w aged -t ext3 -b 4096 -s 64M
workload mixed-ext4-1k -w mixed -t ext4 -b 1024 -s 64M
workload turns-ext3-1k -w turns -t ext3 -b 1024 -s 8M
workload nearfull-ext4-4k -w nearfull -t ext4 -b 4096 -s 16M --fill 90
# Near-full, 1 KiB blocks, a zone per group: recordings of 2 to 3 zones.
workload nearfull-ext2-1k -w nearfull -t ext2 -b 1024 -s 16M --fill 95
[ "$(maxbest "$T/nearfull-ext2-1k.img")" -ge 3 ] ||
	fail "nearfull-ext2-1k: no file larger than two zones: the image does not test what it should"

# After a run: the files e2defrag moved, each at the best the oracle gives.
cp "$T/nearfull-ext2-1k.img" "$T/moved.img"
debugfs -w -R "ssv lastcheck now" "$T/moved.img" > /dev/null 2>&1
run_status e2defrag "$T/moved.img" > "$T/run.out" 2>&1
[ "$status" -le 1 ] || { cat "$T/run.out"; fail "e2defrag exited $status"; }
check nearfull-ext2-1k-moved "$T/moved.img"

# Quota files (reserved inodes 3 and 4, and the project quota's inode past
# the first inode), an MMP block and meta_bg descriptors, all fixed
# metadata; a file of 12 MiB, larger than any zone; attribute blocks.
mkfs_img "$T/special.img" ext4 1024 24M -O quota,project,meta_bg,^resize_inode \
	-E quotatype=usrquota:grpquota:prjquota
head -c $((12 * 1048576)) /dev/zero | tr '\0' 'x' > "$T/big"
{
	echo "write $T/big /big"
	echo "mkdir /d"
	echo "ea_set /big user.a $(printf '%0300d' 1)"
	echo "ea_set /d user.b $(printf '%0300d' 2)"
} > "$T/cmds"
dfs "$T/special.img" "$T/cmds"
e2fsck -fy "$T/special.img" > /dev/null 2>&1
# MMP last: with it, every read-write open waits 11 s (ext2fs_mmp_start).
tune2fs -O mmp "$T/special.img" > /dev/null 2>&1 || fail "tune2fs -O mmp"
fsck_clean "$T/special.img"
dumpe2fs -h "$T/special.img" 2>/dev/null > "$T/special.h"
grep -q '^MMP block number: *[1-9]' "$T/special.h" || fail "special: no MMP block"
prj=$(sed -n 's/^Project quota inode: *//p' "$T/special.h")
[ "${prj:-0}" -ge 11 ] || fail "special: the project quota inode ($prj) is not past the reserved ones"
[ -n "$(debugfs -R "blocks <$prj>" "$T/special.img" 2>/dev/null)" ] ||
	fail "special: the project quota file has no blocks"
[ "$(maxbest "$T/special.img")" -ge 2 ] || fail "special: /big fits in one zone"
check special "$T/special.img"
exit 0
