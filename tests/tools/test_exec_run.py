"""exec_run: exit codes, output capture and cap, timeouts that kill the process group, the env allow list.

Every behaviour here holds in both modes, so the tests run twice: unconfined (exec.sandbox = off)
and in bubblewrap (skipped where bwrap is missing or cannot build namespaces; CI installs it).
The sandbox itself is tested in test_sandbox.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tools.exec_helpers import bwrap_works, gone_soon, settings, sleepers
from vance_cli.tools import exec_run
from vance_cli.tools.base import ToolContext, ToolResult
from vance_cli.tools.registry import builtin_registry

HAVE_BWRAP = bwrap_works()


@pytest.fixture(params=["off", "bwrap"])
def mode(request) -> str:
    if request.param == "bwrap" and not HAVE_BWRAP:
        pytest.skip("bubblewrap is not installed or cannot create namespaces here")
    return request.param


@pytest.fixture
def ctx(ws: Path, mode: str) -> ToolContext:
    return ToolContext(
        workspace=ws, settings=settings(VANCE_SANDBOX="off" if mode == "off" else "required")
    )


@pytest.fixture
def call(ctx: ToolContext):
    """Invoke exec_run the way an engine does: raw JSON arguments through Tool.invoke."""

    async def _call(name: str, **args: Any) -> ToolResult:
        return await builtin_registry().get(name).invoke(json.dumps(args), ctx)

    return _call


def body(res: ToolResult) -> str:
    """The output after the first line (exit code and mode)."""
    return res.content.split("\n", 1)[1]


@pytest.fixture
def quick_drain(monkeypatch):
    monkeypatch.setattr(exec_run, "DRAIN_GRACE", 0.1)


async def test_exec_run_reports_exit_code_zero_output_and_mode(call, mode):
    res = await call("exec_run", command="echo hello")
    assert res.ok
    first = res.content.splitlines()[0]
    if mode == "off":
        assert first == 'exit code: 0 [no sandbox (exec.sandbox is "off"): the command ran with your user\'s full rights]'
    else:
        assert first == "exit code: 0 [sandbox: bubblewrap (workspace writable, rest read-only, network off)]"
    assert body(res) == "hello\n"
    assert res.data["exit_code"] == 0
    assert res.data["sandbox"] == ("none" if mode == "off" else "bwrap")


async def test_exec_run_nonzero_exit_code_is_reported_and_not_ok(call):
    res = await call("exec_run", command="echo failing; exit 3")
    assert not res.ok
    assert res.content.startswith("exit code: 3 [")
    assert body(res) == "failing\n"
    assert res.data["exit_code"] == 3


async def test_exec_run_interleaves_stdout_and_stderr(call):
    res = await call("exec_run", command="echo out1; echo err1 >&2; echo out2")
    assert body(res) == "out1\nerr1\nout2\n"


async def test_exec_run_a_closed_pipe_ends_the_writer_as_in_a_terminal(call):
    """SIGPIPE has its default action in the command (Python ignores it; the reaper restores it)."""
    res = await call("exec_run", command="yes | head -1; echo ${PIPESTATUS[0]}")
    assert body(res) == "y\n141\n"


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
    root = await call("exec_run", command="pwd; touch made-here")
    sub = await call("exec_run", command="pwd", cwd="sub")
    assert root.content.splitlines()[1] == str(ws.resolve())
    assert sub.content.splitlines()[1] == str((ws / "sub").resolve())
    assert (ws / "made-here").is_file()


async def test_exec_run_missing_cwd_is_an_error(call):
    res = await call("exec_run", command="true", cwd="nope")
    assert not res.ok and "nope" in res.content


async def test_exec_run_no_output_says_so(call):
    res = await call("exec_run", command="true")
    assert body(res) == "(no output)"


async def test_exec_run_caps_output_keeping_head_and_tail(call):
    res = await call("exec_run", command="seq 1 20000")
    assert res.ok
    text = body(res)
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("19999\n20000\n")
    assert "chars cut ...]" in text
    assert len(text) < exec_run.MAX_OUTPUT_CHARS + 200
    full = sum(len(f"{i}\n") for i in range(1, 20001))
    assert res.data["output_chars"] == full
    assert f"[... {full - exec_run.MAX_OUTPUT_CHARS:,} chars cut ...]" in text


async def test_exec_run_output_under_cap_is_not_cut(call):
    res = await call("exec_run", command="seq 1 100")
    assert "cut" not in res.content and res.content.endswith("99\n100\n")


async def test_exec_run_timeout_kills_the_whole_process_group(call):
    started = time.monotonic()
    res = await call(
        "exec_run",
        command="sleep 31.101 & echo started; wait",
        timeout=0.5,
    )
    elapsed = time.monotonic() - started
    assert not res.ok
    assert "timed out after 0.5 s" in res.content
    assert "started" in res.content  # the output so far
    assert res.data["timed_out"] is True
    assert elapsed < 5
    assert gone_soon("31.101"), "the background sleep survived the timeout"


async def test_exec_run_background_child_holding_output_is_killed_after_grace(call, mode, quick_drain):
    started = time.monotonic()
    res = await call("exec_run", command="sleep 31.102 & echo parent-done", timeout=20)
    assert time.monotonic() - started < 5
    assert res.ok and "parent-done" in res.content
    if mode == "off":
        assert "background processes" in res.content
    # (In the sandbox the child dies with its PID namespace as soon as the shell exits.)
    assert gone_soon("31.102")


async def test_exec_run_background_child_with_redirected_output(call, mode, quick_drain):
    res = await call("exec_run", command="sleep 31.103 >/dev/null 2>&1 &", timeout=20)
    try:
        assert res.ok
        # Nothing a command starts outlives it (it could change the workspace after exec_run's
        # git check): unconfined the reaper (tools/reaper.py) ends it after the grace and says so;
        # in the sandbox its PID namespace ends with the command, and everything in it.
        assert ("background processes" in res.content) == (mode == "off")
        assert gone_soon("31.103", within=0.5)
    finally:
        for pid in sleepers("31.103"):
            os.kill(pid, 9)


async def test_exec_run_cancelled_call_kills_the_group(ws: Path, ctx: ToolContext):
    tool = builtin_registry().get("exec_run")
    task = asyncio.create_task(
        tool.invoke(json.dumps({"command": "touch started; sleep 31.104", "timeout": 20}), ctx)
    )
    for _ in range(250):
        if sleepers("31.104"):
            break
        await asyncio.sleep(0.02)
    assert sleepers("31.104")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone_soon("31.104")


SECRETS = {
    "FOO_API_KEY": "k1",
    "OPENAI_API_KEY": "k2",
    "OPENAI_BASE_URL": "http://x",
    "ANTHROPIC_API_KEY": "k3",
    "VANCE_API_KEY": "k6",
    "GITHUB_TOKEN": "k7",
    "AWS_SECRET_ACCESS_KEY": "k11",
    # The ones the old deny list let through:
    "AWS_BEARER_TOKEN_BEDROCK": "k16",
    "LITELLM_MASTER_KEY": "k17",
    "WATSONX_APIKEY": "k18",
    "API_KEY": "k19",
    "DATABASE_URL": "postgres://u:pw@h/db",
}


async def test_exec_run_environment_is_an_allow_list(call, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("SOME_TOOL_SETTING", "x")
    res = await call("exec_run", command="env")
    names = {line.split("=", 1)[0] for line in body(res).splitlines() if "=" in line}
    assert not names & set(SECRETS)
    for value in SECRETS.values():
        assert value not in body(res)
    assert {"PATH", "LC_ALL"} <= names
    assert "SOME_TOOL_SETTING" not in names
    assert "HOME" in names or "HOME" not in os.environ


async def test_exec_run_passes_the_configured_extra_names(ws: Path, mode, monkeypatch, vance_home):
    (vance_home / "config.toml").write_text('[exec]\nenv = ["SOME_TOOL_SETTING", "NOT_SET_ANYWHERE"]\n')
    monkeypatch.setenv("SOME_TOOL_SETTING", "kept")
    monkeypatch.setenv("OTHER_SETTING", "dropped")
    ctx = ToolContext(workspace=ws, settings=settings(VANCE_SANDBOX="off" if mode == "off" else "required"))
    res = await builtin_registry().get("exec_run").invoke(json.dumps({"command": "env"}), ctx)
    assert "SOME_TOOL_SETTING=kept" in res.content
    assert "OTHER_SETTING" not in res.content and "NOT_SET_ANYWHERE" not in res.content


def test_command_env_keeps_only_allowed_names():
    env = {
        "PATH": "/bin",
        "HOME": "/h",
        "LANG": "C",
        "LC_CTYPE": "UTF-8",
        "AZURE_REGION": "eu",
        "X_API_KEY": "s",
        "MY_TOOL": "t",
    }
    assert exec_run.command_env(env) == {"PATH": "/bin", "HOME": "/h", "LANG": "C", "LC_CTYPE": "UTF-8"}
    assert exec_run.command_env(env, extra=["MY_TOOL"])["MY_TOOL"] == "t"
