#!/usr/bin/env python3
"""defrag-window-reads.py BEFORE AFTER TRACE --- what a run cut by a
limit read ahead (tests/cli/defrag-window-reads.sh), from debugfs's
block lists (tests/lib/oracle.py) and the run's strace, never from
e2defrag's own figures.

A block some regular file left between BEFORE and AFTER (in its list
before, not after) is one the run read to move.  Every range of file data
the run asked the page cache to read ahead (fadvise64 ...
POSIX_FADV_WILLNEED: the mover's read-ahead and its long gaps read
through) must hold at least one: a range holding none was read for moves
the run did not make.  Ranges that hold no regular file's data (the
scan's inode tables and directories) are not the mover's.  Prints the
ranges and bytes of each kind; exits 1 when any range served none.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import oracle  # noqa: E402

WILLNEED = re.compile(r"fadvise64\(\d+, (\d+), (\d+), POSIX_FADV_WILLNEED\)")


def blocksize(img):
    for line in oracle.debugfs(img, ["stats"])[0].splitlines():
        if line.startswith("Block size:"):
            return int(line.split()[-1])
    raise SystemExit("no block size from debugfs stats")


def blocks(layout):
    """{ino: its blocks} for the regular files of LAYOUT."""
    return {ino: {b for start, n in f["runs"] for b in range(start, start + n)}
            for ino, f in layout.items() if f["type"] == "f"}


def main(before, after, trace):
    bs = blocksize(before)
    old, new = blocks(oracle.layout(before)), blocks(oracle.layout(after))
    left, data = set(), set()
    for ino, held in old.items():
        left |= held - new.get(ino, set())
        data |= held
    served = [0, 0]
    wasted = [0, 0]
    with open(trace) as f:
        for line in f:
            m = WILLNEED.search(line)
            if not m:
                continue
            off, length = int(m.group(1)), int(m.group(2))
            first, end = off // bs, (off + length + bs - 1) // bs
            if not any(b in data for b in range(first, end)):
                continue
            kind = served if any(b in left for b in range(first, end)) else wasted
            kind[0] += 1
            kind[1] += length
    print("# read ahead: %d ranges (%d KiB) for blocks the run moved, %d ranges (%d KiB) for none"
          % (served[0], served[1] >> 10, wasted[0], wasted[1] >> 10))
    return 1 if wasted[0] else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
