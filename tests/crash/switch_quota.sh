#!/bin/sh
# The switch on a filesystem with user, group and project quota, when the
# move changes the file's block count: trees that grow (depth 0 -> 1 with
# two leaves) and shrink (depth 1 -> 0, depth 2 -> 1, and back 1 -> 0),
# moved by testmove.
#   - with a journal, left in the log (testmove -n): each of the four
#     transactions logs the file's inode table block and a block of each
#     quota file (debugfs logdump, debugfs blocks); replaying the journal
#     alone (e2fsck -E journal_only) gives a filesystem e2fsck -fn finds
#     clean, every id's usage what its files' block counts add up to
#     (debugfs lq and stat), the files whole;
#   - without a journal (ordered writes): the same, clean after the run.
. "$top_srcdir/tests/crash/lib.sh"
need mke2fs debugfs e2fsck dumpe2fs tune2fs python3 sha256sum cmp testmove
mkwork
debugfs -R "lq user" /dev/null 2>&1 | grep -q "Unknown request" && { echo "SKIP: debugfs has no list_quota"; exit 77; }

base=$WORK/base.img
mkimg "$base" 8192 -t ext4 -b 1024 -I 256 -O quota,project \
	-E quotatype=usrquota:grpquota:prjquota
make_quota "$base" "$WORK"
want="g:0 h:1 d:2"
got=
for f in g h d; do got="$got $f:$(depth "$base" /$f)"; done
[ "$got" = " $want" ] || fail "depths to begin with:$got, want $want"
runs=$(scattered_runs "$base" 102) || fail "no room for /g's scattered target"
snapshot "$base" "$WORK/before"

# logged_ok NAME IMG N: the log of IMG holds N transactions, each with
# one block of each quota file; replaying it alone leaves a clean
# filesystem ($WORK/jo.img) whose quota usage matches its files.
logged_ok() {
	logdump "$2" > "$WORK/logdump"
	[ "$(grep -c 'type 2 (commit block)' "$WORK/logdump")" -eq "$3" ] ||
		{ cat "$WORK/logdump"; fail "$1: logdump does not show $3 transactions"; }
	python3 - "$WORK/logdump" "$2" 3 4 "$prj" <<'EOF2' || fail "$1: a transaction without its quota blocks"
import re, subprocess, sys
logdump, img, qinos = sys.argv[1], sys.argv[2], sys.argv[3:]
def blocks(spec):
    out = subprocess.run(["debugfs", "-R", "blocks %s" % spec, img],
                         capture_output=True, text=True).stdout
    return set(int(x) for x in out.split())
quota = [blocks("<%s>" % q) for q in qinos]
txs, cur = [], set()
for line in open(logdump):
    m = re.search(r"FS block (\d+) logged", line)
    if m:
        cur.add(int(m.group(1)))
    if "(commit block)" in line:
        txs.append(cur)
        cur = set()
bad = 0
for i, t in enumerate(txs):
    have = [len(t & q) for q in quota]
    print("# transaction %d: %d blocks, quota blocks per quota file %s" % (i, len(t), have))
    if any(h != 1 for h in have):
        bad = 1
sys.exit(bad)
EOF2
	cp "$2" "$WORK/jo.img"
	e2fsck -y -E journal_only "$WORK/jo.img" > "$WORK/jo.out" 2>&1 ||
		{ cat "$WORK/jo.out"; fail "$1: e2fsck -E journal_only failed"; }
	clean "$WORK/jo.img" || { cat "$WORK/fsck.out"; fail "$1: not clean after replaying the journal alone"; }
	quota_matches "$WORK/jo.img" || fail "$1: quota usage off after replay"
	snapshot "$WORK/jo.img" "$WORK/after"
	cmp -s "$WORK/before" "$WORK/after" || fail "$1: contents changed"
}

# depths_are NAME IMG WANT: the extent tree depths of /g, /h, /d.
depths_are() {
	got=
	for f in g h d; do got="$got $f:$(depth "$2" /$f)"; done
	[ "$got" = " $3" ] || fail "$1: depths$got, want $3"
}

prj=$(dumpe2fs -h "$base" 2>/dev/null | sed -n 's/^Project quota inode: *//p')

# With a journal: /g scattered (its tree grows), left in the log; once
# replayed, /h and /d to one free run each and /g back to one (they
# shrink), left in the log.
img=$WORK/journal.img
cp "$base" "$img"
testmove -n -t "$runs" "$img" /g > "$WORK/move.out" 2>&1 ||
	{ cat "$WORK/move.out"; fail "grow: testmove failed"; }
logged_ok grow "$img" 1
depths_are grow "$WORK/jo.img" "g:1 h:1 d:2"
[ "$(debugfs -R "stat /g" "$WORK/jo.img" 2>/dev/null | grep -o '(ETB[0-9]*)' | wc -l)" -eq 2 ] ||
	fail "grow: /g without two leaves"
echo "ok journal: a tree grown, its quota blocks in the transaction, replayed clean"
cp "$WORK/jo.img" "$img"
testmove -n "$img" /h /d /g > "$WORK/move.out" 2>&1 ||
	{ cat "$WORK/move.out"; fail "shrink: testmove failed"; }
logged_ok shrink "$img" 3
depths_are shrink "$WORK/jo.img" "g:0 h:0 d:1"
echo "ok journal: trees shrunk, their quota blocks in the transactions, replayed clean"

# Without a journal.
img=$WORK/ordered.img
cp "$base" "$img"
tune2fs -O ^has_journal "$img" > /dev/null 2>&1 || fail "tune2fs -O ^has_journal"
testmove -t "$runs" "$img" /g > "$WORK/move.out" 2>&1 &&
	testmove "$img" /h /d /g >> "$WORK/move.out" 2>&1 ||
	{ cat "$WORK/move.out"; fail "ordered: testmove failed"; }
depths_are ordered "$img" "g:0 h:0 d:1"
clean "$img" || { cat "$WORK/fsck.out"; fail "ordered: e2fsck -fn"; }
quota_matches "$img" || fail "ordered: quota usage off"
snapshot "$img" "$WORK/after"
cmp -s "$WORK/before" "$WORK/after" || fail "ordered: contents changed"
echo "ok ordered writes"
