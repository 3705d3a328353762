#!/usr/bin/env python3
"""include_order.py BUILDDIR: every #include of the libraries and programs
points down the layers (doc/design.md: Layout), resolved the way the build
resolves it.

Make itself says which sources each library and program compiles and with
which -I flags (its *_SOURCES and *_CPPFLAGS, AM_CPPFLAGS when a target has
none, and automake's DEFAULT_INCLUDES).  A quoted #include is looked up as
the compiler looks it up: first in the including file's own directory, then
in the -I directories in order; headers are followed in turn.  Each
resolved include is then judged by the folders of the file and of what it
includes:

    lib < writer < filemap < planner < reports < the programs

A file may include its own folder and the folders below it; a program
(analyze, defrag, tui, images) none of the other programs' folders.  Files
at the top of the tree (config.h) are everyone's.  Tests may use anything,
so check_PROGRAMS are not read.  Prints one line per include that points
the wrong way and exits 1 if there was any; 2 when make cannot be asked.
"""
import os
import re
import subprocess
import sys

LAYERS = ["lib", "writer", "filemap", "planner", "reports"]
PROGRAMS = ["analyze", "defrag", "tui", "images"]
TARGET_LISTS = ["noinst_LIBRARIES", "bin_PROGRAMS", "sbin_PROGRAMS",
                "noinst_PROGRAMS"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def make_vars(builddir, names):
    """The values of make variables NAMES in BUILDDIR's Makefile."""
    rules = "".join("\t@printf '%%s\\n' '%s=$(%s)'\n" % (n, n) for n in names)
    snippet = "e2f-print-vars:\n" + rules
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", builddir,
                          "-f", "Makefile", "-f", "-", "e2f-print-vars"],
                         input=snippet, capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr)
        sys.exit(2)
    values = {}
    for line in out.stdout.splitlines():
        name, _, value = line.partition("=")
        values[name] = value
    return values


def canonical(target):
    return re.sub(r"[^A-Za-z0-9_]", "_", target)


def include_dirs(flags, builddir):
    dirs = []
    words = flags.split()
    for i, w in enumerate(words):
        d = None
        if w == "-I" and i + 1 < len(words):
            d = words[i + 1]
        elif w.startswith("-I"):
            d = w[2:]
        if d is not None:
            dirs.append(os.path.normpath(os.path.join(builddir, d)))
    return dirs


def folder(path, roots):
    """The tree's top folder PATH is in ('' at the top), or None outside."""
    for root in roots:
        rel = os.path.relpath(path, root)
        if not rel.startswith(".."):
            parts = rel.split(os.sep)
            return parts[0] if len(parts) > 1 else ""
    return None


def allowed(src, dst):
    """Whether a file in folder SRC may include one in folder DST."""
    if dst in ("", src):
        return True
    if dst in PROGRAMS:
        return False            # another program's folder
    if dst not in LAYERS:
        return True             # outside the layers (none today)
    if src in PROGRAMS:
        return True             # any library
    if src in LAYERS:
        return LAYERS.index(dst) < LAYERS.index(src)
    return True


def main():
    builddir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    base = make_vars(builddir, TARGET_LISTS + ["AM_CPPFLAGS", "DEFAULT_INCLUDES",
                                               "srcdir"])
    srcdir = os.path.normpath(os.path.join(builddir, base["srcdir"]))
    roots = [srcdir, builddir] if srcdir != builddir else [srcdir]
    targets = [t for lst in TARGET_LISTS for t in base[lst].split()]
    names = []
    for t in targets:
        c = canonical(t)
        names += [c + "_SOURCES", "nodist_" + c + "_SOURCES", c + "_CPPFLAGS"]
    per = make_vars(builddir, names)

    bad = []
    seen = set()
    checked = 0
    for t in targets:
        c = canonical(t)
        flags = per[c + "_CPPFLAGS"] or base["AM_CPPFLAGS"]
        dirs = include_dirs(base["DEFAULT_INCLUDES"] + " " + flags, builddir)
        todo = []
        for s in (per[c + "_SOURCES"] + " " + per["nodist_" + c + "_SOURCES"]).split():
            for root in (srcdir, builddir):
                p = os.path.normpath(os.path.join(root, s))
                if os.path.exists(p):
                    todo.append(p)
                    break
        while todo:
            path = todo.pop()
            if (path, tuple(dirs)) in seen:
                continue
            seen.add((path, tuple(dirs)))
            checked += 1
            src = folder(path, roots)
            with open(path, errors="replace") as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    name = m.group(1)
                    found = None
                    for d in [os.path.dirname(path)] + dirs:
                        p = os.path.normpath(os.path.join(d, name))
                        if os.path.isfile(p):
                            found = p
                            break
                    if found is None:
                        continue    # a system header, or not built here
                    dst = folder(found, roots)
                    if dst is None:
                        continue
                    if not allowed(src, dst):
                        where = os.path.relpath(path, srcdir if path.startswith(srcdir) else builddir)
                        what = os.path.relpath(found, srcdir if found.startswith(srcdir) else builddir)
                        bad.append("%s:%d: includes %s (%s may not include %s)" %
                                   (where, lineno, what, src or "top", dst))
                    todo.append(found)
    for line in sorted(set(bad)):
        print(line)
    print("# %d files read for %d targets, %d includes point the wrong way" %
          (checked, len(targets), len(set(bad))))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
