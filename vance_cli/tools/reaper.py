"""Runs one command so that nothing it starts outlives it (Linux): exec_run's commands without a sandbox.

``python -I -S reaper.py STATUS_FD GRACE PROGRAM ARG...``

The reaper makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): every process the
command starts stays its descendant even when it detaches (``setsid``, a double fork), because an
orphan is re-parented to the reaper, not to init. When the command's own process ends, the rest
get GRACE seconds to end by themselves; then every one left is killed (SIGKILL, and the children
they leave behind, until none is left). On SIGTERM (exec_run's timeout or cancel) and when Vance
dies (``PR_SET_PDEATHSIG``) that happens at once. So after the reaper exits no process of the
command is left to plant anything after exec_run's git check (tools/git_guard.py). In the sandbox
bubblewrap's PID namespace does the same; the reaper is for the unconfined case.

It exits with the command's own exit status and writes ``ended N`` (the processes it had to kill,
the command's own not counted) and ``subreaper 0|1`` to STATUS_FD. Standard library only, no
vance_cli import: it starts in a few milliseconds.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time

try:  # the C module: `signal` imports enum, a good part of the reaper's start-up
    import _signal as signal
except ImportError:  # pragma: no cover - not CPython
    import signal  # type: ignore[no-redef]

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    """SIGTERM: end everything now."""


def _on_term(signum: int, frame: object) -> None:
    raise _Stop


def _children() -> list[int]:
    """The reaper's children (zombies included), from /proc."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(name))
            except (OSError, ValueError, IndexError):
                continue
    return found


class _Reaper:
    def __init__(self, command_pid: int) -> None:
        self.command_pid = command_pid
        self.status: int | None = None  # the command's wait status once reaped
        self.killed: set[int] = set()

    def _reaped(self, pid: int, status: int) -> None:
        if pid == self.command_pid:
            self.status = status

    def reap(self, block: bool) -> bool:
        """Reap one child (or, not blocking, every exited one); False when there is none."""
        try:
            while True:
                pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
                if pid == 0:
                    return True
                self._reaped(pid, status)
                if block:
                    return True
        except ChildProcessError:
            return False

    def wait_command(self) -> None:
        while self.status is None and self.reap(block=True):
            pass

    def settle(self, grace: float) -> None:
        """Give background processes ``grace`` seconds to end by themselves."""
        deadline = time.monotonic() + grace
        while self.reap(block=False) and time.monotonic() < deadline:
            time.sleep(0.01)

    def end_all(self) -> None:
        """SIGKILL every child until none is left (a killed one's children come to us next)."""
        while True:
            self.reap(block=False)
            kids = _children()
            if not kids:
                return
            for pid in kids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    continue
                if pid != self.command_pid:
                    self.killed.add(pid)
            if not self.reap(block=True):
                return


def _exit_like(status: int | None) -> None:
    """Exit as the command did: its exit code, or killed by the same signal (no core file)."""
    if status is not None and os.WIFSIGNALED(status):
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else 255)


def main(argv: list[str]) -> None:
    parent = os.getppid()
    status_fd, grace, command = int(argv[0]), float(argv[1]), argv[2:]
    os.set_inheritable(status_fd, False)
    signal.signal(signal.SIGTERM, _on_term)
    libc = ctypes.CDLL(None, use_errno=True)
    subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # Vance died before the line above took effect
        os._exit(255)
    reaper = _Reaper(-1)
    try:
        reaper.command_pid = os.posix_spawn(
            command[0], command, os.environ,
            setsigdef=(signal.SIGTERM, signal.SIGPIPE, signal.SIGXFSZ),  # Python ignores the last two
        )
        reaper.wait_command()
        reaper.settle(grace)
    except _Stop:
        pass
    except OSError as exc:
        os.write(2, f"vance: cannot run {command[0]}: {exc.strerror}\n".encode())
        reaper.status = 127 << 8
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    reaper.end_all()
    try:
        os.write(status_fd, f"ended {len(reaper.killed)}\nsubreaper {int(subreaper)}\n".encode())
    except OSError:
        pass
    _exit_like(reaper.status)


if __name__ == "__main__":
    main(sys.argv[1:])
