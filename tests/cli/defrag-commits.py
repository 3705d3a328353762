#!/usr/bin/env python3
"""defrag-commits.py --- the commits a plan's order would force, from
debugfs's block lists (tests/lib/oracle.py), never from e2defrag's
figures (tests/cli/defrag-kerneltree.sh):

  reuses BEFORE AFTER PLAN_JSON
      Each file whose blocks changed between the images BEFORE and AFTER
      is a move, taken in the order of its unit in PLAN_JSON (e2defrag -n
      --json: files[].unit): a move gains the blocks it has after and not
      before, and releases the others.  Prints how many moves gain blocks
      that a move since the last such one released: each needs the commit
      of those before it (a move into blocks a move not yet durable
      released would overwrite that file's old layout), so that many
      commits at least, moved in plan order.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import oracle  # noqa: E402


def blockset(f):
    return {b for start, n in f["runs"] for b in range(start, start + n)}


def reuses(before, after, plan_json):
    a, b = oracle.layout(before), oracle.layout(after)
    with open(plan_json) as fp:
        plan = json.load(fp)
    order = sorted((f["unit"], f["ino"]) for f in plan["files"]
                   if f.get("unit") is not None)
    released, count = set(), 0
    for _, ino in order:
        old = blockset(a[ino]) if ino in a else set()
        new = blockset(b[ino]) if ino in b else set()
        if old == new:
            continue
        if (new - old) & released:
            count += 1
            released = set()
        released |= old - new
    return count


def main(argv):
    if len(argv) == 5 and argv[1] == "reuses":
        print(reuses(argv[2], argv[3], argv[4]))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
