#!/bin/sh
# kernel-tree: a clean image whose files read back as the manifest says,
# the same bytes for the same seed, directories spread over the groups
# (their inodes' groups, per debugfs), files in their directory's group,
# and on ext3 files whose blocks alternate with other files' in one group
# (per debugfs' block lists, not e2frag).  ext4 files come out whole.
. "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/img-lib.sh"

build() {
	out=$1
	perturb=$2
	shift 2
	rm -f "$out" "$out.json"
	MALLOC_PERTURB_=$perturb \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_fill_byte=$perturb:max_malloc_fill_size=1048576" \
		e2fragimg -q --workload kernel-tree "$@" "$out"
}

# ext3 with 1 KiB blocks: 16 groups of 8 MiB, and files past 12 KiB need
# an indirect block.
set -- --type ext3 --block-size 1024 --size 128M --files 1500 --dirs 40 --seed 5
img=$tmp/k.img
build "$img" 17 "$@" || fail "ext3: e2fragimg failed"
fsck_clean "$img" || fail "ext3: e2fsck -fn is not clean"
mkdir "$tmp/dump"
debugfs -R "rdump / $tmp/dump" "$img" >/dev/null 2>&1 || fail "ext3: rdump failed"
check manifest "$img" "$tmp/dump" || fail "ext3: manifest does not match the image"
rm -rf "$tmp/dump"

# Deterministic per seed; another seed, another image.
mkdir "$tmp/2"
build "$tmp/2/k.img" 170 "$@" || fail "ext3: second build failed"
cmp -s "$img" "$tmp/2/k.img" || fail "ext3: the same seed gives other bytes"
cmp -s "$img.json" "$tmp/2/k.img.json" || fail "ext3: the same seed gives another manifest"
build "$tmp/2/k.img" 17 --type ext3 --block-size 1024 --size 128M --files 1500 --dirs 40 --seed 6 ||
	fail "ext3: seed 6 failed"
cmp -s "$img" "$tmp/2/k.img" && fail "ext3: seeds 5 and 6 give the same image"
rm -rf "$tmp/2"

# Directories: 40 of them, spread over most of the 16 groups; every file's
# inode in its directory's group.
ipg=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Inodes per group: *//p')
debugfs -R 'ls -l /' "$img" 2>/dev/null > "$tmp/root"
debugfs -f - "$img" > "$tmp/dirs" 2>/dev/null <<EOF
$(awk '$NF ~ /^d[0-9]+$/ { print "ls -l /" $NF }' "$tmp/root")
EOF
python3 - "$tmp/root" "$tmp/dirs" "$ipg" <<'PY' || fail "ext3: directories not spread as Orlov spreads them"
import re, sys
root, dirs, ipg = open(sys.argv[1]).read(), open(sys.argv[2]).read(), int(sys.argv[3])
group = lambda ino: (ino - 1) // ipg
top = {l.split()[-1]: int(l.split()[0]) for l in root.splitlines() if re.search(r' d\d+$', l)}
assert len(top) == 40, len(top)
used = {group(i) for i in top.values()}
assert len(used) >= 12, "directories in only %d groups" % len(used)
cur, files, strays = None, 0, 0
for line in dirs.splitlines():
    m = re.match(r'debugfs: ls -l /(d\d+)', line)
    if m:
        cur = top[m.group(1)]
        continue
    f = line.split()
    if cur and len(f) > 2 and re.fullmatch(r'f\d+', f[-1]):
        files += 1
        strays += group(int(f[0])) != group(cur)
assert files == 1500, files
assert strays == 0, "%d files outside their directory's group" % strays
print("40 directories in %d groups; 1500 files in their directory's group" % len(used))
PY

# Interleaving, by debugfs' block lists: files whose blocks and indirect
# blocks alternate with another file's within one 8 MiB group.
check alternate "$img" 8192 20 || fail "ext3: no files alternate"

# ext4: clean, files whole (one extent each), read back per the manifest.
img=$tmp/k4.img
build "$img" 17 --files 600 --dirs 20 || fail "ext4: e2fragimg failed"
fsck_clean "$img" || fail "ext4: e2fsck -fn is not clean"
n=$(check pieces "$img")
[ "$n" = 1 ] || fail "ext4: a file is in $n pieces, want 1"
mkdir "$tmp/dump"
debugfs -R "rdump / $tmp/dump" "$img" >/dev/null 2>&1 || fail "ext4: rdump failed"
check manifest "$img" "$tmp/dump" || fail "ext4: manifest does not match the image"
finish
