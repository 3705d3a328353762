#!/usr/bin/env python3
"""bench/iocost.py --- what e2defrag's own I/O would cost on a rotating disk.

  iocost.py [options] TRACE IMAGE

TRACE is `strace -f -qq -s 0 -o TRACE -e trace=...` of one e2defrag run
(bench/iocost.sh gives the list), IMAGE a copy of the image it ran on,
as it was before the run (its geometry classifies the blocks).  Prints
one JSON object.

The disk (issue 22; the model e2frag uses for read time, lib/readmodel.c):

  jump(gap)       = 0                       gap == 0
                  = min(gap / rate, repos)  0 < gap (forward)
                  = repos                   gap < 0 (backward)
  repos(d)        = seek(d) + rotation / 2
  seek(d)         = t2t + (full - t2t) * sqrt(min(d, disk) / disk)
  full            = t2t + (avg - t2t) * sqrt(3)

with 7200 rpm, 120 MB/s, avg 8.5 ms, t2t 1 ms, and `disk` the disk's
size (--disk-size; default the image's size: the filesystem is the
whole disk, as on a recorder).  The head starts at offset 0.

  - The page cache serves any byte read or written before in the run
    (in 512-byte sectors; it starts cold and never evicts).
  - A read (pread64, preadv, read after lseek; fadvise WILLNEED too: the
    kernel reads those pages then) goes to the disk for the parts not in
    the cache, in the order issued: jump from the head, transfer.
  - A write (pwrite64, pwritev, write after lseek) only fills the cache
    and makes its sectors dirty.  At a flush (fsync, fdatasync,
    sync_file_range with WAIT_AFTER) the dirty sectors go to the disk in
    block order, contiguous ones as one transfer, each run a jump from
    the head; the flush waits for the platter: the next access after it
    pays at least half a rotation, even at the head's position.
  - Dirty sectors left at exit are written the same way, once.
  - O_DIRECT reads (--verify) write back the dirty sectors they cover
    and then read from the disk, cached or not.

Blocks are classed from dumpe2fs and debugfs: super (superblocks,
descriptors, reserved GDT), bitmap, itable, journal, data (everything
else: file data, mapping blocks, directories).  The scan and planning
are the I/O before the move phase: e2defrag -C FD's first "4 ..." line
in the trace (--progress-fd FD), else the first write.  A move, for the per-move figures,
runs from the I/O after the last move's final flush through its own
data flush (the first flush that writes data blocks) to the last flush
before the next data flush (segment_moves).

The limit (issue 22) is reading once and writing once, sequentially,
the bytes the run wrote: 2 x bytes_written / rate, bytes_written being
e2defrag -J's (the copies and the new mapping blocks; the journal and
the metadata written in place are the overhead judged, not counted).

The floor (--plan, e2defrag -n -J's plan for IMAGE): reading the blocks
the files the plan brings to best or to fewer pieces must leave (debugfs
`stat` on IMAGE: all but the largest diagonals, physical less logical, of
as many as the file keeps pieces; must_read), each run of them entered
once at the cheaper of the jump across the gap before it and a
reposition from above (sources_floor), plus bytes_written / rate.  No
run that gives those files as few pieces reads them for less, in any
order.  A run writing no more than this one has a limit no larger, so
where the floor is above 2x the limit no such run meets the target; the
scan and plan are not in the floor.
"""
import argparse
import bisect
import json
import math
import os
import re
import subprocess
import sys

SECTOR = 512
CLASSES = ("super", "bitmap", "itable", "journal", "data")


class Disk:
    """The model's parameters (lib/readmodel.c's formulas)."""

    def __init__(self, rpm, mbps, seek_ms, t2t_ms, disk_bytes):
        self.rate = mbps * 1e6
        self.rotation = 60.0 / rpm
        self.t2t = t2t_ms / 1e3
        self.full = self.t2t + (seek_ms / 1e3 - self.t2t) * math.sqrt(3.0)
        self.disk = float(disk_bytes)

    def jump(self, gap):
        if gap == 0:
            return 0.0
        d = min(abs(gap), self.disk)
        repos = (self.t2t + (self.full - self.t2t) * math.sqrt(d / self.disk) +
                 self.rotation / 2)
        if gap > 0 and gap / self.rate < repos:
            return gap / self.rate
        return repos

    def transfer(self, nbytes):
        return nbytes / self.rate


class Geometry:
    """Which class each filesystem block belongs to."""

    def __init__(self, image):
        out = subprocess.run(["dumpe2fs", image], capture_output=True,
                             text=True, check=True).stdout
        hdr = {}
        for line in out.splitlines():
            m = re.match(r"^([A-Za-z][^:]*):\s+(.*)$", line)
            if m and m.group(1) not in hdr:
                hdr[m.group(1)] = m.group(2)
        self.bs = int(hdr["Block size"])
        self.blocks = int(hdr["Block count"])
        self.per_group = int(hdr["Blocks per group"])
        self.first_data = int(hdr.get("First block", "0"))
        self.journal_blocks = []
        self.block_bitmaps = []
        self.desc_size = int(hdr.get("Group descriptor size", "32"))
        self.cls = bytearray([4]) * self.blocks     # 4: data

        def mark(a, b, c):
            a, b = int(a), int(b)
            self.cls[a:b + 1] = bytes([c]) * (b + 1 - a)

        for line in out.splitlines():
            for m in re.finditer(r"superblock at (\d+), Group descriptors at (\d+)-(\d+)", line):
                mark(m.group(1), m.group(1), 0)
                mark(m.group(2), m.group(3), 0)
            for m in re.finditer(r"Reserved GDT blocks at (\d+)-(\d+)", line):
                mark(m.group(1), m.group(2), 0)
            for m in re.finditer(r"(Block|Inode) bitmap at (\d+)", line):
                mark(m.group(2), m.group(2), 1)
                if m.group(1) == "Block":
                    self.block_bitmaps.append(int(m.group(2)))
            for m in re.finditer(r"Inode table at (\d+)-(\d+)", line):
                mark(m.group(1), m.group(2), 2)
        if "has_journal" in hdr.get("Filesystem features", ""):
            jb = subprocess.run(["debugfs", "-R", "blocks <8>", image],
                                capture_output=True, text=True).stdout.split()
            self.journal_blocks = [int(b) for b in jb]
            for b in self.journal_blocks:
                self.cls[b] = 3

    def class_of(self, offset):
        b = offset // self.bs
        return CLASSES[self.cls[b]] if b < self.blocks else "data"


def parse_trace(path, image, progress_fd=-1):
    """The image's I/O, in order: (op, fd_direct, offset, length) with op
    read, write, flush, or move (where e2defrag's -C PROGRESS_FD says the
    move phase begins: a line "4 DONE TOTAL"); and the counts of every
    traced call."""
    base = os.path.basename(image)
    fds = {}            # fd -> [position, direct]
    events = []
    calls = {}
    pending = {}        # pid -> text of an unfinished call
    moving = False
    line_re = re.compile(r"^(\d+)\s+(.*)$")
    call_re = re.compile(r"^(\w+)\((.*)\)\s+=\s+(-?\d+|\?)")
    for raw in open(path, errors="replace"):
        m = line_re.match(raw.rstrip("\n"))
        if not m:
            continue
        pid, text = m.group(1), m.group(2)
        if text.endswith("<unfinished ...>"):
            pending[pid] = text[:-len("<unfinished ...>")]
            continue
        r = re.match(r"^<\.\.\. \w+ resumed>(.*)$", text)
        if r:
            text = pending.pop(pid, "") + r.group(1)
        c = call_re.match(text)
        if not c:
            continue
        name, args, ret = c.group(1), c.group(2), c.group(3)
        calls[name] = calls.get(name, 0) + 1
        if ret == "?" or int(ret) < 0:
            continue
        ret = int(ret)
        if name in ("openat", "open"):
            p = re.search(r'"([^"]*)"', args)
            if p and os.path.basename(p.group(1)) == base:
                fds[ret] = [0, "O_DIRECT" in args]
            else:
                fds.pop(ret, None)
            continue
        if name == "sync":
            events.append(("flush", False, 0, 0))
            continue
        fd_m = re.match(r"^(\d+)", args)
        if not fd_m:
            continue
        fd = int(fd_m.group(1))
        if name == "close":
            fds.pop(fd, None)
            continue
        if name in ("dup", "dup2", "dup3") and fd in fds:
            fds[ret] = list(fds[fd])
            continue
        if fd == progress_fd and name == "write" and '"4 ' in args:
            if not moving:
                events.append(("move", False, 0, 0))
                moving = True
            continue
        if fd not in fds:
            continue
        calls["image:" + name] = calls.get("image:" + name, 0) + 1
        st = fds[fd]
        last = [p.strip() for p in args.rsplit(",", 2)]
        if name in ("pread64", "preadv", "pwrite64", "pwritev"):
            off = int(last[-1])
        elif name in ("preadv2", "pwritev2"):
            off = int(last[-2])     # the flags come last
        if name in ("pread64", "preadv", "preadv2"):
            events.append(("read", st[1], off, ret))
        elif name in ("pwrite64", "pwritev", "pwritev2"):
            events.append(("write", st[1], off, ret))
        elif name == "lseek":
            st[0] = ret
        elif name == "read":
            events.append(("read", st[1], st[0], ret))
            st[0] += ret
        elif name == "write":
            events.append(("write", st[1], st[0], ret))
            st[0] += ret
        elif name in ("fsync", "fdatasync", "syncfs"):
            events.append(("flush", False, 0, 0))
        elif name == "sync_file_range" and "WAIT_AFTER" in args:
            events.append(("flush", False, 0, 0))
        elif name == "fadvise64" and "WILLNEED" in args:
            a = [p.strip() for p in args.split(",")]
            events.append(("read", False, int(a[1]), int(a[2])))
    return events, calls


def runs_of(intervals):
    """Sorted, merged [a, b) intervals."""
    out = []
    for a, b in sorted(tuple(x) for x in intervals):
        if out and a <= out[-1][1]:
            if b > out[-1][1]:
                out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


class Model:
    """The cache, the dirty sectors, the head, and the time spent."""

    def __init__(self, disk, geo, size):
        self.d = disk
        self.geo = geo
        self.cached = bytearray((size + SECTOR - 1) // SECTOR + 1)
        self.dirty = []
        self.head = 0
        self.after_flush = False
        self.t = 0.0
        self.by = {}          # (kind, class) -> [seconds, bytes, accesses]
        self.read_bytes = 0
        self.write_bytes = 0
        self.flushes = 0
        self.flushes_writing = 0
        self.jumps = 0
        self.log = None       # a file: one line per disk access
        self.nevent = 0

    def _access(self, kind, a, b):
        gap = a - self.head
        j = self.d.jump(gap)
        if self.after_flush:
            j = max(j, self.d.rotation / 2)
            self.after_flush = False
        if j > 0:
            self.jumps += 1
        cost = j + self.d.transfer(b - a)
        self.t += cost
        self.head = b
        if self.log:
            self.log.write("%d %.6f %s %s %d %d %.6f\n" % (
                self.nevent, self.t, kind, self.geo.class_of(a), a, b - a, j))
        rec = self.by.setdefault((kind, self.geo.class_of(a)), [0.0, 0, 0])
        rec[0] += cost
        rec[1] += b - a
        rec[2] += 1
        return cost

    def read(self, off, length, direct=False):
        a, b = off // SECTOR, (off + length + SECTOR - 1) // SECTOR
        if b > len(self.cached):
            b = len(self.cached)
        cost = 0.0
        if direct:
            mine = [(x, y) for x, y in self.dirty if x < b * SECTOR and y > a * SECTOR]
            if mine:
                self.dirty = [(x, y) for x, y in self.dirty
                              if not (x < b * SECTOR and y > a * SECTOR)]
                for x, y in runs_of(mine):
                    cost += self._access("write", x, y)
                    self.write_bytes += y - x
            cost += self._access("read", a * SECTOR, b * SECTOR)
            self.read_bytes += (b - a) * SECTOR
            return cost
        i = a
        while i < b:
            j = self.cached.find(0, i, b)
            if j < 0:
                break
            k = self.cached.find(1, j, b)
            if k < 0:
                k = b
            cost += self._access("read", j * SECTOR, k * SECTOR)
            self.read_bytes += (k - j) * SECTOR
            self.cached[j:k] = b"\1" * (k - j)
            i = k
        return cost

    def write(self, off, length):
        a, b = off // SECTOR, (off + length + SECTOR - 1) // SECTOR
        self.cached[a:b] = b"\1" * (b - a)
        self.dirty.append((a * SECTOR, b * SECTOR))

    def flush(self, count=True):
        """Returns (seconds, runs written, {class: bytes})."""
        if count:
            self.flushes += 1
        cost, classes = 0.0, {}
        runs = runs_of(self.dirty)
        self.dirty = []
        for a, b in runs:
            cost += self._access("write", a, b)
            self.write_bytes += b - a
            c = self.geo.class_of(a)
            classes[c] = classes.get(c, 0) + b - a
        if runs:
            if count:
                self.flushes_writing += 1
            self.after_flush = True
        return cost, len(runs), classes


def segment_moves(flush_log):
    """Moves from the flushes: a flush is a data flush when it writes
    data-class blocks, and a move ends with the last flush before the
    next data flush.  Returns (first flush, last flush) index pairs."""
    data_idx = [k for k, f in enumerate(flush_log) if "data" in f["classes"]]
    moves = []
    for n, k in enumerate(data_idx):
        end = data_idx[n + 1] - 1 if n + 1 < len(data_idx) else len(flush_log) - 1
        moves.append((k, end))
    return moves


def move_start(events):
    """Where the move phase begins: the progress mark, else the first write."""
    for kind in ("move", "write"):
        i = next((i for i, e in enumerate(events) if e[0] == kind), None)
        if i is not None:
            return i
    return len(events)


def move_io(events, flush_log, segs, geo):
    """Each move's I/O: all its reads, its reads of data-class blocks (the
    blocks it releases: its sources and old mapping blocks) and its
    data-class writes (its new blocks), as [a, b) byte ranges."""
    out = []
    first = move_start(events)
    for a, b in segs:
        start = max(flush_log[a - 1]["event"] + 1 if a else 0, first)
        reads, dreads, dwrites = [], [], []
        for op, _, off, length in events[start:flush_log[b]["event"] + 1]:
            if op == "read":
                reads.append((off, off + length))
                if geo.class_of(off) == "data":
                    dreads.append((off, off + length))
            elif op == "write" and geo.class_of(off) == "data":
                dwrites.append((off, off + length))
        out.append({"start": start, "end": flush_log[b]["event"],
                    "reads": reads, "dreads": dreads, "dwrites": dwrites})
    return out


def meets(runs, merged_set):
    """Whether a [a, b) of RUNS meets the sorted, merged MERGED_SET."""
    starts = [x for x, _ in merged_set]
    for a, b in runs:
        i = bisect.bisect_right(starts, a) - 1
        if i >= 0 and merged_set[i][1] > a:
            return True
        if i + 1 < len(merged_set) and merged_set[i + 1][0] < b:
            return True
    return False


def forced_reuses(moves):
    """How many moves write into blocks released by a move since the last
    such one: the commits a plan forces on any batching (a move's new
    blocks must not be ones whose release is not durable yet)."""
    n, released = 0, []
    for mv in moves:
        if released and meets(mv["dwrites"], released):
            n += 1
            released = []
        released = runs_of(released + mv["dreads"])
    return n


MAPPED = re.compile(r"\((\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?")


def must_read(stat, keep):
    """The blocks of a file that any run giving it KEEP pieces must read,
    from debugfs `stat`'s BLOCKS or EXTENTS (LOGICAL):PHYSICAL ranges: a
    block can stay where it is only in one of the file's KEEP extents
    after the run, each of which holds consecutive logical blocks at
    consecutive physical ones; so at most KEEP of its diagonals (physical
    less logical) stay, and the largest are left out here."""
    diag = {}
    for m in MAPPED.finditer(stat):
        lo, hi, p = int(m.group(1)), int(m.group(2) or m.group(1)), int(m.group(3))
        diag.setdefault(p - lo, []).append((p, hi - lo + 1))
    stay = sorted(diag, key=lambda d: -sum(n for _, n in diag[d]))[:keep]
    return [r for d, runs in diag.items() if d not in stay for r in runs]


def sources_floor(plan, image, disk, bs):
    """The floor's reading: the blocks the files PLAN (e2defrag -n -J)
    brings to best or to fewer pieces must leave (must_read, on IMAGE as
    debugfs sees it), sorted into runs.  However a run orders its reads,
    it enters each of these runs once at least: from below, across at
    least the gap to the run before it (read through, or a jump: jump()
    grows with the gap), or from above, a reposition, no cheaper than
    seek(0) + half a rotation.  So each run costs at least the cheaper of
    the two, and its bytes their transfer.  Returns (seconds, runs,
    files)."""
    files = [f for f in json.load(open(plan)).get("files") or []
             if f.get("outcome") in ("best", "partial")]
    if not files:
        return 0.0, 0, 0
    cmds = "".join("stat <%d>\n" % f["ino"] for f in files)
    out = subprocess.run(["debugfs", "-f", "-", image], input=cmds,
                         capture_output=True, text=True, check=True).stdout
    stats = re.split(r"^debugfs: stat <\d+>\n", out, flags=re.M)[1:]
    if len(stats) != len(files):
        sys.exit("iocost: debugfs stat gave %d answers for %d files" %
                 (len(stats), len(files)))
    runs = runs_of((p * bs, (p + n) * bs) for f, st in zip(files, stats)
                   for p, n in must_read(st, f.get("pieces_after") or 1))
    from_above = disk.t2t + disk.rotation / 2
    t, end = 0.0, 0
    for a, b in runs:
        t += min(disk.jump(a - end), from_above) + disk.transfer(b - a)
        end = b
    return t, len(runs), len(files)


def cost_trace(events, disk, geo, size, log=None):
    """Today's cost of EVENTS, with the flushes' log for the analysis."""
    m = Model(disk, geo, size)
    m.log = log
    first_write = move_start(events)
    scan_t = None
    flush_log = []
    pending_reads = []
    pending_writes = []
    t_mark = 0.0
    for i, (op, direct, off, length) in enumerate(events):
        m.nevent = i
        if log and op == "flush":
            log.write("%d %.6f flush\n" % (i, m.t))
        if i == first_write:
            scan_t = m.t
        if op == "move":
            continue
        if op == "read":
            m.read(off, length, direct)
            pending_reads.append((off, length))
        elif op == "write":
            m.write(off, length)
            pending_writes.append((off, length))
        else:
            c, nruns, classes = m.flush()
            flush_log.append({"event": i, "seconds": m.t - t_mark,
                              "write_seconds": c, "runs": nruns,
                              "classes": classes, "reads": pending_reads,
                              "writes": pending_writes})
            t_mark = m.t
            pending_reads, pending_writes = [], []
    if scan_t is None:
        scan_t = m.t
    c, nruns, classes = m.flush(count=False)
    tail = {"seconds": m.t - t_mark, "classes": classes}
    return m, scan_t, flush_log, tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("image", help="the image as it was before the run")
    ap.add_argument("--traced", help="the path e2defrag opened (default: IMAGE)")
    ap.add_argument("--result", help="e2defrag -J's output of the run")
    ap.add_argument("--rpm", type=float, default=7200)
    ap.add_argument("--mbps", type=float, default=120)
    ap.add_argument("--seek-ms", type=float, default=8.5)
    ap.add_argument("--track-seek-ms", type=float, default=1.0)
    ap.add_argument("--disk-size", type=float, default=0,
                    help="bytes the seek curve spans (default: the image's size)")
    ap.add_argument("--progress-fd", type=int, default=-1,
                    help="the fd of e2defrag's -C: its move phase starts the moves")
    ap.add_argument("--log", help="write every disk access to this file: "
                    "event, time before it, read|write, class, offset, bytes, jump seconds")
    ap.add_argument("--moves", help="write each move's I/O to this JSON file")
    ap.add_argument("--plan", help="e2defrag -n -J's plan for IMAGE: adds the floor "
                    "(reading what its files cannot keep in place at the least any "
                    "order costs, writing the run's bytes once)")
    o = ap.parse_args()

    geo = Geometry(o.image)
    size = geo.blocks * geo.bs
    disk = Disk(o.rpm, o.mbps, o.seek_ms, o.track_seek_ms,
                o.disk_size or max(size, os.path.getsize(o.image)))
    events, calls = parse_trace(o.trace, o.traced or o.image, o.progress_fd)
    log = open(o.log, "w") if o.log else None
    m, scan_t, flush_log, tail = cost_trace(events, disk, geo, size, log)
    if log:
        log.close()

    written = None
    moves = None
    if o.result:
        r = json.load(open(o.result)).get("result") or {}
        written = r.get("bytes_written", 0)
        moves = r.get("moves_done", 0) + r.get("moves_failed", 0)
    traced_w = sum(e[3] for e in events if e[0] == "write")
    traced_r = sum(e[3] for e in events if e[0] == "read")
    basis = written if written else traced_w
    limit = 2 * basis / disk.rate
    segs = segment_moves(flush_log)
    out = {
        "disk_bytes": disk.disk,
        "block_size": geo.bs,
        "moves": moves,
        "moves_traced": len(segs),
        "flushes": m.flushes,
        "flushes_writing": m.flushes_writing,
        "bytes_written": written,
        "bytes_written_traced": traced_w,
        "bytes_read_traced": traced_r,
        "disk_bytes_read": m.read_bytes,
        "disk_bytes_written": m.write_bytes,
        "modeled_seconds": m.t,
        "scan_seconds": scan_t,
        "move_seconds": m.t - scan_t,
        "exit_writeback_seconds": tail["seconds"],
        "limit_seconds": limit,
        "ratio": m.t / limit if limit else None,
        "move_ratio": (m.t - scan_t) / limit if limit else None,
        "flushes_per_32mib": m.flushes / (basis / 2**25) if basis else None,
        "forced_reuses": forced_reuses(move_io(events, flush_log, segs, geo)),
        "jumps": m.jumps,
        "by": {"%s %s" % k: {"seconds": v[0], "bytes": v[1], "accesses": v[2]}
               for k, v in sorted(m.by.items())},
        "calls": calls,
    }
    if o.plan:
        sweep, runs, files = sources_floor(o.plan, o.image, disk, geo.bs)
        floor = sweep + basis / disk.rate
        out.update({"floor_seconds": floor, "floor_read_seconds": sweep,
                    "floor_read_runs": runs, "floor_files": files,
                    "floor_ratio": floor / limit if limit else None})
    if o.moves:
        per = []
        for a, b in segs:
            fl = flush_log[a:b + 1]
            prev = flush_log[a - 1]["event"] if a else -1
            per.append({
                "flushes": [{"seconds": f["seconds"], "write_seconds": f["write_seconds"],
                             "runs": f["runs"], "classes": f["classes"]} for f in fl],
                "reads": [r for f in fl for r in f["reads"]],
                "writes": [w for f in fl for w in f["writes"]],
                "seconds": sum(f["seconds"] for f in fl),
                "first_event": prev + 1,
            })
        with open(o.moves, "w") as f:
            json.dump({"geometry": {"block_size": geo.bs, "blocks": geo.blocks,
                                    "per_group": geo.per_group,
                                    "journal": geo.journal_blocks[:1] + geo.journal_blocks[-1:]},
                       "moves": per}, f)
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
