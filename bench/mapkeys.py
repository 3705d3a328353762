#!/usr/bin/env python3
"""mapkeys.py --- drive e2fragmap in a pseudo-terminal, for bench/map.sh.

  mapkeys.py keys E2FRAGMAP IMAGE KEY...
      Start it, wait for its names, then type each KEY (one of the names
      below, or characters typed one by one) and wait for the screen drawn for it.
      Prints e2fragmap's own figures (E2FRAGMAP_KEYLOG): the first
      screen's time from the start, when the names were in, and for each
      key the time from reading it to the screen drawn for it.

The terminal is 160x50, TERM=xterm, NO_COLOR=1.
"""
import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios
import time

# As xterm sends them with the keypad on (terminfo's kcud1, knp, khome...).
KEYS = {
    "Enter": b"\r", "Esc": b"\x1b", "Down": b"\x1bOB", "Up": b"\x1bOA",
    "Right": b"\x1bOC", "Left": b"\x1bOD", "PgDn": b"\x1b[6~", "PgUp": b"\x1b[5~",
    "Home": b"\x1bOH", "End": b"\x1bOF",
}


def start(prog, image, log):
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 160, 0, 0))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1", LC_ALL="C.UTF-8")
    if log:
        env["E2FRAGMAP_KEYLOG"] = log
    p = subprocess.Popen([prog, image], stdin=slave, stdout=slave, stderr=slave,
                         env=env, start_new_session=True)
    os.close(slave)
    return p, master


def drain(master, seconds):
    """Read what the program draws for up to SECONDS (it blocks if nobody reads)."""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return
        r, _, _ = select.select([master], [], [], left)
        if r:
            try:
                if not os.read(master, 65536):
                    return
            except OSError:
                return


def wait_lines(master, log, n, timeout=600):
    """Drain until LOG has N lines; returns them."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        drain(master, 0.005)
        with open(log) as f:
            lines = f.read().splitlines()
        if len(lines) >= n:
            return lines
    sys.exit("mapkeys: e2fragmap did not answer (log: %s)" % lines)


def keys(prog, image, args):
    # A word that names no key is typed one character at a time.
    keylist = [k for a in args for k in ([a] if a in KEYS else list(a))]
    with tempfile.NamedTemporaryFile("r", suffix=".log") as log:
        p, master = start(prog, image, log.name)
        lines = wait_lines(master, log.name, 2)		# first screen, names
        for k in keylist:
            n = len(lines)
            os.write(master, KEYS.get(k, k.encode()))
            lines = wait_lines(master, log.name, n + 1)
        os.write(master, b"q")
        while p.poll() is None:
            drain(master, 0.01)
        os.close(master)
        for line in lines:
            print(line)


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] != "keys":
        sys.exit(__doc__)
    keys(sys.argv[2], sys.argv[3], sys.argv[4:])
