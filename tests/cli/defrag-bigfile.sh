#!/bin/sh
# e2defrag on disks where a recording is larger than all the free space:
# e2fragimg's near-full recordings disks, two or three recordings written
# side by side into the holes of deleted ones, on ext2 1 KiB, ext3 1 and
# 4 KiB, ext4 1 KiB with and without flex_bg (--no-flex-bg), each with room
# for every file at its best (tests/cli/defrag-bigfile.py shape checks
# the largest selected file is larger than the free space; the images
# were chosen where a packing of the recordings into the zones exists).
# For each, against oracles of its own:
#   best       one run leaves no file avoidably fragmented, exit 0
#              (tests/lib/best_oracle.py, from dumpe2fs and debugfs)
#   writes     the bytes the run wrote in place, per its write log
#              ($E2FRAG_IOLOG: data and metadata; the journal's blocks,
#              per debugfs, are the writer's overhead, reported beside;
#              in a build without --enable-iolog, e2defrag --json's
#              bytes_written), at most 1.5 times the bytes of the files
#              that needed moving (the avoidably fragmented or
#              interleaved ones, their blocks per debugfs) and twice
#              those of them rebuilt (doc/design.md)
#   fixpoint   a second run leaves the image byte for byte the same (cmp)
#   clean      e2fsck -fn clean; every file's sha256 as in the manifest
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
BF="python3 $top_srcdir/tests/cli/defrag-bigfile.py"
BEST="python3 $top_srcdir/tests/lib/best_oracle.py"

failed=0
bad() {
	echo "FAIL [$2] $1: $3"
	failed=$((failed + 1))
}

run() {
	name=$1
	shift
	want_rebuild=no
	if [ "$1" = --rebuild ]; then
		want_rebuild=yes
		shift
	fi
	img=$T/$name.img
	rm -f "$img" "$img.json"
	e2fragimg -q "$@" "$img" || { bad "$name" setup "e2fragimg $*"; return; }
	debugfs -w -R "ssv lastcheck now" "$img" >/dev/null 2>&1
	e2frag --json "$img" > "$T/before.json" 2>/dev/null
	set -- $($BF shape "$img" "$T/before.json")
	[ "$1" -gt "$2" ] ||
		bad "$name" setup "the largest selected file ($1 blocks) fits the free space ($2): the image does not test what it should"
	needed=$($BF needed "$img" "$T/before.json")
	rm -f "$T/log"
	E2FRAG_IOLOG=$T/log e2defrag --json "$img" > "$T/run1.json" 2> "$T/run1.err"
	rc=$?
	[ "$rc" -eq 0 ] || bad "$name" best "e2defrag exited $rc: $(grep -m3 -i 'best\|room\|not moved' "$T/run1.err" | tr '\n' ' ')"
	left=$($BEST count "$img")
	[ "$left" = 0 ] || bad "$name" best "$left left short of best: $($BEST left "$img" | head -3 | tr '\n' ' ')"
	if [ -s "$T/log" ]; then
		set -- $($BF written "$T/log" "$img")
		written=$1
		how="in place per the write log ($2 more into the journal)"
	else
		written=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["result"]
print(r["bytes_written"] if r else 0)' "$T/run1.json")
		how="per e2defrag --json (no write log in this build)"
	fi
	rebuilt=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))["plan"]
print(p["bytes_rebuilt"] if p else 0)' "$T/run1.json")
	[ "$rebuilt" -le "$needed" ] || rebuilt=$needed
	if [ "$want_rebuild" = yes ] && [ "$rebuilt" -eq 0 ]; then
		bad "$name" rebuild "the plan kept rebuilt no file: $(grep -m1 'short of best' "$T/run1.err")"
	fi
	limit=$(( (needed * 3 + rebuilt) / 2 ))
	[ "$written" -le "$limit" ] ||
		bad "$name" writes "$written bytes written $how, past 1.5x the $needed bytes that needed moving and 2x the $rebuilt of them rebuilt"
	cp "$img" "$T/second.img"
	e2defrag "$T/second.img" > "$T/run2.out" 2>&1
	cmp -s "$img" "$T/second.img" ||
		bad "$name" fixpoint "a second run changed the image: $(tail -3 "$T/run2.out" | tr '\n' ' ')"
	rm -f "$T/second.img" "$T/log"
	( check_clean "$img" ) 2>/dev/null || bad "$name" clean "e2fsck -fn not clean"
	( check_manifest "$img" ) > "$T/man.out" 2>&1 ||
		bad "$name" clean "contents differ from the manifest: $(head -3 "$T/man.out" | tr '\n' ' ')"
	echo "# $name: $left left short of best, $written bytes written $how for $needed that needed moving ($rebuilt of them rebuilt)"
	rm -f "$img" "$img.json"
}

NF="-w nearfull --fill"
run bf-ext2-1k -S 2 $NF 96 -t ext2 -b 1024 -s 32M --streams 2
run bf-ext3-1k -S 1 $NF 93 -t ext3 -b 1024 -s 32M --streams 2
run bf-ext3-4k -S 1 $NF 93 -t ext3 -b 4096 -s 64M --streams 2
run bf-ext4-1k -S 3 $NF 90 -t ext4 -b 1024 -s 32M --streams 2
run bf-ext4-1k-noflex-2 -S 1 $NF 93 -t ext4 -b 1024 -s 32M --streams 2 --no-flex-bg
run bf-ext4-1k-noflex-3 -S 1 $NF 96 -t ext4 -b 1024 -s 32M --streams 3 --no-flex-bg
run bf-ext2-1k-rebuild --rebuild -S 2 $NF 96 -t ext2 -b 1024 -s 128M --streams 2
[ "$failed" -eq 0 ] || fail "$failed checks failed"
exit 0
