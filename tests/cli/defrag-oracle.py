#!/usr/bin/env python3
"""defrag-oracle.py --- what e2defrag's tests check an image against,
read with debugfs alone (never with e2frag/e2defrag code).

  snapshot IMG           JSON on stdout: every path with its inode, and per
                         inode its stat fields (debugfs stat without the
                         block list, checksum and block count), the sha256
                         of its contents (regular files, slow symlinks) or
                         its entries (directories)
  files IMG              JSON on stdout: what a user finds, the part of a
                         snapshot no move or power cut may change: every
                         path with its inode, and per inode its type,
                         permission bits, owner, group, project, link
                         count, size (not a directory's: e2fsck -fy may
                         compact it), symlink target, extended attributes
                         (debugfs stat) and the sha256 of its contents or
                         its entries, as snapshot (timestamps left out: a
                         mount may touch them)
  compare A B            exit 1 (naming the differences) unless two
                         snapshots (or two files outputs) are the same
  pieces IMG             JSON on stdout: {path: pieces} for every regular
                         file and directory, pieces counted from the block
                         list debugfs stat prints (doc/design.md: runs of
                         consecutive physical blocks in logical order, with
                         IND/DIND/TIND in their place, extent tree blocks
                         not counted)
  blocks IMG PATH        the data and mapping blocks of PATH, one per line
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile


# E2F_ORACLE_CATASTROPHIC=1: debugfs -c, which reads no bitmaps (what the
# oracle asks needs none); on a filesystem of 2^32 blocks reading them
# costs most of a second per call.
DEBUGFS_OPTS = ["-c"] if os.environ.get("E2F_ORACLE_CATASTROPHIC") else []


def debugfs(img, cmds):
    """Run CMDS in one debugfs; return {index: output lines} per command."""
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        for c in cmds:
            f.write(c + "\n")
        name = f.name
    try:
        out = subprocess.run(["debugfs"] + DEBUGFS_OPTS + ["-f", name, img],
                             capture_output=True,
                             text=True, errors="replace", check=False).stdout
    finally:
        os.unlink(name)
    res, cur = {}, -1
    for line in out.split("\n"):
        if line.startswith("debugfs: "):
            cur += 1
            res[cur] = []
            continue
        if cur >= 0:
            res[cur].append(line)
    return res


def walk(img):
    """{path: (ino, mode)} for the whole tree, breadth first, via ls -p."""
    paths = {"/": (2, 0o40755)}
    level = ["/"]
    while level:
        out = debugfs(img, ["ls -p <%d>" % paths[p][0] for p in level])
        nxt = []
        for i, d in enumerate(level):
            for line in out.get(i, []):
                m = re.match(r"^/(\d+)/(\d+)/\d+/\d+/(.*)/(\d*)/$", line)
                if not m:
                    continue
                ino, mode, name = int(m.group(1)), int(m.group(2), 8), m.group(3)
                if ino == 0 or name in (".", ".."):
                    continue
                path = (d.rstrip("/") + "/" + name)
                paths[path] = (ino, mode)
                if mode & 0o170000 == 0o040000:
                    nxt.append(path)
        level = sorted(nxt)
    return paths


def block_list(stat_lines):
    """Tokens of the BLOCKS/EXTENTS list of a debugfs stat."""
    text, on = "", False
    for line in stat_lines:
        if line.startswith("BLOCKS:") or line.startswith("EXTENTS:"):
            on = True
            continue
        if on:
            text += line
    toks = []
    for t in re.findall(r"\(([^)]*)\):(\d+)(?:-(\d+))?", text):
        what, a, b = t
        a = int(a)
        b = int(b) if b else a
        toks.append((what, a, b))
    return toks


def pieces_of(stat_lines):
    n, nxt = 0, None
    for what, a, b in block_list(stat_lines):
        if what.startswith("ETB"):
            continue
        if nxt is None or a != nxt:
            n += 1
        nxt = b + 1
    return n


def filtered_stat(lines):
    keep = []
    for line in lines:
        if line.startswith("BLOCKS:") or line.startswith("EXTENTS:"):
            break
        if line.startswith("Inode checksum"):
            continue
        line = re.sub(r"\s+Blockcount: \d+", "", line)
        if line.strip():
            keep.append(line.rstrip())
    return keep


def snapshot(img):
    paths = walk(img)
    inos = sorted({v[0] for v in paths.values()})
    tmp = tempfile.mkdtemp()
    cmds = []
    for ino in inos:
        cmds.append("stat <%d>" % ino)
        cmds.append("dump <%d> %s/%d" % (ino, tmp, ino))
    out = debugfs(img, cmds)
    inodes = {}
    for k, ino in enumerate(inos):
        stat = out.get(2 * k, [])
        rec = {"stat": filtered_stat(stat)}
        f = "%s/%d" % (tmp, ino)
        mode = [v[1] for v in paths.values() if v[0] == ino][0]
        if mode & 0o170000 in (0o100000, 0o120000) and os.path.exists(f):
            with open(f, "rb") as fh:
                rec["sha256"] = hashlib.sha256(fh.read()).hexdigest()
        if os.path.exists(f):
            os.unlink(f)
        inodes[str(ino)] = rec
    os.rmdir(tmp)
    for p, (ino, mode) in paths.items():
        if mode & 0o170000 == 0o040000:
            ents = sorted([os.path.basename(q), v[0]] for q, v in paths.items()
                          if q != "/" and os.path.dirname(q) == p)
            inodes[str(ino)]["entries"] = ents
    return {"paths": {p: v[0] for p, v in sorted(paths.items())}, "inodes": inodes}


def user_view(stat_lines):
    """The fields of a debugfs stat a user sees: {name: value}."""
    text = "\n".join(stat_lines)
    view = {}
    for key, pat in (("type", r"Type: (\S+)"), ("mode", r"Mode:\s+(\d+)"),
                     ("user", r"User:\s+(\d+)"), ("group", r"Group:\s+(\d+)"),
                     ("project", r"Project:\s+(\d+)"), ("size", r"Size: (\d+)"),
                     ("links", r"^Links: (\d+)"),
                     ("target", r"^Fast link dest: (.*)$")):
        m = re.search(pat, text, re.M)
        if m:
            view[key] = m.group(1)
    xattrs, on = [], False
    for line in stat_lines:
        if line.startswith("Extended attributes:"):
            on = True
        elif on and line.startswith("  "):
            xattrs.append(line.strip())
        else:
            on = False
    view["xattrs"] = sorted(xattrs)
    return view


def files(img):
    snap = snapshot(img)
    for rec in snap["inodes"].values():
        rec.update(user_view(rec.pop("stat")))
        if rec.get("type") == "directory":
            del rec["size"]     # e2fsck -fy may compact it (Pass 3A)
    return snap


def compare(a, b):
    with open(a) as f:
        x = json.load(f)
    with open(b) as f:
        y = json.load(f)
    bad = 0
    for p in sorted(set(x["paths"]) | set(y["paths"])):
        if x["paths"].get(p) != y["paths"].get(p):
            print("path %s: inode %s -> %s" % (p, x["paths"].get(p), y["paths"].get(p)))
            bad += 1
    for i in sorted(set(x["inodes"]) | set(y["inodes"]), key=int):
        if x["inodes"].get(i) != y["inodes"].get(i):
            xi, yi = x["inodes"].get(i, {}), y["inodes"].get(i, {})
            for key in sorted(set(xi) | set(yi)):
                if xi.get(key) != yi.get(key):
                    print("inode %s %s: %s -> %s" % (i, key, xi.get(key), yi.get(key)))
            bad += 1
    if bad:
        print("%d differences" % bad)
    return 1 if bad else 0


def pieces(img):
    paths = walk(img)
    items = [(p, v[0]) for p, v in sorted(paths.items())
             if v[1] & 0o170000 in (0o100000, 0o040000)]
    out = debugfs(img, ["stat <%d>" % ino for _, ino in items])
    return {p: pieces_of(out.get(k, [])) for k, (p, _) in enumerate(items)}


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    cmd = sys.argv[1]
    if cmd == "snapshot":
        json.dump(snapshot(sys.argv[2]), sys.stdout, indent=1, sort_keys=True)
        return 0
    if cmd == "files":
        json.dump(files(sys.argv[2]), sys.stdout, indent=1, sort_keys=True)
        return 0
    if cmd == "compare":
        return compare(sys.argv[2], sys.argv[3])
    if cmd == "pieces":
        json.dump(pieces(sys.argv[2]), sys.stdout, indent=1, sort_keys=True)
        return 0
    if cmd == "blocks":
        out = debugfs(sys.argv[2], ["stat %s" % sys.argv[3]])
        lines = [str(blk) for what, a, b in block_list(out.get(0, []))
                 for blk in range(a, b + 1)]
        try:
            sys.stdout.write("".join(l + "\n" for l in lines))
            sys.stdout.flush()
        except BrokenPipeError:
            pass	# a reader that wanted only the first lines
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
