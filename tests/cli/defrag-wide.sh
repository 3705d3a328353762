#!/bin/sh
# Beyond 2^32 blocks: a sparse 64bit ext4 image of 2^32 + 2^21 blocks,
# with fragmented and interleaved files above block 2^32 (and below it,
# and across it), a journal that straddles 2^32, and the bitmaps and
# inode tables of the top groups above it.  e2frag's figures are checked
# against debugfs, e2defrag makes every file one piece, and e2fsck -fn,
# debugfs (block lists, extent starts) and sha256 check the result; a
# journal transaction left unreplayed shows its tags' high halves to
# debugfs logdump and replays right under e2fsck.
#
# The block size is 1 KiB (a 4 TiB sparse file), as the largest block
# numbers come with it: 2^32 blocks then need more group descriptors than
# fit before the second group, so mke2fs turns on meta_bg and writes
# about 100000 scattered descriptor blocks (about 11 s of CPU, 394 MiB
# on disk; the whole test about 65 s of CPU under the sanitizers).
# E2F_WIDE_BS=2048 runs the same test on an 8 TiB file of 2 KiB blocks,
# whose descriptors fit in one run (1 s, 20 MiB; about 23 s in all).
. "$top_srcdir/tests/cli/defrag-lib.sh"
command -v testmove >/dev/null 2>&1 || { echo "skip: testmove not built"; exit 77; }

bs=${E2F_WIDE_BS:-1024}
top=4294967296				# 2^32
blocks=$((top + 2097152))		# 2^21 blocks above 2^32
img=$T/wide.img
truncate -s $((blocks * bs)) "$img" 2>/dev/null || {
	echo "skip: $TMPDIR cannot hold a sparse file of $((blocks * bs)) bytes"
	exit 77
}
# Flex groups of 65536 groups put the bitmaps and inode tables of the
# groups above 2^32 at 2^32 (so their journal tags need high halves),
# and leave mke2fs few of them to write; a small journal across 2^32.
mke2fs -q -F -t ext4 -b "$bs" -O 64bit,sparse_super2,^resize_inode \
	-N 2048 -G 65536 -J size=4,location=$((top - 512)) \
	-E lazy_itable_init=1,nodiscard,num_backup_sb=0,root_owner=0:0 \
	"$img" "$blocks" >"$T/mkfs.out" 2>&1 || {
	# The host's filesystem now and then refuses the sparse file's
	# scattered descriptor blocks (ENOSPC with space free): its limit,
	# not ours, as truncate's above.
	if grep -q "No space left on device" "$T/mkfs.out"; then
		echo "skip: $TMPDIR refused the sparse image's blocks: $(cat "$T/mkfs.out")"
		exit 77
	fi
	cat "$T/mkfs.out" >&2
	fail "mke2fs of a $blocks-block image"
}
# range A N: blocks A to A+N-1, as testmove's runs say them.
range() { echo "$1-$(($1 + $2 - 1))"; }
# Every call of a program opens 2^32 blocks: as few calls as can be, and
# debugfs without its bitmaps for the oracle (E2F_ORACLE_CATASTROPHIC).
export E2F_ORACLE_CATASTROPHIC=1
# The second run of defrag-lib.sh compares whole images: 8 TiB here.
# Its fixed point is checked below by e2defrag -n instead.
export E2D_NO_SECOND_RUN=1

# The files, written low by debugfs, then moved by testmove (tests/crash,
# the mover of the switch tests) onto the blocks named here.  A file of
# more than four extents needs a tree block: the first block of its runs.
H=$((top + 65536))			# above the top flex group's tables
L=$((top - 200000))
files="/rec/a /rec/b /rec/c /frag /ok /low /cross /holes"
python3 - "$T" "$bs" <<'PY'
import random, sys
t, bs = sys.argv[1], int(sys.argv[2])
for seed, (name, n) in enumerate((("a", 48), ("b", 48), ("c", 48), ("frag", 40),
                                  ("ok", 64), ("low", 30), ("cross", 16))):
    with open("%s/%s" % (t, name), "wb") as f:
        f.write(random.Random(seed).randbytes(n * bs))
# /holes: ten runs of 2 blocks, 2-block holes between: ten extents, so a
# tree block wherever it goes.
with open("%s/holes" % t, "wb") as f:
    r = random.Random(9)
    for i in range(10):
        f.write(r.randbytes(2 * bs) + bytes(2 * bs * (i < 9)))
PY
{
	echo "ssv lastcheck now"
	echo "mkdir /rec"
	for f in $files; do echo "write $T/$(basename $f) $f"; done
} > "$T/cmds"
dbg "$img" "$T/cmds"

# /rec/a, b, c: three recordings written in turns, 4 blocks at a time
# (tree blocks at H, H+1, H+2); /frag: ten pieces of 4 blocks, 4 free
# blocks apart; /ok in one piece; /low: six pieces below 2^32; /cross:
# one piece on each side, the one below next to the journal (so that the
# free run below 2^32 stays the largest once it leaves).
set --
k=0
for f in a b c; do
	runs=$((H + k))
	j=0
	while [ $j -lt 12 ]; do
		runs="$runs,$(range $((H + 16 + (j * 3 + k) * 4)) 4)"
		j=$((j + 1))
	done
	set -- "$@" -t "$runs"
	k=$((k + 1))
done
runs=$((H + 3))
i=0
while [ $i -lt 10 ]; do runs="$runs,$(range $((H + 200 + i * 8)) 4)"; i=$((i + 1)); done
set -- "$@" -t "$runs" -t "$(range $((H + 400)) 64)"
runs=$((L - 5))
i=0
while [ $i -lt 6 ]; do runs="$runs,$(range $((L + i * 10)) 5)"; i=$((i + 1)); done
set -- "$@" -t "$runs" -t "$(range $((top - 520)) 8),$(range $((H + 600)) 8)"
runs=$((H + 4))
i=0
while [ $i -lt 10 ]; do runs="$runs,$(range $((H + 700 + i * 5)) 2)"; i=$((i + 1)); done
set -- "$@" -t "$runs"
testmove "$@" "$img" $files > "$T/tm.out" 2>&1 ||
	{ cat "$T/tm.out" >&2; fail "testmove $*"; }

# e2frag's figures against debugfs: pieces, extents, blocks per file,
# the interleave set, the block count; and every block where testmove
# put it (a start cut to 32 bits would land below 2^32).
e2frag --json "$img" > "$T/e2frag.json" 2>"$T/e2frag.err"
rc=$?
[ $rc -le 1 ] || { cat "$T/e2frag.err" >&2; fail "e2frag exited $rc"; }
snapshot "$img" "$T/before.snap"
for f in $files '<8>'; do echo "stat $f"; done > "$T/cmds"
debugfs -c -f "$T/cmds" "$img" > "$T/stats" 2>/dev/null
python3 - "$T" "$bs" "$blocks" "$top" $files <<'PY' || fail "e2frag or testmove disagree with debugfs"
import json, re, sys
t, bs, blocks, top, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
j = json.load(open(t + "/e2frag.json"))
stats = open(t + "/stats").read().split("debugfs: stat ")[1:]
byp = {f["path"]: f for f in j["files"]}
high = {"/rec/a": 49, "/rec/b": 49, "/rec/c": 49, "/frag": 41, "/ok": 64,
        "/low": 0, "/cross": 8, "/holes": 21}
bad = []
if j["filesystem"]["blocks"] != blocks:
    bad.append("filesystem blocks %s, want %d" % (j["filesystem"]["blocks"], blocks))
for p, stat in zip(files, stats):
    count = int(re.search(r"Blockcount: (\d+)", stat).group(1)) * 512 // bs
    toks = re.findall(r"\((ETB\d*|[\d-]+)\):(\d+)(?:-(\d+))?", stat.split("EXTENTS:", 1)[1])
    runs = [(w, int(a), int(b or a)) for w, a, b in toks]
    data = [(a, b) for w, a, b in runs if not w.startswith("ETB")]
    pieces = sum(1 for i, (a, b) in enumerate(data) if i == 0 or a != data[i - 1][1] + 1)
    if p == "/holes" and pieces != 10:
        bad.append("/holes: %d pieces after testmove, want 10" % pieces)
    above = sum(max(0, b + 1 - max(a, top)) for w, a, b in runs)
    if above != high[p]:
        bad.append("%s: %d blocks above 2^32, want %d" % (p, above, high[p]))
    f = byp.get(p)
    if not f:
        bad.append("%s missing" % p)
        continue
    for key, want in (("pieces", pieces), ("extents", len(data)), ("blocks", count)):
        if f[key] != want:
            bad.append("%s %s: e2frag %s, debugfs %s" % (p, key, f[key], want))
journal = re.findall(r"\):(\d+)(?:-(\d+))?", stats[len(files)].split("EXTENTS:", 1)[1])
if not (int(journal[0][0]) < top <= max(int(b or a) for a, b in journal)):
    bad.append("the journal is not across 2^32: %s" % journal)
inos = {f["path"]: f["ino"] for f in j["files"]}
for p in ("/rec/a", "/rec/b", "/rec/c"):
    others = {inos[q] for q in ("/rec/a", "/rec/b", "/rec/c") if q != p}
    if not others <= set(byp[p]["interleaved_with"]):
        bad.append("%s interleaved with %s" % (p, byp[p]["interleaved_with"]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# A switch left in the journal (testmove -n: committed, not checkpointed)
# logs the block bitmap of a group above 2^32.  Its tag needs the high
# half: replayed to the low half alone it would overwrite a group
# descriptor block and leave the bitmap stale, and e2fsck would have to
# fix both.  (debugfs logdump is no oracle here: version 1.47.0 prints
# the low half of a tag only.)
cp --sparse=always "$img" "$T/j.img"
testmove -n -t "$(range $((H + 1000)) 64)" "$T/j.img" /ok > "$T/tm.out" 2>&1 ||
	{ cat "$T/tm.out" >&2; fail "testmove -n /ok"; }
e2fsck -fy "$T/j.img" > "$T/fsck.out" 2>&1 ||
	{ cat "$T/fsck.out" >&2; fail "e2fsck -fy found more to do than replay the journal"; }
grep -q "recovering journal" "$T/fsck.out" ||
	{ cat "$T/fsck.out" >&2; fail "no journal to replay"; }
printf 'stat /ok\ndump /ok %s\n' "$T/ok.out" > "$T/cmds"
debugfs -c -f "$T/cmds" "$T/j.img" 2>/dev/null > "$T/jstat"
grep -q "(0-63):$((H + 1000))-$((H + 1063))" "$T/jstat" ||
	fail "/ok not at $((H + 1000)) after the journal replay"
cmp -s "$T/ok.out" "$T/ok" || fail "/ok changed by the replay"
rm -f "$T/j.img"

# Defragment (--verify: its O_DIRECT reads 8 TiB into the image too):
# every file one piece, contents and metadata the same.
expect_rc 0 e2defrag --verify "$img"
check_clean "$img"
snapshot "$img" "$T/after.snap"
same_snapshot "$T/before.snap" "$T/after.snap"
# Where the files went: the smallest free run that holds each whole is
# above 2^32 (the run below is 2^32 blocks long), so every file that
# moved is there, extent start high bits and all; and what each holds.
for f in $files; do echo "stat $f"; echo "dump $f $T/out.$(basename $f)"; done > "$T/cmds"
debugfs -c -f "$T/cmds" "$img" > "$T/stats" 2>/dev/null
python3 - "$T" "$top" $files <<'PY' || fail "the files after e2defrag"
import re, sys
t, top, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
stats = open(t + "/stats").read().split("debugfs: stat ")[1:]
bad = []
for p, stat in zip(files, stats):
    name = p.split("/")[-1]
    ext = stat.split("EXTENTS:", 1)[1].split("debugfs:")[0]
    runs = re.findall(r"\((ETB\d*|[\d-]+)\):(\d+)(?:-(\d+))?", ext)
    data = [(int(a), int(b or a)) for w, a, b in runs if not w.startswith("ETB")]
    etb = [w for w, a, b in runs if w.startswith("ETB")]
    pieces = sum(1 for i, (a, b) in enumerate(data) if i == 0 or a != data[i - 1][1] + 1)
    # /holes keeps its ten extents (and so a tree block), in one piece.
    if pieces != 1 or len(etb) != (p == "/holes"):
        bad.append("%s: %s" % (p, ext.strip()))
    if any(int(a) < top for _, a, _ in runs):
        bad.append("%s: below 2^32: %s" % (p, ext.strip()))
    if open("%s/out.%s" % (t, name), "rb").read() != open("%s/%s" % (t, name), "rb").read():
        bad.append("%s: contents changed" % p)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
expect_rc 0 e2defrag -n "$img"
grep -q "nothing to do" "$T/out" || { cat "$T/out" >&2; fail "a second run has work"; }
exit 0
