"""The real `vance chat` in a pseudo-terminal against the local test server: type, read the reply."""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.cli.helpers import REPO
from tests.tui.terminal import Terminal


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_vance_chat_in_a_terminal_shows_the_reply(fake_openai, vance_home):
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat"], env)
    try:
        term.read_until("/help lists commands")  # the prompt is painted
        term.type("hello from the pty")
        time.sleep(0.3)
        term.type("\r")
        screen = term.read_until("echo: hello from the pty")
        assert "Traceback" not in screen
        term.read_until("waiting for you")
        term.type("\x04")  # Ctrl+D on the empty prompt quits
        term.read_until("resume with: vance chat --resume")
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    assert fake_openai.requests and fake_openai.requests[-1]["stream"] is True
