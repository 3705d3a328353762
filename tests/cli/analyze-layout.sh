#!/bin/sh
# e2frag's per-file pieces, extents, blocks and paths equal what debugfs
# lists, its best what tests/lib/best_oracle.py works out from dumpe2fs
# and debugfs, and its count of fragmented files smaller than a block group
# equals e2fsck's "non-contiguous" count, on ext2/ext3/ext4 images with
# 1 KiB and 4 KiB blocks holding IND/DIND/TIND maps, holes, extent trees
# of depth >= 1, fragmented files and a file larger than a group.
. "$top_srcdir/tests/lib/common.sh"
. "$top_srcdir/tests/lib/build_varied.sh"

for type in ext2 ext3 ext4; do
	for bs in 1024 4096; do
		img=$T/$type-$bs.img
		build_varied "$img" "$type" "$bs"
		fsck_clean "$img"

		# The image must exercise what the test claims to cover.
		debugfs -R "stat /holes" "$img" 2>/dev/null > "$T/holes.stat"
		debugfs -R "stat /tind" "$img" 2>/dev/null > "$T/tind.stat"
		if [ "$type" = ext4 ]; then
			grep -q "(ETB0)" "$T/holes.stat" || fail "$type/$bs: /holes has no extent tree block"
		else
			grep -q "(TIND)" "$T/tind.stat" || fail "$type/$bs: /tind has no TIND block"
			debugfs -R "stat /dind" "$img" 2>/dev/null | grep -q "(DIND)" ||
				fail "$type/$bs: /dind has no DIND block"
		fi

		run_status e2frag --json "$img" > "$T/report.json" 2>"$T/err"
		[ "$status" -le 1 ] || fail "$type/$bs: e2frag exited $status: $(cat "$T/err")"
		$ORACLE compare "$img" "$T/report.json" > "$T/cmp" ||
			{ cat "$T/cmp"; fail "$type/$bs: e2frag and debugfs disagree"; }
		note "$type/$bs: $(tail -1 "$T/cmp")"
		python3 "$top_srcdir/tests/lib/best_oracle.py" check "$img" "$T/report.json" > "$T/best" ||
			{ cat "$T/best"; fail "$type/$bs: e2frag's best disagrees with the oracle"; }
		note "$type/$bs: best: $(tail -1 "$T/best")"

		# e2fsck's non-contiguous files and directories.
		e2fsck -fnv "$img" > "$T/fsck.v" 2>&1
		fsck_count=$(awk '/non-contiguous files? \(/ { f = $1 }
			/non-contiguous director(y|ies) \(/ { d = $1 }
			END { print f + d }' "$T/fsck.v")
		python3 - "$T/report.json" "$fsck_count" "$type/$bs" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
want, what = int(sys.argv[2]), sys.argv[3]
bpg = r["filesystem"]["blocks_per_group"]
# Recount from the per-file list, by e2fsck's rule (blocks < a group);
# e2fsck counts the journal inode among the files too.
small = sum(1 for f in r["files"] if f["pieces"] > 1 and f["blocks"] < bpg)
j = r["filesystem"]["journal"]
journal = 1 if j and j["pieces"] > 1 and j["blocks"] < bpg else 0
small += journal
print("# %s: e2fsck non-contiguous %d, e2frag %d (summary %d), all fragmented %d" %
      (what, want, small, r["summary"]["fragmented_small_files"], r["summary"]["fragmented_files"]))
if small != want or r["summary"]["fragmented_small_files"] + journal != want:
    sys.exit("FAIL: %s: e2frag counts %d fragmented files under a group, e2fsck %d" % (what, small, want))
# /big spans groups: fragmented, which e2fsck's figure leaves out.
big = [f for f in r["files"] if f["path"] == "/big"][0]
if big["pieces"] < 2 or big["blocks"] < bpg:
    sys.exit("FAIL: %s: /big should be larger than a group and in pieces" % what)
if r["summary"]["fragmented_files"] + journal <= want:
    sys.exit("FAIL: %s: expected more fragmented files than e2fsck reports" % what)
PY
	done
done

# 64 KiB blocks with inline data: a file and a directory that live in their
# inodes own no blocks and are not listed, but what is inside the inline
# directory is, with its path.
img=$T/inline.img
mkfs_img "$img" ext4 65536 512M -O inline_data
make_data "$T/one" 1 65536
make_data "$T/three" 3 65536
printf 'tiny' > "$T/tiny"
{
	echo "write $T/tiny tiny"
	echo "mkdir small.dir"
	echo "write $T/three small.dir/three"
	for i in 1 2 3 4 5 6; do echo "write $T/one one$i"; done
	echo "rm one2"; echo "rm one4"
	echo "write $T/three frag"
} > "$T/cmds"
dfs "$img" "$T/cmds"
fsck_clean "$img"
debugfs -R "stat /tiny" "$img" 2>/dev/null | grep -q "Size of inline data" ||
	fail "precondition: /tiny is not inline"
debugfs -R "stat /small.dir" "$img" 2>/dev/null | grep -q "Size of inline data" ||
	fail "precondition: /small.dir is not inline"
run_status e2frag --json "$img" > "$T/report.json"
[ "$status" -le 1 ] || fail "64k/inline: e2frag exited $status"
$ORACLE compare "$img" "$T/report.json" > "$T/cmp" ||
	{ cat "$T/cmp"; fail "64k/inline: e2frag and debugfs disagree"; }
grep -q '"path": *"/small.dir/three"' "$T/report.json" || fail "64k/inline: no /small.dir/three"
grep -q '"/tiny"' "$T/report.json" && fail "64k/inline: lists the inline /tiny"
note "ext4/65536 inline_data: $(tail -1 "$T/cmp")"
