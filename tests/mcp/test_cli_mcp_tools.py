"""MCP tools through the real CLI: a recipe adds mcp:toy/*, the scripted model (tests/fakeserver.py)
calls them, and the results, approvals and failures reach the model as built-in ones do."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.helpers import run_cli

TOY = str(Path(__file__).with_name("toy_server.py"))
RECIPE = "engine: ford\ntools:\n  allowed: [respond]\n  add: ['mcp:toy/*']\nsystemPrompt: use tools\n"


@pytest.fixture
def env(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "mcpr.yaml").write_text(RECIPE)
    (vance_home / "config.toml").write_text(
        f'[mcp.servers.toy]\ncommand = {sys.executable!r}\nargs = [{TOY!r}]\ntimeout = 10\ntrust_read_only = true\n'.replace("'", '"')
    )
    return {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}


def _tool_results(server) -> list[str]:
    """The tool results the model saw, in order (the last request carries the whole history)."""
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


def test_a_read_only_mcp_tool_runs_and_its_result_reaches_the_model(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("mcp__toy__lookup", {"country": "peru"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "Lima it is"})])
    r = run_cli("chat", "--recipe", "mcpr", "-p", "capital of peru?", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Lima it is")
    assert _tool_results(fake_openai) == ["Lima"]
    offered = {t["function"]["name"] for t in fake_openai.requests[0]["tools"]}
    assert {"mcp__toy__lookup", "mcp__toy__note", "respond"} <= offered


def test_a_side_effecting_mcp_tool_needs_approval(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("mcp__toy__note", {"text": "hi"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "noted"})])
    r = run_cli("chat", "--recipe", "mcpr", "-p", "note hi", env=env)
    assert r.returncode == 10, r.stderr
    assert "needs your approval: mcp__toy__note" in r.stderr
    assert not Path("notes.txt").exists()
    r = run_cli("chat", "--continue", "-p", "go on", "--allow", "mcp__toy__note", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("notes.txt").read_text() == "hi\n"


def test_a_hanging_and_a_crashing_server_give_tool_errors_and_the_turn_goes_on(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("mcp__toy__hang", {})])
    fake_openai.enqueue(tool_calls=[("mcp__toy__crash", {})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "the server is broken"})])
    started = time.monotonic()
    r = run_cli("chat", "--recipe", "mcpr", "-p", "try", env=env)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - started < 30  # the hang costs its 10 s timeout
    hang, crash = _tool_results(fake_openai)
    assert hang.startswith("ERROR:") and "did not answer" in hang
    assert crash.startswith("ERROR:") and "MCP server toy" in crash
    assert r.stdout.startswith("the server is broken")


def test_bad_arguments_are_checked_locally(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("mcp__toy__lookup", {"country": 7})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "sorry"})])
    r = run_cli("chat", "--recipe", "mcpr", "-p", "x", env=env)
    assert r.returncode == 0, r.stderr
    assert "invalid arguments for mcp__toy__lookup" in _tool_results(fake_openai)[0]
