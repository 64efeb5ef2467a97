"""The check a caller gives a Benjy run (benjy_run over MCP, `vance benjy run --check`) runs
without a per-call question, approved by the caller, but never against a deny rule in config.toml
(the review of issue 19)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from tests.engines.benjy_brain import Brain
from tests.helpers import json_lines, run_cli

pytest.importorskip("mcp")

RECORDING_CHECK = "open('CHECK_RAN', 'a').write('x')\n"


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(RECORDING_CHECK)
    return ws


def _served_benjy_run(args: dict):
    from vance_cli.cli.common import model_factory
    from vance_cli.config.context import load_context
    from vance_cli.mcp_server import server

    return asyncio.run(server.VanceMcp(*load_context(), model_factory).call("benjy_run", args))


@pytest.mark.parametrize("rule", ["exec_run", "exec_run:*check.py"])
def test_a_deny_rule_refuses_the_callers_check_over_mcp(rule, fake_openai, vance_home, ws, monkeypatch):
    monkeypatch.setenv("VANCE_MODEL", "openai/fake-model")
    monkeypatch.setenv("VANCE_API_BASE", fake_openai.url)
    (vance_home / "config.toml").write_text(f'[permissions]\ndeny = ["{rule}"]\n')
    fake_openai.responder = Brain(items=1).reply_body
    r = _served_benjy_run({"goal": "one file", "workspace": str(ws), "check": f"{sys.executable} check.py"})
    assert not (ws / "CHECK_RAN").exists()  # it ran before: the check went to exec_run with no gate
    assert not r.ok and f"rule {rule}" in r.content and "config" in r.content, r.content
    assert not fake_openai.requests and json_lines(run_cli("ps", "--json", "--all").stdout) == []  # refused before it started


def test_a_deny_rule_refuses_the_check_of_vance_benjy_run_and_another_rule_does_not(fake_openai, vance_home, ws):
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    (vance_home / "config.toml").write_text('[permissions]\ndeny = ["exec_run:rm *"]\n')
    fake_openai.responder = Brain(items=1).reply_body
    denied = run_cli("benjy", "run", "one file", "--workspace", str(ws), "--check", "rm -rf build", env=env)
    assert denied.returncode == 2 and "rule exec_run:rm *" in denied.stderr, denied.stderr
    allowed = run_cli("benjy", "run", "one file", "--workspace", str(ws), "--check", f"{sys.executable} check.py", env=env)
    assert (ws / "CHECK_RAN").exists(), allowed.stderr


def test_a_runs_grant_approves_only_the_tools_it_lists():
    """A Benjy run started by an MCP client approves its workers' file_write (and exec_run with
    allowExec): an MCP tool a worker's recipe adds is not among them and is asked about (nobody
    can answer in vance mcp serve: not run)."""
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.runtime.approvals import ApprovalGate
    from tests.runtime.test_approvals import granted_run
    from vance_cli.tools.approval import ALLOW, PENDING
    from vance_cli.tools.base import Tool, ToolContext, ToolResult
    from vance_cli.tools.registry import builtin_registry

    scopes = Scopes.discover()
    gate = ApprovalGate(scopes, Settings.load(scopes))
    _, worker, host = granted_run("the MCP client")

    async def note(args, ctx):
        return ToolResult("noted")

    mcp_note = Tool(name="mcp__h__note", description="", parameters={"type": "object"}, run=note, side_effects=True)
    ctx = ToolContext(workspace=scopes.cwd, settings=gate.settings, process_id=worker.id)

    def decide(tool, args):
        return asyncio.run(gate.approve(worker, tool, "c1", args, ctx, host=host))[0]

    assert decide(builtin_registry().get("file_write"), {"path": "a.txt", "content": "x"}).verdict == ALLOW
    assert decide(mcp_note, {}).verdict == PENDING  # approved by the run's grant before
    assert decide(builtin_registry().get("exec_run"), {"command": "ls"}).verdict == PENDING  # no allowExec
