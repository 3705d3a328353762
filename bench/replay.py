#!/usr/bin/env python3
"""bench/replay.py OPS MNT --- replay a workload's operations on a mounted
filesystem, by one process, as e2fragimg --script writes them: `create P`,
`write P BYTES`, `close P`, `delete P`, `sync` (sync(2)); lines starting
with # are comments.  Paths are relative to MNT.  Used by
bench/kernel-nearfull.sh and bench/kernel-aged.sh."""
import os
import sys


def main():
    ops, mnt = sys.argv[1], sys.argv[2]
    buf = bytes((i * 7 + 1) & 255 for i in range(1 << 20))
    fds = {}
    for line in open(ops):
        if line.startswith('#'):
            continue
        w = line.split()
        if not w:
            continue
        if w[0] == 'sync':
            os.sync()
            continue
        path = mnt + w[1]
        if w[0] == 'create':
            fds[w[1]] = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
        elif w[0] == 'write':
            n = int(w[2])
            while n:
                k = min(n, len(buf))
                os.write(fds[w[1]], buf[:k])
                n -= k
        elif w[0] == 'close':
            os.close(fds.pop(w[1]))
        elif w[0] == 'delete':
            os.unlink(path)
    os.sync()


if __name__ == '__main__':
    main()
