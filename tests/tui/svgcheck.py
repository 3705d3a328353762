#!/usr/bin/env python3
"""svgcheck.py --- read e2frag's SVG map back as cells, for the tests.

    svgcheck.py cells SVG      one state letter a cell (see oracle.py)
    svgcheck.py marks SVG      one letter a cell: @ the file, & a partner, - none
    svgcheck.py attr SVG NAME  an attribute of the <svg> element
    svgcheck.py groups SVG     the data-group of every group boundary line
    svgcheck.py sets SVG       "CELL SET HUE" a line, for every cell drawn in an
                               interleave set's hue (class kHUE: 0-5, or n for
                               the neutral one)
    svgcheck.py boundaries SVG the cells a file boundary line is drawn at (on
                               their left edge), one a line
    svgcheck.py key SVG        the key's rows, one JSON object a line: set,
                               hue, files, shown, blocks, text, title (the
                               row's <title>: the full paths, one a line)
    svgcheck.py fills SVG      "CLASS #RRGGBB" for every .CLASS{fill:...} rule
    svgcheck.py legend SVG     the legend's entries (data-legend), in order
    svgcheck.py scale SVG      "MIB MIB_PER_PX WIDTH" of the scale bar
    svgcheck.py bars SVG       "CELL BLOCKS HEIGHT" a line: the highlighted
                               file's bars (data-blocks, the rect's height)

SVG may be FILE#NAME: the picture data-picture=NAME of a file with two
side by side (e2defrag --svg); its attributes stand for the <svg>'s.

Fails (exit 1) when the runs of cells overlap or leave a cell out.
"""
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
STATES = ".#J!dofx"        # class s0 .. s7, map.h's order


def load(path):
    path, _, name = path.partition("#")
    root = ET.parse(path).getroot()
    if not name:
        return root
    for g in root.iter(NS + "g"):
        if g.get("data-picture") == name:
            return g
    sys.exit("%s: no picture %s" % (path, name))


def runs(root, group):
    g = root.find("%sg[@class='%s']" % (NS, group))
    if g is None:
        return []
    return [(int(r.get("data-cell")), int(r.get("data-n")), r.get("class"))
            for r in g.findall(NS + "rect")]


def spread(root, group, letter_of, default=None):
    n = int(root.get("data-cells"))
    out = [default] * n
    for cell, count, cls in runs(root, group):
        for c in range(cell, cell + count):
            if c >= n or (out[c] is not default):
                sys.exit("cell %d drawn twice or past the end" % c)
            out[c] = letter_of(cls)
    return out


def main(argv):
    root = load(argv[2])
    if argv[1] == "cells":
        cells = spread(root, "cells", lambda cls: STATES[int(cls.split()[0][1:])])
        if None in cells:
            sys.exit("cell %d not drawn" % cells.index(None))
        print("".join(cells))
    elif argv[1] == "marks":
        print("".join(spread(root, "highlight",
                             lambda cls: "@" if cls == "hl" else "&", "-")))
    elif argv[1] == "attr":
        print(root.get(argv[3]))
    elif argv[1] == "groups":
        g = root.find("%sg[@class='groups']" % NS)
        print(" ".join(l.get("data-group") for l in g.findall(NS + "line")))
    elif argv[1] == "sets":
        g = root.find("%sg[@class='cells']" % NS)
        for r in g.findall(NS + "rect"):
            if r.get("data-set") is None:
                continue
            hue = [c for c in r.get("class").split() if re.fullmatch(r"k([0-9]+|n)", c)]
            if len(hue) != 1:
                sys.exit("set run without a hue class: %s" % r.get("class"))
            for c in range(int(r.get("data-cell")),
                           int(r.get("data-cell")) + int(r.get("data-n"))):
                print(c, r.get("data-set"), hue[0][1:])
    elif argv[1] == "boundaries":
        g = root.find("%sg[@class='boundaries']" % NS)
        for line in g.findall(NS + "line") if g is not None else []:
            print(line.get("data-cell"))
    elif argv[1] == "key":
        g = root.find("%sg[@class='key']" % NS)
        for row in g.findall(NS + "g") if g is not None else []:
            text = row.find(NS + "text")
            title = row.find(NS + "title")
            print(json.dumps({
                "set": row.get("data-set"), "hue": row.get("data-hue"),
                "files": int(row.get("data-files")),
                "shown": int(row.get("data-shown") or 0),
                "sets": int(row.get("data-sets") or 1),
                "blocks": int(row.get("data-blocks") or 0),
                "text": text.text if text is not None else "",
                "title": title.text.split("\n") if title is not None and title.text else []}))
    elif argv[1] == "fills":
        doc = ET.parse(argv[2].partition("#")[0]).getroot()
        for style in doc.iter(NS + "style"):
            for cls, rgb in re.findall(r"\.([a-z0-9]+)\{fill:(#[0-9a-fA-F]{6})", style.text):
                print(cls, rgb.lower())
    elif argv[1] == "legend":
        g = root.find("%sg[@class='legend']" % NS)
        print(" ".join(e.get("data-legend") for e in g.findall(NS + "g")))
    elif argv[1] == "scale":
        g = root.find("%sg[@class='scalebar']" % NS)
        bar = g.find(NS + "rect")
        print(g.get("data-mib"), g.get("data-mib-per-px"), bar.get("width"))
    elif argv[1] == "bars":
        g = root.find("%sg[@class='highlight']" % NS)
        for r in g.findall(NS + "rect"):
            if r.get("class") == "hl":
                print(r.get("data-cell"), r.get("data-blocks"), r.get("height"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
