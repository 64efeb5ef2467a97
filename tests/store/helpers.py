"""Subprocess helpers for the store tests: a child python that imports vance_cli from this repo."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def spawn(code: str, *args: str) -> subprocess.Popen[str]:
    env = dict(
        os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    )
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def wait_for_line(
    proc: subprocess.Popen[str], expected: str, timeout: float = 20.0
) -> None:
    """Block until the child prints ``expected`` (it signals a state, so no sleeping is needed)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline().strip() if ready else ""
    if line != expected:
        proc.kill()
        _out, err = proc.communicate(timeout=10)
        raise AssertionError(
            f"child said {line!r}, expected {expected!r}; stderr:\n{err}"
        )


def finish(proc: subprocess.Popen[str]) -> None:
    """Make sure the child is gone and its pipes are closed (for ``finally:``)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=10)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None and not pipe.closed:
            pipe.close()
