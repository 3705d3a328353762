# lib.sh --- shell helpers of the tests in tests/crash, sourced by them.
#
# The functions keep their variables local (dash and bash have "local").
# Images are small, generated under $TMPDIR with mke2fs and debugfs, and
# every fact a test checks comes from e2fsprogs (debugfs, e2fsck,
# dumpe2fs) or from checksums of the contents, never from the code under
# test.

set -u
export LC_ALL=C
: "${TMPDIR:=/tmp}"

# Skip (exit 77) unless every named tool is there.
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: no $t"; exit 77; }
	done
}

# Skip (exit 77) unless the programs log their writes to $E2FRAG_IOLOG:
# a test hook that only a build configured with --enable-iolog has
# (./bootstrap and .ci/run enable it; a default build must not have it).
need_iolog() {
	case ${E2F_ENABLE_IOLOG:-} in
	yes) return 0 ;;
	no) ;;
	*) grep -q E2FRAG_IOLOG "$(command -v e2defrag)" 2>/dev/null && return 0 ;;
	esac
	echo "SKIP: built without --enable-iolog: the programs do not log their writes (E2FRAG_IOLOG), which the power-cut harness replays; ./bootstrap enables it"
	exit 77
}

# A scratch directory removed on exit: $WORK.
# KEEP=1 keeps it, for a look after a failure.
mkwork() {
	WORK=$(mktemp -d "$TMPDIR/e2f-crash.XXXXXX") || exit 99
	if [ -n "${KEEP:-}" ]; then
		echo "# work directory: $WORK"
	else
		trap 'rm -rf "$WORK"' EXIT
	fi
}

fail() {
	echo "FAIL: $*"
	exit 1
}

# gen_file PATH BYTES SEED: deterministic contents, different in every
# block (so a block landing in the wrong place changes the checksum).
gen_file() {
	python3 - "$1" "$2" "$3" <<'EOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = random.Random(seed)
with open(path, 'wb') as f:
    f.write(r.randbytes(size))
EOF
}

# mkimg IMG KIB MKE2FS-ARGS...: a fresh filesystem, fixed UUID.
mkimg() {
	local img=$1 kib=$2
	shift 2
	rm -f "$img"
	mke2fs -q -F -U 6b33f6a2-6d1e-4d7b-9b0e-3f1f5b0c9a11 \
		-E hash_seed=0c5e5a3c-2f00-4b6e-8d2f-7a1d3c9e4b21 \
		"$@" "$img" "${kib}k" >/dev/null 2>&1 || fail "mke2fs $* failed"
}

# dbg IMG CMDFILE: run debugfs -w commands.
dbg() {
	debugfs -w -f "$2" "$1" >/dev/null 2>&1 || fail "debugfs -f $2 failed"
}

# make_streams IMG NSTREAMS BLOCKS DIR: NSTREAMS files /s0.. of BLOCKS
# blocks each whose blocks interleave (s0 on every NSTREAMS-th free block,
# s1 on the next ...), as concurrent recordings leave them.  One-block
# spacer files hold the places of the others until their turn.
make_streams() {
	local img=$1 n=$2 blocks=$3 dir=$4 bs cmds i k
	bs=$(blocksize "$img")
	cmds=$dir/streams.cmds
	gen_file "$dir/one" "$bs" spacer
	: > "$cmds"
	i=0
	while [ $i -lt $((n * blocks)) ]; do
		echo "write $dir/one sp$i" >> "$cmds"
		i=$((i + 1))
	done
	k=0
	while [ $k -lt "$n" ]; do
		i=$k
		while [ $i -lt $((n * blocks)) ]; do
			echo "rm sp$i" >> "$cmds"
			i=$((i + n))
		done
		gen_file "$dir/stream$k" $((blocks * bs)) "stream$k"
		echo "write $dir/stream$k s$k" >> "$cmds"
		k=$((k + 1))
	done
	dbg "$img" "$cmds"
}

# make_aged IMG SEED NFILES DIR: a disk that has lived: files of mixed
# sizes written and deleted at random, then larger files written into the
# holes that left, so that they come out fragmented.
make_aged() {
	local img=$1 seed=$2 nfiles=$3 dir=$4 bs
	bs=$(blocksize "$img")
	python3 - "$dir" "$seed" "$nfiles" "$bs" > "$dir/aged.cmds" <<'EOF'
import random, sys
d, seed, n, bs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r = random.Random(seed)
live = []
for i in range(n):
    size = r.choice([1, 2, 3, 5, 8, 13]) * bs - r.randrange(bs // 2)
    p = "%s/a%d" % (d, i)
    open(p, 'wb').write(r.randbytes(size))
    print("write %s f%d" % (p, i))
    live.append(i)
    if r.random() < 0.45 and len(live) > 2:
        print("rm f%d" % live.pop(r.randrange(len(live))))
for j in range(max(2, n // 12)):
    size = r.randrange(24, 64) * bs + r.randrange(bs)
    p = "%s/b%d" % (d, j)
    open(p, 'wb').write(r.randbytes(size))
    print("write %s big%d" % (p, j))
EOF
	dbg "$img" "$dir/aged.cmds"
}

# snapshot IMG OUT: what a user finds on IMG, per debugfs (the files
# view of tests/cli/defrag-oracle.py): every path with its inode, and per
# inode its type, permission bits, owner, group, project, link count,
# size (not a directory's), symlink target, extended attributes, and the
# sha256 of its contents (regular files, slow symlinks) or its entries
# (directories).
# Two snapshots are the same file byte for byte when all that is.
snapshot() {
	python3 "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/defrag-oracle.py" files "$1" > "$2" ||
		fail "snapshot of $1"
}

# snapshot_sha SNAPSHOT PATH: the sha256 of PATH's contents in SNAPSHOT.
snapshot_sha() {
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(j["inodes"][str(j["paths"][sys.argv[2]])].get("sha256", ""))' "$1" "$2"
}

# snapshot_diff A B: what differs between two snapshots, one a line.
snapshot_diff() {
	python3 "${top_srcdir:-$(dirname "$0")/../..}/tests/cli/defrag-oracle.py" compare "$1" "$2"
}

# fragmented_files IMG: names of regular files in / with more than one
# piece of data, from debugfs's block lists.  Data blocks only: the test
# mover puts indirect blocks apart from the data (doc/design.md's pieces, which
# count them in, are tests/lib/oracle.py's).
pieces() {
	debugfs -R "stat $2" "$1" 2>/dev/null | sed -n '/^\(BLOCKS\|EXTENTS\):/,$p' |
	tr ', ' '\n\n' | grep -E '^\([0-9]' | sed 's/.*://' |
	awk -F- 'BEGIN { n = 0; last = -2 }
		{ s = $1; e = (NF > 1) ? $2 : $1;
		  if (s != last + 1) n++; last = e }
		END { print n }'
}

# clean IMG: e2fsck -fn finds nothing.
clean() {
	e2fsck -fn "$1" >"$WORK/fsck.out" 2>&1
}

# blocksize IMG
blocksize() {
	dumpe2fs -h "$1" 2>/dev/null | awk '/^Block size:/ {print $3}'
}

# changed_blocks A B: numbers of the filesystem blocks that differ.
changed_blocks() {
	local bs
	bs=$(blocksize "$1")
	cmp -l "$1" "$2" | awk -v bs="$bs" '{ b = int(($1 - 1) / bs); if (b != last) print b; last = b }'
}

# meta_blocks IMG: "KIND BLOCK" for every block of fixed metadata, from
# dumpe2fs: primary (super, gdt, bitmap, itable) and backup (bsuper,
# bgdt, rgdt: reserved GDT).
meta_blocks() {
	dumpe2fs "$1" 2>/dev/null | python3 -c '
import re, sys
def rng(s):
    a, _, b = s.partition("-")
    return range(int(a), int(b or a) + 1)
for line in sys.stdin:
    for kind, pat in (("super", r"Primary superblock at (\d+)"),
                      ("bsuper", r"Backup superblock at (\d+)")):
        m = re.search(pat, line)
        if m:
            print(kind, m.group(1))
            g = re.search(r"Group descriptors at ([\d-]+)", line)
            if g:
                for b in rng(g.group(1)):
                    print("gdt" if kind == "super" else "bgdt", b)
    m = re.search(r"Reserved GDT blocks at ([\d-]+)", line)
    if m:
        for b in rng(m.group(1)):
            print("rgdt", b)
    m = re.search(r"Block bitmap at (\d+)", line)
    if m:
        print("bitmap", m.group(1))
    m = re.search(r"Inode bitmap at (\d+)", line)
    if m:
        print("ibitmap", m.group(1))
    m = re.search(r"Inode table at ([\d-]+)", line)
    if m:
        for b in rng(m.group(1)):
            print("itable", b)
'
}

# file_blocks IMG PATH: every block PATH owns (data, IND, ETB), one a line.
file_blocks() {
	debugfs -R "stat $2" "$1" 2>/dev/null | sed -n '/^\(BLOCKS\|EXTENTS\):/,$p' |
	tr ', ' '\n\n' | grep -E '^\(' | sed 's/.*://' |
	awk -F- '{ e = (NF > 1) ? $2 : $1; for (b = $1; b <= e; b++) print b }'
}

# logdump IMG: debugfs's account of the journal, descriptors' tags
# included (logdump -a), without the hex dumps of the blocks.
logdump() {
	debugfs -R "logdump -a" "$1" 2>&1 | grep -v '^  [0-9a-f]\{4\}:  '
}

# regular_files IMG: the regular files in /, as /NAME, one a line.
regular_files() {
	debugfs -R "ls -p /" "$1" 2>/dev/null |
	awk -F/ '$3 ~ /^10/ && $6 != "" { print "/" $6 }'
}

# fragmented_files IMG: those of them in more than one piece.
fragmented_files() {
	local f
	for f in $(regular_files "$1"); do
		[ "$(pieces "$1" "$f")" -gt 1 ] && echo "$f"
	done
}

# sweep_line OUT: "N L C" from cutsweep.sh's summary line in OUT.
sweep_line() {
	sed -n 's/.*cut points \([0-9]*\), data lost \([0-9]*\), not clean after replay \([0-9]*\)$/\1 \2 \3/p' "$1"
}

# cut_sweep NAME IMG RANDOM PREFIX TORN SEED WORKLOAD: cutsweep.sh's cuts
# of WORKLOAD on IMG, its summary printed (and the first failing cuts);
# fails unless it made TORN torn cuts and a summary.  Sets swept_n,
# swept_l, swept_c: cut points, data lost, not clean after replay.
cut_sweep() {
	local name=$1 img=$2 random=$3 prefix=$4 torn=$5 seed=$6 workload=$7
	sh "${top_srcdir:-$(dirname "$0")/../..}/tests/crash/cutsweep.sh" -r "$random" \
		-p "$prefix" -t "$torn" -s "$seed" -n "$name" "$img" "$workload" \
		> "$WORK/sweep.out" 2> "$WORK/sweep.err"
	cat "$WORK/sweep.out"
	head -20 "$WORK/sweep.err"
	grep -q "^$name: torn cuts $torn:" "$WORK/sweep.out" ||
		fail "$name: not $torn torn cuts"
	set -- $(sweep_line "$WORK/sweep.out")
	[ $# -eq 3 ] || fail "$name: no summary from cutsweep.sh"
	swept_n=$1 swept_l=$2 swept_c=$3
}

# journal_blocks IMG: the blocks of the journal (inode 8) in the order
# of the journal, one a line: data blocks only (debugfs's "blocks" lists
# the indirect blocks of an ext3 journal among them).
journal_blocks() {
	debugfs -R "stat <8>" "$1" 2>/dev/null | sed -n '/^\(BLOCKS\|EXTENTS\):/,$p' |
	tr ', ' '\n\n' | grep -E '^\([0-9]' | sed 's/.*://' |
	awk -F- '{ e = (NF > 1) ? $2 : $1; for (b = $1; b <= e; b++) print b }'
}

# age_journal IMG SEED: fill the log area of IMG's (empty) journal with
# seeded random bytes, as a journal that has been used holds old
# transactions where new ones go: a fresh journal is all zeroes, and a
# block written torn over zeroes can look whole.  Journal block 0 (its
# superblock) is left alone, and so is a journal with fast commits (its
# area is not for this writer).  Only when the log is empty (s_start 0):
# then nothing reads the log area.
age_journal() {
	local img=$1 seed=$2
	dumpe2fs -h "$img" 2>/dev/null | grep -q '^Filesystem features:.*fast_commit' && return 0
	dumpe2fs -h "$img" 2>/dev/null | grep -q '^Journal start: *0$' ||
		fail "age_journal: the journal is not empty"
	journal_blocks "$img" | python3 -c '
import random, sys
img, seed, bs = sys.argv[1], sys.argv[2], int(sys.argv[3])
blocks = sys.stdin.read().split()[1:]
r = random.Random(seed)
with open(img, "r+b") as f:
    for b in blocks:
        f.seek(int(b) * bs)
        f.write(r.randbytes(bs))
' "$img" "$seed" "$(blocksize "$img")"
}

# tear_kinds BASE RUN TEARS: the lines of TEARS (iolog_replay tears) with
# the kind of block each write starts at appended: super, gdt, bitmap,
# ibitmap, itable (dumpe2fs of BASE), jsb, jdesc, jcommit, jrevoke, jcopy
# (the journal's superblock and log blocks, by debugfs's block list of the
# journal inode and the JBD2 type of what is written), tree (IND, DIND,
# TIND or extent tree blocks of the files of RUN, the image after the run,
# by debugfs stat), data (anything else).
tear_kinds() {
	local base=$1 run=$2 tears=$3 bs
	bs=$(blocksize "$base")
	meta_blocks "$base" > "$WORK/kinds.meta"
	journal_blocks "$base" > "$WORK/kinds.journal"
	python3 "${top_srcdir:-$(dirname "$0")/../..}/tests/lib/oracle.py" mapblocks "$run" > "$WORK/kinds.tree"
	python3 - "$WORK/kinds.meta" "$WORK/kinds.journal" "$WORK/kinds.tree" "$tears" "$bs" <<'PY'
import sys
meta, journal, tree, tears, bs = sys.argv[1:6]
bs = int(bs)
kind = {}
for line in open(meta):
    k, b = line.split()
    if k in ("super", "gdt", "bitmap", "ibitmap", "itable"):
        kind[int(b)] = k
jblocks = [int(b) for b in open(journal).read().split()]
for i, b in enumerate(jblocks):
    kind[b] = "jsb" if i == 0 else "journal"
for b in open(tree).read().split():
    kind.setdefault(int(b), "tree")
jtype = {1: "jdesc", 2: "jcommit", 5: "jrevoke"}
for line in open(tears):
    f = line.split()
    k = kind.get(int(f[5]) // bs, "data")
    if k == "journal":
        k = jtype.get(int(f[11]), "jcopy")
    print(line.rstrip(), "kind", k)
PY
}

# make_sparse IMG NAME RUNS DIR: a file /NAME of RUNS runs of 8 blocks
# between holes of 8, each block apart from the next (one-block spacers
# written between them, then removed): moved whole, it still needs RUNS
# extents, more than an ext4 inode holds from 5 on, so the move writes a
# new extent tree block.
make_sparse() {
	local img=$1 name=$2 runs=$3 dir=$4 bs cmds i
	bs=$(blocksize "$img")
	python3 - "$dir/$name" "$runs" "$bs" <<'PY'
import random, sys
path, runs, bs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(path)
with open(path, "wb") as f:
    for i in range(runs):
        f.seek(i * 16 * bs)
        f.write(r.randbytes(8 * bs))
PY
	gen_file "$dir/one" "$bs" spacer
	cmds=$dir/sparse.cmds
	: > "$cmds"
	i=0
	while [ $i -lt $((16 * runs)) ]; do
		echo "write $dir/one tsp$i" >> "$cmds"
		i=$((i + 1))
	done
	i=1
	while [ $i -lt $((16 * runs)) ]; do
		echo "rm tsp$i" >> "$cmds"
		i=$((i + 2))
	done
	echo "write $dir/$name $name" >> "$cmds"
	i=0
	while [ $i -lt $((16 * runs)) ]; do
		echo "rm tsp$i" >> "$cmds"
		i=$((i + 2))
	done
	dbg "$img" "$cmds"
}

# make_quota IMG DIR: IMG (mkimg'd with -I 256 -O quota,project and the
# three quota types) gets files of different users, groups and projects
# (uid:gid:project), their quota brought up to date by e2fsck -fy:
#   /g  100 blocks in one piece, extent tree of depth 0   1001:2001:5
#   /s  6 blocks in one piece, depth 0                    1004:2002:7
#   /h  30 blocks in 30 pieces, depth 1 (one leaf)        1002:2002:6
#   /d  sparse: 120 runs of 3 blocks between holes, every
#       block a piece (360 extents: depth 2)              1003:2001:6
make_quota() {
	local img=$1 dir=$2 bs
	bs=$(blocksize "$img")
	python3 - "$dir" "$bs" > "$dir/quota.cmds" <<'EOF2'
import random, sys
d, bs = sys.argv[1], int(sys.argv[2])
r = random.Random(61)
for f, size in (("g", 100), ("s", 6), ("h", 30), ("one", 1)):
    open("%s/q%s" % (d, f), "wb").write(r.randbytes(size * bs))
with open("%s/qd" % d, "wb") as f:
    for i in range(120):
        f.seek(i * 4 * bs)
        f.write(r.randbytes(3 * bs))
n = 2 * (30 + 360) + 2
print("write %s/qg /g\nwrite %s/qs /s\nmkdir /sp" % (d, d))
for i in range(n):
    print("write %s/qone /sp/s%d" % (d, i))
for i in range(1, n, 2):
    print("rm /sp/s%d" % i)
print("write %s/qh /h\nwrite %s/qd /d" % (d, d))
for i in range(0, n, 2):
    print("rm /sp/s%d" % i)
print("rmdir /sp")
for f, uid, gid, prj in (("g", 1001, 2001, 5), ("h", 1002, 2002, 6),
                         ("d", 1003, 2001, 6), ("s", 1004, 2002, 7)):
    print("sif /%s uid %d\nsif /%s gid %d\nsif /%s projid %d" % (f, uid, f, gid, f, prj))
EOF2
	dbg "$img" "$dir/quota.cmds"
	e2fsck -fy "$img" > /dev/null 2>&1
	clean "$img" || { cat "$WORK/fsck.out"; fail "make_quota: not clean"; }
}

# scattered_runs IMG N: N single blocks, every other one of the largest
# free run (a file moved there has an extent per data block), as
# testmove -t takes them.
scattered_runs() {
	dumpe2fs "$1" 2>/dev/null | python3 -c '
import re, sys
n, best = int(sys.argv[1]), (0, 0)
for line in sys.stdin:
    m = re.match(r"\s*Free blocks: (.*)", line)
    if not m:
        continue
    for part in m.group(1).split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        a, b = int(a), int(b or a)
        if b - a + 1 > best[1]:
            best = (a, b - a + 1)
if best[1] < 2 * n:
    sys.exit("no free run of %d blocks" % (2 * n))
print(",".join(str(best[0] + 2 * i) for i in range(n)))' "$2"
}

# depth IMG PATH: the depth of PATH's extent tree, per debugfs ex.
depth() {
	debugfs -R "ex $2" "$1" 2>/dev/null |
		awk 'NR == 2 { sub(/.*\//, "", $2); print $2 + 0; exit }'
}

# quota_matches IMG: every id's usage in the quota files (debugfs lq)
# is what its files' block counts (debugfs stat) add up to.
quota_matches() {
	local t f
	{
		for t in user group project; do
			debugfs -R "lq $t" "$1" 2>/dev/null |
				awk -v t=$t '$1 ~ /^[0-9]+$/ && $1 != 0 { print "quota", t, $1, $2 }'
		done
		for f in $(regular_files "$1"); do
			debugfs -R "stat $f" "$1" 2>/dev/null | awk '
				/^User:/ { u = $2; g = $4; p = $6 }
				/Blockcount:/ { b = $NF * 512 }
				END { print "file user", u, b; print "file group", g, b
				      print "file project", p, b }'
		done
	} | python3 -c '
import sys
q, f = {}, {}
for line in sys.stdin:
    w = line.split()
    d = q if w[0] == "quota" else f
    k = (w[1], int(w[2]))
    d[k] = d.get(k, 0) + int(w[3])
for k in sorted(f):
    print("# %s %d: quota %s, files %d" % (k[0], k[1], q.get(k), f[k]))
sys.exit(0 if q == f else 1)'
}
