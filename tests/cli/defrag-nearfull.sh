#!/bin/sh
# e2defrag on nearly full disks as today's kernel fills them (issue 10):
# e2fragimg's nearfull recordings disks (85/90/95% full, recordings of
# 1/2 to 3 1/2 groups) on ext2/ext3/ext4 with 1 and 4 KiB blocks, and the
# turn-by-turn disk.  Each check is named, and every failing one is
# reported (the test goes on to the next), against oracles of its own:
#   promise    one run leaves no file avoidably fragmented (pieces and best
#              per tests/lib/best_oracle.py, from dumpe2fs and debugfs, and
#              e2frag --json agrees with both) where the promise's
#              condition holds (defrag-nearfull.py room: from dumpe2fs and
#              debugfs, zone by zone, the free blocks and the selected
#              files' own blocks take every selected file at its best
#              piece count); and it exits 0 either way (all it could do)
#   most       at least as many selected files at their best as the
#              promise's packing (defrag-nearfull.py most) puts there when
#              it skips those that fit nowhere: a disk too full for all is
#              no reason to leave the others (debugfs block lists)
#   worse      no selected file in more pieces than before (debugfs)
#   fixpoint   a second run leaves the image byte for byte the same (cmp)
#   writes     bytes written (e2defrag --json) at most the image's bound
#              times the bytes of the selected files (their blocks, per
#              e2frag before); see the bounds below
#   freeruns   no more free runs than before, or than block groups
#              (e2freefrag), and the largest no smaller, unless a selected
#              file was larger than the second-longest free run before
#   clean      e2fsck -fn clean; every file's sha256 as in the manifest
#              (debugfs dump); stat fields unchanged (debugfs stat)
#   pack       --pack, and --pack with PATHs (the two largest selected
#              files), on fresh copies of the images marked so: no more
#              free runs than before, clean, same contents
# Near-full disks chosen so that every filesystem type, block size and
# fill of the issue comes up at least once: ext2 1K 90%, ext3 1K 95%,
# ext3 4K 85%, ext4 4K 90%, ext2 4K 95% (room only packed across zones),
# ext4 1K 95%, ext3 4K 95%; four of them with room for every selected
# file at its best, three without (a recording fits in no zone, so files
# may be left short there, and the 'most' check holds the run to the most files
# at best the room allows); and the turn-by-turn disk on ext4 4K and
# ext2 1K.  Each image costs some 5-9 s of CPU under sanitizers, and
# 10-50 s of wall time on a busy machine (most of it e2defrag's syncs).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v e2freefrag >/dev/null 2>&1 || { echo "skip: e2freefrag not found"; exit 77; }
NF="python3 $top_srcdir/tests/cli/defrag-nearfull.py"
# The interpreter itself, not a version manager's wrapper script, which
# costs seconds a call on a busy machine (the oracles call it often).
PY=$(python3 -c 'import sys; print(sys.executable)')
python3() { "$PY" "$@"; }

# The write budget: issue 10's target, 1.5x the selected files' bytes,
# held on every image (the second argument of image below; WRITE_BOUND
# overrides it).  Packing writes most blocks once (they go straight to
# their final places; only blocks on a cycle of moves are staged out and
# back): 1.04x on nf-ext2-1k-90, 1.17x on nf-ext3-1k-95; on turns-ext2-1k
# the packing writes 1.32x and the free-space joins take the rest of the
# budget, up to 1.5x.

failed=0
# bad NAME CHECK WHAT: one failed check, reported, and the test goes on.
bad() {
	echo "FAIL [$2] $1: $3"
	failed=$((failed + 1))
}

# clean_checks NAME IMG [SNAPSHOT]: e2fsck, manifest checksums, and
# with SNAPSHOT stat fields.
clean_checks() {
	( check_clean "$2" ) 2>/dev/null || bad "$1" clean "e2fsck -fn not clean"
	( check_manifest "$2" ) > "$T/man.out" 2>&1 ||
		bad "$1" clean "contents differ from the manifest: $(head -3 "$T/man.out" | tr '\n' ' ')"
	[ -z "${3:-}" ] ||
	( snapshot "$2" "$T/snap2.json" && same_snapshot "$3" "$T/snap2.json" ) > "$T/snap.out" 2>&1 ||
		bad "$1" clean "stat fields changed: $(head -3 "$T/snap.out" | tr '\n' ' ')"
}

run() {
	name=$1
	bound=${WRITE_BOUND:-$2}
	shift 2
	orig=$T/$name.orig
	img=$T/$name.img
	rm -f "$orig" "$orig.json"
	e2fragimg -q "$@" "$orig" || { bad "$name" setup "e2fragimg $*"; return; }
	debugfs -w -R "ssv lastcheck now" "$orig" >/dev/null 2>&1
	cp "$orig" "$img"
	cp "$orig.json" "$img.json"
	e2frag --json "$img" > "$T/before.json" 2>/dev/null
	snapshot "$img" "$T/snap.json"
	$NF selected "$img" "$T/before.json" > "$T/selected"
	[ -s "$T/selected" ] || { bad "$name" setup "nothing selected"; return; }
	room=$($NF room "$img" "$T/before.json")
	strict=$($NF strict-room "$img" "$T/before.json")
	second=$($NF second "$img")
	most=$($NF most "$img" "$T/before.json")
	$NF pieces "$img" > "$T/pieces0"
	set -- $(freefrag "$img")
	ext0=$1 max0=$2
	groups=$(groups "$img")
	bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')
	selbytes=$(awk -v bs="$bs" '{ s += $2 } END { print s * bs }' "$T/selected")
	bigsel=$(sort -k2,2nr "$T/selected" | awk 'NR == 1 { print $2 }')

	e2defrag --json "$img" > "$T/run1.json" 2> "$T/run1.err"
	rc=$?
	e2frag --json "$img" > "$T/after.json" 2>/dev/null
	$NF layout "$img" "$T/after.json" > "$T/layout"
	grep '^mismatch ' "$T/layout" > "$T/mismatch"
	[ -s "$T/mismatch" ] && bad "$name" promise "the oracle and e2frag count pieces or best differently: $(head -3 "$T/mismatch" | tr '\n' ' ')"
	left=$(grep -vc '^mismatch ' "$T/layout")
	# Exit 0 either way (the run did all it could: exit 1 is for a run
	# stopped short); where the condition holds, nothing may be left.
	case $rc.$room in
	0.room)
		[ "$left" -eq 0 ] ||
			bad "$name" promise "every selected file has room at its best, but $left avoidably fragmented left: $(grep -v '^mismatch ' "$T/layout" | head -4 | tr '\n' ' ')" ;;
	0.*)
		echo "# $name: allowed ($room); $left avoidably fragmented left" ;;
	*)
		bad "$name" promise "e2defrag exited $rc: $(head -3 "$T/run1.err" | tr '\n' ' ')" ;;
	esac
	# selected files still short of best: "path pieces-after pieces-before"
	grep -v '^mismatch ' "$T/layout" | awk 'NR == FNR { sel[$1] = 1; next }
		FILENAME == ARGV[2] { before[$1] = $2; next }
		($1 in sel) { print $1, $2, before[$1] }' "$T/selected" "$T/pieces0" - > "$T/short"
	atbest=$(($(wc -l < "$T/selected") - $(wc -l < "$T/short")))
	[ "$atbest" -ge "$most" ] ||
		bad "$name" most "$atbest selected files at best, where $most could be: $(head -3 "$T/short" | tr '\n' ' ')"
	awk '$2 > $3 { print }' "$T/short" > "$T/worse"
	[ -s "$T/worse" ] && bad "$name" worse "in more pieces than before (path after before): $(head -3 "$T/worse" | tr '\n' ' ')"
	clean_checks "$name" "$img" "$T/snap.json"

	# no result: the run moved nothing
	written=$(json_get "$T/run1.json" 'j["result"]["bytes_written"] if j["result"] else 0' 2>/dev/null || echo -1)
	python3 -c 'import sys; w, s, b = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]); sys.exit(0 if 0 <= w <= b * s else 1)' "$written" "$selbytes" "$bound" ||
		bad "$name" writes "wrote $written bytes for $selbytes bytes of selected files ($(python3 -c "print('%.2f' % ($written / $selbytes))")x, bound ${bound}x)"

	set -- $(freefrag "$img")
	[ "$1" -le "$ext0" ] || [ "$1" -le "$groups" ] ||
		bad "$name" freeruns "free runs $ext0 -> $1 ($groups groups)"
	if [ "$2" -lt "$max0" ] && [ "$((bigsel * bs / 1024))" -le "$((second * bs / 1024))" ]; then
		bad "$name" freeruns "largest free run $max0 KiB -> $2 KiB, though no selected file (largest $bigsel blocks) needed more than the second-longest run ($second blocks)"
	fi

	cp "$img" "$T/again.img"
	e2defrag --json "$T/again.img" > "$T/run2.json" 2>&1
	cmp -s "$img" "$T/again.img" ||
		bad "$name" fixpoint "a second run changed the image (it wrote $(json_get "$T/run2.json" 'j["result"]["bytes_written"]' 2>/dev/null) bytes; $(json_get "$T/run2.json" 'j["plan"]["files_selected"]' 2>/dev/null) files selected)"

	case " $PACK_IMAGES " in
	*" $name "*) packs=2 ;;
	*) packs=0 ;;
	esac
	for paths in "" "$(sort -k2,2nr "$T/selected" | awk 'NR <= 2 { print $1 }' | tr '\n' ' ')"; do
		[ "$packs" -gt 0 ] || break
		packs=$((packs - 1))
		cp "$orig" "$T/pack.img"
		cp "$orig.json" "$T/pack.img.json"
		# shellcheck disable=SC2086
		e2defrag --pack --json "$T/pack.img" $paths > "$T/pack.json" 2> "$T/pack.err"
		prc=$?
		[ "$prc" -eq 0 ] || bad "$name" pack "--pack $paths exited $prc: $(head -2 "$T/pack.err" | tr '\n' ' ')"
		set -- $(freefrag "$T/pack.img")
		[ "$1" -le "$ext0" ] || bad "$name" pack "--pack $paths: free runs $ext0 -> $1"
		clean_checks "$name --pack $paths" "$T/pack.img"
	done
	echo "# $name: exit $rc ($room; unselected files in place: $strict), $atbest at best (at least $most), $left left, wrote $written for $selbytes selected bytes, free runs $ext0 -> $(freefrag "$img")"
	rm -f "$orig" "$img" "$T/again.img" "$T/pack.img" "$orig.json" "$img.json"
}

# image NAME ARGS...: run NAME unless ONLY names another one (for debugging).
image() {
	[ -z "${ONLY:-}" ] || [ "$ONLY" = "$1" ] || return 0
	run "$@"
}

# --pack (with and without PATHs) on these only, to keep the test short.
PACK_IMAGES="nf-ext2-1k-90 turns-ext4-4k"
#     name          write bound  e2fragimg arguments
image nf-ext2-1k-90 1.5 -w nearfull -t ext2 -b 1024 -s 32M --fill 90
image nf-ext3-1k-95 1.5 -w nearfull -t ext3 -b 1024 -s 16M --fill 95
image nf-ext3-4k-85 1.5 -w nearfull -t ext3 -b 4096 -s 32M --fill 85
image nf-ext4-4k-90 1.5 -w nearfull -t ext4 -b 4096 -s 16M --fill 90
# Packed across zones, the small recordings must fill what the fill point
# skips (compact_holes.c): 1 of 8 at best before, room for all.
image nf-ext2-4k-95 1.5 -w nearfull -t ext2 -b 4096 -s 32M --fill 95 --seed 5
# Packed across zones (a recording of best 2): the two that fit no zone
# now get the skipped zone ends in pieces (compact_split.c), 0 -> 2 at best.
image nf-ext4-1k-95 1.5 -w nearfull -t ext4 -b 1024 -s 16M --fill 95
# Too full for every recording's best: no packing stood and nothing moved
# (0 of 4 at best); the one no zone has room for is now packed in pieces
# (compact_split.c) around the others' best (3 of 4, the 4th 8 -> 2 pieces).
image nf-ext3-4k-95 1.5 -w nearfull -t ext3 -b 4096 -s 16M --fill 95 --seed 2
# The same five recordings at best with and without packing in pieces;
# without, 1.62x what needed moving (a kernel-written 64 MiB ext4 1 KiB 95%
# disk, seed 3: 1.84x), with, 1.46x: the cheaper is kept (plan.c's
# split_better).
image nf-ext4-1k-95-s6 1.5 -w nearfull -t ext4 -b 1024 -s 16M --fill 95 --seed 6

# A 384-block recording parts the one zone that holds the recording of
# best 2 after the zone before it: nothing moved (0 of 4 at best) where
# 'most' finds 3; now it moves out of the way (compact_bridge.c), 3 of 4.
image nf-ext4-1k-85 1.5 -w nearfull -t ext4 -b 1024 -s 16M --fill 85
# Block-mapped, 95% full: every plan with direct moves got stuck (the
# staging list walked to its end by a direct move that did not go
# through), and the one without wrote 1.57x; now 5 of 5 at 1.18x.
image nf-ext3-1k-95-3 1.5 -w nearfull -t ext3 -b 1024 -s 32M --fill 95 --seed 3
# The same three of four at best with and without packing in pieces:
# without, 1.78x (another recording 9 -> 2 pieces), with, 1.01x (the one
# left short 5 -> 3); the write target is kept (plan.c's split_better).
image nf-ext4-1k-85-s3 1.5 -w nearfull -t ext4 -b 1024 -s 16M --fill 85 --seed 3
# A zone packed for the two recordings no zone holds took 1.42x to 1.99x
# and brought neither to best; now taken back (plan.c's compact_zone).
image nf-ext4-1k-85-s5 1.5 -w nearfull -t ext4 -b 1024 -s 32M --fill 85 --seed 5
image turns-ext4-4k 1.5 -w turns -t ext4 -b 4096 -s 16M
image turns-ext2-1k 1.5 -w turns -t ext2 -b 1024 -s 8M
if [ "$failed" -ne 0 ]; then
	echo "$failed check(s) failed"
	exit 1
fi
exit 0
