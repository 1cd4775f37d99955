#!/usr/bin/env python3
"""pty_run.py SECONDS SCREEN_LOG CMD [ARG...]

Runs CMD in a pseudo-terminal of 80x24, as a terminal emulator would, for
an editor that needs one (Vim: tests/suites/vim.sh).  What it draws is
appended to SCREEN_LOG; nothing is typed into it.  Ends it (SIGKILL) after
SECONDS.  Exits with CMD's status, 124 on the time limit."""
import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time


def main():
    seconds, log, cmd = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm"
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    deadline = time.monotonic() + seconds
    with open(log, "ab") as screen:
        while True:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # the child closed the terminal
                    data = b""
                screen.write(data)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return 124


if __name__ == "__main__":
    sys.exit(main())
