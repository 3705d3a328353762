#!/bin/sh
# The manifest is the truth about the image: every regular file debugfs
# finds is listed with its size and a SHA-256 that matches the contents
# debugfs reads back (rdump), inode numbers match debugfs' names, and the
# sets are coherent.  Deleted recordings (aged) are gone from both.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"

run() {
	name=$1
	shift
	img=$tmp/m.img
	rm -rf "$tmp/dump" "$img" "$img.json"
	mkdir "$tmp/dump"
	if ! e2fragimg -q "$@" "$img"; then
		fail "$name: e2fragimg failed"
		return
	fi
	if ! debugfs -R "rdump / $tmp/dump" "$img" >/dev/null 2>&1; then
		fail "$name: debugfs rdump failed"
		return
	fi
	check manifest "$img" "$tmp/dump" || fail "$name: manifest does not match the image"
}

run streams-ext4 --workload streams --type ext4 --total 3M --chunk 6000
run streams-ext3 --workload streams --type ext3 --total 3M --streams 3
run parallel-ext2 --workload parallel-writers --type ext2 --total 4M
run tree-ext4 --workload tree --type ext4 --files 400
run tree-ext3-1k --workload tree --type ext3 --block-size 1024 --files 300
run aged-ext4 --workload aged --type ext4 --size 16M --rounds 3
run aged-ext2 --workload aged --type ext2 --size 16M --chunk 3000
run mixed-ext4 --workload mixed --size 24M

# The tree looks like a source tree: many directories, sizes spread wide
# around a median of a few kB (lognormal), a few empty files.
run tree-shape --workload tree --files 2000
python3 - "$tmp/m.img.json" "$tmp/dump" <<'PY' || fail "tree-shape: not a source tree"
import json, os, sys
files = json.load(open(sys.argv[1]))["files"]
sizes = sorted(f["size"] for f in files)
dirs = sum(len(d) for _, d, _ in os.walk(sys.argv[2])) - 1   # not lost+found
median = sizes[len(sizes) // 2]
assert len(files) == 2000, len(files)
assert dirs >= 2000 // 32, dirs
assert 2000 <= median <= 12000, median
assert sizes[-1] >= 20 * median, (sizes[-1], median)
assert sizes[0] == 0
PY
finish
