#!/usr/bin/env python3
"""defrag-ordered-flushes.py LOG IMAGE [--journal]: the flushes of an
e2defrag run on a filesystem without a journal, from its write log
(E2FRAG_IOLOG), against the commits the log itself shows.

With --journal, a run with one: the commits are the flush windows that
write a JBD2 commit block, the checkpoints those that write a journal
superblock saying the log is empty (its s_start 0); prints "commits C
flushes F checkpoints K buffers B kib W", W the KiB written.

An ordered commit writes the batch's inode table blocks between two
flushes of their own (switch.c's step 2: nothing else may be durable
with them but what is already), so the commits are the stretches
between two flushes that write an inode table block.  Prints "commits C
flushes F descriptors D buffers B bitmaps M groups G", D the writes to
the primary superblock and group descriptor blocks, M those to block
bitmaps, G the block groups, B the 32 MiB buffers of data
written (the mover flushes each one it fills between two commits), all
places from dumpe2fs of IMAGE (the run moves data, never metadata).
"""
import re
import struct
import subprocess
import sys


def places(image):
    """The block size, the inode tables' runs, and the run of the primary
    superblock and group descriptors."""
    out = subprocess.run(["dumpe2fs", image], capture_output=True, text=True,
                         check=True).stdout
    bs = int(re.search(r"^Block size:\s+(\d+)", out, re.M).group(1))
    tables = [(int(a), int(b)) for a, b in
              re.findall(r"Inode table at (\d+)-(\d+)", out)]
    sb = int(re.search(r"Primary superblock at (\d+)", out).group(1))
    gd = re.search(r"Primary superblock at \d+, Group descriptors at (\d+)-(\d+)", out)
    bitmaps = [(int(a), int(a)) for a in re.findall(r"Block bitmap at (\d+)", out)]
    return bs, tables, (sb, int(gd.group(2))), bitmaps


JBD2_MAGIC = 0xC03B3998
JBD2_COMMIT = 2
JBD2_SUPERBLOCKS = (3, 4)


def jbd2_kind(data):
    """'commit' for a JBD2 commit block, 'empty' for a journal superblock
    saying the log is empty (s_start 0), else None."""
    if len(data) < 32:
        return None
    magic, kind = struct.unpack(">II", data[:8])
    if magic != JBD2_MAGIC:
        return None
    if kind == JBD2_COMMIT:
        return "commit"
    if kind in JBD2_SUPERBLOCKS and struct.unpack(">I", data[28:32])[0] == 0:
        return "empty"
    return None


def windows(log, bs=None, marks=None):
    """The writes between two flushes: a list of lists of (offset, length),
    and the number of flushes.  With BS, the one-block writes that are
    JBD2 commit blocks or empty-log journal superblocks are appended to
    MARKS as (window index, kind)."""
    with open(log, "rb") as f:
        if f.read(8) != b"E2FIOLG1":
            sys.exit("%s: not a write log" % log)
        out, cur, flushes = [], [], 0
        while True:
            head = f.read(24)
            if not head:
                break
            kind, _, off, length = struct.unpack("=IIQQ", head)
            if kind == ord("W"):
                if bs and length == bs:
                    k = jbd2_kind(f.read(32))
                    f.seek(length - 32, 1)
                    if k:
                        marks.append((len(out), k))
                else:
                    f.seek(length, 1)
                cur.append((off, length))
            elif kind == ord("Z"):
                cur.append((off, length))
            elif kind == ord("F"):
                flushes += 1
                out.append(cur)
                cur = []
            else:
                sys.exit("%s: record type %d" % (log, kind))
        out.append(cur)
    return out, flushes


def main():
    log, image = sys.argv[1:3]
    bs, tables, head, bitmaps = places(image)

    def meets(off, length, runs):
        a, b = off // bs, (off + length - 1) // bs
        return any(a <= y and b >= x for x, y in runs)

    marks = []
    wins, flushes = windows(log, bs, marks)
    if "--journal" in sys.argv[3:]:
        commits = len({w for w, k in marks if k == "commit"})
        empties = len({w for w, k in marks if k == "empty"})
        written = sum(n for w in wins for o, n in w)
        print("commits %d flushes %d checkpoints %d buffers %d kib %d" % (
            commits, flushes, empties, (written + (32 << 20) - 1) // (32 << 20),
            written // 1024))
        return
    commits = sum(1 for w in wins if any(meets(o, n, tables) for o, n in w))
    descriptors = sum(1 for w in wins for o, n in w if meets(o, n, [head]))
    nbitmaps = sum(1 for w in wins for o, n in w if meets(o, n, bitmaps))
    written = sum(n for w in wins for o, n in w)
    print("commits %d flushes %d descriptors %d buffers %d bitmaps %d groups %d" % (
        commits, flushes, descriptors, (written + (32 << 20) - 1) // (32 << 20),
        nbitmaps, len(bitmaps)))


if __name__ == "__main__":
    main()
