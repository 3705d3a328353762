#!/usr/bin/env python3
"""pty_run.py --- run an interactive program on a pseudo-terminal, type keys
once it has drawn what we wait for, and report how it ended.

    pty_run.py [--wait TEXT] [--keys KEYS] [--timeout S] [--size COLSxROWS]
               -- COMMAND [ARG]...

Everything the program wrote goes to stdout.  The exit status is the
program's, 128+N when signal N ended it, or 124 when it had not ended
TIMEOUT seconds after its start (it is then killed, with its process
group).

Why not `printf q | script -qec CMD`: script(1) copies its standard input
to the terminal at once, before the program has set up the terminal; the
key can then be lost, and the program waits for it until killed.  (CI saw
every e2fragmap of the corpus test killed that way, and no machine here
did.)  Here the keys are typed only after TEXT has been drawn, so they
reach the program's main loop, on any machine, at any speed.
"""

import argparse
import errno
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time


def parse_args():
    ap = argparse.ArgumentParser(prog="pty_run.py")
    ap.add_argument("--wait", default="",
                    help="type KEYS once the output holds this text")
    ap.add_argument("--keys", default="", help="keys to type (\\n allowed)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--size", default="80x24", help="COLSxROWS")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if args.command and args.command[0] == "--":
        args.command = args.command[1:]
    if not args.command:
        ap.error("no command")
    return args


def child(args):
    cols, rows = (int(x) for x in args.size.split("x"))
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    try:
        os.execvp(args.command[0], args.command)
    except OSError as e:
        sys.stderr.write("pty_run.py: %s: %s\n" % (args.command[0], e.strerror))
    os._exit(127)


def read_some(fd, timeout):
    """Bytes the program wrote within TIMEOUT s; b"" at its end."""
    ready, _, _ = select.select([fd], [], [], timeout)
    if not ready:
        return None
    try:
        return os.read(fd, 65536)
    except OSError as e:
        if e.errno == errno.EIO:  # the program closed the terminal
            return b""
        raise


def main():
    args = parse_args()
    keys = args.keys.encode().decode("unicode_escape").encode("latin-1")
    wait = args.wait.encode()
    pid, fd = pty.fork()
    if pid == 0:
        child(args)
    deadline = time.monotonic() + args.timeout
    seen = b""
    typed = not keys
    out = sys.stdout.buffer
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            kill(pid)
            os.waitpid(pid, 0)
            out.flush()
            sys.stderr.write("pty_run.py: killed after %g s\n" % args.timeout)
            return 124
        data = read_some(fd, min(left, 0.5))
        if data is None:
            continue
        if data == b"":
            break
        out.write(data)
        # Keep only what a wait string can span.
        seen = (seen + data)[-(len(wait) + 65536):]
        if not typed and wait in seen:
            os.write(fd, keys)
            typed = True
    out.flush()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def kill(pid):
    """The program and what it started: pty.fork() made it a session
    leader, so its process group is its pid."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
