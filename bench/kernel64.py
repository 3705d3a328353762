#!/usr/bin/env python3
"""kernel64.py --- large fragmented files past block 2^32, written by the kernel.

  kernel64.py IMG [FILES [MIB]]

Makes IMG, a sparse 4.5 TiB file, with mkfs.ext4 -b 1024 -O 64bit (block
numbers up to 4,831,838,208), mounts it on a loop device (nodelalloc, so
that blocks are taken as they are written; noinit_itable, so that the
kernel does not zero every inode table) and writes FILES files (default
300) of MIB MiB (default 8) into directories whose block group lies past
block 2^32: top-level directories are made until enough of them land
there (Orlov spreads them over all groups), and files are written four at
a time in turns of 16 KiB, which leaves each in many pieces.  Unmounts.
Some 3 GB of real disk (the journal and the files).  Needs root (mount);
e2fragimg cannot put data that far without writing terabytes before it.
"""
import os
import subprocess
import sys
import tempfile

TIB_4_5 = 4608 << 30
HIGH_BLOCK = 1 << 32


def main(argv):
    img = argv[1]
    nfiles = int(argv[2]) if len(argv) > 2 else 300
    mib = int(argv[3]) if len(argv) > 3 else 8
    if os.path.exists(img):
        os.unlink(img)
    with open(img, "wb") as f:
        f.truncate(TIB_4_5)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "1024", "-O", "64bit",
                    "-E", "lazy_itable_init=1,lazy_journal_init=1", img], check=True)
    out = subprocess.run(["dumpe2fs", "-h", img], capture_output=True, text=True).stdout
    field = {l.split(":")[0]: l.split(":", 1)[1].strip() for l in out.splitlines() if ":" in l}
    ipg, bpg = int(field["Inodes per group"]), int(field["Blocks per group"])
    high_group = HIGH_BLOCK // bpg
    mnt = tempfile.mkdtemp(prefix="kernel64-")
    subprocess.run(["mount", "-o", "loop,nodelalloc,noinit_itable", img, mnt], check=True)
    try:
        high = []
        d = 0
        while len(high) < (nfiles + 39) // 40 and d < 4096:
            path = os.path.join(mnt, "d%04d" % d)
            os.mkdir(path)
            if (os.stat(path).st_ino - 1) // ipg >= high_group:
                high.append(path)
            d += 1
        if not high:
            sys.exit("no directory landed past block 2^32")
        chunk = 16 << 10
        data = bytes(range(256)) * (chunk // 256)
        made = 0
        while made < nfiles:
            n = min(4, nfiles - made)
            names = [os.path.join(high[(made + k) // 40 % len(high)], "f%04d" % (made + k))
                     for k in range(n)]
            fds = [os.open(p, os.O_WRONLY | os.O_CREAT, 0o644) for p in names]
            for _ in range((mib << 20) // chunk):
                for fd in fds:
                    os.write(fd, data)
            for fd in fds:
                os.close(fd)
            made += n
        print("%d directories made, %d past block 2^32; %d files of %d MiB" %
              (d, len(high), nfiles, mib))
    finally:
        subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)


if __name__ == "__main__":
    main(sys.argv)
