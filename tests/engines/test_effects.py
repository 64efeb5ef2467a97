"""Side-effecting tool calls run at most once: started before they run, never re-run after a stop."""

from __future__ import annotations

import asyncio

import pytest

from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.engines import engine_class
from vance_cli.engines.base import EngineDeps
from vance_cli.engines.ford import STARTED
from vance_cli.events import EventBus
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.messages import Message, ToolCall
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process, Status
from vance_cli.tools.base import ToolContext
from vance_cli.tools.registry import builtin_registry


def test_side_effects_is_a_property_of_the_tool():
    reg = builtin_registry()
    assert reg.get("exec_run").side_effects and reg.get("file_write").side_effects
    assert not any(reg.get(n).side_effects for n in ("file_read", "file_list", "respond"))


def _interrupted_process(tmp_path, name: str, args: str) -> tuple[ProcessStore, Process]:
    """The state a stop mid-call leaves behind: the call is recorded as started, no result."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    snap = recipe(tools={"allowed": ["respond", "file_read", "file_list", "file_write", "exec_run"]})
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(tmp_path / "ws"), status=Status.SUSPENDED)
    process.history = [
        Message(role="user", content="go"),
        Message(role="assistant", tool_calls=[ToolCall(id="k1", name=name, arguments=args)], meta={STARTED: ["k1"]}),
    ]
    process.engine_params["turn"] = {"open": True, "iterations": 1, "corrections": 0}
    store = ProcessStore(tmp_path / "processes")
    store.create(process)
    return store, store.load(process.id)


def test_a_started_exec_run_is_not_run_again_on_resume(tmp_path):
    store, process = _interrupted_process(tmp_path, "exec_run", '{"command": "echo x >> count.txt"}')
    run = run_engine(tmp_path, [respond("ok")], process=process, store=store)
    assert not (tmp_path / "ws" / "count.txt").exists()
    tool_msg = run.process.history[2]
    assert tool_msg.role == "tool" and tool_msg.tool_call_id == "k1"
    assert tool_msg.content.startswith("INTERRUPTED") and "effects are unknown" in tool_msg.content
    assert tool_msg.meta["ok"] is False
    # the model saw the interruption, then answered
    assert run.model.requests[0].messages[-1].content == tool_msg.content
    assert run.messages == ["ok"]


def test_a_started_file_write_is_not_run_again_on_resume(tmp_path):
    store, process = _interrupted_process(tmp_path, "file_write", '{"path": "a.txt", "content": "x", "append": true}')
    run = run_engine(tmp_path, [respond("ok")], process=process, store=store)
    assert not (tmp_path / "ws" / "a.txt").exists()
    assert "INTERRUPTED" in run.process.history[2].content


def test_a_side_effecting_call_is_on_disk_as_started_before_it_runs(tmp_path):
    (tmp_path / "ws").mkdir()
    store = ProcessStore(tmp_path / "processes")
    snap = recipe(tools={"allowed": ["respond", "exec_run"]})
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(tmp_path / "ws"))
    process.inbox.append(InboxItem(content="run it"))
    store.create(process)
    seen = {}

    async def spy(args, ctx):
        # what a crash at this moment would leave on disk
        seen["disk"] = store.load(process.id).history[-1]
        raise KeyboardInterrupt  # the person pressed Ctrl+C while the command ran

    reg = builtin_registry()
    reg.get("exec_run").run = spy
    model = ScriptedModel([{"tool_calls": [call("exec_run", {"command": "true"}, id="c1")]}])
    deps = EngineDeps(model=model, tools=reg, bus=EventBus(), persist=store.save,
                      tool_context=ToolContext(workspace=tmp_path / "ws"))
    with pytest.raises(KeyboardInterrupt):
        asyncio.run(engine_class("ford")(deps).run(process))
    assert seen["disk"].role == "assistant" and seen["disk"].meta[STARTED] == ["c1"]


def test_read_only_calls_run_again_and_are_not_marked(tmp_path):
    store, process = _interrupted_process(tmp_path, "file_list", "{}")
    process.history[1].meta = {}  # a read-only call is never marked started
    (tmp_path / "ws" / "f.txt").write_text("x")
    run = run_engine(tmp_path, [respond("ok")], process=process, store=store)
    assert "f.txt" in run.process.history[2].content
    run2 = run_engine(tmp_path, [{"tool_calls": [call("file_list", {})]}, respond("ok")], user="again")
    assert all(STARTED not in m.meta for m in run2.process.history)
