"""The real `vance chat --resume` (no id) in a pseudo-terminal: the picker, then the chosen chat."""

from __future__ import annotations

import os
import sys

import pytest

from tests.cli.helpers import REPO
from tests.helpers import json_lines, run_cli, write_script
from tests.tui.terminal import Terminal


def respond(message):
    return {"tool_calls": [{"name": "respond", "arguments": {"message": message, "awaiting_user_input": True}}]}


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_vance_chat_resume_without_an_id_picks_a_chat_in_a_terminal(tmp_path, vance_home):
    ids = []
    for i, text in enumerate(["fix the login bug", "write the README"]):
        model = write_script(tmp_path / f"s{i}.json", [respond(f"answer to {text}")])
        ids.append(json_lines(run_cli("chat", "-p", text, "--json", env={"VANCE_MODEL": model}).stdout)[0]["process_id"])
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat", "--resume"], env)
    try:
        term.read_until("Enter resume")
        screen = term.text()
        assert ids[1] in screen and ids[0] in screen and "fix the login bug" in screen
        term.type("\x1b[B")  # down: the older chat
        term.type("\r")
        term.read_until("answer to fix the login bug")
        term.type("\x04")  # Ctrl+D on the empty prompt quits
        term.read_until(f"resume with: vance chat --resume {ids[0]}")
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
