"""SVG snapshots of the app's main states (pytest-textual-snapshot); fixed size, ids and clock.

Update after an intended layout change: pytest tests/tui/test_snapshots.py --snapshot-update,
then look at the SVGs (the report pytest prints) before committing them.
"""

from __future__ import annotations

from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.events import JournalEvent, StatusChanged, TodosUpdated
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.messages import Message, ToolCall, Usage
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Process, Status, Todo
from vance_cli.tui.app import VanceApp
from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory
from vance_cli.tui.sources.scripted import ScriptedRunSource

SIZE = (100, 30)
FIXED_ID = "20260101-120000-abc123"


def _chat_app(history: list[Message] | None = None, usage: Usage | None = None) -> VanceApp:
    scopes = Scopes.discover()
    runtime = Runtime(scopes, Settings.load(scopes), model_factory=lambda n, s: ScriptedModel([]), stream=True)
    process = Process(id=FIXED_ID, engine="arthur", recipe_name="arthur", model="openai/gpt-test",
                      recipe={"name": "arthur", "engine": "arthur"}, history=history or [],
                      status=Status.BLOCKED if history else Status.READY, usage=usage or Usage())
    runtime.store.create(process)
    controller = ChatController(runtime, FIXED_ID)
    controller.open()
    return VanceApp(controller=controller, history=InputHistory(None), preload=False)


async def _steady(pilot) -> None:
    for widget in pilot.app.screen.query("PromptInput"):
        widget.cursor_blink = False
    await pilot.pause()


def test_empty_chat(snap_compare):
    assert snap_compare(_chat_app(), terminal_size=SIZE, run_before=_steady)


def test_conversation_with_markdown_and_a_tool_line(snap_compare):
    call = ToolCall(id="c1", name="file_read", arguments='{"path": "notes/plan.md"}')
    answer = ToolCall(id="c2", name="respond", arguments='{"message": "## The plan\\n\\n- **parse** the file\\n- test `it`"}')
    history = [
        Message(role="user", content="What does *plan.md* say?"),
        Message(role="assistant", tool_calls=[call]),
        Message(role="tool", tool_call_id="c1", name="file_read", content="# plan\n" + "step\n" * 40, meta={"ok": True}),
        Message(role="assistant", tool_calls=[answer]),
        Message(role="tool", tool_call_id="c2", name="respond", content="delivered", meta={"ok": True, "delivered": True}),
    ]
    app = _chat_app(history, Usage(calls=2, prompt_tokens=1200, completion_tokens=80))
    assert snap_compare(app, terminal_size=SIZE, run_before=_steady)


def _run_app(question: str | None) -> VanceApp:
    process = Process(id=FIXED_ID, engine="benjy", recipe_name="benjy-coding", model="openai/gpt-test",
                      status=Status.RUNNING, usage=Usage(calls=7, prompt_tokens=5400, completion_tokens=900),
                      todos=[Todo(id="1", text="parse the CSV", status="done")])
    todos = [{"id": "1", "text": "parse the CSV", "status": "done"},
             {"id": "2", "text": "write the report", "status": "in_progress"},
             {"id": "3", "text": "check the totals", "status": "open"}]
    events = [
        TodosUpdated(FIXED_ID, todos),
        JournalEvent(FIXED_ID, "**INTERPRET** coding task, 3 criteria\n\n**Open:** `parse` `report` `totals`"),
        JournalEvent(FIXED_ID, "**DO** item 1 *parse the CSV*: worker done, check passed"),
        JournalEvent(FIXED_ID, "**DO** item 2 *write the report*: worker started"),
    ]
    if question:
        events.append(StatusChanged(FIXED_ID, "RUNNING", "BLOCKED", "checkpoint question"))
    source = ScriptedRunSource(process, events, question=question)
    return VanceApp(run_source=source, preload=False)


async def _settled(pilot) -> None:
    await pilot.pause(0.2)
    await pilot.pause()


def test_benjy_run_with_todos_and_journal(snap_compare):
    assert snap_compare(_run_app(None), terminal_size=SIZE, run_before=_settled)


def test_benjy_run_with_a_pending_question(snap_compare):
    question = "The check failed 3 times on item 2 (`pytest` exit 1). **Retry with a new approach, or stop?**"
    assert snap_compare(_run_app(question), terminal_size=SIZE, run_before=_settled)
