"""exec_run: exit codes, output capture and cap, timeouts that kill the process group, scrubbed env."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from vance_cli.tools import workspace
from vance_cli.tools.base import ToolContext, ToolResult


# Fixtures live in each test file: this package's conftest is not ours to add.
@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return folder


@pytest.fixture
def call(ws: Path):
    """Invoke a workspace tool the way an engine does: raw JSON arguments through Tool.invoke."""

    async def _call(name: str, **args: Any) -> ToolResult:
        return await workspace.FACTORIES[name]().invoke(
            json.dumps(args), ToolContext(workspace=ws)
        )

    return _call


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (an unreaped corpse counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # reading a dying process can give ESRCH
        return False
    return state not in ("Z", "X")


def _gone_soon(pid: int, within: float = 2.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def quick_drain(monkeypatch):
    monkeypatch.setattr(workspace, "DRAIN_GRACE", 0.1)


async def test_exec_run_reports_exit_code_zero_and_output(call):
    res = await call("exec_run", command="echo hello")
    assert res.ok
    assert res.content == "exit code: 0\nhello\n"
    assert res.data["exit_code"] == 0


async def test_exec_run_nonzero_exit_code_is_reported_and_not_ok(call):
    res = await call("exec_run", command="echo failing; exit 3")
    assert not res.ok
    assert res.content.startswith("exit code: 3\n")
    assert "failing" in res.content
    assert res.data["exit_code"] == 3


async def test_exec_run_interleaves_stdout_and_stderr(call):
    res = await call("exec_run", command="echo out1; echo err1 >&2; echo out2")
    assert res.content == "exit code: 0\nout1\nerr1\nout2\n"


async def test_exec_run_uses_bash_semantics(call):
    res = await call("exec_run", command="[[ abc == a* ]] && echo bash-ok")
    assert "bash-ok" in res.content


async def test_exec_run_stdin_is_devnull_not_ours(call):
    # Put readable data on our own fd 0: an inherited stdin would hand it to the child.
    saved = os.dup(0)
    r, w = os.pipe()
    os.write(w, b"leaked-line\n")
    os.close(w)
    os.dup2(r, 0)
    os.close(r)
    try:
        res = await call(
            "exec_run", command='read line; echo "rc=$? got=$line"', timeout=5
        )
    finally:
        os.dup2(saved, 0)
        os.close(saved)
    assert "rc=1 got=" in res.content
    assert "leaked-line" not in res.content


async def test_exec_run_runs_in_the_workspace_and_in_cwd(call, ws: Path):
    (ws / "sub").mkdir()
    root = await call("exec_run", command="pwd")
    sub = await call("exec_run", command="pwd", cwd="sub")
    assert root.content.splitlines()[1] == str(ws.resolve())
    assert sub.content.splitlines()[1] == str((ws / "sub").resolve())


async def test_exec_run_missing_cwd_is_an_error(call):
    res = await call("exec_run", command="true", cwd="nope")
    assert not res.ok and "nope" in res.content


async def test_exec_run_no_output_says_so(call):
    res = await call("exec_run", command="true")
    assert res.content == "exit code: 0\n(no output)"


async def test_exec_run_caps_output_keeping_head_and_tail(call):
    res = await call("exec_run", command="seq 1 20000")
    assert res.ok
    text = res.content
    assert text.startswith("exit code: 0\n1\n2\n3\n")
    assert text.endswith("19999\n20000\n")
    assert "chars cut ...]" in text
    assert len(text) < workspace.MAX_OUTPUT_CHARS + 200
    full = sum(len(f"{i}\n") for i in range(1, 20001))
    assert res.data["output_chars"] == full
    assert f"[... {full - workspace.MAX_OUTPUT_CHARS:,} chars cut ...]" in text


async def test_exec_run_output_under_cap_is_not_cut(call):
    res = await call("exec_run", command="seq 1 100")
    assert "cut" not in res.content and res.content.endswith("99\n100\n")


async def test_exec_run_timeout_kills_the_whole_process_group(call, ws: Path):
    started = time.monotonic()
    res = await call(
        "exec_run",
        command="sleep 30 & echo $! > child.pid; echo started; wait",
        timeout=0.5,
    )
    elapsed = time.monotonic() - started
    assert not res.ok
    assert "timed out after 0.5 s" in res.content
    assert "started" in res.content  # the output so far
    assert res.data["timed_out"] is True
    assert elapsed < 5
    child = int((ws / "child.pid").read_text())
    assert _gone_soon(child), "the background sleep survived the timeout"


async def test_exec_run_background_child_holding_output_is_killed_after_grace(
    call, ws: Path, quick_drain
):
    started = time.monotonic()
    res = await call(
        "exec_run",
        command="sleep 30 & echo $! > child.pid; echo parent-done",
        timeout=20,
    )
    assert time.monotonic() - started < 5
    assert res.ok and "parent-done" in res.content
    assert "background processes" in res.content
    assert _gone_soon(int((ws / "child.pid").read_text()))


async def test_exec_run_background_child_with_redirected_output_is_left_running(
    call, ws: Path, quick_drain
):
    res = await call(
        "exec_run", command="sleep 30 >/dev/null 2>&1 & echo $! > child.pid", timeout=20
    )
    child = int((ws / "child.pid").read_text())
    try:
        assert res.ok and "background processes" not in res.content
        assert _alive(child)
    finally:
        os.kill(child, 9)


async def test_exec_run_cancelled_call_kills_the_group(ws: Path):
    tool = workspace.FACTORIES["exec_run"]()
    task = asyncio.create_task(
        tool.invoke(
            json.dumps({"command": "echo $$ > shell.pid; sleep 30", "timeout": 20}),
            ToolContext(workspace=ws),
        )
    )
    for _ in range(100):
        if (ws / "shell.pid").exists() and (ws / "shell.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _gone_soon(int((ws / "shell.pid").read_text()))


async def test_exec_run_environment_has_no_provider_keys(call, monkeypatch):
    secrets = {
        "FOO_API_KEY": "k1",
        "OPENAI_API_KEY": "k2",
        "OPENAI_BASE_URL": "http://x",
        "ANTHROPIC_API_KEY": "k3",
        "GEMINI_API_KEY": "k4",
        "GOOGLE_API_KEY": "k5",
        "VANCE_API_KEY": "k6",
        "GITHUB_TOKEN": "k7",
        "MY_SECRET": "k8",
        "DB_SECRET_KEY": "k9",
        "AWS_ACCESS_KEY_ID": "k10",
        "AWS_SECRET_ACCESS_KEY": "k11",
        "AWS_SESSION_TOKEN": "k12",
        "AZURE_OPENAI_KEY": "k13",
        "AZURE_API_KEY": "k14",
        "HF_TOKEN": "k15",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("VANCE_KEEP_ME", "kept")
    res = await call("exec_run", command="env")
    names = {
        line.split("=", 1)[0] for line in res.content.splitlines()[1:] if "=" in line
    }
    assert not names & set(secrets)
    assert "PATH" in names and "VANCE_KEEP_ME" in names
    assert "HOME" in names or "HOME" not in os.environ


def test_scrubbed_env_keeps_ordinary_variables():
    env = {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
        "AZURE_REGION": "eu",
        "TOKENIZERS_PARALLELISM": "0",
        "X_API_KEY": "s",
        "OPENAI_ORG": "o",
    }
    assert workspace.scrubbed_env(env) == {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
        "AZURE_REGION": "eu",
        "TOKENIZERS_PARALLELISM": "0",
    }
