#!/usr/bin/env python3
"""kerneltree.py --- an ext3 tree written by the kernel, as users' are.

  kerneltree.py IMG SIZE_GIB FILES DIRS SEED [PAIRS]

Makes IMG (sparse, SIZE_GIB GiB) with mkfs.ext3, mounts it on a loop
device and writes FILES files of 1-16 KiB (random sizes) one after
another into DIRS directories chosen at random, then unmounts it.  The
kernel keeps such files whole, so with PAIRS every PAIRS-th file is
written together with the next one, 4 KiB of each in turn (two downloads
at once), which leaves both in pieces: the planner gets files to move.
Needs root (mount); everything is seeded.

KT_MAX_KIB (default 16) caps the file sizes and KT_BLOCK_SIZE (default
mkfs's) sets the block size: 2,000,000 files of 1-4 KiB in 1 KiB blocks
fit some 6 GB of disk, where 1-16 KiB in 4 KiB blocks take 20 GB.
"""
import os
import random
import subprocess
import sys
import tempfile
import time


def main(argv):
    img, gib, nfiles, ndirs, seed = argv[1], int(argv[2]), int(argv[3]), int(argv[4]), int(argv[5])
    pairs = int(argv[6]) if len(argv) > 6 else 0
    if os.path.exists(img):
        os.unlink(img)
    with open(img, "wb") as f:
        f.truncate(gib << 30)
    maxkib = int(os.environ.get("KT_MAX_KIB", "16"))
    bsize = os.environ.get("KT_BLOCK_SIZE")
    mkfs = ["mkfs.ext3", "-q", "-F"]
    if bsize:
        # Inodes for every file and directory, whatever the block size.
        # (mkfs rounds -N down to whole inode table blocks per group.)
        mkfs += ["-b", bsize, "-N", str((nfiles + ndirs) * 103 // 100 + 1024)]
    subprocess.run(mkfs + [img], check=True)
    mnt = tempfile.mkdtemp(prefix="kerneltree-")
    rnd = random.Random(seed)
    buf = bytes(range(256)) * 64
    subprocess.run(["mount", "-o", "loop", img, mnt], check=True)
    try:
        dirs = []
        for d in range(ndirs):
            dirs.append(os.path.join(mnt, "d%05d" % d))
            os.mkdir(dirs[-1])
        i = 0
        while i < nfiles:
            both = pairs and i % pairs == 0 and i + 1 < nfiles
            names = [os.path.join(dirs[rnd.randrange(ndirs)], "f%07d" % (i + k))
                     for k in range(2 if both else 1)]
            sizes = [rnd.randint(1024, maxkib * 1024) for _ in names]
            fds = [os.open(n, os.O_WRONLY | os.O_CREAT, 0o644) for n in names]
            step = 4096 if both else 16384
            for o in range(0, max(sizes), step):
                for fd, size in zip(fds, sizes):
                    if o < size:
                        os.write(fd, buf[o:min(size, o + step)])
            for fd in fds:
                os.close(fd)
            i += len(names)
    finally:
        umount(mnt)
        os.rmdir(mnt)


def umount(mnt):
    """Unmount MNT, again while it is busy: anything walking the
    directory tree (du, updatedb) holds it for a moment, and a mount left
    behind keeps its loop device and a deleted image."""
    for _ in range(20):
        if subprocess.run(["umount", mnt], stderr=subprocess.DEVNULL).returncode == 0:
            return
        time.sleep(0.5)
    subprocess.run(["umount", mnt], check=True)


if __name__ == "__main__":
    main(sys.argv)
