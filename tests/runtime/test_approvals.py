"""The approval gate and its rules (config/permissions.py, runtime/approvals.py) without a screen."""

from __future__ import annotations

import asyncio
import json

import pytest

from vance_cli.config.permissions import cli_rules, decide, exact, forget, parse_rule, remember, remembered_rules
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import ConfigError, UsageError
from vance_cli.runtime.approvals import ApprovalGate
from vance_cli.store.process import Process
from vance_cli.tools.approval import ALLOW, APPROVED_RUN, DENY, PENDING, Decision, approved_run, grant_run
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry


def _gate(**kw) -> ApprovalGate:
    scopes = Scopes.discover()
    return ApprovalGate(scopes, Settings.load(scopes), **kw)


def _ask(gate, tool_name, args, process=None, host=None):
    tool = builtin_registry().get(tool_name)
    process = process or Process(engine="ford", recipe={"name": "t", "engine": "ford"})
    ctx = ToolContext(workspace=Scopes.discover().cwd, settings=gate.settings, process_id=process.id)
    return asyncio.run(gate.approve(process, tool, "c1", args, ctx, host=host))


def test_rules_parse_and_deny_beats_ask_beats_allow():
    rules = [parse_rule("exec_run", "allow", "a"), parse_rule("exec_run:rm *", "deny", "b"), parse_rule("exec_run:git *", "ask", "c")]
    assert decide(rules, "exec_run", "rm -rf x")[0] == "deny"
    assert decide(rules, "exec_run", "git push")[0] == "ask"
    assert decide(rules, "exec_run", "ls")[0] == "allow"
    assert decide(rules, "file_write", "a.py") == (None, None)
    with pytest.raises(ValueError, match="must be a tool name"):
        parse_rule("rm -rf:x", "allow", "")
    with pytest.raises(UsageError):
        cli_rules(["exec_run:"])


def test_exact_escapes_glob_characters():
    rule = parse_rule("exec_run:" + exact("ls *.py [x]?"), "allow", "")
    assert rule.matches("exec_run", "ls *.py [x]?")
    assert not rule.matches("exec_run", "ls a.py [x]?")


def test_remember_and_forget_per_project(vance_home):
    scopes = Scopes.discover()
    remember(scopes, "allow", "file_write")
    remember(scopes, "deny", "file_write")  # one decision per rule: the newest wins
    assert [(r.decision, r.text) for r in remembered_rules(scopes)] == [("deny", "file_write")]
    assert forget(scopes, "file_write") and not forget(scopes, "file_write")
    assert json.loads((vance_home / "permissions.json").read_text())["projects"] == {}


def test_a_damaged_permissions_file_says_how_to_fix_it(vance_home):
    (vance_home / "permissions.json").write_text("{nope")
    with pytest.raises(ConfigError, match="is damaged") as info:
        remembered_rules(Scopes.discover())
    assert "delete" in info.value.hint


def test_no_rule_and_nobody_to_ask_is_pending_with_the_flag():
    decision, request = _ask(_gate(), "file_write", {"path": "a.txt", "content": "x"})
    assert decision.verdict == PENDING and "--allow file_write:a.txt" in decision.reason
    assert request.preview.diff.startswith("--- /dev/null\n+++ b/a.txt")


def test_yes_allows_but_a_deny_rule_still_denies(vance_home):
    (vance_home / "config.toml").write_text('[permissions]\ndeny = ["file_write:*.env"]\n')
    gate = _gate(yes=True)
    assert _ask(gate, "file_write", {"path": "a.txt", "content": "x"})[0].verdict == ALLOW
    assert _ask(gate, "file_write", {"path": ".env", "content": "x"})[0].verdict == DENY


def test_sandboxed_exec_allow_lets_only_sandboxed_commands_through(vance_home, monkeypatch):
    (vance_home / "config.toml").write_text('[permissions]\nsandboxed_exec = "allow"\n')
    monkeypatch.setenv("VANCE_SANDBOX", "off")
    decision, request = _ask(_gate(), "exec_run", {"command": "echo hi"})
    assert decision.verdict == PENDING and request.preview.sandboxed is False  # unconfined: asks
    assert "WITHOUT a sandbox" in request.notice


def test_the_unconfined_notice_is_said_once_per_session(monkeypatch):
    monkeypatch.setenv("VANCE_SANDBOX", "off")
    gate = _gate()
    first = _ask(gate, "exec_run", {"command": "echo 1"})[1]
    second = _ask(gate, "exec_run", {"command": "echo 2"})[1]
    assert first.notice and second.notice is None


def granted_run(by: str):
    """A Benjy run approved by ``by`` (file_write for its workers, check ``pytest``), one worker of
    it, and a host that finds the run: (run, worker, host)."""
    run = Process(engine="benjy", recipe={"name": "b", "engine": "benjy"})
    grant_run(run.engine_params, by=by, tools=["file_write"], check="pytest")
    worker = Process(engine="ford", recipe={"name": "w", "engine": "ford"}, parent=run.id)

    class Host:
        def find(self, pid):
            return run if pid == run.id else None

    return run, worker, Host()


def test_an_approved_run_allows_its_workers_calls_and_an_untrusted_file_does_not():
    run, worker, host = granted_run("you")
    assert approved_run(worker, host) == run.id
    gate = _gate()
    assert _ask(gate, "file_write", {"path": "a", "content": "x"}, process=worker, host=host)[0].verdict == ALLOW
    tool = builtin_registry().get("file_write")
    ctx = ToolContext(workspace=Scopes.discover().cwd, process_id=worker.id)
    decision, _ = asyncio.run(gate.approve(worker, tool, "c", {"path": "a", "content": "x"}, ctx, host=host, untrusted=True))
    assert decision.verdict == PENDING  # a process file from an untrusted folder cannot grant itself
    assert APPROVED_RUN in run.engine_params


def test_allow_always_is_kept_for_the_project_and_applies_at_once(vance_home):
    async def approver(request):
        return Decision(ALLOW, always="subject")

    gate = _gate(approver=approver)
    assert _ask(gate, "exec_run", {"command": "pytest -q"})[0].verdict == ALLOW
    gate.approver = None
    assert _ask(gate, "exec_run", {"command": "pytest -q"})[0].by.startswith("rule exec_run:pytest -q")
    assert _ask(gate, "exec_run", {"command": "pytest -x"})[0].verdict == PENDING
    assert [r.text for r in remembered_rules(Scopes.discover())] == ["exec_run:pytest -q"]


def test_every_side_effect_tool_needs_approval_as_a_property_not_a_list():
    registry = builtin_registry()
    needing = {name for name in registry.names() if registry.get(name).needs_approval}
    assert needing == {"file_write", "exec_run", "process_spawn"}
    from vance_cli.tools.base import Tool

    async def run(args, ctx):
        raise AssertionError

    assert Tool("mcp_thing", "", {}, run, side_effects=True).needs_approval  # a tool added later


def _chat(replies, gate_kw):
    from vance_cli.llm.scripted import ScriptedModel
    from vance_cli.runtime.runner import Runtime
    from vance_cli.runtime.session import ChatSession

    scopes = Scopes.discover()
    settings = Settings.load(scopes)
    model = ScriptedModel(replies)
    rt = Runtime(scopes, settings, model_factory=lambda n, s: model)
    rt.approvals = ApprovalGate(scopes, settings, bus=rt.bus, **gate_kw)
    return rt, ChatSession.open(rt, recipe="coding", model="scripted:x")


WRITE = {"tool_calls": [{"name": "file_write", "arguments": {"path": "a.txt", "content": "x"}}]}
DONE = {"tool_calls": [{"name": "respond", "arguments": {"message": "done"}}]}


def test_an_unanswered_call_keeps_the_turn_and_the_next_drive_asks_again(tmp_path):
    from pathlib import Path

    from vance_cli.engines import awaiting_approval, has_work

    rt, chat = _chat([WRITE, DONE], {})
    with rt.session(chat.pid) as process:
        asyncio.run(chat.turn(process, "write"))
        assert awaiting_approval(process) == "file_write" and process.status.value == "BLOCKED"
        assert not has_work(process)  # the scheduler does not spin on it
        assert "started" not in process.history[-1].meta  # never recorded as started
        assert not Path("a.txt").exists()

        async def yes(request):
            return Decision(ALLOW)

        rt.approvals.approver = yes
        asyncio.run(chat.turn(process, None))
        assert Path("a.txt").read_text() == "x" and process.status.value == "BLOCKED"
        assert awaiting_approval(process) is None and process.history[-1].role == "tool"
    assert rt.store.load(chat.pid).engine_params["turn"]["open"] is False


def test_a_denied_call_is_answered_and_never_started(tmp_path):
    async def no(request):
        return Decision(DENY, reason="not that file")

    rt, chat = _chat([WRITE, DONE], {"approver": no})
    with rt.session(chat.pid) as process:
        asyncio.run(chat.turn(process, "write"))
    results = [m for m in process.history if m.role == "tool"]
    assert results[0].content.startswith("DENIED") and "their reason: not that file" in results[0].content
    calling = next(m for m in process.history if m.role == "assistant" and m.tool_calls)
    assert "started" not in calling.meta
