#!/usr/bin/env python3
"""defrag-nearfull.py --- oracles of tests/cli/defrag-nearfull.sh, from
dumpe2fs and debugfs (through defrag-oracle.py and tests/lib/best_oracle.py:
the zones, every file's pieces and best), never from e2defrag; e2frag
--json gives only which files interleave.

  selected IMG FRAG_JSON the files e2defrag selects by default: pieces >
                         best (the oracle's), or interleaved with others
                         (e2frag --json before the run): "path blocks best"
                         lines
  room IMG FRAG_JSON     "room" when the promise's condition holds, else
                         "no-room: WHY" (see zone_room() below)
  strict-room IMG FRAG_JSON  the same with every unselected file left where
                         it is (room() below): "room" means no file need
                         even move out of the way
  layout IMG FRAG_JSON   per the oracle: the files whose pieces exceed
                         their best ("path pieces best" lines), and any
                         file whose pieces or best e2frag counts otherwise
                         ("mismatch path e2frag oracle", "mismatch path
                         best e2frag oracle")
  second IMG             the second-longest free run in blocks (dumpe2fs):
                         the longest a file can use besides the longest
  most IMG FRAG_JSON     how many selected files zone_room's packing puts
                         at their best when it skips those that fit
                         nowhere (the disk too full for all): a run may
                         not leave fewer at best
  pieces IMG             "path pieces" per debugfs block lists, every file
"""
import importlib.util
import json
import os
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    "oracle", os.path.join(os.path.dirname(os.path.abspath(__file__)), "defrag-oracle.py"))
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import best_oracle  # noqa: E402


def selected(img, frag):
    """Files a default run selects: avoidably fragmented (per the oracle)
    or interleaved (per e2frag): [{path, blocks, best}]."""
    inter = {f["ino"] for f in frag["files"] if f.get("interleaved_with")}
    out = []
    for ino, f in sorted(best_oracle.files(img).items()):
        if f["type"] not in ("f", "d"):
            continue
        if f["pieces"] > f["best"] or ino in inter:
            out.append({"path": f["path"], "blocks": f["blocks"], "best": f["best"]})
    return out


def fixed_blocks(img):
    """Blocks of the fixed metadata (tests/lib/best_oracle.py: dumpe2fs'
    per-group tables, the MMP block, every reserved inode's blocks), the
    block count and the first block."""
    first, last, runs = best_oracle.fixed_runs(img)
    fixed = set()
    for a, b in runs:
        fixed.update(range(a, b + 1))
    return fixed, last + 1, first


def owners(img):
    """{path: (data_and_mapping_blocks, etb_blocks)} of every file and directory."""
    paths = oracle.walk(img)
    items = [(p, v[0]) for p, v in sorted(paths.items())
             if v[1] & 0o170000 in (0o100000, 0o040000, 0o120000)]
    out = oracle.debugfs(img, ["stat <%d>" % ino for _, ino in items])
    res = {}
    for k, (p, _) in enumerate(items):
        main, etb = [], []
        for what, a, b in oracle.block_list(out.get(k, [])):
            (etb if what.startswith("ETB") else main).extend(range(a, b + 1))
        res[p] = (main, etb)
    return res


def zone_room(img, frag):
    """zone_fit's verdict (the promise's condition)."""
    return zone_fit(img, frag)[0]


def zone_fit(img, frag):
    """The promise's condition, precisely, per zone: the zones are the
    stretches between fixed metadata (dumpe2fs' tables, the resize inode
    and the journal); a zone can give the selected files its free blocks
    and their own (other files may move within it: that costs writes, not
    room).  Largest first, each selected file of N data and mapping blocks
    and best B goes to the zone with the least room to spare that holds it
    (B >= 1), or else across K <= B consecutive zones, those inside wholly
    available, their room adding up to N, wasting least.  Extent-tree
    blocks need single blocks of what is left.  When every file finds a
    place, all can be at their best, so exit 1 breaks the promise.
    Returns (verdict, files placed at best), a file that fits nowhere
    skipped for the count."""
    sel = selected(img, frag)
    fixed, count, first = fixed_blocks(img)
    own = owners(img)
    selpaths = {f["path"] for f in sel}
    taken = set()
    for p, (main, etb) in own.items():
        if p not in selpaths:
            taken.update(main)
            taken.update(etb)
    size, cap = [], []
    b = first
    while b < count:
        if b in fixed:
            b += 1
            continue
        s, c = b, 0
        while b < count and b not in fixed:
            c += b not in taken
            b += 1
        size.append(b - s)
        cap.append(c)
    need_etb, files = 0, []
    for f in sel:
        main, etb = own.get(f["path"], ([], []))
        files.append((len(main), f["best"], f["path"]))
        need_etb += len(etb)
    files.sort(key=lambda x: (-x[0], x[2]))
    why, placed = None, 0
    for n, best, path in files:
        pick = None
        for z in range(len(cap)):
            tot = 0
            for k in range(1, best + 1):
                zz = z + k - 1
                if zz >= len(cap):
                    break
                if k > 2 and cap[zz - 1] != size[zz - 1]:
                    break	# a zone inside must be wholly the file's
                tot += cap[zz]
                if tot >= n:
                    if pick is None or tot - n < pick[0]:
                        pick = (tot - n, z, k)
                    break
        if n and pick is None:
            why = why or "no-room: %s (%d blocks, best %d) fits in no zone" % (path, n, best)
            continue
        placed += 1
        if not n:
            continue
        _, z, k = pick
        if k == 1:
            cap[z] -= n
        else:
            used = sum(cap[z:z + k - 1])
            for zz in range(z, z + k - 1):
                cap[zz] = 0
            cap[z + k - 1] -= n - used
    if why:
        return why, placed
    if sum(cap) < need_etb:
        return "no-room: %d extent-tree blocks, %d blocks left" % (need_etb, sum(cap)), placed
    return "room", placed


def room(img, frag):
    """A stricter condition, reported beside zone_room's: leaving every unselected file
    and the fixed metadata where they are, the space that is free or held
    by the selected files takes every selected file at its best piece
    count, placed largest first, each where it wastes least (a file of
    best k may cross k - 1 stretches of fixed metadata, nothing else);
    extent-tree blocks need single blocks of what is left.  When this
    holds, e2defrag needs no other file moved to put all of them at their
    best, so exit 1 would break the promise; when it does not, exit 1 is
    allowed (the run may still do better by moving others)."""
    sel = selected(img, frag)
    fixed, count, first = fixed_blocks(img)
    own = owners(img)
    selpaths = {f["path"] for f in sel}
    taken = set(fixed)
    for p, (main, etb) in own.items():
        if p not in selpaths:
            taken.update(main)
            taken.update(etb)
    # chains: lists of [start, length] runs of available blocks separated
    # only by fixed metadata
    chains, cur, b = [], [], first
    while b < count:
        if b in fixed:
            b += 1
            continue
        if b in taken:
            if cur:
                chains.append(cur)
                cur = []
            b += 1
            continue
        s = b
        while b < count and b not in taken and b not in fixed:
            b += 1
        cur.append([s, b - s])
    if cur:
        chains.append(cur)
    need_etb = 0
    files = []
    for f in sel:
        main, etb = own.get(f["path"], ([], []))
        files.append((len(main), f["best"], f["path"]))
        need_etb += len(etb)
    files.sort(key=lambda x: (-x[0], x[2]))
    for n, best, path in files:
        if n == 0:
            continue
        pick = None
        for ci, ch in enumerate(chains):
            for i in range(len(ch)):
                tot = 0
                for j in range(i, len(ch)):
                    if ch[j][1] == 0 and j > i:
                        break
                    tot += ch[j][1]
                    if tot >= n:
                        break
                if tot >= n and j - i + 1 <= best:
                    waste = tot - n
                    if pick is None or waste < pick[0]:
                        pick = (waste, ci, i, j)
        if pick is None:
            return "no-room: %s (%d blocks, best %d) fits nowhere" % (path, n, best)
        _, ci, i, j = pick
        ch = chains[ci]
        if i == j:
            ch[i][0] += n
            ch[i][1] -= n
            continue
        used_last = n - sum(ch[k][1] for k in range(i, j))
        left = ch[:i + 1]
        left[-1] = [left[-1][0], 0]
        right = [[ch[j][0] + used_last, ch[j][1] - used_last]] + ch[j + 1:]
        chains[ci:ci + 1] = [left, right]
    left = sum(r[1] for ch in chains for r in ch)
    if left < need_etb:
        return "no-room: %d extent-tree blocks, %d blocks left" % (need_etb, left)
    return "room"


def layout(img, frag):
    got = {f["path"]: f for f in frag["files"]}
    lines = []
    for _, w in sorted(best_oracle.files(img).items()):
        if w["type"] not in ("f", "d"):
            continue
        g = got.get(w["path"])
        if g is None:
            lines.append("mismatch %s not-listed %d" % (w["path"], w["pieces"]))
        elif g["pieces"] != w["pieces"]:
            lines.append("mismatch %s %d %d" % (w["path"], g["pieces"], w["pieces"]))
        elif g["best"] != w["best"]:
            lines.append("mismatch %s best %d %d" % (w["path"], g["best"], w["best"]))
        if w["pieces"] > w["best"]:
            lines.append("%s %d %d" % (w["path"], w["pieces"], w["best"]))
    return lines


def free_runs(img):
    """Free runs of the whole filesystem, longest first, from dumpe2fs'
    per-group free block lists (runs continuing across groups joined)."""
    text = subprocess.run(["dumpe2fs", img], capture_output=True, text=True,
                          check=False).stdout
    runs = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("Free blocks: "):
            continue
        for part in line[len("Free blocks: "):].split(","):
            part = part.strip()
            if not part:
                continue
            a, _, b = part.partition("-")
            a = int(a)
            b = int(b) if b else a
            if runs and runs[-1][1] + 1 == a:
                runs[-1][1] = b
            else:
                runs.append([a, b])
    return sorted((b - a + 1 for a, b in runs), reverse=True)


def main():
    cmd = sys.argv[1]
    if cmd == "selected":
        for f in selected(sys.argv[2], json.load(open(sys.argv[3]))):
            print(f["path"], f["blocks"], f["best"])
    elif cmd == "room":
        print(zone_room(sys.argv[2], json.load(open(sys.argv[3]))))
    elif cmd == "strict-room":
        print(room(sys.argv[2], json.load(open(sys.argv[3]))))
    elif cmd == "layout":
        for line in layout(sys.argv[2], json.load(open(sys.argv[3]))):
            print(line)
    elif cmd == "most":
        print(zone_fit(sys.argv[2], json.load(open(sys.argv[3])))[1])
    elif cmd == "pieces":
        for path, n in sorted(oracle.pieces(sys.argv[2]).items()):
            print(path, n)
    elif cmd == "second":
        runs = free_runs(sys.argv[2])
        print(runs[1] if len(runs) > 1 else 0)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
