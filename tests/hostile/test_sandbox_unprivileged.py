"""Issue 17 "done when": the sandbox tests run as root (CI containers are root) and as not root.

The suite runs them as whoever runs it. When that is root, this test runs the key ones again as an
unprivileged user (nobody, uid 65534, through setpriv or runuser) on a copy of the tests that user
owns: the sandbox's own checks (tests/tools/test_sandbox.py), the hostile model's attempts through
`vance chat` (tests/hostile/test_sandbox_holes.py), and the two tests that only mean something when
mode bits bind (a read-only $VANCE_HOME, an unwritable processes/ folder: root writes through
both). It is skipped only when neither setpriv nor runuser is installed, or when the suite is not
run as root (then the suite itself is the unprivileged run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.helpers import REPO

NOBODY = 65534
TESTS = (
    "tests/tools/test_sandbox.py",
    "tests/hostile/test_sandbox_holes.py",
    "tests/cli/test_cli_unwritable_home.py::test_chat_in_a_read_only_home_by_mode_bits",
    "tests/cli/test_cli_doctor.py::test_broken_recipe_unreadable_process_and_unwritable_state_are_reported",
)
COPIED = ("vance_cli", "tests", "recipes", "schemas", "pyproject.toml")


def _as_nobody() -> list[str] | None:
    setpriv = shutil.which("setpriv")
    if setpriv:
        return [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "nobody", "--"]
    return None


def _chown_tree(root: Path) -> None:
    os.chown(root, NOBODY, NOBODY)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), NOBODY, NOBODY, follow_symlinks=False)


@pytest.mark.skipif(os.geteuid() != 0, reason="not root: the suite itself runs the sandbox tests unprivileged")
def test_the_sandbox_tests_pass_as_an_unprivileged_user():
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip("neither setpriv nor runuser is installed")
    # /var/tmp: the sandbox makes /tmp private, and the hostile tests keep their folders outside it
    base = Path(tempfile.mkdtemp(prefix="vance-unprivileged-", dir="/var/tmp"))
    try:
        src = base / "src"
        src.mkdir()
        for name in COPIED:  # the user may not read the checkout (a CI clone under /root)
            source = REPO / name
            if source.is_dir():
                shutil.copytree(source, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, src / name)
        (base / "home").mkdir()
        _chown_tree(base)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(base / "home"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(src),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        report = base / "report.xml"
        r = subprocess.run(
            [*prefix, sys.executable, "-m", "pytest", *TESTS, "-p", "no:cacheprovider", "-n", "0",
             f"--basetemp={base / 'pytest'}", f"--junitxml={report}", "-rs"],
            cwd=src, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        )
        tail = (r.stdout + r.stderr)[-4000:]
        assert r.returncode == 0, tail
        suite = ElementTree.parse(report).getroot().find("testsuite")
        assert suite is not None, tail
        counts = {key: int(suite.get(key, "0")) for key in ("tests", "failures", "errors", "skipped")}
        assert counts["tests"] >= 18 and counts["failures"] == counts["errors"] == 0, (counts, tail)
        bwrap = shutil.which("bwrap")
        works = bwrap is not None and subprocess.run(
            [*prefix, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "true"],
            capture_output=True, timeout=30,
        ).returncode == 0
        if works:  # bubblewrap works for the user: nothing may have been skipped for want of it
            assert counts["skipped"] == 0, (counts, tail)
    finally:
        shutil.rmtree(base, ignore_errors=True)
