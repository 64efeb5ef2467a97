"""`vance structure --batch` as a process: the progress bar on a terminal, and Ctrl+C.

Real subprocesses (``python -m vance_cli``): a pseudo-terminal for stderr (the bar shows only on a
terminal), and a SIGINT, which would hit the test process if run in it.
"""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time

from tests.helpers import json_lines, run_cli, subprocess_env
from tests.structure.test_batch import SCHEMA, answer


def slow(body):
    time.sleep(0.02)  # a batch long enough to watch (and to stop)
    return answer(body)


def _setup(tmp_path, url, n):
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": f"r{i}", "prompt": f"record {i}"}) + "\n" for i in range(n)))
    env = {"VANCE_HOME": str(tmp_path / "home"), "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": url,
           "VANCE_API_KEY": "test", "COLUMNS": "160"}
    return env, ["structure", "--batch", str(source), "--schema", str(tmp_path / "schema.json"), "--jobs", "2"]


def test_a_terminal_gets_a_progress_bar_and_the_summary(fake_openai, tmp_path):
    fake_openai.responder = slow
    env, args = _setup(tmp_path, fake_openai.url, 20)
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, "-m", "vance_cli", *args], env=subprocess_env(env),
                             stdout=subprocess.PIPE, stderr=follower, stdin=subprocess.DEVNULL)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    out, _ = child.communicate(timeout=60)
    os.close(leader)
    assert child.returncode == 0
    screen = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", shown).decode("utf-8", "replace")
    assert "20/20" in screen and "20 ok" in screen and "0 err" in screen and "tok $" in screen and "left" in screen
    assert "/s" in screen  # the rate
    assert out.decode().startswith("structured 20 record(s)")  # the summary on stdout, no bar there


def test_ctrl_c_keeps_what_is_done_and_the_same_command_finishes(fake_openai, tmp_path):
    fake_openai.responder = slow
    env, args = _setup(tmp_path, fake_openai.url, 40)
    out = tmp_path / "in.jsonl.out.jsonl"
    child = subprocess.Popen([sys.executable, "-m", "vance_cli", *args], env=subprocess_env(env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while (not out.exists() or out.read_text().count("\n") < 5) and time.monotonic() < deadline:
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130, err
    assert "interrupted by Ctrl+C after" in err and "run the same command again" in err
    assert "vance chat" not in err
    done = {line["id"] for line in json_lines(out.read_text())}
    assert 5 <= len(done) < 40
    fake_openai.reset()
    fake_openai.responder = answer
    rerun = run_cli(*args, "--jobs", "8", env=env)
    assert rerun.returncode == 0, rerun.stderr
    assert len(fake_openai.requests) == 40 - len(done)
    assert sorted(line["id"] for line in json_lines(out.read_text())) == sorted(f"r{i}" for i in range(40))
