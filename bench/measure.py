#!/usr/bin/env python3
"""measure.py --- run commands alternately and compare them.

  measure.py RUNS NAME=COMMAND NAME=COMMAND...

Runs every command once to warm the cache, then RUNS rounds of each in
turn (alternating, so that noise on this shared machine hits both alike),
and prints each one's median wall time and peak RSS, and the
ratios of every command to the last one (the peer).  Output of the commands
goes to /dev/null; any exit status is accepted (e2fsck -n exits 4 on
fixable trouble, e2frag 1 when it recommends e2defrag) except a crash.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd):
    """Wall seconds and peak RSS (KiB) of CMD, as GNU time measures them.

    GNU time, not Python's wait4: a child forked from Python carries
    Python's own resident set until exec, and ru_maxrss keeps it.
    """
    with tempfile.NamedTemporaryFile("r") as out:
        start = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-q", "-o", out.name, "-f", "%M",
                            "sh", "-c", "exec " + cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.monotonic() - start
        fields = out.read().split()
    if p.returncode < 0 or len(fields) != 1:
        sys.exit("measure: '%s' failed (%s)" % (cmd, p.returncode))
    return wall, int(fields[0])


def main(argv):
    runs = int(argv[1])
    cmds = [a.split("=", 1) for a in argv[2:]]
    for _, cmd in cmds:
        run(cmd)
    results = {name: [] for name, _ in cmds}
    for _ in range(runs):
        for name, cmd in cmds:
            results[name].append(run(cmd))
    peer = cmds[-1][0]
    pw = statistics.median(w for w, _ in results[peer])
    pr = max(r for _, r in results[peer])
    print("%-10s %10s %12s %10s %10s" % ("command", "median s", "peak RSS KiB", "time x", "RSS x"))
    for name, _ in cmds:
        w = statistics.median(x for x, _ in results[name])
        r = max(y for _, y in results[name])
        print("%-10s %10.3f %12d %10.2f %10.2f" % (name, w, r, w / pw, r / pr))
    for name, _ in cmds:
        print("# %s walls: %s" % (name, " ".join("%.3f" % w for w, _ in results[name])))


if __name__ == "__main__":
    main(sys.argv)
