#!/bin/sh
# Free-space consolidation.  e2defrag's default run joins free runs only
# within its budget (what it writes for it is bounded by what the files
# that needed moving were); --pack joins all it can, also on a filesystem
# with nothing to defragment.  Checked against e2freefrag (free extents,
# largest), e2fsck -fn, the manifest's checksums and debugfs's stat
# fields; --pack never leaves a file in more pieces, and a second --pack
# run finds nothing to do.
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v e2fragimg >/dev/null 2>&1 || { echo "skip: e2fragimg not built"; exit 77; }
command -v e2freefrag >/dev/null 2>&1 || { echo "skip: e2freefrag not found"; exit 77; }

# check_budget JSON NAME: the plan of e2defrag --json in JSON kept to its
# budget: joins write at most half the bytes that needed moving, or else
# (the largest run was repaired, and joins after it) the whole plan at
# most 1.5 times them.
check_budget() {
	python3 - "$1" <<'PY' || fail "$2: consolidation over its budget"
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
need = p["bytes_needing_move"]
ok = (p["bytes_to_consolidate"] <= 0.5 * need or
      p["bytes_to_write"] <= 1.5 * need)
if not ok:
    print(p, file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

run() {
	name=$1
	shift
	img=$T/$name.img
	rm -f "$img" "$img.json"
	e2fragimg -q "$@" "$img" || fail "e2fragimg $*"
	snapshot "$img" "$T/before.json"

	# The default run: consolidation within its budget.
	set -- $(freefrag "$img")
	ext0=$1 max0=$2
	e2defrag --json "$img" > "$T/out" 2> "$T/err" ||
		{ cat "$T/err"; fail "$name: e2defrag exited $?"; }
	check_free_space "$img" "$T/out" "$ext0"
	check_budget "$T/out" "$name"
	set -- $(freefrag "$img")
	ext1=$1
	e2frag --json "$img" > "$T/frag1.json" || fail "$name: e2frag exited $?"

	# --pack: everything that can be joined.
	e2defrag --pack --json "$img" > "$T/out" 2> "$T/err" ||
		{ cat "$T/err"; fail "$name: e2defrag --pack exited $?"; }
	check_clean "$img"
	check_manifest "$img"
	snapshot "$img" "$T/after.json"
	same_snapshot "$T/before.json" "$T/after.json"
	# ... and the largest free run is no smaller than before any run.
	check_free_space "$img" "$T/out" "$ext1" "$max0"
	set -- $(freefrag "$img")
	[ "$1" -lt "$ext1" ] || fail "$name: --pack joined nothing ($ext1 -> $1 extents)"
	[ "$1" -le "$ext0" ] || fail "$name: more free extents than before ($ext0 -> $1)"
	[ "$(json_get "$T/out" 'j["plan"]["files_consolidated"]')" -gt 0 ] ||
		fail "$name: --pack moved no file to join free space"
	e2frag --json "$img" > "$T/frag2.json" || fail "$name: e2frag exited $?"
	python3 - "$T/frag1.json" "$T/frag2.json" <<'PY' || fail "$name: --pack left files in more pieces"
import json, sys
a, b = (dict((f["ino"], f["pieces"]) for f in json.load(open(x))["files"]) for x in sys.argv[1:])
worse = [i for i in a if i in b and b[i] > a[i]]
print("\n".join("inode %d: %d -> %d pieces" % (i, a[i], b[i]) for i in worse), file=sys.stderr)
sys.exit(1 if worse else 0)
PY
	cp "$img" "$T/again.img"
	e2defrag --pack --json "$T/again.img" > "$T/again.json" || fail "$name: second --pack exited $?"
	[ "$(json_get "$T/again.json" 'j["plan"]["moves"]')" -eq 0 ] ||
		fail "$name: a second --pack planned moves"
	cmp -s "$img" "$T/again.img" || fail "$name: a second --pack changed the image"
	echo "$name: $ext0 -> $ext1 -> $1 free extents"
}

# A run restricted to /tv whose largest free run is repaired, then joined
# further: the joins after the repair stay within the whole run's cap.
img=$T/tv.img
e2fragimg -q -w mixed -t ext3 -b 1024 -s 64M -S 11 "$img" || fail "e2fragimg"
e2defrag -n --json "$img" /tv > "$T/tv.json" || fail "/tv plan exited $?"
check_budget "$T/tv.json" "mixed-ext3-1k /tv"
[ "$(json_get "$T/tv.json" 'j["plan"]["bytes_to_consolidate"]')" -gt 0 ] ||
	fail "mixed-ext3-1k /tv: nothing consolidated, the case tests nothing"

run mixed-ext2-4k -w mixed -s 64M -t ext2 -b 4096
run mixed-ext4-4k -w mixed -s 128M -t ext4 -b 4096
run aged-ext3-4k -w aged -s 128M -t ext3 -b 4096
exit 0
