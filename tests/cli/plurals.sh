#!/bin/sh
# Plurals in what the programs print: "1 extent", "1 move done", "2 block
# groups".  Every line e2fragimg, e2frag (text, -i, -g, -F) and e2defrag
# (-n -v, a run) print on three images, where the counts are 1 and where
# they are more, is searched for a count and a noun that disagree;
# and the counts that must be 1 or more are checked where they appear,
# against e2defrag's JSON and dumpe2fs.
. "$top_srcdir/tests/lib/common.sh"

out=$T/all.txt
: > "$out"
printf 'x%.0s' $(seq 4096) > "$T/block"
cat "$T/block" "$T/block" > "$T/two"

# One: a filesystem of one block group, free space in one extent, two
# recordings written together (one interleave set).
one=$T/one.img
e2fragimg --workload streams --type ext4 --streams 2 --total 2M --size 8M \
	--seed 5 "$one" >> "$out" 2>&1 || fail "e2fragimg one"
# Single: one file in two pieces (the holes of deleted files) that one
# move puts right.
single=$T/single.img
mkfs_img "$single" ext4 4096 8M
{
	for i in 1 2 3 4 5; do echo "write $T/block /f$i"; done
	echo "rm /f2"
	echo "rm /f4"
	echo "write $T/two /x"
} > "$T/cmds"
dfs "$single" "$T/cmds"
# Many: ext2, 1k blocks, three block groups, three recordings.
many=$T/many.img
e2fragimg --workload streams --type ext2 --block-size 1024 --streams 3 \
	--total 6M --size 20M --seed 5 "$many" >> "$out" 2>&1 || fail "e2fragimg many"

for img in "$one" "$single" "$many"; do
	name=$(basename "$img" .img)
	for args in "" "-i -g -F"; do
		# shellcheck disable=SC2086
		e2frag $args "$img" > "$T/$name.frag" 2>&1
		cat "$T/$name.frag" >> "$out"
	done
	e2defrag -n -v "$img" >> "$out" 2>&1
	cp "$img" "$img.copy"
	e2defrag -J "$img.copy" > "$T/$name.json" 2>/dev/null
	e2defrag "$img" > "$T/$name.run" 2>&1
	cat "$T/$name.run" >> "$out"
	e2frag "$img" >> "$out" 2>&1
done

# A count and a noun that disagree, anywhere ("683/1 pieces" is pieces
# against best; "1 block group" is one group).
nouns='files?|extents?|pieces?|moves?|sets?|groups?|inodes?|alternations?|partners?|links?|problems?|bytes?'
grep -nE "(^|[^/.0-9])1 ($nouns|block)s\\b|(^|[^/.0-9-])(0|[2-9]|[1-9][0-9]+) (file|extent|piece|move|set|group|inode|alternation|partner|link|problem|byte|directory)\\b" \
	"$out" | grep -vE ' block groups?' > "$T/bad" || true
grep -nE "(^|[^/.0-9])1 block groups\\b|(^|[^/.0-9])(0|[2-9]|[1-9][0-9]+) block group\\b" "$out" >> "$T/bad" || true
[ ! -s "$T/bad" ] || fail "count and noun disagree: $(head -5 "$T/bad")"

# The singular and plural cases are there, and true.
groups() { dumpe2fs -h "$1" 2>/dev/null | awk -F: '/^Block count/ { b = $2 } /^Blocks per group/ { p = $2 } END { print int((b + p - 1) / p) }'; }
[ "$(groups "$one")" -eq 1 ] || fail "the 'one' image has $(groups "$one") groups"
grep -q ", 1 block group, " "$out" || fail "no '1 block group'"
grep -q ", $(groups "$many") block groups, " "$out" || fail "no '$(groups "$many") block groups'"
grep -q "^Free space .* in 1 extent, " "$out" || fail "no 'in 1 extent'"
grep -qE "^Free space .* in [2-9][0-9]* extents, " "$out" || fail "no 'in N extents'"
grep -q "^Interleaving  1 set of files written into each other (2 files)" "$out" || fail "no '1 set (2 files)'"
grep -q "^Interleaving  1 set of files written into each other (3 files)" "$out" || fail "no '(3 files)'"
grep -q "e2fragimg: .*: ext4, 8.0 MiB, 2 files, 1 set written concurrently" "$out" || fail "e2fragimg: no '2 files, 1 set'"
for name in one single many; do
	done_moves=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["result"]["moves_done"])' "$T/$name.json")
	word=moves
	[ "$done_moves" -eq 1 ] && word=move
	grep -q ": $done_moves $word done, " "$T/$name.run" ||
		fail "$name: e2defrag's JSON says $done_moves moves done; it printed: $(head -1 "$T/$name.run")"
	note "$name: $done_moves $word done"
done
grep -q ": 1 move done, " "$out" || fail "no '1 move done'"
grep -qE ": [2-9][0-9]* moves done, " "$out" || fail "no 'N moves done'"
note "$(wc -l < "$out") lines, counts and nouns agree"
