#!/usr/bin/env python3
"""oracle.py --- what debugfs says about an image, to check e2frag against.

Every figure here comes from debugfs's own output (ls -p, stat) and the
definitions in doc/design.md, never from e2frag:

  piece   a maximal run of physically consecutive blocks, walking debugfs's
          block list in its order with IND/DIND/TIND blocks in place and
          extent tree blocks (ETB) left out;
  extent  a maximal run of data blocks contiguous logically and physically;
  blocks  every block listed (data, IND/DIND/TIND, ETB).

Usage:
  oracle.py layout IMAGE            JSON {ino: {path, type, pieces, extents,
                                    blocks, runs}} for every reachable inode
                                    that owns blocks
  oracle.py compare IMAGE REPORT    compare e2frag --json REPORT with it;
                                    prints each difference, exit 1 if any
  oracle.py mapblocks IMAGE         every mapping block (IND, DIND, TIND,
                                    ETB) of every reachable inode, one a line
"""
import json
import re
import subprocess
import sys

ENTRY = re.compile(r"\((ETB\d+|IND|DIND|TIND|(\d+)(?:-(\d+))?(?:\[u\])?)\):(\d+)(?:-(\d+))?")


def debugfs(image, commands):
    """Run COMMANDS in one debugfs process; return each command's output."""
    script = "".join(c + "\n" for c in commands)
    out = subprocess.run(["debugfs", "-f", "-", image], input=script.encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         check=False).stdout.decode("utf-8", "surrogateescape")
    # debugfs echoes each command read from a file as "debugfs: CMD".
    parts = re.split(r"^debugfs: .*$", out, flags=re.M)
    return parts[1:]


def walk(image):
    """{ino: (path, type letter)} for everything reachable from /, breadth first."""
    found = {2: ("/", "d")}
    level = [(2, "/")]
    while level:
        outs = debugfs(image, ["ls -p <%d>" % ino for ino, _ in level])
        nxt = []
        for (dino, dpath), out in zip(level, outs):
            for line in out.splitlines():
                f = line.split("/")
                if len(f) < 7 or not f[1].isdigit():
                    continue
                ino, mode, name = int(f[1]), int(f[2], 8), "/".join(f[5:-2])
                if name in (".", "..") or ino == 0 or ino in found:
                    continue
                path = (dpath.rstrip("/") + "/" + name)
                kind = {0o040000: "d", 0o100000: "f", 0o120000: "l"}.get(mode & 0o170000, "o")
                found[ino] = (path, kind)
                if kind == "d":
                    nxt.append((ino, path))
        level = nxt
    return found


def parse_stat(text):
    """pieces, extents, blocks and the physical runs of one `stat` output."""
    lines = text.splitlines()
    listing = ""
    for i, line in enumerate(lines):
        if line.strip() in ("BLOCKS:", "EXTENTS:"):
            listing = lines[i + 1] if i + 1 < len(lines) else ""
            break
    runs, pieces, extents, blocks = [], 0, 0, 0
    prev_p_end = prev_l_end = prev_d_end = None
    for m in ENTRY.finditer(listing):
        kind, lo, hi, p0, p1 = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
        p0 = int(p0)
        p1 = int(p1) if p1 else p0
        n = p1 - p0 + 1
        blocks += n
        if kind.startswith("ETB"):
            continue
        if prev_p_end is None or p0 != prev_p_end + 1:
            pieces += 1
            runs.append([p0, n])
        else:
            runs[-1][1] += n
        prev_p_end = p1
        if kind in ("IND", "DIND", "TIND"):
            continue
        l0 = int(lo)
        if prev_l_end is None or l0 != prev_l_end + 1 or p0 != prev_d_end + 1:
            extents += 1
        prev_l_end = int(hi) if hi else l0
        prev_d_end = p1
    total = re.search(r"^TOTAL: (\d+)", text, re.M)
    if total and int(total.group(1)) != blocks:
        raise SystemExit("oracle: debugfs TOTAL %s but %d blocks listed" % (total.group(1), blocks))
    return pieces, extents, blocks, runs


def layout(image):
    names = walk(image)
    inos = sorted(names)
    result = {}
    for ino, out in zip(inos, debugfs(image, ["stat <%d>" % i for i in inos])):
        pieces, extents, blocks, runs = parse_stat(out)
        if blocks:
            path, kind = names[ino]
            result[ino] = {"path": path, "type": kind, "pieces": pieces,
                           "extents": extents, "blocks": blocks, "runs": runs}
    return result


def mapblocks(image):
    """The blocks that map files to their data: IND/DIND/TIND and ETB."""
    names = walk(image)
    inos = sorted(names)
    found = set()
    for out in debugfs(image, ["stat <%d>" % i for i in inos]):
        for m in ENTRY.finditer(out):
            if m.group(2) is None:      # a labelled block, not data
                p0 = int(m.group(4))
                p1 = int(m.group(5)) if m.group(5) else p0
                found.update(range(p0, p1 + 1))
    return sorted(found)


def compare(image, report_path):
    with open(report_path) as f:
        report = json.load(f)
    want = layout(image)
    got = {f["ino"]: f for f in report["files"]}
    errors = []
    kinds = {"file": "f", "dir": "d", "symlink": "l", "other": "o"}
    for ino in sorted(set(want) | set(got)):
        if ino not in got:
            errors.append("inode %d (%s) owns blocks but e2frag does not list it" % (ino, want[ino]["path"]))
            continue
        if ino not in want:
            errors.append("e2frag lists inode %d (%s), debugfs finds no blocks for it" % (ino, got[ino]["path"]))
            continue
        w, g = want[ino], got[ino]
        for key in ("pieces", "extents", "blocks", "path"):
            if w[key] != g[key]:
                errors.append("inode %d %s: %s is %r, debugfs says %r" % (ino, w["path"], key, g[key], w[key]))
        if kinds.get(g["type"]) != w["type"]:
            errors.append("inode %d %s: type %s, debugfs says %s" % (ino, w["path"], g["type"], w["type"]))
    for e in errors:
        print(e)
    print("# compared %d inodes with blocks, %d differences" % (len(want), len(errors)))
    return 1 if errors else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "layout":
        json.dump(layout(argv[2]), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    if len(argv) == 3 and argv[1] == "mapblocks":
        for b in mapblocks(argv[2]):
            print(b)
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
