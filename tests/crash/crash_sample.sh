#!/bin/sh
# The power-cut harness on a bounded sample (make check; `make crashtest`
# runs the full sweep): e2defrag deinterleaving small stream images, ext2
# (ordered writes) and ext4 (journal, checksum v3, and a sparse file whose
# move writes a new extent tree block), all moves in one batch (group
# commit), and ext2 and ext3 aged under --pack --buffer 4k (many batches,
# moves into blocks the batch freed: on ext2 they end the batch, on ext3
# they are logged), and ext3 turns (a block-mapped file moved twice, its
# first mapping blocks revoked); every flush boundary of the run,
# random subsets of the writes between flushes (24 on ext2, 20 on ext4),
# 5 prefixes and torn writes (2 on ext2, where only data blocks change in
# more than one sector, 12 on ext4: a block written in part, 512-byte
# sectors old and new mixed, over the kinds of block a tear can leave
# neither old nor new), each.  The streams carry what a move must keep
# whole (extras below): an owner, a mode, attributes in a block, a hard
# link, and symlinks fast and slow beside them; the harness compares all
# of it after every cut.  Then two controls that must be caught: a run that clobbers an
# inode table block, and a superblock write that a tear leaves with a bad
# checksum.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs python3 sha256sum cmp e2defrag testmove iolog_replay jtool
need_iolog
mkwork

total_n=0 total_l=0 total_c=0

# extras IMG: on the streams /s0 /s1 /s2, an owner and group, a mode,
# extended attributes (a small one and one of 600 bytes), a second name;
# and a fast and a slow symlink.
extras() {
	python3 -c 'print("v" * 600, end="")' > "$WORK/xattr"
	{
		echo "sif s0 uid 1001"
		echo "sif s0 gid 2002"
		echo "sif s1 mode 0100600"
		echo "ea_set s1 user.note hello"
		echo "ea_set -f $WORK/xattr s2 user.big"
		echo "ln s2 s2.link"
		echo "sif s2 links_count 2"
		echo "symlink fast s0"
		echo "symlink slow /$(printf 'x%.0s' $(seq 1 120))"
	} > "$WORK/extras.cmds"
	dbg "$1" "$WORK/extras.cmds"
	clean "$1" || { cat "$WORK/fsck.out"; fail "extras: not clean"; }
}
# sweep NAME IMG RANDOM TORN [E2DEFRAG OPTIONS]
sweep() {
	name=$1 img=$2 random=$3 torn=$4 opts=${5:-}
	[ -n "$(fragmented_files "$img")" ] || fail "$name: no fragmented file to move"
	# The run being cut must really move the files: afterwards every file
	# is in one piece, by debugfs's block lists (tests/lib/oracle.py).
	cp "$img" "$WORK/whole.img"
	e2defrag $opts --json "$WORK/whole.img" > "$WORK/whole.json" 2>&1 ||
		fail "$name: e2defrag failed"
	# Group commit: how many moves and how many batches the run made.
	set -- $(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["result"]
print(r["moves_done"], r["commits"], r["reuse_commits"], r["logged_bytes"])' "$WORK/whole.json")
	moves=$1 commits=$2 reuses=$3 logged=$4
	echo "$name: moves $moves, commits $commits, of them for a reuse $reuses, bytes logged $logged"
	python3 "$top_srcdir/tests/lib/oracle.py" layout "$WORK/whole.img" |
		python3 -c 'import json, sys
left = [f["path"] for f in json.load(sys.stdin).values() if f["type"] == "f" and f["pieces"] > 1]
sys.exit("left in pieces: %s" % left if left else 0)' || fail "$name: e2defrag left files in pieces"
	# With metadata_csum every superblock write keeps the checksum that
	# is on disk (writer/supersector.c), so that a tear cannot break it: the
	# run changed the superblock's first sector, not its second (where
	# the checksum is), and e2fsck finds the superblock right.
	if dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem features:.*metadata_csum'; then
		clean "$WORK/whole.img" || { cat "$WORK/fsck.out"; fail "$name: not clean after the run"; }
		for f in "$img" "$WORK/whole.img"; do
			dd if="$f" bs=512 skip=2 count=1 2>/dev/null | od -An -tx1 > "$f.s0"
			dd if="$f" bs=512 skip=3 count=1 2>/dev/null | od -An -tx1 > "$f.s1"
		done
		! cmp -s "$img.s0" "$WORK/whole.img.s0" || fail "$name: the run left the superblock as it was"
		cmp -s "$img.s1" "$WORK/whole.img.s1" || fail "$name: the run changed the superblock's second sector"
	fi
	cut_sweep "$name" "$img" "$random" 5 "$torn" 7 "e2defrag $opts \"\$IMAGE\""
	total_n=$((total_n + swept_n)) total_l=$((total_l + swept_l))
	total_c=$((total_c + swept_c))
}

img=$WORK/ext2.img
mkimg "$img" 4096 -t ext2 -b 1024
make_streams "$img" 3 40 "$WORK"
extras "$img"
sweep ext2-streams "$img" 24 2
# One batch holds every move: the random cuts fall inside it.
[ "$commits" -eq 1 ] && [ "$moves" -gt 1 ] || fail "ext2: expected one batch of several moves"

# Many small batches (4 KiB of data each), and moves that take blocks a
# move of the batch freed: --pack on an aged image slides files over the
# blocks others left.  Without a journal such a move ends the batch
# early; with one it writes them through the batch's transaction (a
# logged move), so cuts fall between its copies in the log, its commit,
# and the checkpoint that writes them in place.
img=$WORK/ext2-aged.img
mkimg "$img" 4096 -t ext2 -b 1024
make_aged "$img" aged-ext3 60 "$WORK"	# the ext3 image's files: a reuse
sweep ext2-aged-batches "$img" 6 2 "--pack --buffer 4k"
[ "$commits" -gt 2 ] && [ "$moves" -gt "$commits" ] && [ "$reuses" -gt 0 ] ||
	fail "ext2 --pack --buffer 4k: expected several batches, some of several moves, and a reuse"
img=$WORK/ext3.img
mkimg "$img" 4096 -t ext3 -b 1024
make_aged "$img" aged-ext3 60 "$WORK"
sweep ext3-aged-batches "$img" 10 4 "--pack --buffer 4k"
[ "$commits" -gt 2 ] && [ "$moves" -gt "$commits" ] && [ "$logged" -gt 0 ] ||
	fail "ext3 --pack --buffer 4k: expected several batches, some of several moves, and logged moves"

# A block-mapped file moved twice (e2fragimg's turns: a big file
# between small ones): its first move's mapping blocks are logged, and
# its second frees them, revoking them in the open transaction.  A
# checkpoint before that commit must still write them in place: a cut
# there once left the first move's indirect blocks unwritten under a
# committed inode (e2fsck -fy cleared /big.dat).
if command -v e2fragimg >/dev/null 2>&1; then
	img=$WORK/ext3-turns.img
	e2fragimg -q -w turns -t ext3 -b 1024 -S 15 "$img" || fail "e2fragimg turns"
	e2fsck -fy "$img" > /dev/null 2>&1
	sweep ext3-turns "$img" 4 2
else
	echo "ext3-turns: skipped, e2fragimg not built"
fi

img=$WORK/ext4.img
mkimg "$img" 8192 -t ext4 -b 1024
make_streams "$img" 3 40 "$WORK"
make_sparse "$img" sparse 6 "$WORK"
extras "$img"
sweep ext4-streams "$img" 20 12
[ "$moves" -gt "$commits" ] || fail "ext4: expected batches of several moves"
grep -q 'torn cuts.* tree [1-9]' "$WORK/sweep.out" ||
	fail "ext4: no torn write of a new extent tree block"

echo "cut points $total_n, data lost $total_l, not clean after replay $total_c"
[ "$total_l" -eq 0 ] && [ "$total_c" -eq 0 ] || fail "power cuts lose data or leave damage"

# The control: the harness must notice an unsafe write.
img=$WORK/ext2.img
ib=$(debugfs -R "imap /s1" "$img" 2>/dev/null | sed -n 's/.*located at block \([0-9]*\),.*/\1/p')
sh "$top_srcdir/tests/crash/cutsweep.sh" -r 3 -p 0 -n control "$img" \
	"testmove \"\$IMAGE\" /s0 && jtool \"\$IMAGE\" clobber $ib" > "$WORK/sweep.out" 2>/dev/null &&
	fail "control: a clobbered inode table block went unnoticed"
set -- $(sweep_line "$WORK/sweep.out")
[ $# -eq 3 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] ||
	{ cat "$WORK/sweep.out"; fail "control: expected data lost and not clean"; }
echo "ok control: $(cat "$WORK/sweep.out")"

# The control for torn writes: a superblock write that changes both of its
# sectors (jtool stamp records an error, so the checksum is not kept):
# whole, it is harmless; torn, the checksum is wrong and e2fsck cannot
# open the filesystem.  Every torn cut (2) must be caught, no other.
img=$WORK/ext4.img
sh "$top_srcdir/tests/crash/cutsweep.sh" -r 0 -p 0 -t 2 -n torn-control "$img" \
	"jtool \"\$IMAGE\" stamp 1700000000" > "$WORK/sweep.out" 2>/dev/null &&
	fail "torn control: a torn superblock went unnoticed"
set -- $(sweep_line "$WORK/sweep.out")
[ $# -eq 3 ] && [ "$2" -eq 2 ] && grep -q 'torn cuts 2: super 2$' "$WORK/sweep.out" ||
	{ cat "$WORK/sweep.out"; fail "torn control: expected the 2 torn superblocks, and only them, to lose data"; }
echo "ok torn control: $(tail -1 "$WORK/sweep.out")"
