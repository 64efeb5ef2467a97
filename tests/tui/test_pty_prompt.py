"""The real `vance chat` in a pseudo-terminal: what arrives in one write is sent exactly as typed.

A slow ssh link, a paste without brackets and `tmux send-keys "hello" Enter` deliver the text and
its Enter in one write. The prompt handled Enter as a priority binding, before the keys ahead of
it: "hello⏎" sent nothing and left "hello" in the box; a pasted three-line text arrived as
"alpha onealpha twoalpha three" and was not sent (issue 16).
"""

from __future__ import annotations

import os
import sys
import time

import pytest

from tests.cli.helpers import REPO
from tests.tui.terminal import Terminal

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


def _user_texts(fake_openai) -> list[str]:
    out = []
    for body in fake_openai.requests:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        if users:
            text = users[-1]
            out.append(text if isinstance(text, str) else "".join(p.get("text", "") for p in text))
    return out


def _chat(fake_openai):
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat"], env)
    term.read_until("/help lists commands")
    term.read_until(" · ready")  # the app's own status bar (the splash says "starting…")
    time.sleep(0.5)
    return term


def _wait_for_requests(term, fake_openai, n: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while len(fake_openai.requests) < n and time.monotonic() < deadline:
        term.read_some(0.1)
    assert len(fake_openai.requests) >= n, term.text()[-800:]


def _quit(term) -> int | None:
    term.read_until("waiting for you")
    time.sleep(0.3)
    term.type("\x04")  # Ctrl+D on an empty prompt quits: the box is empty
    term.read_to_end()
    return term.close()


def test_text_and_enter_in_one_write_send_exactly_that(fake_openai, vance_home):
    term = _chat(fake_openai)
    try:
        term.type("hello in one write\r")  # tmux send-keys "hello in one write" Enter
        term.read_until("echo: hello in one write")
        term.read_until("waiting for you")
        time.sleep(0.3)
        term.type("explain the layout")  # a slow link: the rest comes later, with its Enter
        time.sleep(0.6)
        term.type(" in detail\r")
        term.read_until("echo: explain the layout in detail")
        code = _quit(term)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0  # Ctrl+D quit at once: nothing was left in the box
    assert _user_texts(fake_openai) == ["hello in one write", "explain the layout in detail"]
    assert "Traceback" not in term.text()


def test_a_multi_line_paste_without_brackets_is_one_message_of_its_lines(fake_openai, vance_home):
    term = _chat(fake_openai)
    try:
        term.type("alpha one\ralpha two\ralpha three\r")  # a terminal pastes newlines as CR
        _wait_for_requests(term, fake_openai, 1)
        term.read_until("echo: alpha one")
        time.sleep(0.5)
        term.type("first line\x1b\rsecond line\r")  # Alt+Enter (ESC CR) breaks the line
        _wait_for_requests(term, fake_openai, 2)
        term.read_until("echo: first line")
        code = _quit(term)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    assert _user_texts(fake_openai) == ["alpha one\nalpha two\nalpha three", "first line\nsecond line"]
    assert "alpha onealpha" not in term.text()


def test_a_paste_without_a_final_newline_waits_in_the_box(fake_openai, vance_home):
    term = _chat(fake_openai)
    try:
        term.type("line a\rline b")
        time.sleep(1.0)
        term.read_some(0.2)
        assert fake_openai.requests == []  # nothing sent early
        term.type("\r")  # the person's own Enter sends it
        _wait_for_requests(term, fake_openai, 1)
        code = _quit(term)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    assert _user_texts(fake_openai) == ["line a\nline b"]
