#!/bin/sh
# e2defrag on e2fragimg's workloads (the seeds' layouts: concurrent
# recorders, parallel writers, an aged PVR disk 90% full, a mix) on ext2,
# ext3 and ext4 with 1 and 4 KiB blocks: afterwards e2fsck -fn is clean,
# every file's contents match e2fragimg's manifest (read back with
# debugfs), stat fields are unchanged, no file is avoidably fragmented
# (tests/lib/best_oracle.py: best from dumpe2fs and debugfs), e2frag
# finds no interleave set, free space (per e2freefrag) is in
# no more runs than before, and a second run plans nothing.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }

run() {
	name=$1
	shift
	img=$T/$name.img
	rm -f "$img" "$img.json"
	e2fragimg -q "$@" "$img" || fail "e2fragimg $*"
	check_clean "$img"
	[ "$(avoidable "$img")" -gt 0 ] ||
		fail "$name: the workload left nothing to do"
	snapshot "$img" "$T/before.json"
	set -- $(freefrag "$img")
	ext0=$1
	e2defrag --json "$img" > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/out" "$T/err"; fail "$name: e2defrag exited $rc"; }
	check_clean "$img"
	check_free_space "$img" "$T/out" "$ext0"
	check_manifest "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
	[ "$(avoidable "$img")" -eq 0 ] ||
		fail "$name: avoidably fragmented files left: $(avoidable_list)"
	[ "$(e2frag_field "$img" interleave_sets)" -eq 0 ] || fail "$name: interleave sets left"
	cp "$img" "$T/again.img"
	e2defrag --json "$T/again.img" > "$T/again.json" || fail "$name: second run exited $?"
	[ "$(json_get "$T/again.json" 'j["plan"]["moves"]')" -eq 0 ] || fail "$name: second run planned moves"
	cmp -s "$img" "$T/again.img" || fail "$name: second run changed the image"
	echo "$name: ok"
}

for t in ext2 ext3 ext4; do
	for b in 1024 4096; do
		run "streams-$t-$b" -w streams --streams 4 --total 16M -s 64M -t $t -b $b
	done
done
run aged-ext2-1k -w aged -s 64M -t ext2 -b 1024
run aged-ext3-4k -w aged -s 128M -t ext3 -b 4096
run aged-ext4-4k -w aged -s 128M -t ext4 -b 4096
run aged-ext4-1k -w aged -s 64M -t ext4 -b 1024
run writers-ext3 -w parallel-writers --total 32M -t ext3
run mixed-ext4-1k -w mixed -s 64M -t ext4 -b 1024
run mixed-ext2-4k -w mixed -s 64M -t ext2 -b 4096
exit 0
