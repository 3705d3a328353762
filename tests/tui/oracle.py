#!/usr/bin/env python3
"""oracle.py --- what the block map of a test image should show, worked out
from dumpe2fs and debugfs alone (never from e2frag's code or output).

    oracle.py states IMG [--interleaved PATH,...]  one state letter a block
    oracle.py cells IMG BPC [--interleaved ...]     one letter a cell of BPC blocks
    oracle.py blocks IMG PATH...                    the blocks those files own
    oracle.py owners IMG                            "INO BLOCK..." a line, for every
                                                    inode reachable from the root
    oracle.py matches IMG PATTERN                   the paths / finds, in order

Block states, from least to most worth seeing (a cell shows its worst):
  . free  # fixed metadata  J journal  ! in use, no owner  d directory
  o file  f fragmented file  x interleaved file
Fixed metadata: blocks before the first data block, superblocks, group
descriptors, reserved GDT blocks, bitmaps, inode tables (dumpe2fs), and
the blocks of the reserved inodes other than the root and the journal
(tests/lib/best_oracle.py names them: below the first inode, and the
quota and orphan-file inodes).  A file is fragmented when it is in more
pieces than its best, both worked out by tests/lib/best_oracle.py from
dumpe2fs and debugfs (the zones the fixed metadata leaves; a file larger
than a zone needs more than one piece).  Which files interleave is known
from how the image was built (--interleaved); the rest come from debugfs.
"""
import fnmatch
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import best_oracle  # noqa: E402

ORDER = ".#J!dofx"


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          errors="replace").stdout


def ranges(text):
    """'1-3, 7' -> [(1, 3), (7, 7)]"""
    out = []
    for part in text.split(","):
        part = part.strip()
        m = re.match(r"^(\d+)(?:-(\d+))?", part)
        if m:
            out.append((int(m.group(1)), int(m.group(2) or m.group(1))))
    return out


def debugfs(img, commands):
    """Run debugfs commands; return {command: output lines}."""
    out = subprocess.run(
        ["debugfs", "-f", "-", img], input="\n".join(commands) + "\n",
        check=True, capture_output=True, text=True, errors="replace").stdout
    result, current = {}, None
    for line in out.splitlines():
        if line.startswith("debugfs: "):
            current = line[len("debugfs: "):]
            result[current] = []
        elif current is not None:
            result[current].append(line)
    return result


def block_list(lines):
    return [int(w) for line in lines for w in line.split() if w.isdigit()]


def walk(img):
    """{path: (ino, is_dir)} for everything reachable from the root."""
    found, todo = {"/": (2, True)}, ["/"]
    while todo:
        batch, todo = todo, []
        res = debugfs(img, ["ls -p " + d for d in batch])
        for d in batch:
            for line in res.get("ls -p " + d, []):
                f = line.split("/")
                if len(f) < 6 or f[5] in (".", ".."):
                    continue
                path = d.rstrip("/") + "/" + f[5]
                is_dir = f[2].startswith("04")
                found[path] = (int(f[1]), is_dir)
                if is_dir:
                    todo.append(path)
    return found


def matches(img, pattern):
    """Paths that own blocks whose name (whose path, for a pattern with a
    '/', taken from the root, one component against one, as FNM_PATHNAME
    does) matches PATTERN; by directory, then name."""
    found = walk(img)
    if "/" in pattern:
        want = ("" if pattern.startswith("/") else "/") + pattern
        parts = want.split("/")

        def ok(path):
            got = path.split("/")
            return len(got) == len(parts) and all(
                fnmatch.fnmatchcase(g, w) for g, w in zip(got, parts))
    else:
        def ok(path):
            return fnmatch.fnmatchcase(path.rsplit("/", 1)[1], pattern)
    names = sorted(p for p in found if p != "/" and ok(p))
    res = debugfs(img, ["blocks " + p for p in names])
    owners = [p for p in names if block_list(res.get("blocks " + p, []))]
    return sorted(owners, key=lambda p: (p.rsplit("/", 1)[0] or "/", p.rsplit("/", 1)[1]))


def states(img, interleaved):
    dump = run("dumpe2fs", img)
    count = int(re.search(r"^Block count:\s+(\d+)", dump, re.M).group(1))
    first = int(re.search(r"^First block:\s+(\d+)", dump, re.M).group(1))
    journal_ino = re.search(r"^Journal inode:\s+(\d+)", dump, re.M)
    state = ["u"] * count          # in use unless dumpe2fs lists it free
    for m in re.finditer(r"^\s+Free blocks: (.*)$", dump, re.M):
        for a, b in ranges(m.group(1)):
            for blk in range(a, b + 1):
                state[blk] = "."

    # "u": in use, owner not known yet; anything that claims it wins.
    rank = ".u#J!dofx"

    def raise_to(blk, s):
        if blk < count and rank.index(s) > rank.index(state[blk]):
            state[blk] = s

    for blk in range(first):
        raise_to(blk, "#")
    for m in re.finditer(r"(?:superblock|Group descriptors|Reserved GDT blocks|"
                         r"Block bitmap|Inode bitmap|Inode table) at ([\d-]+)",
                         dump):
        for a, b in ranges(m.group(1)):
            for blk in range(a, b + 1):
                raise_to(blk, "#")
    journal = int(journal_ino.group(1)) if journal_ino else 0
    inos = best_oracle.reserved_inodes(dump)
    res = debugfs(img, ["blocks <%d>" % i for i in inos])
    for i in inos:
        for blk in block_list(res.get("blocks <%d>" % i, [])):
            raise_to(blk, "J" if i == journal else "#")

    files = walk(img)
    best = best_oracle.files(img)
    res = debugfs(img, ["blocks <%d>" % ino for ino, _ in files.values()])
    for path, (ino, is_dir) in sorted(files.items()):
        blocks = block_list(res.get("blocks <%d>" % ino, []))
        f = best.get(ino)
        if is_dir:
            s = "d"
        elif path in interleaved:
            s = "x"
        elif f and f["pieces"] > f["best"]:
            s = "f"
        else:
            s = "o"
        for blk in blocks:
            raise_to(blk, s)
    return ["!" if s == "u" else s for s in state]


def cells(state, bpc):
    out = []
    for c in range(0, len(state), bpc):
        out.append(max(state[c:c + bpc], key=ORDER.index))
    return out


def main(argv):
    interleaved = set()
    if "--interleaved" in argv:
        i = argv.index("--interleaved")
        interleaved = set(argv[i + 1].split(","))
        del argv[i:i + 2]
    if argv[1] == "states":
        print("".join(states(argv[2], interleaved)))
    elif argv[1] == "cells":
        print("".join(cells(states(argv[2], interleaved), int(argv[3]))))
    elif argv[1] == "matches":
        print("\n".join(matches(argv[2], argv[3])))
    elif argv[1] == "owners":
        files = walk(argv[2])
        res = debugfs(argv[2], ["blocks <%d>" % ino for ino, _ in files.values()])
        for ino, _ in sorted(set(files.values())):
            if ino:
                print(ino, " ".join(str(b) for b in
                                    block_list(res.get("blocks <%d>" % ino, []))))
    elif argv[1] == "blocks":
        res = debugfs(argv[2], ["blocks " + p for p in argv[3:]])
        for p in argv[3:]:
            print(" ".join(str(b) for b in block_list(res.get("blocks " + p, []))))
    else:
        sys.exit("usage: oracle.py states|cells|blocks IMG ...")


if __name__ == "__main__":
    main(sys.argv)
