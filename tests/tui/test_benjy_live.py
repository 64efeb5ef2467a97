"""`vance benjy run` on a terminal: the run screen drives a real BenjyService over a scripted model.

Real files, real workers, a real check command; the model is the stateless Benjy brain behind a
FunctionModel. What is asserted is what the person sees (todo box, journal, status, question box)
and what is on disk afterwards (the run's status, the files the workers wrote).
"""

from __future__ import annotations

import asyncio
import sys

from textual.widgets._footer import FooterKey

from tests.engines.benjy_brain import Brain
from tests.tui.conftest import SIZE, wait_for
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.llm.scripted import FunctionModel
from vance_cli.runtime.benjy_service import BenjyService
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Status
from vance_cli.tui.app import VanceApp
from vance_cli.tui.sources.benjy import BenjyRunSource
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar
from vance_cli.tui.widgets.todo_box import TodoBox

CHECK_PY = "import glob, sys\nbad = [f for f in sorted(glob.glob('item*.txt')) if 'BAD' in open(f).read()]\nprint('bad files:', bad) if bad else print('ok')\nsys.exit(1 if bad else 0)\n"
CHECK = f"{sys.executable} check.py"


def _service(tmp_path, fn):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    scopes = Scopes.discover()
    model = FunctionModel(fn)
    runtime = Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "fn"}), model_factory=lambda m, s: model)
    return BenjyService(runtime), ws


def _start(service, ws, goal="write the item files"):
    process = service.start(goal, workspace=ws, check=CHECK).process  # held until the run drives it
    return process.id


def _texts(app) -> str:
    return "\n".join(app.screen.query_one(JournalPanel).texts)


async def test_a_live_run_shows_todos_journal_and_status_and_ends_done(tmp_path, monkeypatch):
    service, ws = _service(tmp_path, Brain(items=2))
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    seen_titles: list[str] = []
    show = TodoBox.set_todos

    def recording(box, process_id, items):  # every state the box showed, in order
        show(box, process_id, items)
        seen_titles.append(box.title if box.display else "hidden")

    monkeypatch.setattr(TodoBox, "set_todos", recording)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        todos = app.screen.query_one(TodoBox)
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: "done" in status.render_text(), timeout=20, describe=lambda: status.render_text())
        journal = _texts(app)
        assert "CHECK #1:** passed" in journal and "CHECK #2:** passed" in journal
        assert "# Benjy report" in journal  # the synthesis, as the last entry
        assert "file_write" in journal  # the workers' tool lines
        # the box followed the run: two open items, one in progress, one done, ..., cleared at DONE
        assert seen_titles[0] == "todos · 0 done · 2 open" and "todos · 1 done · 1 open" in seen_titles
        assert seen_titles[-1] == "hidden" and not todos.display
        assert status.render_text().startswith(pid)
        assert not source.running and source.result.status == Status.DONE
        panel = app.screen.query_one(JournalPanel)  # it followed the run: the report is in view
        await wait_for(pilot, lambda: panel.max_scroll_y > 0 and panel.scroll_y == panel.max_scroll_y,
                       describe=lambda: (panel.scroll_y, panel.max_scroll_y))
        panel.scroll_home(animate=False)  # the person scrolls up: a new entry does not pull them down
        await pilot.pause()
        panel.add_entry("one more")
        await pilot.pause()
        assert panel.scroll_y == 0 and not panel.following
        await pilot.press("q")  # nothing is running: q closes
    assert source.outcome().status == Status.DONE and not source.outcome().stopped
    assert (ws / "item1.txt").read_text() == "item 1\n" and (ws / "item2.txt").read_text() == "item 2\n"


def asking_brain(routes: list[str]) -> Brain:
    """One item whose check fails until the person's answer says "write fine": the run asks once
    (``routes`` records the controller's route prompts; the second holds the answer)."""

    def route(prompt):
        routes.append(prompt)
        if len(routes) == 1:
            return {"op": "ask_parent", "question": "Which content should item1.txt have?", "reason": "the check keeps failing"}
        return {"op": "retry", "item": 1, "reason": "the person answered"}

    return Brain(items=1, overrides={"ROUTE": route},
                 worker_files=lambda n, p: [(f"item{n}.txt", "fine\n" if "write fine" in p else "BAD\n")])


async def test_the_question_box_answers_the_run_and_it_goes_on(tmp_path):
    routes: list[str] = []
    service, ws = _service(tmp_path, asking_brain(routes))
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QuestionBox)
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: box.display, timeout=20, describe=lambda: status.render_text())
        assert box.question == "Which content should item1.txt have?"
        assert "waiting for you" in status.render_text()
        assert service.runtime.store.load(pid).status == Status.BLOCKED
        for ch in "please write fine":
            await pilot.press("space" if ch == " " else ch)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "done" in status.render_text(), timeout=20, describe=lambda: status.render_text())
        assert not box.display
        assert "**you answered**: please write fine" in _texts(app)
        await pilot.press("ctrl+c")  # nothing is running: Ctrl+C closes
    assert "Answer (verbatim):\nplease write fine" in routes[1]
    assert (ws / "item1.txt").read_text() == "fine\n"
    assert source.outcome().status == Status.DONE


def _gated(brain, gate: asyncio.Event, started: asyncio.Event):
    """The brain, but every worker call waits for ``gate`` (the test decides when work goes on)."""

    async def fn(request):
        if request.tools:
            started.set()
            await gate.wait()
        return brain(request)

    return fn


async def test_ctrl_c_stops_at_the_next_safe_point_and_the_run_resumes(tmp_path):
    gate, started = asyncio.Event(), asyncio.Event()
    service, ws = _service(tmp_path, _gated(Brain(items=2), gate, started))
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, started.is_set, timeout=20)
        await pilot.press("escape")  # Esc never stops work, nor closes a running view
        await pilot.pause()
        assert app.is_running and source.running and not service.stop_requested
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: "working · stopping… · " in status.render_text() or "worker · stopping… · " in status.render_text())
        assert source.running  # the worker's call is still going: a safe point comes after it
        gate.set()
        await wait_for(pilot, lambda: "stopped here · r continues" in status.render_text(), timeout=20, describe=lambda: status.render_text())
        assert not source.running and "stopping" not in status.render_text()
        # issue 16: the status is the one on disk (as ps and benjy watch say it), not "stopped"
        on_disk = service.runtime.store.load(pid).status
        assert on_disk == Status.IDLE, on_disk  # the root waits on the worker of its next item
        assert " · waiting on a worker · stopped here · r continues" in status.render_text()
        # the keys are on screen: r (it can continue now) and q
        def keys():
            return {k.key: k.description for k in app.screen.query(FooterKey)}

        await wait_for(pilot, lambda: keys().get("r") == "Continue the run", describe=keys)
        assert keys().get("q") == "Close"
        await pilot.press("ctrl+c")
    result = source.outcome()
    assert result.stopped and result.status in (Status.IDLE, Status.SUSPENDED)
    assert (ws / "item1.txt").is_file() and not (ws / "item2.txt").exists()
    # resumable: the same service drives it to DONE
    service.clear_stop()
    assert (await service.run(pid)).status == Status.DONE
    assert (ws / "item2.txt").read_text() == "item 2\n"


async def test_a_second_ctrl_c_stops_at_once_and_the_run_is_saved(tmp_path):
    gate, started = asyncio.Event(), asyncio.Event()
    service, ws = _service(tmp_path, _gated(Brain(items=1), gate, started))
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, started.is_set, timeout=20)
        await pilot.press("ctrl+c")
        await pilot.press("ctrl+c")  # the worker's model call is cancelled where it waits
        await wait_for(pilot, lambda: not app.is_running, timeout=10, describe=lambda: f"{[(w.name, w.state) for w in app.workers]} {source.running} {source.error!r}")
    result = source.outcome()
    assert result.stopped and result.status != Status.DONE
    assert not (ws / "item1.txt").exists()
    gate.set()
    service.clear_stop()
    assert (await service.run(pid)).status == Status.DONE  # the lock was released, the state saved
    assert (ws / "item1.txt").read_text() == "item 1\n"


async def test_a_model_error_is_shown_and_r_continues_the_run(tmp_path):
    from vance_cli.errors import TransportError

    brain = Brain(items=1)
    failures = {"left": 1}

    def fn(request):
        if request.tools and failures["left"]:
            failures["left"] -= 1
            raise TransportError("the model server at http://127.0.0.1:9 refused the connection",
                                 hint="start the server or check VANCE_API_BASE")
        return brain(request)

    service, ws = _service(tmp_path, fn)
    pid = _start(service, ws)
    source = BenjyRunSource(service, pid)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        status = app.screen.query_one(StatusBar)
        await wait_for(pilot, lambda: "refused the connection" in _texts(app), timeout=20)
        assert "check VANCE_API_BASE" in _texts(app) and "Traceback" not in _texts(app)
        assert app.is_running and not source.running
        await pilot.press("r")
        await wait_for(pilot, lambda: "done" in status.render_text(), timeout=20, describe=lambda: status.render_text())
        await pilot.press("q")
    assert source.outcome().status == Status.DONE


async def test_watch_follows_a_run_another_vance_drives_and_answers_into_its_files(tmp_path, fake_openai, vance_home):
    """`vance benjy watch ID`'s screen over the files of a run that a `vance benjy run` subprocess
    drives: todos and journal appear, the question is shown, the answer lands in the run's inbox,
    and `vance benjy resume` (another process again) takes it and finishes; the view follows."""
    import os
    import re
    import subprocess
    import threading
    import time

    from tests.cli.helpers import REPO, vance
    from vance_cli.store.files import ProcessStore
    from vance_cli.tui.sources.files import ProcessFileSource

    gate = threading.Event()
    routes: list[str] = []

    def route(prompt):
        routes.append(prompt)
        if len(routes) == 1:
            return {"op": "ask_parent", "question": "Which content should item1.txt have?", "reason": "the check keeps failing"}
        return {"op": "retry", "item": 1, "reason": "the person answered"}

    brain = Brain(items=1, overrides={"ROUTE": route},
                  worker_files=lambda n, p: [(f"item{n}.txt", "fine\n" if "write fine" in p else "BAD\n")])

    def responder(body):
        if body.get("tools"):
            gate.wait(20)  # the worker's first call waits until the watcher is on
        return brain.reply_body(body)

    fake_openai.responder = responder
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    env = {**os.environ, "PYTHONPATH": str(REPO), "VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    log = tmp_path / "run.err"
    with log.open("w") as err:
        run = subprocess.Popen([sys.executable, "-m", "vance_cli", "benjy", "run", "write the item file", "--workspace", str(ws),
                                "--check", CHECK], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, env=env)
    try:
        deadline = time.monotonic() + 30
        while not (found := re.search(r"benjy run (\S+)", log.read_text())):
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        pid = found.group(1)
        store = ProcessStore(vance_home / "processes")
        assert store.path(pid).is_file()
        source = ProcessFileSource(store, pid, interval=0.05)
        app = VanceApp(run_source=source, preload=False)
        async with app.run_test(size=SIZE) as pilot:
            todos = app.screen.query_one(TodoBox)
            status = app.screen.query_one(StatusBar)
            box = app.screen.query_one(QuestionBox)
            await wait_for(pilot, lambda: todos.display, timeout=20)
            assert todos.title == "todos · 0 done · 1 open" and "write item1.txt" in todos.render_body()
            assert run.poll() is None  # the other vance is still working: the view is live
            gate.set()
            await wait_for(pilot, lambda: box.display, timeout=30, describe=lambda: status.render_text() + _texts(app))
            assert box.question == "Which content should item1.txt have?"
            assert "waiting for you" in status.render_text()
            assert "**CHECK #1:** failed" in _texts(app)
            assert run.wait(timeout=30) == 10  # the run stopped on the question (BLOCKED), as plain
            for ch in "please write fine":
                await pilot.press("space" if ch == " " else ch)
            await pilot.press("enter")
            await wait_for(pilot, lambda: not box.display)
            assert [i.content for i in store.load(pid).inbox] == ["please write fine"]
            resumed = await asyncio.to_thread(vance, "benjy", "resume", pid, env=env)
            assert resumed.returncode == 0, resumed.stderr
            await wait_for(pilot, lambda: "done" in status.render_text(), timeout=20, describe=lambda: status.render_text())
            await wait_for(pilot, lambda: "# Benjy report" in _texts(app), describe=lambda: _texts(app)[-1500:])
            assert "**CHECK #1:** passed" in _texts(app) and "**ANSWER (ask_parent):** please write fine" in _texts(app)
            await pilot.press("q")
    finally:
        gate.set()
        if run.poll() is None:
            run.kill()
        run.wait()
    assert (ws / "item1.txt").read_text() == "fine\n"
    assert "Answer (verbatim):\nplease write fine" in routes[1]
