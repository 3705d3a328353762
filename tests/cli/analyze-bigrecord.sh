#!/bin/sh
# Figures too large for a file's record (lib/e2frag.h: they go to
# layout->file_big) come out exact: three recordings written in turns of
# one 1 KiB block have more than 65,535 pieces and extents each, checked
# against debugfs's extent list and block count; and i_size of 2^32 - 1,
# 2^32 and 5 GiB + 1 (set with debugfs) against debugfs's stat, in
# e2frag's JSON and (on a small copy of the same recordings, since
# planning 200,000 pieces takes long) e2defrag -n's.
. "$top_srcdir/tests/lib/common.sh"

img=$T/big.img
e2fragimg -q --workload streams --type ext4 --block-size 1024 --size 256M \
	--streams 3 --chunk 1K --total 201M "$img" || fail "e2fragimg streams"
e2fragimg -q --workload streams --type ext4 --block-size 1024 --size 16M \
	--streams 3 --chunk 1K --total 3M "$T/small.img" || fail "e2fragimg streams, small"
cat > "$T/sizes" <<'SIF'
sif <12> size 4294967295
sif <13> size 4294967296
sif <14> size 5368709121
SIF
dfs "$img" "$T/sizes"
dfs "$T/small.img" "$T/sizes"
for ino in 12 13 14; do
	debugfs -R "stat <$ino>" "$img" > "$T/stat.$ino" 2>/dev/null || fail "debugfs stat <$ino>"
	debugfs -R "ex -l <$ino>" "$img" > "$T/ex.$ino" 2>/dev/null || fail "debugfs ex <$ino>"
done
run_status e2frag --json "$img" > "$T/r.json"
[ "$status" -le 1 ] || fail "e2frag exited $status"
run_status e2defrag -n -J "$T/small.img" > "$T/p.json"
[ "$status" -le 1 ] || fail "e2defrag -n exited $status"

python3 - "$T" <<'PY' || exit 1
import json, re, sys
t = sys.argv[1]
r = json.load(open(t + "/r.json"))
p = json.load(open(t + "/p.json"))
by_ino = {f["ino"]: f for f in r["files"]}
planned = {f["ino"]: f for f in p.get("files", [])}
for ino in (12, 13, 14):
    stat = open("%s/stat.%d" % (t, ino)).read()
    size = int(re.search(r"Size: (\d+)", stat).group(1))
    blocks = int(re.search(r"Blockcount: (\d+)", stat).group(1)) // 2  # 1 KiB blocks
    ext = []
    for line in open("%s/ex.%d" % (t, ino)):
        m = re.match(r"\s*\d+/\s*\d+\s+\d+/\s*\d+\s+(\d+) -\s*(\d+)\s+(\d+) -\s*(\d+)", line)
        if m:
            ext.append(tuple(int(x) for x in m.groups()))
    ext.sort()
    extents = pieces = 0
    prev = None
    for lo, hi, plo, phi in ext:
        if prev is None or plo != prev[3] + 1:
            pieces += 1
        if prev is None or plo != prev[3] + 1 or lo != prev[1] + 1:
            extents += 1
        prev = (lo, hi, plo, phi)
    f = by_ino[ino]
    want = {"size": size, "blocks": blocks, "pieces": pieces, "extents": extents}
    got = {k: f[k] for k in want}
    if got != want:
        sys.exit("FAIL: inode %d: e2frag says %s, debugfs %s" % (ino, got, want))
    if pieces <= 65535:
        sys.exit("FAIL: inode %d has only %d pieces: not past 16 bits" % (ino, pieces))
    if ino in planned and planned[ino]["size"] != size:
        sys.exit("FAIL: e2defrag -n: inode %d size %d, debugfs %d"
                 % (ino, planned[ino]["size"], size))
    print("# inode %d: size %d, %d blocks, %d pieces, %d extents, as debugfs%s"
          % (ino, size, blocks, pieces, extents, ", planned" if ino in planned else ""))
if not planned:
    sys.exit("FAIL: e2defrag -n plans none of the recordings")
PY
