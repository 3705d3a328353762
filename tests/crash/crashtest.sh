#!/bin/sh
# crashtest.sh --- the full power-cut sweep (`make crashtest`): ext2, ext3
# and ext4 images of the "streams" (interleaved recordings) and "aged"
# (files written and deleted at random) workloads (and ext4 without a
# journal, streams), and the aged images again under e2defrag --pack
# (free space consolidated whole: many moves of files that were not
# fragmented) and under --pack --buffer 4k (group commit in many small
# batches, some ended by a move into blocks the batch freed), and the
# "turns" workload (small files between a big file's pieces, every other
# one deleted: units that need a commit wait while later ones go ahead,
# defrag/waiting.c), and the "chain" workload (e2fragimg's kernel-tree:
# files sliding into the blocks the ones before them left, moves logged
# through the journal on ext3 and ext4, writer.h); for each, every flush
# boundary of the run and
# CRASH_RANDOM (170) random-subset, CRASH_PREFIX (30) prefix and
# CRASH_TORN (60) torn-write cuts (cutsweep.sh).  Prints the torn cuts by
# kind of block, "torn cuts T: KIND N, ...", and the total "cut points
# N, data lost L, not clean after replay C"; exits 0 when L and C are 0.
#
# The images come from e2fragimg (its streams and aged workloads; ext4
# without a journal by tune2fs), or from mke2fs+debugfs when it is not
# built.  CRASH_IMAGE_CMD, when set, builds them instead: run with KIND
# (streams|aged|turns|chain), FSTYPE (ext2|ext3|ext4|ext4-nojournal) and OUT (the
# image to create) in the environment.  The workload is a parameter too:
# CRASH_WORKLOAD is a shell command run on the image $IMAGE (default:
# e2defrag "$IMAGE"; the test mover moving every fragmented file, listed in
# $FILES, is CRASH_WORKLOAD='testmove "$IMAGE" $FILES').  CRASH_SWEEPS,
# when set, names the sweeps to run (e.g. "ext3-batches ext4-batches"),
# to repeat a few after a change without the hour the whole takes.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs tune2fs python3 sha256sum cmp iolog_replay
need_iolog
: "${CRASH_RANDOM:=170}" "${CRASH_PREFIX:=30}" "${CRASH_TORN:=60}"
: "${CRASH_WORKLOAD:=e2defrag \"\$IMAGE\"}"
# The pack sweep: --pack added to the default workload; the batches
# sweep: --pack in many small batches (group commit: 4 KiB of data per
# commit, and batches ended by moves into blocks the batch freed).
if [ "$CRASH_WORKLOAD" = 'e2defrag "$IMAGE"' ]; then
	PACK_WORKLOAD='e2defrag --pack "$IMAGE"'
	BATCH_WORKLOAD='e2defrag --pack --buffer 4k "$IMAGE"'
else
	PACK_WORKLOAD=$CRASH_WORKLOAD
	BATCH_WORKLOAD=$CRASH_WORKLOAD
fi
mkwork

# build KIND FSTYPE OUT SEED
build() {
	local kind=$1 fstype=$2 out=$3 seed=$4 type=$2 bs=1024 size=8M total=1M
	if [ -n "${CRASH_IMAGE_CMD:-}" ]; then
		KIND=$kind FSTYPE=$fstype OUT=$out sh -c "$CRASH_IMAGE_CMD" ||
			fail "CRASH_IMAGE_CMD failed for $kind $fstype"
		return
	fi
	if command -v e2fragimg >/dev/null 2>&1; then
		case $fstype in
		ext4) bs=4096 size=16M total=2M ;;
		ext4-nojournal) type=ext4 ;;
		esac
		case $kind in
		streams) e2fragimg -q -w streams -t $type -b $bs -s $size \
				--total $total -S "$seed" "$out" ;;
		aged) e2fragimg -q -w aged -t $type -b $bs -s $size --fill 70 \
				-S "$seed" "$out" ;;
		turns) e2fragimg -q -w turns -t $type -b $bs -S "$seed" "$out" ;;
		chain) e2fragimg -q -w kernel-tree -t $type -b 1024 --files 600 \
				-S "$seed" "$out" ;;
		esac || fail "e2fragimg failed for $kind $fstype"
		if [ $fstype = ext4-nojournal ]; then
			tune2fs -O ^has_journal "$out" >/dev/null 2>&1 ||
				fail "tune2fs -O ^has_journal failed"
		fi
		return
	fi
	case $fstype in
	ext4) mkimg "$out" 16384 -t ext4 -b 4096 ;;
	ext4-nojournal) mkimg "$out" 8192 -t ext4 -O ^has_journal -b 1024 ;;
	*) mkimg "$out" 8192 -t "$fstype" -b 1024 ;;
	esac
	case $kind in
	streams) make_streams "$out" 4 200 "$WORK" ;;
	aged|turns|chain) make_aged "$out" "aged-$fstype" 80 "$WORK" ;;
	esac
}

total_n=0 total_l=0 total_c=0 total_t=0 sweep_seed=1
: > "$WORK/kinds"
for kind in streams aged pack batches turns chain; do
	workload=$CRASH_WORKLOAD image=$kind
	[ $kind = pack ] && workload=$PACK_WORKLOAD image=aged
	[ $kind = batches ] && workload=$BATCH_WORKLOAD image=aged
	for fstype in ext2 ext3 ext4 ext4-nojournal; do
		# ext4 without a journal: ordered writes with checksums.
		[ $fstype = ext4-nojournal ] && [ $kind != streams ] && continue
		name=$fstype-$kind
		if [ -n "${CRASH_SWEEPS:-}" ]; then
			case " $CRASH_SWEEPS " in
			*" $name "*) ;;
			*) sweep_seed=$((sweep_seed + 1)); continue ;;
			esac
		fi
		img=$WORK/$name.img
		build "$image" "$fstype" "$img" $sweep_seed
		FILES=$(fragmented_files "$img" | tr '\n' ' ')
		export FILES
		sh "$top_srcdir/tests/crash/cutsweep.sh" -r "$CRASH_RANDOM" \
			-p "$CRASH_PREFIX" -t "$CRASH_TORN" -s $sweep_seed -n "$name" "$img" "$workload" \
			> "$WORK/sweep.out" 2> "$WORK/sweep.err"
		cat "$WORK/sweep.out"
		head -40 "$WORK/sweep.err"
		set -- $(sweep_line "$WORK/sweep.out")
		[ $# -eq 3 ] || fail "$name: no summary from cutsweep.sh"
		total_n=$((total_n + $1)) total_l=$((total_l + $2)) total_c=$((total_c + $3))
		# "NAME: torn cuts T: KIND N, KIND N": the kinds, added up.
		sed -n 's/^[^:]*: torn cuts \([0-9]*\): *//p' "$WORK/sweep.out" |
			tr ',' '\n' | awk 'NF == 2' >> "$WORK/kinds"
		total_t=$((total_t + $(sed -n 's/^[^:]*: torn cuts \([0-9]*\):.*/\1/p' "$WORK/sweep.out")))
		sweep_seed=$((sweep_seed + 1))
		rm -f "$img"
	done
done
echo "torn cuts $total_t:" $(awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' "$WORK/kinds" |
	sort | awk '{ printf "%s %d, ", $1, $2 }' | sed 's/, $//')
echo "cut points $total_n, data lost $total_l, not clean after replay $total_c"
[ "$total_l" -eq 0 ] && [ "$total_c" -eq 0 ]
