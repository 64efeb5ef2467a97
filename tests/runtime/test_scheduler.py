"""The local scheduler: a process tree driven serially, each child's end delivered to its parent once."""

from __future__ import annotations

import asyncio

import pytest

from tests.engines.harness import recipe, respond
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.events import EventBus
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.scheduler import Scheduler, delivery_id
from vance_cli.store.process import InboxItem, Process, Status
from vance_cli.store.transcript import child_outcome
from vance_cli.tools.approval import AllowAll


def _runtime(tmp_path, fn):
    scopes = Scopes.discover(cwd=tmp_path)
    settings = Settings.load(scopes, env={"VANCE_MODEL": "fn"})
    model = FunctionModel(fn)
    # the person approved every call: these tests are about delivery, not approvals
    return Runtime(scopes, settings, bus=EventBus(), model_factory=lambda m, s: model, approvals=AllowAll()), model


def _tree(rt, *, child_inbox="do the thing", parent_inbox=None):
    parent = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", workspace=str(rt.scopes.cwd), status=Status.IDLE)
    if parent_inbox:
        parent.inbox.append(InboxItem(content=parent_inbox))
    child = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", parent=parent.id, workspace=str(rt.scopes.cwd))
    parent.children = [child.id]  # what Scheduler.spawn writes before the child exists
    rt.store.create(parent)
    if child_inbox:
        child.inbox.append(InboxItem(content=child_inbox))
    rt.store.create(child)
    return parent, child


def _brain(request):
    users = [m.content for m in request.messages if m.role == "user"]
    if users[-1] == "do the thing":
        return respond("thing done", awaiting=False)
    return respond(f"parent saw: {users[-1]}")


def test_child_runs_first_and_its_reply_wakes_the_parent_once(tmp_path):
    rt, model = _runtime(tmp_path, _brain)
    parent, child = _tree(rt)
    asyncio.run(Scheduler(rt).run(parent.id))
    child_after = rt.store.load(child.id)
    parent_after = rt.store.load(parent.id)
    assert child_after.status == Status.DONE
    assert child_after.delivery.to == parent.id
    deliveries = [m for m in parent_after.history if m.meta.get("inbox_id") == delivery_id(child.id)]
    assert len(deliveries) == 1 and "thing done" in deliveries[0].content
    assert parent_after.inbox == []
    # the child ran before the parent: two model calls, child first
    assert [m.content for m in model.requests[0].messages if m.role == "user"] == ["do the thing"]
    assert len(model.requests) == 2


def test_crash_after_the_parent_got_the_reply_but_before_the_child_was_marked(tmp_path):
    rt, model = _runtime(tmp_path, _brain)
    parent, child = _tree(rt)
    # run the child alone, then do only the first half of the delivery (what a kill -9 leaves)
    with rt.store.lock(child.id):
        c = rt.store.load(child.id)
        asyncio.run(rt.drive(c))
    c = rt.store.load(child.id)
    p = rt.store.load(parent.id)
    outcome = child_outcome(c)
    assert outcome["kind"] == "reply" and outcome["message"] == "thing done"
    p.inbox.append(InboxItem(id=delivery_id(c.id), kind="child", sender=c.id, content="[worker replied]\nthing done", meta=outcome))
    rt.store.save(p)
    asyncio.run(Scheduler(rt).run(parent.id))
    p = rt.store.load(parent.id)
    assert sum(1 for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id)) == 1
    assert rt.store.load(child.id).delivery.to == parent.id
    assert len(model.requests) == 2  # the child was not run again


def test_crash_before_the_delivery_delivers_on_resume(tmp_path):
    rt, model = _runtime(tmp_path, _brain)
    parent, child = _tree(rt)
    with rt.store.lock(child.id):
        c = rt.store.load(child.id)
        asyncio.run(rt.drive(c))
    assert rt.store.load(parent.id).inbox == []
    asyncio.run(Scheduler(rt).run(parent.id))
    p = rt.store.load(parent.id)
    assert sum(1 for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id)) == 1
    assert p.status == Status.BLOCKED and p.history[-1].role == "tool"


def test_a_delivered_child_is_never_delivered_again(tmp_path):
    rt, model = _runtime(tmp_path, _brain)
    parent, child = _tree(rt)
    asyncio.run(Scheduler(rt).run(parent.id))
    calls = len(model.requests)
    asyncio.run(Scheduler(rt).run(parent.id))  # nothing left to do
    p = rt.store.load(parent.id)
    assert sum(1 for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id)) == 1
    assert len(model.requests) == calls


def test_a_child_that_ends_without_a_reply_is_delivered_as_ended(tmp_path):
    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users[0] == "do the thing":
            return {"tool_calls": [{"name": "file_list", "arguments": {}}]}  # never responds
        return respond("noted")

    rt, model = _runtime(tmp_path, fn)
    parent = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", workspace=str(tmp_path), status=Status.IDLE)
    child = Process(engine="ford", recipe=recipe(maxToolIterations=2), recipe_name="t", model="fn", parent=parent.id, workspace=str(tmp_path))
    parent.children = [child.id]
    rt.store.create(parent)
    child.inbox.append(InboxItem(content="do the thing"))
    rt.store.create(child)
    asyncio.run(Scheduler(rt).run(parent.id))
    p = rt.store.load(parent.id)
    delivered = next(m for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id))
    assert "without a reply" in delivered.content and "maxToolIterations" in delivered.content
    assert rt.store.load(child.id).delivery.kind == "ended"


def test_ps_shows_the_tree_and_show_shows_a_child_like_any_process(tmp_path, vance_home):
    from tests.cli.helpers import json_lines, vance

    rt, _ = _runtime(tmp_path, _brain)
    rt = Runtime(Scopes.discover(), rt.settings, bus=EventBus(), model_factory=rt.model_factory)
    parent, child = _tree(rt)
    other = Process(engine="ford", recipe=recipe(), recipe_name="t", title="unrelated")
    rt.store.create(other)
    asyncio.run(Scheduler(rt).run(parent.id))
    lines = vance("ps").stdout.splitlines()
    ids = [line.split()[0] if not line.startswith("└") else line.split()[1] for line in lines[1:]]
    assert ids.index(child.id) == ids.index(parent.id) + 1
    assert any(line.startswith("└ " + child.id) for line in lines)
    rows = json_lines(vance("ps", "--json").stdout)
    assert {r["id"]: r["depth"] for r in rows}[child.id] == 1
    shown = vance("show", child.id).stdout
    assert f"parent   {parent.id}" in shown and "you: do the thing" in shown and "ford: thing done" in shown
    assert f"children {child.id}" in vance("show", parent.id).stdout


def test_a_delivered_child_leaves_the_parents_list_of_open_children(tmp_path):
    rt, _ = _runtime(tmp_path, _brain)
    parent, child = _tree(rt)
    asyncio.run(Scheduler(rt).run(parent.id))
    assert rt.store.load(parent.id).children == []


def test_a_question_from_a_non_worker_child_stays_open_and_its_next_end_is_a_new_delivery(tmp_path):
    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        if users[-1] == "do the thing":
            return respond("which colour?", awaiting=True)  # a question to the parent
        if users[-1] == "blue":
            return respond("painted it blue", awaiting=False)
        return respond(f"parent saw: {users[-1]}")

    rt, model = _runtime(tmp_path, fn)
    parent, child = _tree(rt)
    asyncio.run(Scheduler(rt).run(parent.id))
    c = rt.store.load(child.id)
    assert c.status == Status.BLOCKED and c.delivery.kind == "reply"
    p = rt.store.load(parent.id)
    assert any("which colour?" in (m.content or "") for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id))
    assert p.children == [child.id]  # still open
    with rt.store.lock(child.id):  # what process_steer does: a message into the child's inbox
        c.inbox.append(InboxItem(content="blue", sender=parent.id))
        rt.store.save(c)
    asyncio.run(Scheduler(rt).run(parent.id))
    c = rt.store.load(child.id)
    p = rt.store.load(parent.id)
    assert c.status == Status.DONE
    second = [m for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id, 1)]
    assert len(second) == 1 and "painted it blue" in second[0].content
    assert p.children == []


def test_a_worker_that_asks_is_closed_anyway(tmp_path):
    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        return respond("done, I think?", awaiting=True) if users[-1] == "do the thing" else respond("ok")

    rt, _ = _runtime(tmp_path, fn)
    parent, child = _tree(rt)
    c = rt.store.load(child.id)
    c.worker = True
    rt.store.save(c)
    asyncio.run(Scheduler(rt).run(parent.id))
    assert rt.store.load(child.id).status == Status.DONE


class _Killed(BaseException):
    """What a kill -9 leaves: nothing after the raise runs, no handler saves anything."""


@pytest.mark.parametrize("when", ["before the child's file", "after the child's file"])
def test_a_crash_in_process_spawn_before_its_result_is_saved_makes_one_child_on_resume(tmp_path, monkeypatch, when):
    # The hub's turn: process_spawn, then respond; the worker answers; the hub relays its report.
    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        last = request.messages[-1]
        if users[0] == "write the notes":  # the worker
            return respond("notes written", awaiting=False)
        if last.role == "tool" and last.name == "process_spawn":
            return respond("started a worker", awaiting=False)
        if last.role == "user" and (last.content or "").startswith("[worker "):
            return respond("the worker says: notes written")
        return {"tool_calls": [{"name": "process_spawn", "arguments": {"goal": "write the notes", "recipe": "coding"}}]}

    rt, model = _runtime(tmp_path, fn)
    hub = Process(engine="ford", recipe=recipe(tools={"allowed": ["respond", "process_spawn"]}), recipe_name="t",
                  model="fn", workspace=str(tmp_path))
    hub.inbox.append(InboxItem(content="please delegate the notes"))
    rt.store.create(hub)
    create = rt.store.create

    def create_then_die(process):
        # the hub has listed the child and saved; its tool result is not saved
        if process.parent == hub.id and when.startswith("before"):
            raise _Killed
        create(process)
        if process.parent == hub.id:
            raise _Killed

    monkeypatch.setattr(rt.store, "create", create_then_die)
    try:
        asyncio.run(Scheduler(rt).run(hub.id))
    except _Killed:
        pass
    else:
        raise AssertionError("the run was not cut off after the spawn")
    monkeypatch.setattr(rt.store, "create", create)
    asyncio.run(Scheduler(rt).run(hub.id))  # resume
    kids = [p for p in rt.store.list()[0] if p.parent == hub.id]
    assert len(kids) == 1, f"{len(kids)} workers for one process_spawn call"
    worker_turns = [r for r in model.requests if [m.content for m in r.messages if m.role == "user"][0] == "write the notes"]
    assert len(worker_turns) == 1
    h = rt.store.load(hub.id)
    results = [m for m in h.history if m.role == "tool" and m.name == "process_spawn"]
    assert len(results) == 1 and kids[0].id in (results[0].content or "")
    assert sum(1 for m in h.history if (m.meta.get("inbox_id") or "").startswith("child-")) == 1


def test_a_crash_after_process_steer_sent_the_message_does_not_send_it_twice(tmp_path, monkeypatch):
    import re

    def fn(request):
        users = [m.content or "" for m in request.messages if m.role == "user"]
        last = request.messages[-1]
        if users[0] == "paint it":  # the worker asks twice
            return respond({"paint it": "which colour?", "blue": "which size?"}.get(users[-1], "done"), awaiting=True)
        if last.role == "tool":
            return respond(f"{last.name} done", awaiting=False)
        if "which colour?" in users[-1]:
            child = re.search(r"\[worker (\S+)", users[-1]).group(1)
            return {"tool_calls": [{"name": "process_steer", "arguments": {"id": child, "message": "blue"}}]}
        if "which size?" in users[-1]:
            return respond("the worker asks for a size")
        return {"tool_calls": [{"name": "process_spawn", "arguments": {"goal": "paint it", "recipe": "coding"}}]}

    rt, model = _runtime(tmp_path, fn)
    hub = Process(engine="ford", recipe=recipe(tools={"allowed": ["respond", "process_spawn", "process_steer"]}),
                  recipe_name="t", model="fn", workspace=str(tmp_path))
    hub.inbox.append(InboxItem(content="get it painted"))
    rt.store.create(hub)
    save = rt.store.save

    def save_then_die(process):
        save(process)
        if process.parent == hub.id and any(i.content == "blue" for i in process.inbox):
            raise _Killed  # the worker has the message, the hub's tool result is not saved

    monkeypatch.setattr(rt.store, "save", save_then_die)
    with pytest.raises(_Killed):
        asyncio.run(Scheduler(rt).run(hub.id))
    monkeypatch.setattr(rt.store, "save", save)
    asyncio.run(Scheduler(rt).run(hub.id))  # resume: the worker takes "blue" in first, then the hub's turn re-runs
    (kid,) = [p for p in rt.store.list()[0] if p.parent == hub.id]
    told = [m.content for m in kid.history if m.role == "user"]
    assert told == ["paint it", "blue"], told
    h = rt.store.load(hub.id)
    assert h.status == Status.BLOCKED and "which size?" in next(m.content for m in reversed(h.history) if m.role == "user")
