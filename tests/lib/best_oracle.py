#!/usr/bin/env python3
"""best_oracle.py --- the zones of an image and every file's best, worked
out from dumpe2fs and debugfs alone (never from e2frag's code or output),
for the tests that count what is left to defragment.

The definitions are doc/design.md's and e2frag(8)'s:

  fixed metadata  per dumpe2fs: every superblock copy, group descriptor
                  block, reserved GDT block, block and inode bitmap and
                  inode table, and the MMP block; per debugfs stat, every
                  block of the reserved inodes (those below "First inode"
                  but the root, and the journal, quota and orphan-file
                  inodes the superblock names): data, IND/DIND/TIND,
                  extent tree blocks and the attribute block
  zone            a maximal run of blocks from "First block" to the last
                  that holds no fixed metadata
  stream          a file's data blocks and its IND/DIND/TIND blocks
                  (debugfs stat's block list without the ETB entries)
  pieces          runs of physically consecutive blocks of the stream, in
                  the order debugfs lists them (tests/lib/oracle.py)
  best            the fewest zones whose sizes add up to the stream: the
                  smallest k such that the k largest zones hold it (all
                  of them when none do; 0 for no stream)

Usage:
  best_oracle.py zones IMAGE          "start length" of every zone
  best_oracle.py files IMAGE          JSON {ino: {path, type, pieces,
                                      stream, blocks, best}} of every
                                      reachable inode that owns blocks
  best_oracle.py left IMAGE           the files in more pieces than their
                                      best, "path pieces best" a line, then
                                      "# N avoidably fragmented"
  best_oracle.py count IMAGE          that N alone
  best_oracle.py check IMAGE REPORT   e2frag --json REPORT against it: each
                                      file's pieces and best, the summary's
                                      avoidably_fragmented_files and
                                      best_pieces, the number of zones;
                                      prints each difference, exit 1 if any
"""
import bisect
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (tests/lib/oracle.py: debugfs, walk, parse_stat)

GROUP_TABLE = re.compile(
    r"(?:superblock|Group descriptors?|Reserved GDT blocks|Block bitmap|"
    r"Inode bitmap|Inode table) at (\d+)(?:-(\d+))?")


def header(dump, name):
    m = re.search(r"^%s:\s+(\d+)" % re.escape(name), dump, re.M)
    return int(m.group(1)) if m else None


def reserved_inodes(dump):
    """The inodes the filesystem keeps for itself, per dumpe2fs -h."""
    first_ino = header(dump, "First inode") or 11
    inos = {i for i in range(1, first_ino) if i != 2}
    for name in ("Journal inode", "User quota inode", "Group quota inode",
                 "Project quota inode", "Orphan file inode"):
        ino = header(dump, name)
        if ino:
            inos.add(ino)
    return sorted(inos)


def fixed_runs(image):
    """(first block, last block, [(start, end)] of fixed metadata, merged)."""
    dump = subprocess.run(["dumpe2fs", image], capture_output=True, text=True,
                          errors="replace", check=False).stdout
    count = header(dump, "Block count")
    first = header(dump, "First block")
    if count is None or first is None:
        raise SystemExit("best_oracle: dumpe2fs %s: no block count" % image)
    runs = []
    for m in GROUP_TABLE.finditer(dump):
        a = int(m.group(1))
        runs.append((a, int(m.group(2)) if m.group(2) else a))
    mmp = header(dump, "MMP block number")
    if mmp:
        runs.append((mmp, mmp))
    inos = reserved_inodes(dump)
    for out in oracle.debugfs(image, ["stat <%d>" % i for i in inos]):
        for m in oracle.ENTRY.finditer(out):
            a = int(m.group(4))
            runs.append((a, int(m.group(5)) if m.group(5) else a))
        acl = re.search(r"File ACL: (\d+)", out)
        if acl and int(acl.group(1)):
            runs.append((int(acl.group(1)), int(acl.group(1))))
    runs.sort()
    merged = []
    for a, b in runs:
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return first, count - 1, merged


def zones(image):
    """[(start, length)] of the stretches between fixed metadata."""
    first, last, fixed = fixed_runs(image)
    out, at = [], first
    for a, b in fixed:
        if b < at:
            continue
        if a > last:
            break
        if a > at:
            out.append((at, a - at))
        at = b + 1
    if at <= last:
        out.append((at, last - at + 1))
    return out


class Best:
    """best(stream) over the zones of one image."""

    def __init__(self, zone_list):
        lens = sorted((n for _, n in zone_list), reverse=True)
        self.nzones = len(lens)
        self.prefix = [0]
        for n in lens:
            self.prefix.append(self.prefix[-1] + n)

    def __call__(self, stream):
        if stream == 0:
            return 0
        if not self.nzones or self.prefix[-1] < stream:
            return max(self.nzones, 1)
        return bisect.bisect_left(self.prefix, stream)


def files(image):
    """{ino: {path, type, pieces, stream, blocks, best}} for every reachable
    inode with blocks (tests/lib/oracle.py's layout: blocks counts the
    extent tree blocks too; plus stream and best)."""
    best = Best(zones(image))
    result = {}
    for ino, f in oracle.layout(image).items():
        stream = sum(n for _, n in f["runs"])
        result[ino] = {"path": f["path"], "type": f["type"],
                       "pieces": f["pieces"], "stream": stream,
                       "blocks": f["blocks"], "best": best(stream)}
    return result


def left(image):
    """The files in more pieces than their best: [(path, pieces, best)]."""
    return sorted((f["path"], f["pieces"], f["best"])
                  for f in files(image).values() if f["pieces"] > f["best"])


def check(image, report_path):
    with open(report_path) as fh:
        report = json.load(fh)
    zone_list = zones(image)
    want = files(image)
    got = {f["ino"]: f for f in report["files"]}
    errors = []
    for ino in sorted(set(want) | set(got)):
        if ino not in got:
            errors.append("inode %d (%s) owns blocks but e2frag does not list it" % (ino, want[ino]["path"]))
            continue
        if ino not in want:
            errors.append("e2frag lists inode %d (%s), debugfs finds no blocks for it" % (ino, got[ino]["path"]))
            continue
        w, g = want[ino], got[ino]
        for key in ("pieces", "best"):
            if w[key] != g[key]:
                errors.append("inode %d %s: %s is %r, the oracle says %r (stream %d blocks)"
                              % (ino, w["path"], key, g[key], w[key], w["stream"]))
    s = report["summary"]
    avoid = sum(1 for f in want.values() if f["pieces"] > f["best"])
    if s["avoidably_fragmented_files"] != avoid:
        errors.append("summary: %d avoidably fragmented files, the oracle says %d"
                      % (s["avoidably_fragmented_files"], avoid))
    best_pieces = sum(f["best"] for f in want.values())
    if s["best_pieces"] != best_pieces:
        errors.append("summary: best_pieces %d, the oracle says %d" % (s["best_pieces"], best_pieces))
    nz = report["filesystem"].get("fixed_metadata_zones")
    if nz is not None and nz != len(zone_list):
        errors.append("filesystem: %d zones, the oracle says %d" % (nz, len(zone_list)))
    for e in errors:
        print(e)
    print("# %d zones (largest %d blocks), %d files, %d avoidably fragmented, %d differences"
          % (len(zone_list), max((n for _, n in zone_list), default=0), len(want),
             avoid, len(errors)))
    return 1 if errors else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "zones":
        for start, n in zones(argv[2]):
            print(start, n)
        return 0
    if len(argv) == 3 and argv[1] == "files":
        json.dump(files(argv[2]), sys.stdout, indent=1, sort_keys=True)
        print()
        return 0
    if len(argv) == 3 and argv[1] == "left":
        rows = left(argv[2])
        for path, pieces, best in rows:
            print(path, pieces, best)
        print("# %d avoidably fragmented" % len(rows))
        return 0
    if len(argv) == 3 and argv[1] == "count":
        print(len(left(argv[2])))
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
