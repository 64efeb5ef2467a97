"""Crash-resume of a turn, the Arthur inbox drain, and runtime failure handling."""

from __future__ import annotations

import asyncio

import pytest

from tests.engines.harness import recipe, respond, run_engine
from vance_cli.errors import TransportError
from vance_cli.events import EventBus
from vance_cli.llm.scripted import FunctionModel
from vance_cli.messages import Message, ToolCall
from vance_cli.store.process import InboxItem, Process, Status


def test_resume_runs_a_recorded_call_whose_result_never_reached_disk(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("content")
    snap = recipe()
    # the state a kill -9 leaves behind: the assistant's tool call is on disk, its result is not
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(tmp_path / "ws"), status=Status.RUNNING)
    process.history = [
        Message(role="user", content="list"),
        Message(role="assistant", tool_calls=[ToolCall(id="k1", name="file_list", arguments="{}")]),
    ]
    process.engine_params["turn"] = {"open": True, "iterations": 1, "corrections": 0}
    from vance_cli.store.files import ProcessStore

    store = ProcessStore(tmp_path / "processes")
    store.create(process)
    run = run_engine(tmp_path, [respond("f.txt is there")], process=store.load(process.id), store=store)
    assert run.messages == ["f.txt is there"]
    t = run.transcript()
    assert t[2][0:2] == ("tool", "file_list") and "f.txt" in t[2][2]
    assert len(run.model.requests) == 1
    assert run.process.engine_params["turn"]["iterations"] == 2


def test_resume_of_a_finished_respond_does_not_call_the_model(tmp_path):
    snap = recipe()
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(tmp_path), status=Status.BLOCKED)
    process.history = [Message(role="user", content="x")]
    from vance_cli.store.files import ProcessStore

    store = ProcessStore(tmp_path / "p")
    store.create(process)
    run = run_engine(tmp_path, [], process=store.load(process.id), store=store)
    assert run.model.requests == [] and run.process.status == Status.BLOCKED


def test_arthur_takes_every_pending_inbox_message_into_one_turn(tmp_path):
    run = run_engine(tmp_path, [respond("both read")], user=["first", "second"], recipe_snapshot=recipe(engine="arthur"))
    assert run.process.engine == "arthur"
    assert [m.content for m in run.model.requests[0].messages if m.role == "user"] == ["first", "second"]
    assert run.process.inbox == []
    assert run.process.status == Status.BLOCKED


def test_arthur_keeps_draining_while_not_awaiting_input(tmp_path):
    from vance_cli.store.files import ProcessStore

    store = ProcessStore(tmp_path / "processes")
    snap = recipe(engine="arthur")
    process = Process(engine="arthur", recipe=snap, recipe_name="t", workspace=str(tmp_path))
    process.inbox.append(InboxItem(content="start"))
    store.create(process)

    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users == ["start"]:
            # a worker event arrives while the hub works: it lands in the inbox
            process.inbox.append(InboxItem(kind="event", content="worker finished"))
            return respond("started a worker", awaiting=False)
        return respond("the worker finished")

    run = run_engine(tmp_path, [fn, fn], process=process, store=store)
    assert run.messages == ["started a worker", "the worker finished"]
    assert run.process.status == Status.BLOCKED
    assert len(run.model.requests) == 2


def test_transport_failure_leaves_the_process_failed_and_resumable(tmp_path):
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.runtime.runner import Runtime

    scopes = Scopes.discover(cwd=tmp_path)
    settings = Settings.load(scopes, env={"VANCE_MODEL": "scripted:none"})
    state = {"fail": True}

    def fn(request):
        if state["fail"]:
            raise TransportError("provider unavailable after 4 attempts (HTTP 503)")
        return respond("back again")

    rt = Runtime(scopes, settings, bus=EventBus(), model_factory=lambda m, s: FunctionModel(fn))
    process = rt.new_process("ford", model="openai/x")
    with rt.session(process.id) as p:
        rt.send(p, "hello")
        with pytest.raises(TransportError):
            asyncio.run(rt.drive(p))
    failed = rt.store.load(process.id)
    assert failed.status == Status.FAILED
    assert "503" in failed.status_reason
    assert [m.content for m in failed.history] == ["hello"]  # the user's message is kept

    state["fail"] = False
    with rt.session(process.id) as p:
        asyncio.run(rt.drive(p))
    done = rt.store.load(process.id)
    assert done.status == Status.BLOCKED
    assert done.history[-1].content == "delivered"


def test_a_model_without_tool_calling_takes_the_legacy_path(tmp_path):
    from vance_cli.engines import engine_class
    from vance_cli.engines.base import EngineDeps
    from vance_cli.llm.base import Capabilities
    from vance_cli.llm.scripted import ScriptedModel
    from vance_cli.store.files import ProcessStore
    from vance_cli.tools.base import ToolContext
    from vance_cli.tools.registry import builtin_registry

    store = ProcessStore(tmp_path / "p")
    snap = recipe()
    process = Process(engine="ford", recipe=snap, recipe_name="t", workspace=str(tmp_path))
    process.inbox.append(InboxItem(content="hi"))
    store.create(process)
    model = ScriptedModel(["plain answer"], capabilities=Capabilities(tools=False))
    deps = EngineDeps(model=model, tools=builtin_registry(), bus=EventBus(), persist=store.save,
                      tool_context=ToolContext(workspace=tmp_path))
    asyncio.run(engine_class("ford")(deps).run(process))
    assert model.requests[0].tools == []
    assert len(model.requests) == 1  # no VALIDATION CHECK: without tools there is no respond to demand
    assert process.history[-1].content == "plain answer" and process.status == Status.BLOCKED


def test_ctrl_c_mid_turn_suspends_and_resume_continues(tmp_path):
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.runtime.runner import Runtime

    scopes = Scopes.discover(cwd=tmp_path)
    settings = Settings.load(scopes, env={"VANCE_MODEL": "scripted:none"})
    state = {"interrupt": True}

    def fn(request):
        if state["interrupt"]:
            raise KeyboardInterrupt
        return respond("resumed")

    rt = Runtime(scopes, settings, model_factory=lambda m, s: FunctionModel(fn))
    process = rt.new_process("ford", model="openai/x")
    with rt.session(process.id) as p:
        rt.send(p, "hello", save=False)
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(rt.drive(p))
    suspended = rt.store.load(process.id)
    assert suspended.status == Status.SUSPENDED
    assert [m.content for m in suspended.history] == ["hello"]
    state["interrupt"] = False
    with rt.session(process.id) as p:
        asyncio.run(rt.drive(p))
    assert rt.store.load(process.id).status == Status.BLOCKED


def test_a_message_waiting_after_a_blocked_turn_gets_its_own_turn(tmp_path):
    from vance_cli.store.files import ProcessStore

    store = ProcessStore(tmp_path / "processes")
    snap = recipe(engine="arthur")
    process = Process(engine="arthur", recipe=snap, recipe_name="t", workspace=str(tmp_path))
    process.inbox.append(InboxItem(content="first"))
    store.create(process)

    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users == ["first"]:
            process.inbox.append(InboxItem(content="second"))  # typed while the hub was answering
            return respond("answer one", awaiting=True)
        return respond("answer two")

    run = run_engine(tmp_path, [fn, fn], process=process, store=store)
    assert run.messages == ["answer one", "answer two"]
    assert run.process.inbox == [] and run.process.status == Status.BLOCKED
    assert [m.content for m in run.process.history if m.role == "user"] == ["first", "second"]


def test_arthur_is_never_done(tmp_path):
    from vance_cli.engines.arthur import ArthurEngine
    from vance_cli.engines.base import EngineDeps
    from vance_cli.engines.ford import FordEngine
    from vance_cli.errors import InvalidTransition
    from vance_cli.llm.scripted import ScriptedModel
    from vance_cli.tools.base import ToolContext
    from vance_cli.tools.registry import builtin_registry

    deps = EngineDeps(model=ScriptedModel([]), tools=builtin_registry(), bus=EventBus(), persist=lambda p: None,
                      tool_context=ToolContext(workspace=tmp_path))
    hub = Process(engine="arthur", status=Status.RUNNING)
    with pytest.raises(InvalidTransition, match="never DONE"):
        ArthurEngine(deps)._set_status(hub, Status.DONE)
    assert hub.status == Status.RUNNING
    worker = Process(engine="ford", status=Status.RUNNING)
    FordEngine(deps)._set_status(worker, Status.DONE)
    assert worker.status == Status.DONE
