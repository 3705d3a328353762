#!/bin/sh
# The same options and seed give the same bytes, image and manifest: run
# twice a second apart (a time() would show) with different garbage in
# fresh heap memory (an uninitialised byte written would show).  Another
# seed gives another image: other UUID, other contents.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"

build() {
	out=$1
	perturb=$2
	shift 2
	MALLOC_PERTURB_=$perturb \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_fill_byte=$perturb:max_malloc_fill_size=1048576" \
		e2fragimg -q "$@" "$out"
}

mkdir "$tmp/1" "$tmp/2"
same() {
	name=$1
	shift
	build "$tmp/1/x.img" 17 "$@" || { fail "$name: first run failed"; return; }
	sleep 1
	build "$tmp/2/x.img" 170 "$@" || { fail "$name: second run failed"; return; }
	cmp -s "$tmp/1/x.img" "$tmp/2/x.img" || fail "$name: images differ"
	cmp -s "$tmp/1/x.img.json" "$tmp/2/x.img.json" || fail "$name: manifests differ"
}

same mixed-ext4 --workload mixed --size 24M --seed 7
same aged-ext3 --workload aged --type ext3 --size 16M --seed 7
same tree-ext2 --workload tree --type ext2 --files 300 --seed 7
same streams-rsv --workload streams --total 2M --reservation 16 --seed 7

build "$tmp/c.img" 17 --workload mixed --size 24M --seed 8 || fail "seed 8 failed"
build "$tmp/a.img" 17 --workload mixed --size 24M --seed 7 || fail "seed 7 failed"
cmp -s "$tmp/a.img" "$tmp/c.img" && fail "seeds 7 and 8 give the same image"
uuid() { dumpe2fs -h "$1" 2>/dev/null | sed -n 's/^Filesystem UUID: *//p'; }
[ "$(uuid "$tmp/a.img")" != "$(uuid "$tmp/c.img")" ] || fail "seeds 7 and 8 give the same UUID"
python3 - "$tmp/a.img.json" "$tmp/c.img.json" <<'PY' || fail "seeds 7 and 8 give files the same contents"
import json, sys
a = {f["path"]: f["sha256"] for f in json.load(open(sys.argv[1]))["files"]}
c = {f["path"]: f["sha256"] for f in json.load(open(sys.argv[2]))["files"]}
assert not any(a[p] == c[p] for p in a if p in c and "rec00" in p)
PY
# Every timestamp is the fixed clock's (2004), none is today's.
debugfs -R 'stat /recordings/rec00.ts' "$tmp/a.img" 2>/dev/null | grep -q 'time:.* 2004$' ||
	fail "timestamps are not from the fixed clock"
dumpe2fs -h "$tmp/a.img" 2>/dev/null | grep -E '^(Filesystem created|Last write time):' |
	grep -qv 2004 && fail "superblock times are not from the fixed clock"
finish
