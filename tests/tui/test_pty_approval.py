"""The real `vance chat` in a pseudo-terminal: a command the model chose never runs before the
person says yes (issue 16)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests.cli.helpers import REPO
from tests.tui.terminal import Terminal

RUNNER = "engine: ford\ntools:\n  allowed: [respond, exec_run]\nsystemPrompt: run things\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_model_chosen_command_waits_for_yes(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text(RUNNER)
    marker = Path.cwd() / "ran.txt"
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "touch ran.txt"})])  # in the workspace: cwd
    fake_openai.enqueue(tool_calls=[("respond", {"message": "the command ran"})])
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat", "--recipe", "runner"], env)
    try:
        term.read_until("/help lists commands")
        term.type("run it")
        time.sleep(0.3)
        term.type("\r")
        term.read_until("allow exec_run?")
        term.read_until("y allow once", flat=True)
        assert "touch ran.txt" in term.flat()  # the whole command is on screen
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:  # the dialog waits; the command does not run meanwhile
            term.read_some(0.2)
            assert not marker.exists()
        assert len(fake_openai.requests) == 1
        term.type("y")
        term.read_until("the command ran")
        assert marker.exists()
        term.read_until("waiting for you")
        term.type("\x04")
        term.read_until("resume with: vance chat --resume")
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_the_line_mode_asks_on_the_terminal_and_a_denial_reaches_the_model(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text(RUNNER)
    marker = Path.cwd() / "ran.txt"
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "touch ran.txt"})])  # in the workspace: cwd
    fake_openai.enqueue(tool_calls=[("respond", {"message": "understood"})])
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "dumb", "VANCE_MODEL": "openai/test-model",
           "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat", "--plain", "--recipe", "runner"], env)
    try:
        term.read_until("you> ")
        term.type("run it\r")
        term.read_until("n deny · Enter not now] > ")
        assert "command  touch ran.txt" in term.text()
        assert not marker.exists()
        term.type("n\r")
        term.read_until("why not?")
        term.type("too risky\r")
        term.read_until("understood")
        term.type("\x04")
        term.read_until("resume with: vance chat --resume")
        term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert not marker.exists()
    tool = [m for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool"][0]["content"]
    assert tool.startswith("DENIED") and "their reason: too risky" in tool
