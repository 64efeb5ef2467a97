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
        term.read_until("/help lists commands")  # the prompt is painted (by the splash, first)
        # the splash is the app's first frame: the status bar with what the command line says
        assert "new chat · arthur · starting…" in term.text()
        term.type("hello from the pty")  # typed at once: keys wait for the app, none is lost
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



LEAVE_ALT_SCREEN = b"\x1b[?1049l"


def _benjy_terminal(fake_openai, tmp_path, responder):
    from tests.tui.test_benjy_live import CHECK, CHECK_PY

    fake_openai.responder = responder
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "benjy", "run", "write two item files", "--workspace", str(ws),
                     "--check", CHECK], env, size=(30, 100))
    return term, ws


def _after_the_screen(term) -> str:
    """What was printed after the app gave the normal screen back."""
    from tests.tui.terminal import ANSI

    tail = term.raw[term.raw.rindex(LEAVE_ALT_SCREEN) + len(LEAVE_ALT_SCREEN):]
    return ANSI.sub("", tail.decode("utf-8", "replace"))


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_vance_benjy_run_in_a_terminal_shows_the_run_live(fake_openai, vance_home, tmp_path):
    from tests.engines.benjy_brain import Brain

    term, ws = _benjy_terminal(fake_openai, tmp_path, Brain(items=2).reply_body)
    try:
        term.read_until("journal · ")  # the run screen is up
        term.read_until(" · done · ")  # the status bar, once the run is DONE
        term.read_until("Benjy report")  # the report, the journal's last entry (scrolled to)
        # its items with the check's evidence (the line wraps where the venv path's length puts it)
        term.read_until("#2 [done] write item2.txt (1 attempt) — check", flat=True)
        term.read_until("check.py: exit 0 — ok; evaluate: pass", flat=True)
        assert "journal · " in term.text() and "Traceback" not in term.text()
        term.type("q")
        term.read_to_end()
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    after = _after_the_screen(term)  # the report stays in the scrollback, as the plain CLI prints it
    assert "# Benjy report" in after and "#2 [done] write item2.txt" in after
    assert (ws / "item2.txt").read_text() == "item 2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_ctrl_c_in_vance_benjy_run_stops_it_resumable_with_exit_130(fake_openai, vance_home, tmp_path):
    import threading

    from tests.engines.benjy_brain import Brain

    brain, gate = Brain(items=2), threading.Event()

    def responder(body):
        if body.get("tools"):
            gate.wait(20)  # the first worker's call waits for the test
        return brain.reply_body(body)

    term, ws = _benjy_terminal(fake_openai, tmp_path, responder)
    try:
        term.read_until("waiting on a worker")
        term.type("\x03")
        term.read_until("waiting on a worker · stopping…")
        gate.set()
        # issue 16: the status on disk (IDLE: waiting on a worker), not "stopped"; the keys in the footer
        term.read_until("waiting on a worker · stopped here · r continues")
        term.read_until("r Continue the run")
        term.type("\x03")  # nothing runs now: Ctrl+C closes
        term.read_to_end()
        code = term.close()
    finally:
        gate.set()
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 130
    after = _after_the_screen(term)
    pid = after.split("vance benjy resume ", 1)[1].split()[0]
    assert "stopped; the run is saved" in after
    assert (ws / "item1.txt").is_file() and not (ws / "item2.txt").exists()
    from tests.cli.helpers import vance

    resumed = vance("benjy", "resume", pid, env={"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url})
    assert resumed.returncode == 0, resumed.stderr
    assert (ws / "item2.txt").read_text() == "item 2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_vance_benjy_watch_shows_a_run_from_its_files_and_needs_a_terminal(vance_home):
    from tests.cli.helpers import vance
    from vance_cli.config.scopes import Scopes
    from vance_cli.store.files import ProcessStore
    from vance_cli.store.process import Process, Status, Todo

    process = Process(engine="benjy", recipe_name="benjy-coding", model="openai/fake-model", status=Status.BLOCKED,
                      todos=[Todo(id="1", text="write item1.txt", status="open")],
                      engine_params={"benjyState": {"pendingQuestion": {"text": "Which content?"}}})
    ProcessStore.for_scopes(Scopes.discover()).create(process)
    piped = vance("benjy", "watch", process.id[:-2])
    assert piped.returncode == 2 and "needs a terminal" in piped.stderr and f"vance benjy status {process.id[:-2]}" in piped.stderr
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    term = Terminal([sys.executable, "-m", "vance_cli", "benjy", "watch", process.id[:-2]], env, size=(30, 100))
    try:
        term.read_until("todos · 0 done · 1 open")
        term.read_until("Which content?")
        term.read_until("waiting for you")
        term.type("\x1b")  # Esc closes the view: the run is elsewhere, it stays as it is
        term.read_to_end()
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 0
    assert ProcessStore.for_scopes(Scopes.discover()).load(process.id).status == Status.BLOCKED


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("args,said", [(["--resume", "nosuchid"], b"nosuchid"), (["--recipe"], b"requires an argument"),
                                       (["--recipe", "nosuchrecipe"], b"nosuchrecipe"),
                                       (["-r", "nosuchid"], b"nosuchid")])
def test_an_error_after_the_early_frame_is_printed_on_the_normal_screen(vance_home, args, said):
    """The chat's first frame is drawn before the command line is parsed; an error after it
    (a bad option, an unknown process) gives the normal screen back, then says what went wrong."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color"}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat", *args], env, size=(30, 100))
    try:
        term.read_to_end()
        code = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code in (1, 2) and b"\x1b[?1049h" in term.raw  # the frame was up (alternate screen)
    assert said in term.raw[term.raw.rindex(b"\x1b[?1049l"):]  # said after the normal screen is back
    assert b"Traceback" not in term.raw


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_terminal_that_goes_away_ends_the_app_and_frees_the_process(fake_openai, vance_home):
    # The pty is closed without a SIGHUP (the app is not its session's process group leader's
    # child here): reads then return nothing at once. Textual's input thread spun on them at ~30%
    # CPU, holding the process lock, forever (found by review: five such processes were left).
    from tests.cli.helpers import vance

    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat"], env)
    try:
        term.read_until("/help lists commands")
        term.read_until("arthur")  # the app's status bar (the splash shows the same line: wait a moment)
        time.sleep(1.0)
        os.close(term.master)
        code = term.proc.wait(timeout=30)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 129
    r = vance("chat", "--continue", "-p", "still there?",
              env={"VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url})
    assert r.returncode == 0, r.stderr  # the lock was released: the chat continues
    assert r.stdout == "echo: still there?\n"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_stop_signal_mid_turn_saves_the_turn_and_gives_the_terminal_back(fake_openai, vance_home, signame):
    # Found by review: the default action killed the app mid-screen: raw mode and the alternate
    # screen were left on, the file said RUNNING, the exit status was -15.
    import json
    import signal
    import threading

    gate = threading.Event()

    def responder(body):
        gate.wait(30)
        return {"tool_calls": [("respond", {"message": "late"})]}

    fake_openai.responder = responder
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30",
           "VANCE_MODEL": "openai/test-model", "VANCE_API_BASE": fake_openai.url}
    term = Terminal([sys.executable, "-m", "vance_cli", "chat"], env)
    try:
        term.read_until("/help lists commands")
        term.type("hello")
        time.sleep(0.3)
        term.type("\r")
        deadline = time.monotonic() + 60
        while not fake_openai.requests and time.monotonic() < deadline:  # the turn is at the model
            term.read_some(0.1)
        assert fake_openai.requests
        term.proc.send_signal(getattr(signal, signame))
        term.read_to_end(timeout=30)
        code = term.close()
    finally:
        gate.set()
        if term.proc.poll() is None:
            term.proc.kill()
    assert code == 128 + getattr(signal, signame)
    after = _after_the_screen(term)  # the app left the alternate screen, then said what happened
    assert f"stopped by {signame}; the state is saved (continue with: vance chat --resume " in after
    (record,) = [json.loads(p.read_text()) for p in (vance_home / "processes").glob("*.json")]
    assert record["status"] == "SUSPENDED"
