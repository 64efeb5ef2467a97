"""Helpers for exec_run tests: run in a chosen sandbox mode, or on a PATH without bubblewrap."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings


def bwrap_works() -> bool:
    """bubblewrap is installed and can build the namespaces exec_run uses (CI installs it)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False
    probe = subprocess.run(
        [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "true"],
        capture_output=True,
        timeout=10,
    )
    return probe.returncode == 0


def path_without_bwrap(folder: Path) -> str:
    """A PATH with every program of the current PATH except bwrap (symlinks in ``folder``)."""
    folder.mkdir(parents=True, exist_ok=True)
    for part in os.environ.get("PATH", "").split(os.pathsep):
        if not part or not os.path.isdir(part):
            continue
        for name in os.listdir(part):
            link = folder / name
            if name == "bwrap" or os.path.lexists(link):
                continue
            os.symlink(os.path.join(part, name), link)
    return str(folder)


def settings(**env: str) -> Settings:
    """Settings from the test's VANCE_HOME with the given environment layer (e.g. VANCE_SANDBOX)."""
    return Settings.load(Scopes.discover(), env=env)


def sleepers(duration: str) -> list[int]:
    """Host pids of live ``sleep <duration>`` processes, in any PID namespace (a sandbox's too).

    Give each test its own odd duration (e.g. "31.417") so it finds only its own sleeps.
    """
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone meanwhile
            continue
        if argv[:2] == [b"sleep", duration.encode()] and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def gone_soon(duration: str, within: float = 3.0) -> bool:
    import time

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not sleepers(duration):
            return True
        time.sleep(0.02)
    return False
