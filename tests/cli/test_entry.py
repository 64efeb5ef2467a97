"""The console script's entry: the cyclic garbage collector is paused while a command starts, then back."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

from tests.cli.helpers import REPO

PROBE = """
import gc, time
import vance_cli.cli.main as cli
from vance_cli import entry

entry.STARTUP_SECONDS = 0.2

def command():
    print(gc.isenabled())
    deadline = time.monotonic() + 30
    while not gc.isenabled() and time.monotonic() < deadline:
        time.sleep(0.05)
    print(gc.isenabled())

cli.run = command
entry.main()
"""


def test_the_collector_is_paused_for_the_start_up_and_turned_back_on():
    r = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]


def test_the_console_script_and_python_m_both_go_through_the_entry():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["vance"] == "vance_cli.entry:main"
    assert "from vance_cli.entry import main" in (REPO / "vance_cli" / "__main__.py").read_text()


def test_a_quick_command_exits_at_once_despite_the_timer(vance_home):
    import time

    probe = (
        "import sys\nfrom vance_cli import entry\nentry.STARTUP_SECONDS = 120\n"
        "sys.argv = ['vance', '--version']\nentry.main()\n"
    )
    t0 = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=100,
    )
    assert r.returncode == 0 and r.stdout.startswith("vance ")
    assert time.monotonic() - t0 < 60  # the timer thread is a daemon: nothing waits out its 120 s
