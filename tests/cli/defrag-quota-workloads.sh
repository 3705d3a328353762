#!/bin/sh
# e2defrag on e2fragimg's recordings with the quota feature turned on
# (tune2fs -O quota), each recording owned by its own user, group and
# project:
#   - ext4, 4 recorders appending 1 KiB in turn: each file in hundreds of
#     extents (a tree with index blocks) ends in one (no tree block), so
#     its block count (i_blocks) falls;
#   - ext3, the same: block-mapped files, whose indirect blocks move with
#     them (the count stays).
# After the run e2fsck -fn is clean (it recomputes every id's usage and
# compares it with the quota files), each id's usage (debugfs lq) moved
# by exactly its file's change in block count (debugfs stat), every file
# reads as before and is in fewer pieces (debugfs), and on ext4 the
# counts did change.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || fail "e2fragimg not built"
command -v tune2fs >/dev/null 2>&1 || { echo "skip: tune2fs not found"; exit 77; }
debugfs -R "lq user" /dev/null 2>&1 | grep -q "Unknown request" &&
	{ echo "skip: debugfs has no list_quota"; exit 77; }

FILES="rec00.ts rec01.ts rec02.ts rec03.ts"

# usage IMG TYPES: "TYPE ID BYTES" for every id, per debugfs lq.
usage() {
	for t in $2; do
		debugfs -R "lq $t" "$1" 2>/dev/null |
			awk -v t=$t '$1 ~ /^[0-9]+$/ { print t, $1, $2 }'
	done
}

# blocks IMG: "NAME SECTORS" per recording, per debugfs stat.
blocks() {
	for f in $FILES; do
		echo "$f $(debugfs -R "stat /$f" "$1" 2>/dev/null | sed -n 's/.*Blockcount: *//p')"
	done
}

for type in ext4 ext3; do
	img=$T/$type.img
	e2fragimg -q -w streams -t $type -s 16M -b 1024 --streams 4 --total 6M \
		--chunk 1K "$img" || fail "$type: e2fragimg"
	if [ $type = ext4 ]; then
		types="user group project" q="-O quota,project -Q usrquota,grpquota,prjquota"
	else
		types="user group" q="-O quota -Q usrquota,grpquota"
	fi
	tune2fs $q "$img" > "$T/tune.out" 2>&1 || { cat "$T/tune.out"; fail "$type: tune2fs $q"; }
	: > "$T/c"
	i=0
	for f in $FILES; do
		i=$((i + 1))
		echo "sif /$f uid $((1000 + i))" >> "$T/c"
		echo "sif /$f gid $((2000 + i))" >> "$T/c"
		[ $type = ext3 ] || echo "sif /$f projid $i" >> "$T/c"
	done
	dbg "$img" "$T/c"
	# debugfs leaves the quota files as they were: e2fsck brings them up.
	e2fsck -fy "$img" > /dev/null 2>&1
	check_clean "$img"
	snapshot "$img" "$T/before.json"
	usage "$img" "$types" > "$T/usage.before"
	blocks "$img" > "$T/blocks.before"
	$ORACLE pieces "$img" > "$T/pieces.before"

	expect_rc 0 e2defrag "$img"
	check_clean "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
	usage "$img" "$types" > "$T/usage.after"
	blocks "$img" > "$T/blocks.after"
	$ORACLE pieces "$img" > "$T/pieces.after"
	python3 - "$T" $FILES <<'PY' || fail "$type: a recording was not defragmented"
import json, sys
t = sys.argv[1]
b, a = (json.load(open("%s/pieces.%s" % (t, w))) for w in ("before", "after"))
for f in sys.argv[2:]:
    print("# pieces of /%s: %d -> %d" % (f, b["/" + f], a["/" + f]))
    if a["/" + f] >= b["/" + f]:
        sys.exit(1)
PY
	python3 - "$T" "$type" "$types" <<'PY' || fail "$type: quota usage does not follow the block counts"
import sys
t, fstype, types = sys.argv[1], sys.argv[2], sys.argv[3].split()
def load(name):
    return [l.split() for l in open("%s/%s" % (t, name))]
ub = {(k, int(i)): int(v) for k, i, v in load("usage.before")}
ua = {(k, int(i)): int(v) for k, i, v in load("usage.after")}
bb = {f: int(v) for f, v in load("blocks.before")}
ba = {f: int(v) for f, v in load("blocks.after")}
bad = changed = 0
for n, f in enumerate(sorted(bb), 1):
    delta = (ba[f] - bb[f]) * 512
    changed += delta != 0
    ids = {"user": 1000 + n, "group": 2000 + n, "project": n}
    for k in types:
        du = ua[(k, ids[k])] - ub[(k, ids[k])]
        print("# %s %s: %s %d usage %+d, block count %+d bytes" % (fstype, f, k, ids[k], du, delta))
        bad |= du != delta
if fstype == "ext4" and changed != len(bb):
    print("# ext4: only %d of %d block counts changed" % (changed, len(bb)))
    bad = 1
sys.exit(bad)
PY
	echo "ok $type"
done
exit 0
