"""The local scheduler: a process tree driven serially, each child's end delivered to its parent once."""

from __future__ import annotations

import asyncio

from tests.engines.harness import recipe, respond
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.events import EventBus
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.scheduler import DELIVERY_KEY, Scheduler, child_outcome, delivery_id
from vance_cli.store.process import InboxItem, Process, Status


def _runtime(tmp_path, fn):
    scopes = Scopes.discover(cwd=tmp_path)
    settings = Settings.load(scopes, env={"VANCE_MODEL": "fn"})
    model = FunctionModel(fn)
    return Runtime(scopes, settings, bus=EventBus(), model_factory=lambda m, s: model), model


def _tree(rt, *, child_inbox="do the thing", parent_inbox=None):
    parent = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", workspace=str(rt.scopes.cwd), status=Status.IDLE)
    if parent_inbox:
        parent.inbox.append(InboxItem(content=parent_inbox))
    child = Process(engine="ford", recipe=recipe(), recipe_name="t", model="fn", parent=parent.id, workspace=str(rt.scopes.cwd))
    parent.engine_params["children"] = [child.id]  # what Scheduler.spawn writes before the child exists
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
    assert child_after.engine_params[DELIVERY_KEY]["to"] == parent.id
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
    assert rt.store.load(child.id).engine_params[DELIVERY_KEY]["to"] == parent.id
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
    parent.engine_params["children"] = [child.id]
    rt.store.create(parent)
    child.inbox.append(InboxItem(content="do the thing"))
    rt.store.create(child)
    asyncio.run(Scheduler(rt).run(parent.id))
    p = rt.store.load(parent.id)
    delivered = next(m for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id))
    assert "without a reply" in delivered.content and "maxToolIterations" in delivered.content
    assert rt.store.load(child.id).engine_params[DELIVERY_KEY]["kind"] == "ended"


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
    assert rt.store.load(parent.id).engine_params["children"] == []


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
    assert c.status == Status.BLOCKED and c.engine_params[DELIVERY_KEY]["kind"] == "reply"
    p = rt.store.load(parent.id)
    assert any("which colour?" in (m.content or "") for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id))
    assert p.engine_params["children"] == [child.id]  # still open
    with rt.store.lock(child.id):  # what process_steer does: a message into the child's inbox
        c.inbox.append(InboxItem(content="blue", sender=parent.id))
        rt.store.save(c)
    asyncio.run(Scheduler(rt).run(parent.id))
    c = rt.store.load(child.id)
    p = rt.store.load(parent.id)
    assert c.status == Status.DONE
    second = [m for m in p.history if m.meta.get("inbox_id") == delivery_id(child.id, 1)]
    assert len(second) == 1 and "painted it blue" in second[0].content
    assert p.engine_params["children"] == []


def test_a_worker_that_asks_is_closed_anyway(tmp_path):
    def fn(request):
        users = [m.content for m in request.messages if m.role == "user"]
        return respond("done, I think?", awaiting=True) if users[-1] == "do the thing" else respond("ok")

    rt, _ = _runtime(tmp_path, fn)
    parent, child = _tree(rt)
    c = rt.store.load(child.id)
    c.engine_params["worker"] = True
    rt.store.save(c)
    asyncio.run(Scheduler(rt).run(parent.id))
    assert rt.store.load(child.id).status == Status.DONE
