#!/bin/sh
# The near-full workloads (nearfull, turns) on every type and both block
# sizes: e2fsck -fn clean; as full as --fill says (dumpe2fs); recordings
# of 1/2 to 3 1/2 block groups; the --script replays to exactly the files
# and sizes of the manifest; the same image twice; the kernel's layouts:
# on turns the small files sit together (locality-group preallocation)
# and the big file in long pieces (its preallocation windows), per debugfs.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"
# The interpreter itself, not a version manager's wrapper (seconds a call
# on a busy machine).
PY=$(python3 -c 'import sys; print(sys.executable)')
python3() { "$PY" "$@"; }

# used_pct IMG: blocks in use, percent of all (dumpe2fs -h).
used_pct() {
	dumpe2fs -h "$1" 2>/dev/null | awk '/^Block count:/ { b = $3 }
		/^Free blocks:/ { f = $3 } END { printf "%d\n", (b - f) * 100 / b }'
}

# replay SCRIPT MANIFEST: the script's live files and sizes are the manifest's.
replay() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
live, opened, syncs = {}, set(), 0
for line in open(sys.argv[1]):
    if line.startswith('#'):
        continue
    w = line.split()
    if w[0] == 'create':
        assert w[1] not in live, line
        live[w[1]] = 0
        opened.add(w[1])
    elif w[0] == 'write':
        assert w[1] in opened, line
        live[w[1]] += int(w[2])
    elif w[0] == 'close':
        opened.discard(w[1])
    elif w[0] == 'delete':
        assert w[1] not in opened, line
        del live[w[1]]
    elif w[0] == 'sync':
        syncs += 1
    else:
        raise SystemExit('bad line ' + line)
man = {f['path']: f['size'] for f in json.load(open(sys.argv[2]))['files']}
if man != live:
    diff = sorted(set(man.items()) ^ set(live.items()))[:5]
    raise SystemExit('script and manifest differ: %s' % diff)
assert not opened, opened
assert syncs > 0
EOF
}

for t in ext2 ext3 ext4; do
	for b in 1024 4096; do
		img=$tmp/nf-$t-$b.img
		fill=$([ "$b" = 1024 ] && echo 95 || echo 85)
		if ! e2fragimg -q -w nearfull -t "$t" -b "$b" --size 64M --fill "$fill" \
		     --rounds 3 --script "$img.ops" "$img"; then
			fail "nearfull $t $b: e2fragimg failed"
			continue
		fi
		fsck_clean "$img" || fail "nearfull $t $b: e2fsck -fn not clean"
		used=$(used_pct "$img")
		[ "$used" -ge $((fill - 2)) ] && [ "$used" -le "$fill" ] ||
			fail "nearfull $t $b: $used% used, asked for $fill%"
		replay "$img.ops" "$img.json" || fail "nearfull $t $b: script does not replay to the manifest"
		bpg=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Blocks per group:/ { print $4 }')
		groups=$(dumpe2fs -h "$img" 2>/dev/null | awk '/^Block count:/ { c = $3 }
			/^Blocks per group:/ { g = $4 } END { print int((c + g - 1) / g) }')
		[ "$groups" -ge 8 ] || fail "nearfull $t $b: $groups groups, want at least 8"
		python3 - "$img.json" $((bpg * b)) <<'EOF' || fail "nearfull $t $b: recording sizes"
import json, sys
zone = int(sys.argv[2])
sizes = [f['size'] for f in json.load(open(sys.argv[1]))['files']]
assert len(sizes) >= 4, sizes
assert max(sizes) <= zone * 7 // 2, (max(sizes), zone)
# most ended as programmes of at least half a zone; one per recorder may
# have been stopped by the full disk
assert sum(s >= zone // 2 for s in sizes) >= len(sizes) - 4 * 4, sizes
assert max(sizes) > zone, (max(sizes), zone)
EOF
	done
done

# Same options, same image.
e2fragimg -q -w nearfull -t ext4 -b 1024 --size 32M "$tmp/a.img" &&
e2fragimg -q -w nearfull -t ext4 -b 1024 --size 32M "$tmp/b.img" &&
cmp -s "$tmp/a.img" "$tmp/b.img" || fail "nearfull: two builds differ"

for t in ext2 ext3 ext4; do
	img=$tmp/tu-$t.img
	if ! e2fragimg -q -w turns -t "$t" -b 1024 --script "$img.ops" "$img"; then
		fail "turns $t: e2fragimg failed"
		continue
	fi
	fsck_clean "$img" || fail "turns $t: e2fsck -fn not clean"
	replay "$img.ops" "$img.json" || fail "turns $t: script does not replay to the manifest"
	# Every other small file deleted: only even numbers left.
	odd=$(grep -c '"path": "/s[0-9]*[13579]"' "$img.json")
	even=$(grep -c '"path": "/s[0-9]*[02468]"' "$img.json")
	[ "$odd" -eq 0 ] && [ "$even" -ge 500 ] || fail "turns $t: $even even, $odd odd small files"
	# Before the deletes the disk was 85% full: what is used plus what was deleted.
	python3 - "$img" "$img.ops" <<'EOF' || fail "turns $t: fill"
import json, subprocess, sys
img, ops = sys.argv[1], sys.argv[2]
h = subprocess.run(['dumpe2fs', '-h', img], capture_output=True, text=True).stdout
f = dict(l.split(':', 1) for l in h.splitlines() if ':' in l)
blocks, free, bs = (int(f[k]) for k in ('Block count', 'Free blocks', 'Block size'))
deleted = sum(1 for l in open(ops) if l.startswith('delete '))
chunk = next(int(l.split()[2]) for l in open(ops) if l.startswith('write '))
peak = (blocks - free + deleted * chunk // bs) * 100 / blocks
assert 83 <= peak <= 86, peak
EOF
	# The kernel's layout: consecutive kept small files close together,
	# the big file in pieces of its preallocation windows, not chunk by chunk.
	for i in 000000 000002 000004 000100 000102 000104; do
		echo "bmap /s$i 0"
	done > "$tmp/cmds"
	debugfs -f "$tmp/cmds" "$img" 2>/dev/null | grep -E '^[0-9]+$' > "$tmp/pb"
	python3 - "$tmp/pb" <<'EOF' || fail "turns $t: small files not together"
import sys
p = [int(x) for x in open(sys.argv[1])]
assert len(p) == 6, p
assert all(0 < p[i + 1] - p[i] <= 16 for i in (0, 1, 3, 4)), p
EOF
	pieces=$(debugfs -R "stat /big.dat" "$img" 2>/dev/null | python3 -c '
import re, sys
runs = [tuple(map(int, m)) for m in re.findall(r"(\d+)-(\d+)", sys.stdin.read().split("BLOCKS:")[-1])]
print(len(runs))')
	size=$(sed -n '/"path": "\/big.dat"/,/size/s/.*"size": \([0-9]*\).*/\1/p' "$img.json")
	[ "$pieces" -ge 1 ] && [ "$pieces" -lt $((size / 4096 / 16)) ] ||
		fail "turns $t: big.dat in $pieces runs for $size bytes"
done
finish
