"""kill -9 in the middle of a turn loses nothing: `--resume` finishes the turn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from tests.helpers import REPO, json_lines, run_cli


def test_killed_mid_turn_resumes_and_finishes(fake_openai, vance_home):
    fake_openai.enqueue(text="slow...", delay=30)  # the model is still thinking when we kill vance
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "VANCE_MODEL": "openai/some-model",
        "VANCE_API_BASE": fake_openai.url,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "vance_cli", "chat", "-p", "remember me"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while not fake_openai.requests and time.time() < deadline:
        time.sleep(0.05)
    assert fake_openai.requests, "vance never reached the model"
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    rows = json_lines(run_cli("ps", "--json", env=env).stdout)
    assert len(rows) == 1 and rows[0]["status"] == "RUNNING"
    assert rows[0]["interrupted"] is True
    assert "interrupted mid-turn" in run_cli("ps", env=env).stderr
    pid = rows[0]["id"]
    on_disk = json.loads((vance_home / "processes" / f"{pid}.json").read_text())
    assert [m["content"] for m in on_disk["history"]] == ["remember me"]
    assert not [p for p in (vance_home / "processes").iterdir() if p.name.endswith(".tmp")]

    fake_openai.reset()
    fake_openai.enqueue(tool_calls=[("respond", {"message": "I remember: remember me"})])
    r = run_cli("chat", "--resume", pid, "--plain", env=env, input="")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "I remember: remember me\n"
    # the resumed call carried the original message: nothing was lost
    assert fake_openai.requests[0]["messages"][-1] == {"role": "user", "content": "remember me"}
    assert json_lines(run_cli("ps", "--json", env=env).stdout)[0]["status"] == "BLOCKED"


def test_ctrl_c_says_the_state_is_saved_and_resume_answers_both(fake_openai):
    fake_openai.enqueue(text="slow...", delay=30)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "VANCE_MODEL": "openai/some-model",
        "VANCE_API_BASE": fake_openai.url,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "vance_cli", "chat", "-p", "first"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while not fake_openai.requests and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted; the process state is saved" in stderr
    rows = json_lines(run_cli("ps", "--json", env=env).stdout)
    assert rows[0]["status"] == "SUSPENDED"

    fake_openai.reset()  # the default responder echoes the last user message
    r = run_cli("chat", "--continue", "-p", "second", env=env)
    assert r.returncode == 0, r.stderr
    # the interrupted turn is finished first, then the new message gets its own turn
    assert r.stdout == "echo: first\necho: second\n"
