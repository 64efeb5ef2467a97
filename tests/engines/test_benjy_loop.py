"""The Benjy loop in process: real files, real workers, a real check command, a scripted model."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.engines.benjy_brain import Brain
from vance_cli.config.recipes import RecipeError
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.errors import TransportError
from vance_cli.events import EventBus, JournalEvent, TodosUpdated
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.benjy_service import BenjyService
from vance_cli.runtime.runner import Runtime
from vance_cli.runtime.scheduler import Scheduler
from vance_cli.store.process import Status

CHECK_PY = "import glob, sys\nbad = [f for f in sorted(glob.glob('item*.txt')) if 'BAD' in open(f).read()]\nprint('bad files:', bad) if bad else print('ok')\nsys.exit(1 if bad else 0)\n"
CHECK = f"{sys.executable} check.py"


class Harness:
    def __init__(self, tmp_path: Path, brain) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        (self.ws / "check.py").write_text(CHECK_PY)
        self.brain = brain
        self.model = FunctionModel(brain)
        self.events: list = []
        scopes = Scopes.discover()
        bus = EventBus()
        bus.subscribe(self.events.append)
        self.rt = Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "fn"}), bus=bus, model_factory=lambda m, s: self.model)
        self.svc = BenjyService(self.rt)

    def start(self, goal="write the item files", **kw):
        kw.setdefault("check", CHECK)
        with self.svc.start(goal, workspace=self.ws, **kw) as started:  # released: run() reads the file
            return started.process.id

    def run(self, pid):
        return asyncio.run(self.svc.run(pid)).process

    def children(self, pid):
        return sorted((p for p in self.rt.store.list()[0] if p.parent == pid), key=lambda p: p.created)

    def worker_requests(self):
        return [r for r in self.model.requests if r.tools]


def test_a_coding_goal_runs_to_done_with_a_real_check(tmp_path):
    h = Harness(tmp_path, Brain(items=3))
    pid = h.start()
    process = h.run(pid)
    assert process.status == Status.DONE
    for n in (1, 2, 3):
        assert (h.ws / f"item{n}.txt").read_text() == f"item {n}\n"
    kids = h.children(pid)
    assert len(kids) == 3 and all(k.status == Status.DONE and k.delivery.to == pid for k in kids)
    assert [k.title for k in kids] == ["#1 write item1.txt", "#2 write item2.txt", "#3 write item3.txt"]
    assert all(k.workspace == str(h.ws) for k in kids)  # the worker and the check share the pinned workspace
    synthesis = process.history[-1]
    assert synthesis.meta["kind"] == "synthesis" and "#3 [done] write item3.txt (1 attempt)" in synthesis.content
    assert "check `" in synthesis.content and "exit 0" in synthesis.content
    assert process.todos == []
    # journal: Markdown records in the history, the same entries as events
    journal = [m.content for m in process.history if m.meta.get("kind") == "journal"]
    assert journal == [e.text for e in h.events if isinstance(e, JournalEvent) and e.process_id == pid]
    assert any(j.startswith("**CHECK #2:** passed") for j in journal)
    assert all("\n\n**Open:** " in j for j in journal)
    assert "**Open:** `CHECK #1` · `EVALUATE #1` · `CLOSE #1` · `DO #2` · `DO #3`" in "\n".join(journal)
    # todos: a projection after each mutation, cleared at DONE
    boxes = [e.todos for e in h.events if isinstance(e, TodosUpdated)]
    assert [t["status"] for t in boxes[0]] == ["open", "open", "open"]
    assert {"id": "1", "text": "write item1.txt", "status": "in_progress"} in boxes[1]
    assert boxes[-1] == [] and boxes[-2][-1]["status"] == "done"
    assert h.brain.calls == {"INTERPRET": 1, "WORKER": 6, "EVALUATE": 3, "REFLECT": 1}


def test_a_failed_check_is_retried_by_a_fresh_worker_that_sees_the_error(tmp_path):
    attempts: dict[int, int] = {}

    def files(n, prompt):
        attempts[n] = attempts.get(n, 0) + 1
        return [(f"item{n}.txt", "BAD\n" if n == 1 and attempts[n] == 1 else f"item {n}\n")]

    h = Harness(tmp_path, Brain(items=2, worker_files=files))
    pid = h.start()
    process = h.run(pid)
    assert process.status == Status.DONE and attempts == {1: 2, 2: 1}
    workers = h.worker_requests()
    first_of_each = [r for r in workers if r.messages[-1].role == "user"]
    retry = first_of_each[1]
    prompt = retry.messages[-1].content
    assert "attempt 2 of 3" in prompt and "bad files: ['item1.txt']" in prompt and "exit 1" in prompt
    assert [m.role for m in retry.messages] == ["system", "user"]  # pristine: no earlier history
    assert h.brain.calls["ROUTE"] == 1  # a failed check is a branch: one route call
    kids = h.children(pid)
    assert [k.title for k in kids] == ["#1 write item1.txt", "#1 write item1.txt", "#2 write item2.txt"]


def test_an_ask_parent_question_is_answered_and_the_answer_reaches_route(tmp_path):
    routes: list[str] = []

    def route(prompt):
        routes.append(prompt)
        if len(routes) == 1:
            return {"op": "ask_parent", "question": "Item 1 keeps failing: what should it contain?", "reason": "unclear"}
        return {"op": "retry", "item": 1, "reason": "the person said how"}

    seen = {"answered": False}

    def files(n, prompt):
        return [(f"item{n}.txt", f"item {n}\n" if seen["answered"] or n != 1 else "BAD\n")]

    h = Harness(tmp_path, Brain(items=1, worker_files=files, overrides={"ROUTE": route}))
    pid = h.start()
    process = h.run(pid)
    assert process.status == Status.BLOCKED
    status = h.svc.status(pid)
    assert status["pendingQuestion"]["text"] == "Item 1 keeps failing: what should it contain?"
    seen["answered"] = True
    result = asyncio.run(h.svc.answer(pid, "Write 'item 1' and nothing else."))
    assert result.status == Status.DONE
    assert "Answer (verbatim):\nWrite 'item 1' and nothing else." in routes[1]
    assert any(m.role == "user" and m.content == "Write 'item 1' and nothing else." for m in result.process.history)


def test_a_worker_recorded_but_never_spawned_is_spawned_on_resume_with_its_id(tmp_path):
    h = Harness(tmp_path, Brain(items=2))
    pid = h.start()
    root_status = {}

    def stop():  # stop as soon as the root waits on its first worker
        p = root_status.get("p")
        return p is not None and p.status == Status.IDLE

    sched = Scheduler(h.rt, should_stop=stop)
    with h.rt.store.lock(pid):
        root = h.rt.store.load(pid)
        root_status["p"] = root
        asyncio.run(sched.run_loaded(root))
    recorded = root.engine_params["benjyState"].inFlight.child
    # a crash between the save that recorded the worker and its spawn: the file never existed
    h.rt.store.path(recorded).unlink()
    process = h.run(pid)
    assert process.status == Status.DONE
    kids = h.children(pid)
    assert [k.id for k in kids][0] == recorded and len(kids) == 2


def test_a_stop_request_suspends_at_a_safe_point_and_resume_finishes(tmp_path):
    brain = Brain(items=2)
    holder: dict = {}

    def fn(request):  # the stop comes while the interpret call runs
        from tests.engines.benjy_brain import stage_of

        if stage_of(request.messages) == "INTERPRET":
            holder["h"].svc.request_stop()
        return brain(request)

    h = holder["h"] = Harness(tmp_path, fn)
    pid = h.start()
    process = h.run(pid)
    assert process.status == Status.SUSPENDED and h.children(pid) == []
    h.svc = BenjyService(h.rt)
    assert h.run(pid).status == Status.DONE


def test_a_workers_model_failure_fails_the_run_resumably(tmp_path):
    brain = Brain(items=1)
    broken = {"on": True}

    def fn(request):
        if request.tools and broken["on"]:
            raise TransportError("provider unavailable after 4 attempts (HTTP 503)")
        return brain(request)

    h = Harness(tmp_path, fn)
    pid = h.start()
    with pytest.raises(TransportError):
        h.run(pid)
    root = h.rt.store.load(pid)
    assert root.status == Status.FAILED and "503" in root.status_reason
    assert h.children(pid)[0].status == Status.FAILED
    broken["on"] = False
    assert h.run(pid).status == Status.DONE
    assert len(h.children(pid)) == 1  # the same worker finished its turn; none was spawned twice


def test_an_invalid_config_fails_fast_at_the_first_loop_entry(tmp_path):
    h = Harness(tmp_path, Brain(items=1))
    pid = h.start()
    with h.rt.store.lock(pid):
        p = h.rt.store.load(pid)
        p.recipe["params"]["features"]["interpret"] = None
        h.rt.store.save(p)
    with pytest.raises(RecipeError, match="interpret feature is required"):
        h.run(pid)
    failed = h.rt.store.load(pid)
    assert failed.status == Status.FAILED and "invalid Benjy config" in failed.status_reason
    assert h.model.requests == []


def test_the_journal_moves_to_archive_files_so_the_process_file_stays_bounded(tmp_path, monkeypatch):
    from vance_cli.engines.benjy import engine

    monkeypatch.setattr(engine, "JOURNAL_CHUNK", 6)
    h = Harness(tmp_path, Brain(items=6))
    pid = h.start(check=None)
    process = h.run(pid)
    assert process.status == Status.DONE
    live = [m for m in process.history if m.meta.get("kind") == "journal" and "seq" in m.meta]
    notes = [m for m in process.history if m.meta.get("archived")]
    assert len(live) <= 12 and notes
    folder = h.rt.store.path(pid).with_suffix(".journal")
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"{a:06d}-{a + 5:06d}.md" for a in range(1, 6 * len(files), 6)]
    archived = [block for f in files for block in f.read_text().strip().split("\n\n---\n\n")]
    # archive + history = every entry once, in order
    assert archived + [m.content for m in live] == [e.text for e in h.events if isinstance(e, JournalEvent) and e.process_id == pid]
    assert all(str(folder) in n.content for n in notes)


def test_the_todo_projection_follows_splits_and_equals_a_full_recompute(tmp_path, monkeypatch):
    from vance_cli.engines.benjy import render
    from vance_cli.engines.benjy.engine import BenjyEngine

    checked = {"n": 0}
    original = BenjyEngine._project_todos

    def checking(self, process, old, new):  # the incremental update equals a full projection
        original(self, process, old, new)
        assert [t.model_dump() for t in process.todos] == render.todos(new)
        checked["n"] += 1

    monkeypatch.setattr(BenjyEngine, "_project_todos", checking)
    routes = {"n": 0}

    def route(prompt):
        routes["n"] += 1
        return {"op": "split", "item": 1, "items": [{"title": "part a"}, {"title": "part b"}], "reason": "smaller"}

    def evaluate(prompt):  # item 1 never passes: three attempts, then the route splits it
        bad = "Item #1:" in prompt
        return {"verdict": "fail" if bad else "pass", "reasons": ["not it"] if bad else ["fine"]}

    h = Harness(tmp_path, Brain(items=3, overrides={"ROUTE": route, "EVALUATE": evaluate}))
    pid = h.start(check=None)
    process = h.run(pid)
    assert process.status == Status.DONE and routes["n"] == 1 and checked["n"] > 10
    boxes = [e.todos for e in h.events if isinstance(e, TodosUpdated) and e.process_id == pid]
    split = next(b for b in boxes if any(x["text"] == "part a" for x in b))
    assert [x["id"] for x in split] == ["2", "3", "4", "5"]  # item 1 dropped, its parts appended
    assert boxes[-1] == []
