#!/usr/bin/env python3
"""defrag-units.py --- the filesystem-wide figures a stop must not make
worse (tests/cli/defrag-units.sh), from debugfs's block lists
(tests/lib/oracle.py), never from e2defrag:

  metrics IMG      "pieces P read R": the pieces of every file (oracle.py's
                   definition: IND blocks in place, ETB left out) and the
                   modeled read time of every file, the read model of
                   doc/design.md with e2frag's default disk (7200 rpm,
                   120 MB/s, 8.5 ms average seek, 1 ms track to track,
                   1 TB), written out here again
  noworse A B      compare two "metrics" lines (files A, B): exit 1 when B
                   has more pieces or a longer read time than A
  jumps IMG PATH   the read time PATH's jumps between pieces cost: what
                   laying it out in one piece saves
  within A B       interleave sets ("ino set" lines, e2frag's: files A,
                   B): exit 1 unless every set of B lies within one set of
                   A (no file interleaved that was not, no two sets of A
                   joined); a set of A may have split in B
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import oracle  # noqa: E402

RPM, MBPS, SEEK, T2T, DISK = 7200.0, 120.0, 8.5e-3, 1e-3, 1e12


def jump(gap):
    """Seconds from the end of one piece to the start of the next, GAP
    bytes ahead (negative: behind)."""
    if gap == 0:
        return 0.0
    full = T2T + (SEEK - T2T) * math.sqrt(3.0)
    d = min(abs(gap), DISK)
    reposition = T2T + (full - T2T) * math.sqrt(d / DISK) + 60.0 / RPM / 2
    if gap > 0 and gap / (MBPS * 1e6) < reposition:
        return gap / (MBPS * 1e6)
    return reposition


def blocksize(img):
    out = oracle.debugfs(img, ["stats"])[0]
    for line in out.splitlines():
        if line.startswith("Block size:"):
            return int(line.split()[-1])
    raise SystemExit("no block size from debugfs stats")


def jumps(runs, bs):
    return sum(jump((b - (a + n)) * bs) for (a, n), (b, _) in zip(runs, runs[1:]))


def metrics(img):
    bs = blocksize(img)
    pieces, read = 0, 0.0
    for f in oracle.layout(img).values():
        runs = f["runs"]
        pieces += f["pieces"]
        read += sum(n for _, n in runs) * bs / (MBPS * 1e6) + jumps(runs, bs)
    return pieces, read


def main(argv):
    if len(argv) == 3 and argv[1] == "metrics":
        p, r = metrics(argv[2])
        print("pieces %d read %.6f" % (p, r))
        return 0
    if len(argv) == 4 and argv[1] == "jumps":
        bs = blocksize(argv[2])
        for f in oracle.layout(argv[2]).values():
            if f["path"] == argv[3]:
                print("%.6f" % jumps(f["runs"], bs))
                return 0
        raise SystemExit("no %s in %s" % (argv[3], argv[2]))
    if len(argv) == 4 and argv[1] == "noworse":
        a = open(argv[2]).read().split()
        b = open(argv[3]).read().split()
        pa, ra, pb, rb = int(a[1]), float(a[3]), int(b[1]), float(b[3])
        if pb > pa or rb > ra + 1e-6:
            print("worse: pieces %d -> %d, read %.6f -> %.6f" % (pa, pb, ra, rb))
            return 1
        return 0
    if len(argv) == 4 and argv[1] == "within":
        def sets(path):
            return dict(map(int, line.split()) for line in open(path) if line.strip())
        a, b = sets(argv[2]), sets(argv[3])
        was = {}
        for ino, s in b.items():
            was.setdefault(s, set()).add(a.get(ino, 0))
        bad = [s for s, v in was.items() if len(v) != 1 or 0 in v]
        if bad:
            print("sets not within one set before: %s" % ", ".join(
                "%d (from %s)" % (s, sorted(was[s])) for s in bad[:5]))
            return 1
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
