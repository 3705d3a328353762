#!/usr/bin/env python3
"""defrag-bigfile.py --- figures for tests/cli/defrag-bigfile.sh, worked out
from dumpe2fs, debugfs (tests/lib/best_oracle.py) and the write log alone,
never from e2defrag's own figures.

Usage:
  defrag-bigfile.py shape IMG FRAG    "LARGEST FREE": the stream blocks of
                                      the largest file a run selects
                                      (avoidably fragmented per the oracle,
                                      or interleaved per e2frag --json FRAG)
                                      and the free blocks (dumpe2fs -h)
  defrag-bigfile.py needed IMG FRAG   bytes of the files a run selects
                                      (their blocks: stream and mapping)
  defrag-bigfile.py written LOG IMG   "IN_PLACE JOURNAL": bytes a run wrote,
                                      per its write log ($E2FRAG_IOLOG:
                                      writer/writer.h's format), in place
                                      (data and metadata) and into the
                                      journal's blocks (debugfs's blocks of
                                      the journal inode)
"""
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import best_oracle  # noqa: E402


def selected(img, frag_path):
    frag = json.load(open(frag_path))
    inter = {f["ino"] for f in frag["files"] if f.get("interleaved_with")}
    return [f for ino, f in sorted(best_oracle.files(img).items())
            if f["type"] in ("f", "d") and (f["pieces"] > f["best"] or ino in inter)]


def header(img, name):
    out = subprocess.run(["dumpe2fs", "-h", img], capture_output=True, text=True,
                         check=False).stdout
    m = re.search(r"^%s:\s+(\d+)" % re.escape(name), out, re.M)
    return int(m.group(1))


def journal_blocks(img):
    out = subprocess.run(["dumpe2fs", "-h", img], capture_output=True, text=True,
                         check=False).stdout
    m = re.search(r"^Journal inode:\s+(\d+)", out, re.M)
    if not m:
        return set()
    out = subprocess.run(["debugfs", "-R", "blocks <%s>" % m.group(1), img],
                         capture_output=True, text=True, check=False).stdout
    return {int(b) for b in out.split()}


def written(log, img):
    bs = header(img, "Block size")
    journal = journal_blocks(img)
    in_place = logged = 0
    with open(log, "rb") as f:
        if f.read(8) != b"E2FIOLG1":
            raise SystemExit("defrag-bigfile: %s: not a write log" % log)
        while True:
            rec = f.read(24)
            if len(rec) < 24:
                break
            typ, _, offset, length = struct.unpack("=IIQQ", rec)
            if typ == ord("W"):
                for blk in range(offset // bs, (offset + length + bs - 1) // bs):
                    if blk in journal:
                        logged += bs
                    else:
                        in_place += bs
                f.seek(length, 1)
    return in_place, logged


def main():
    cmd = sys.argv[1]
    if cmd == "shape":
        sel = selected(sys.argv[2], sys.argv[3])
        print(max((f["stream"] for f in sel), default=0),
              header(sys.argv[2], "Free blocks"))
    elif cmd == "needed":
        bs = header(sys.argv[2], "Block size")
        print(sum(f["blocks"] for f in selected(sys.argv[2], sys.argv[3])) * bs)
    elif cmd == "written":
        print(*written(sys.argv[2], sys.argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
