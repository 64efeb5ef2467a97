"""Issue 17 review: a planted lock file never hangs `vance ps` or is read through a link.

A cloned `.vance/processes/ID.lock` can be a symlink (to /dev/zero, to a FIFO, to the person's
file) or a huge file; read_holder opens it with O_NOFOLLOW, only as a regular file, and reads a
bounded amount.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.helpers import run_cli, write_script
from vance_cli.store.lock import MAX_HOLDER_BYTES, read_holder

RESPOND = {"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}


def _running_process(tmp_path):
    work = tmp_path / "work"
    (work / ".vance").mkdir(parents=True)
    script = write_script(tmp_path / "b.json", [RESPOND])
    assert run_cli("chat", "-p", "hello", "--model", script, cwd=work).returncode == 0
    (pfile,) = (work / ".vance" / "processes").glob("*.json")
    data = json.loads(pfile.read_text())
    data["status"] = "RUNNING"
    pfile.write_text(json.dumps(data))
    lock = pfile.with_suffix(".lock")
    lock.unlink(missing_ok=True)
    return work, lock


@pytest.mark.parametrize("plant", ["dev-zero", "fifo"])
def test_ps_with_a_planted_lock_link_finishes(tmp_path, plant):
    work, lock = _running_process(tmp_path)
    if plant == "dev-zero":
        os.symlink("/dev/zero", lock)
    else:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        os.symlink(fifo, lock)
    started = time.monotonic()
    r = subprocess.run(
        ["sh", "-c", 'ulimit -v 3000000; exec "$@"', "sh", sys.executable, "-m", "vance_cli", "ps"],
        capture_output=True, text=True, env={**os.environ}, cwd=work, timeout=60,
    )
    assert r.returncode == 0 and "internal error" not in r.stderr, r.stderr
    assert time.monotonic() - started < 30


def test_read_holder_does_not_follow_a_symlink(tmp_path):
    real = tmp_path / "real.lock"
    real.write_text(json.dumps({"pid": 1, "host": "h"}))
    link = tmp_path / "x.lock"
    os.symlink(real, link)
    assert read_holder(real) == {"pid": 1, "host": "h"}
    assert read_holder(link) is None


def test_read_holder_reads_a_bounded_amount(tmp_path):
    big = tmp_path / "big.lock"
    big.write_text('{"pid": 1, "pad": "' + "x" * (MAX_HOLDER_BYTES + 10) + '"}')
    assert read_holder(big) is None
    deep = tmp_path / "deep.lock"
    deep.write_text("[" * 50_000 + "]" * 50_000)
    assert read_holder(deep) is None
