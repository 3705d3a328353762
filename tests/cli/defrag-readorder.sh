#!/bin/sh
# The mover reads what a group of moves copies in the disk's order, once:
# four interleaved recordings (e2fragimg's streams) moved in one group
# are read in one pass over their span, not each across it.  strace's
# pread64 calls on the image are the oracle for the reads, debugfs's
# stat (their data extents) for where the recordings were: the reads that
# touch their old blocks come in ascending offset order, in far fewer
# requests than the recordings have pieces, and read each of their bytes
# once (at most 1.25 times their bytes, gaps read through included).
# The files read back the same and e2fsck -fn is clean.
. "$top_srcdir/tests/cli/defrag-lib.sh"

command -v strace >/dev/null 2>&1 || { echo "skip: no strace"; exit 77; }
img=$T/streams.img
e2fragimg -q -w streams -t ext4 --streams 4 --total 8M -s 32M -S 2 "$img" \
	> /dev/null 2>&1 || fail "e2fragimg"
files=$(debugfs -R "ls -p /" "$img" 2>/dev/null | awk -F/ '$6 ~ /\.ts$/ { print "/" $6 }')
[ "$(echo "$files" | wc -w)" -eq 4 ] || fail "expected 4 recordings, got: $files"
snapshot "$img" "$T/before.snap"
npieces=0
for f in $files; do
	# The data blocks of stat's extent list (ETB: extent tree blocks).
	debugfs -R "stat $f" "$img" 2>/dev/null | sed -n '/^EXTENTS:/,$p' |
		tr ',' '\n' | sed -n 's/^ *([0-9-]*): *\([0-9]*\)\(-\([0-9]*\)\)\{0,1\}$/\1 \3/p' |
		while read -r a b; do seq "$a" "${b:-$a}"; done >> "$T/old.blocks"
	npieces=$((npieces + $(pieces "$img" "$f")))
done
bs=$(dumpe2fs -h "$img" 2>/dev/null | sed -n 's/^Block size: *//p')

# --buffer 1M: the 8 MiB are read a buffer at a time, 8 buffers in one group.
# LeakSanitizer (the CI build) cannot run under ptrace: leaks are not this test's subject.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
strace -f -qq -e trace=pread64 -o "$T/trace" e2defrag --buffer 1M "$img" \
	> "$T/out" 2>&1 || { cat "$T/out"; fail "e2defrag failed"; }
check_clean "$img"
snapshot "$img" "$T/after.snap"
same_snapshot "$T/before.snap" "$T/after.snap"
for f in $files; do
	[ "$(pieces "$img" "$f")" -eq 1 ] || fail "$f not in one piece"
done

python3 - "$T/trace" "$T/old.blocks" "$bs" "$npieces" <<'PY' || fail "the reads of the recordings"
import re, sys
trace, blocks, bs, npieces = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
old = set(int(l.split()[0]) for l in open(blocks) if l.strip())
want = len(old) * bs
reads = []
pat = re.compile(r'pread64\((\d+), .*, (\d+), (\d+)\) = (\d+)')
for line in open(trace):
    m = pat.search(line)
    if not m:
        continue
    n, off = int(m.group(4)), int(m.group(3))
    first, last = off // bs, (off + n - 1) // bs
    if n and any(b in old for b in range(first, last + 1)):
        reads.append((off, n))
got = sum(n for _, n in reads)
print("# %d reads of the recordings' old blocks (%d pieces), %d bytes for %d" %
      (len(reads), npieces, got, want))
ok = True
for (a, n), (b, _) in zip(reads, reads[1:]):
    if b < a + n:
        print("a read at %d after one at %d+%d: not in the disk's order" % (b, a, n))
        ok = False
        break
if got < want or got > want * 1.25:
    print("read %d bytes for %d" % (got, want))
    ok = False
if len(reads) * 4 > npieces:
    print("%d reads for %d pieces: not large requests" % (len(reads), npieces))
    ok = False
sys.exit(0 if ok else 1)
PY
exit 0
