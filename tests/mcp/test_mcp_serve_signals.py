"""`vance mcp serve` and `vance benjy run` stopped from outside mid-run (SIGTERM, SIGHUP, the
client's SDK closing the pipe): the run is saved SUSPENDED within the SDK's 2 s grace, resumable,
and the check command under way does not outlive them (the review of issue 19)."""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.engines.benjy_brain import Brain, stage_of  # noqa: E402
from tests.helpers import json_lines, run_cli, subprocess_env  # noqa: E402
from tests.mcp.test_mcp_serve import CHECK, CHECK_PY, Served  # noqa: E402

from mcp.client.stdio import FORCE_KILL_TIMEOUT  # noqa: E402  (2 s: the SDK's SIGKILL after its SIGTERM)

# A check that beats: it rewrites ``beat`` every 0.1 s for a minute (a pid would not do: in the
# sandbox the check sees its own pid namespace).
SLOW_CHECK_PY = "import pathlib, time\nfor i in range(600):\n    pathlib.Path('beat').write_text(str(i))\n    time.sleep(0.1)\n"


@pytest.fixture
def env(fake_openai):
    return {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}


@pytest.fixture
def served(env, tmp_path):
    return Served(env, tmp_path / "serve-stderr.txt")


def _ws(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    return ws


def _serve(env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "vance_cli", "mcp", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=subprocess_env(env), cwd=str(Path.cwd()))


def _send(p: subprocess.Popen, obj: dict) -> None:
    p.stdin.write((json.dumps(obj) + "\n").encode())
    p.stdin.flush()


def _call_benjy_run(p: subprocess.Popen, args: dict) -> None:
    _send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}})
    p.stdout.readline()
    _send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    _send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "benjy_run", "arguments": args}})


def _beating(beat: Path, seconds: float = 1.0) -> bool:
    """Whether the slow check still runs: ``beat`` changes within ``seconds``."""
    before = beat.read_text() if beat.exists() else None
    time.sleep(seconds)
    return beat.exists() and beat.read_text() != before


def _wait_for(what, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not what():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _slow_interpret(fake_openai) -> tuple[Brain, threading.Event, threading.Event]:
    """A two-item Benjy brain whose interpret call thinks until ``release`` (at most 30 s);
    ``interpreting`` is set once the call is under way."""
    brain = Brain(items=2)
    interpreting, release = threading.Event(), threading.Event()

    def reply(body):
        if stage_of(body.get("messages") or []) == "INTERPRET" and not release.is_set():
            interpreting.set()
            release.wait(30)
        return brain.reply_body(body)

    fake_openai.responder = reply
    return brain, interpreting, release


def _line_with(p: subprocess.Popen, text: bytes, seconds: float = 30) -> bytes:
    """What the process wrote to stderr until ``text`` came (or it closed stderr, or ``seconds``)."""
    fd = p.stderr.fileno()
    out = b""
    deadline = time.monotonic() + seconds
    while text not in out and (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            out += chunk
    return out


def _status(env) -> tuple[str, str]:
    (row,) = [r for r in json_lines(run_cli("ps", "--json", "--all", env=env).stdout) if r["engine"] == "benjy"]
    return row["id"], row["status"]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_run_saves_it_suspended_quickly(signum, fake_openai, tmp_path, env):
    ws = _ws(tmp_path)
    brain, interpreting, release = _slow_interpret(fake_openai)
    p = _serve(env)
    try:
        _call_benjy_run(p, {"goal": "write two item files", "workspace": str(ws), "check": CHECK})
        assert interpreting.wait(60)
        started = time.monotonic()
        p.send_signal(signum)
        said = _line_with(p, b"the process state is saved")
        took = time.monotonic() - started
        rc = p.wait(30)
    finally:
        release.set()
        if p.poll() is None:
            p.kill()
    stderr = said.decode() + p.stderr.read().decode()
    # Saved and said before the SDK's SIGKILL (FORCE_KILL_TIMEOUT after its SIGTERM). The
    # interpreter's own teardown after that (0.4 s with litellm loaded, more under load) loses
    # nothing, so it is not timed here.
    assert took < FORCE_KILL_TIMEOUT, (took, stderr)
    assert "Traceback" not in stderr, stderr
    pid, status = _status(env)
    assert status == "SUSPENDED", (status, rc, stderr)  # RUNNING/READY before
    assert f"vance benjy resume {pid}" in stderr  # said where the person sees it
    if signum == signal.SIGTERM:
        fake_openai.responder = brain.reply_body
        resumed = run_cli("benjy", "resume", pid, env=env)
        assert resumed.returncode == 0, resumed.stderr


def test_the_clients_sdk_closing_the_pipe_mid_run_saves_it_suspended(served, fake_openai, tmp_path, env):
    ws = _ws(tmp_path)
    brain, interpreting, release = _slow_interpret(fake_openai)

    async def go():
        async with served.client() as c:
            call = asyncio.ensure_future(c.call_tool("benjy_run", {"goal": "write two item files", "workspace": str(ws), "check": CHECK}))
            while not interpreting.is_set():
                await asyncio.sleep(0.05)
        call.cancel()

    asyncio.run(go())  # the SDK closes stdin, waits 2 s, then SIGTERMs the server
    release.set()
    pid, status = _status(env)
    assert status == "SUSPENDED", status
    fake_openai.responder = brain.reply_body
    assert run_cli("benjy", "resume", pid, env=env).returncode == 0


@pytest.mark.parametrize(("how", "sandbox"), [("mcp serve", "off"), ("mcp serve", "auto"), ("benjy run", "off")])
def test_a_stop_signal_during_the_check_leaves_no_check_running(how, sandbox, fake_openai, tmp_path, env, vance_home):
    (vance_home / "config.toml").write_text(f'[exec]\nsandbox = "{sandbox}"\n')  # bwrap kills it with its parent
    ws = _ws(tmp_path)
    (ws / "slowcheck.py").write_text(SLOW_CHECK_PY)
    fake_openai.responder = Brain(items=1).reply_body
    check = f"{sys.executable} slowcheck.py"
    if how == "mcp serve":
        p = _serve(env)
        _call_benjy_run(p, {"goal": "write one item file", "workspace": str(ws), "check": check})
    else:
        p = subprocess.Popen([sys.executable, "-m", "vance_cli", "benjy", "run", "write one item file", "--workspace", str(ws),
                              "--check", check, "--plain"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=subprocess_env(env))
    try:
        _wait_for(lambda: (ws / "beat").exists())
        p.send_signal(signal.SIGTERM)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
    assert not _beating(ws / "beat"), "the check outlived the vance that ran it"
    assert _status(env)[1] == "SUSPENDED"
