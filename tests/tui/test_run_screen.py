"""The run screen: todos, journal, status and the pending question, from events or from files."""

from __future__ import annotations

from tests.tui.conftest import SIZE, wait_for
from vance_cli.events import JournalEvent, StatusChanged, TodosUpdated
from vance_cli.messages import Message
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process, Status, Todo
from vance_cli.tui.app import VanceApp
from vance_cli.tui.sources.files import ProcessFileSource
from vance_cli.tui.sources.scripted import ScriptedRunSource
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar
from vance_cli.tui.widgets.todo_box import TodoBox


async def test_scripted_run_shows_todos_journal_and_takes_the_answer():
    process = Process(engine="benjy", recipe_name="benjy-coding", status=Status.RUNNING)
    events = [
        TodosUpdated(process.id, [{"id": "1", "text": "do it", "status": "in_progress"}]),
        JournalEvent(process.id, "**DO** item 1"),
        StatusChanged(process.id, "RUNNING", "BLOCKED", "question"),
    ]
    source = ScriptedRunSource(process, events, question="Proceed?")
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QuestionBox)
        await wait_for(pilot, lambda: box.display)
        assert app.screen.query_one(TodoBox).title == "todos · 0 done · 1 open"
        assert app.screen.query_one(JournalPanel).texts == ["**DO** item 1"]
        assert "waiting for you" in app.screen.query_one(StatusBar).render_text()
        await pilot.press(*"yes", "enter")
        await wait_for(pilot, lambda: source.answers == ["yes"])
        await wait_for(pilot, lambda: not box.display)


async def test_watching_files_follows_a_run_and_answers_into_its_inbox(tmp_path):
    store = ProcessStore(tmp_path / "processes")
    process = Process(engine="benjy", recipe_name="benjy-coding", status=Status.RUNNING,
                      todos=[Todo(id="1", text="first", status="open")])
    store.create(process)
    source = ProcessFileSource(store, process.id, interval=0.05)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        todos = app.screen.query_one(TodoBox)
        await wait_for(pilot, lambda: todos.title == "todos · 0 done · 1 open")
        # another vance drives the run: it writes the file
        process.todos = [Todo(id="1", text="first", status="done")]
        process.history.append(Message(role="assistant", content="**DO** item 1 done", meta={"kind": "journal"}))
        process.transition(Status.BLOCKED, "question")
        process.engine_params["benjyState"] = {"pendingQuestion": "Retry item 2?"}
        store.save(process)
        await wait_for(pilot, lambda: todos.title == "todos · 1 done · 0 open")
        journal = app.screen.query_one(JournalPanel)
        await wait_for(pilot, lambda: journal.texts == ["**DO** item 1 done"])
        box = app.screen.query_one(QuestionBox)
        await wait_for(pilot, lambda: box.display and box.question == "Retry item 2?")
        await pilot.press(*"no", "enter")
        await wait_for(pilot, lambda: [i.content for i in store.load(process.id).inbox] == ["no"])
    assert isinstance(store.load(process.id).inbox[0], InboxItem)


async def test_a_benjy_run_driven_in_this_process_shows_live_and_takes_the_answer(tmp_path):
    import sys

    from tests.engines.benjy_brain import Brain
    from vance_cli.config.scopes import Scopes
    from vance_cli.config.settings import Settings
    from vance_cli.llm.scripted import FunctionModel
    from vance_cli.runtime.benjy_service import BenjyService
    from vance_cli.runtime.runner import Runtime
    from vance_cli.tui.sources.benjy import BenjyRunSource

    routes = []

    def route(prompt):
        routes.append(prompt)
        return {"op": "ask_parent", "question": "Which content?", "reason": "x"} if len(routes) == 1 else {"op": "retry", "item": 1, "reason": "ok"}

    files = lambda n, p: [(f"item{n}.txt", "ok\n" if "content: ok" in p else "BAD\n")]  # noqa: E731
    model = FunctionModel(Brain(items=1, worker_files=files, overrides={"ROUTE": route}))
    scopes = Scopes.discover()
    rt = Runtime(scopes, Settings.load(scopes, env={"VANCE_MODEL": "fn"}), model_factory=lambda m, s: model)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text("import sys\nsys.exit(1 if 'BAD' in open('item1.txt').read() else 0)\n")
    service = BenjyService(rt)
    process = service.start("write item1.txt", workspace=ws, check=f"{sys.executable} check.py").process  # held until run
    source = BenjyRunSource(service, process.id)
    app = VanceApp(run_source=source, preload=False)
    async with app.run_test(size=SIZE) as pilot:
        box = app.screen.query_one(QuestionBox)
        await wait_for(pilot, lambda: box.display and box.question and "Which content?" in box.question, timeout=30)
        journal = app.screen.query_one(JournalPanel)
        assert any(t.startswith("**CHECK #1:** failed") for t in journal.texts)
        await pilot.press(*"content: ok", "enter")
        await wait_for(pilot, lambda: source.process.status == Status.DONE, timeout=30)
        assert any("Benjy report" in t for t in journal.texts)  # the final synthesis, shown in the view
    assert (ws / "item1.txt").read_text() == "ok\n"


async def test_a_journal_entry_before_mount_is_shown_and_one_after_removal_is_kept_not_mounted():
    """A Benjy event can reach the run screen's journal before it is mounted or while the screen
    closes (the demo's last DONE entry did, under load): neither raises MountError."""
    from textual.app import App

    panel = JournalPanel()
    panel.add_entry("**DO** item 1")  # before mount
    app = App()
    async with app.run_test() as pilot:
        await app.screen.mount(panel)
        await pilot.pause()
        assert [str(m.source) for m in panel.query(".journal-entry")] == ["**DO** item 1"]
        assert not panel.query(".journal-empty")
        await panel.remove()
        panel.add_entry("**DONE:** 1 items done")  # after its screen let it go
        assert panel.texts == ["**DO** item 1", "**DONE:** 1 items done"]
