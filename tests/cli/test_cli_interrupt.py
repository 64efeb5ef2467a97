"""Stopping a turn from outside: signals save the process SUSPENDED, a stopped command never runs
again by itself, and a failed turn says how to resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import REPO, json_lines, run_cli


def _env(fake_openai) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "VANCE_MODEL": "openai/some-model",
        "VANCE_API_BASE": fake_openai.url,
    }


def _start(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "vance_cli", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(check, what: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_turn_suspends_the_process_and_continue_works(fake_openai, sig):
    fake_openai.enqueue(text="slow...", delay=30)  # the model is still thinking when the signal comes
    env = _env(fake_openai)
    proc = _start(env, "chat", "-p", "first")
    _wait_for(lambda: fake_openai.requests, "the model request")
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + sig
    assert f"interrupted by {signal.Signals(sig).name}; the process state is saved" in stderr
    assert "Traceback" not in stderr
    rows = json_lines(run_cli("ps", "--json", env=env).stdout)
    assert rows[0]["status"] == "SUSPENDED" and rows[0]["interrupted"] is False

    fake_openai.reset()  # the default responder echoes the last user message
    r = run_cli("chat", "--continue", "-p", "second", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "echo: first\necho: second\n"


def test_ctrl_c_during_exec_run_then_continue_does_not_run_the_command_again(fake_openai, vance_home, tmp_path):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text(
        "engine: ford\ntools:\n  allowed: [respond, exec_run]\nsystemPrompt: run things\n"
    )
    work = Path.cwd()
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "echo ran >> count.txt; sleep 30"})])
    env = _env(fake_openai)
    proc = _start(env, "chat", "--recipe", "runner", "-p", "count once", "--allow", "exec_run")
    # The shell creates count.txt before echo writes to it: wait for the line, not the file.
    _wait_for(
        lambda: (work / "count.txt").exists() and (work / "count.txt").read_text() == "ran\n", "the command to start"
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert json_lines(run_cli("ps", "--json", env=env).stdout)[0]["status"] == "SUSPENDED"

    fake_openai.reset()
    r = run_cli("chat", "--continue", "-p", "what happened?", env=env)
    assert r.returncode == 0, r.stderr
    assert (work / "count.txt").read_text().splitlines() == ["ran"]  # not run a second time
    tool_msgs = [m for m in fake_openai.requests[0]["messages"] if m["role"] == "tool"]
    assert len(tool_msgs) == 1 and tool_msgs[0]["content"].startswith("INTERRUPTED")
    assert "effects are unknown" in tool_msgs[0]["content"]
    assert "exec_run was interrupted before it finished: not run again" in r.stderr


def test_a_failed_turn_prints_the_process_id_and_how_to_resume(fake_openai, vance_home):
    (vance_home / "config.toml").write_text("[model.retries]\nattempts = 1\nbase_delay = 0.0\nmax_delay = 0.0\n")
    fake_openai.enqueue_error(503)
    env = _env(fake_openai)
    r = run_cli("chat", "-p", "hello", env=env)
    assert r.returncode == 1
    pid = json_lines(run_cli("ps", "--json", env=env).stdout)[0]["id"]
    assert f"the process {pid} is saved (FAILED); resume it with: vance chat --resume {pid}" in r.stderr
    assert "Traceback" not in r.stderr
