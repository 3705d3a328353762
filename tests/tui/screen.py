#!/usr/bin/env python3
"""screen.py --- read a captured e2fragmap screen (tmux capture-pane -p,
NO_COLOR or vt100, so that every cell is one ASCII character).

    screen.py cells SCREEN    the cells from the top row on, one character each
    screen.py bpc SCREEN      blocks per cell, from the status line
    screen.py first SCREEN    the first block of the top row
    screen.py check SCREEN W H   the screen fits W x H and its rows follow on

The map rows are the lines that start with a block number; each row's
number must be the previous one plus a row of cells, or the screen is
rejected (exit 1): the cells are read in the order the numbers say.
"""
import re
import sys

ROW = re.compile(r"^( *)(\d+) (.*)$")


def load(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def status(lines):
    for line in reversed(lines):
        if line.strip():
            return line
    return ""


def bpc(lines):
    m = re.search(r"\b(\d+) blocks?/cell", status(lines))
    if not m:
        sys.exit("no blocks/cell in the status line: %r" % status(lines))
    return int(m.group(1))


def rows(lines):
    """[(first block, cells text, gutter width)] of the map rows, top down."""
    out = []
    for line in lines:
        m = ROW.match(line)
        if not m:
            break
        out.append((int(m.group(2)), m.group(3), len(m.group(1)) + len(m.group(2)) + 1))
    if not out:
        sys.exit("no map rows on the screen")
    return out


def cells(lines, width=None):
    rs = rows(lines)
    per_cell = bpc(lines)
    full = width if width is not None else max(len(r[1]) for r in rs)
    text = ""
    for i, (first, row, _) in enumerate(rs):
        want = rs[0][0] + i * full * per_cell
        if first != want:
            sys.exit("row %d starts at block %d, want %d" % (i, first, want))
        text += row.ljust(full) if i + 1 < len(rs) else row.rstrip(" ")
    return text


def main(argv):
    lines = load(argv[2])
    if argv[1] == "cells":
        print(cells(lines))
    elif argv[1] == "bpc":
        print(bpc(lines))
    elif argv[1] == "first":
        print(rows(lines)[0][0])
    elif argv[1] == "check":
        w, h = int(argv[3]), int(argv[4])
        if len(lines) > h or any(len(l) > w for l in lines):
            sys.exit("the screen spills out of %dx%d" % (w, h))
        gutter = rows(lines)[0][2]
        cells(lines, w - gutter)
        if "blocks/cell" not in lines[h - 1] and "block/cell" not in lines[h - 1]:
            sys.exit("the status line is not on line %d: %r" % (h, lines[h - 1]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
