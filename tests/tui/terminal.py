"""A pseudo-terminal that runs a program and reads its screen output (tests and bench/bench_tui.py)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time

ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[A-Za-z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>NOPMc78]")


BORDERS = re.compile(r"[\u2500-\u257f\u2580-\u259f]")  # box-drawing and block elements (borders, scrollbars)


class Terminal:
    def __init__(self, args: list[str], env: dict[str, str], size=(30, 100)) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                     start_new_session=True)
        os.close(slave)
        self.raw = b""

    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def flat(self) -> str:
        """The screen text with panel borders and line wraps taken out: words separated by one space.

        A line that wraps inside a bordered panel arrives as ``…check.py:  │\r\n│   exit 0``; where it wraps
        depends on the width of what comes before (a venv path, say), so a test that reads a sentence off a
        panel reads it here.
        """
        return " ".join(BORDERS.sub(" ", self.text()).split())

    def read_until(self, needle: str, timeout: float = 90.0, flat: bool = False) -> str:
        deadline = time.monotonic() + timeout
        while needle not in (self.flat() if flat else self.text()):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{needle!r} not on screen; last output: {self.text()[-800:]!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if ready:
                try:
                    self.raw += os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    break
        return self.text()

    def read_some(self, timeout: float) -> None:
        """Read what arrives within ``timeout`` seconds (nothing is fine)."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if ready:
            try:
                self.raw += os.read(self.master, 65536)
            except OSError:
                pass

    def read_to_end(self, timeout: float = 30.0) -> None:
        """Read until the program has exited and closed the terminal."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    return
                if not data:
                    return
                self.raw += data
            elif self.proc.poll() is not None:
                return
        raise AssertionError(f"the program did not end; last output: {self.text()[-800:]!r}")

    def type(self, data: str) -> None:
        os.write(self.master, data.encode())

    def close(self) -> int | None:
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()
        finally:
            os.close(self.master)
