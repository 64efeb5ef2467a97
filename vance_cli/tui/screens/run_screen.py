"""A run, live: the todo box, the journal, the status, and a pending question with an answer box.

Events come from a RunSource (run_source.py): the run driven in this process (``vance benjy run``
on a terminal) or a run's files (``vance benjy watch ID``, ``/attach ID`` from the chat). The
source runs in a worker; this screen only paints what it reports and passes the answer back.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen

from vance_cli.errors import VanceError
from vance_cli.events import JournalEvent, MessageEvent, StatusChanged, TodosUpdated, UsageEvent
from vance_cli.tui.messages import AnswerSubmitted, EngineEvent, TurnEnded
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar
from vance_cli.tui.widgets.todo_box import TodoBox


class RunScreen(Screen):
    CSS_PATH = "run_screen.tcss"
    BINDINGS = [
        Binding("t", "toggle_todos", "Todos"),
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(self, source, *, closable: bool = False) -> None:
        super().__init__()
        self.source = source
        self.closable = closable

    def compose(self) -> ComposeResult:
        yield TodoBox(id="todos")
        yield JournalPanel(id="journal", title=f"journal · {self.source.process_id}")
        yield QuestionBox(id="question")
        yield StatusBar(id="status")

    def on_mount(self) -> None:
        self.refresh_status()
        self.follow()

    @work(group="run-source", exit_on_error=False)
    async def follow(self) -> None:
        try:
            await self.source.run(lambda event: self.post_message(EngineEvent(event)))
        except VanceError as exc:
            self.post_message(TurnEnded(error=exc.render()))
        else:
            self.post_message(TurnEnded())

    def refresh_status(self) -> None:
        self.query_one(StatusBar).show(self.source.status())
        self.query_one(QuestionBox).ask(self.source.pending_question())

    def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        if isinstance(event, TodosUpdated):
            if event.process_id == self.source.process_id or event.todos:
                self.query_one(TodoBox).set_todos(event.process_id, event.todos)
        elif isinstance(event, JournalEvent):
            prefix = "" if event.process_id == self.source.process_id else f"**{event.process_id}** "
            self.query_one(JournalPanel).add_entry(prefix + event.text, event.level)
        elif isinstance(event, MessageEvent) and event.process_id == self.source.process_id:
            self.query_one(JournalPanel).add_entry(event.text)
        if isinstance(event, (StatusChanged, UsageEvent, MessageEvent)):
            self.refresh_status()

    def on_turn_ended(self, message: TurnEnded) -> None:
        if message.error:
            self.query_one(JournalPanel).add_entry(f"```\n{message.error}\n```", "error")
        self.refresh_status()

    def on_answer_submitted(self, message: AnswerSubmitted) -> None:
        self.query_one(JournalPanel).add_entry(f"**you answered**: {message.text}")
        self.send_answer(message.text)

    @work(group="answer", exit_on_error=False)
    async def send_answer(self, text: str) -> None:
        try:
            await self.source.answer(text)
        except VanceError as exc:
            self.post_message(TurnEnded(error=exc.render()))
        else:
            self.post_message(TurnEnded())

    def action_toggle_todos(self) -> None:
        box = self.query_one(TodoBox)
        box.collapsed = not box.collapsed

    def action_close(self) -> None:
        # Closing the view never stops the run: it goes on (or waits) in its own process.
        if self.closable:
            self.dismiss()
        else:
            self.app.exit()

    def interrupt(self) -> None:
        stop = getattr(self.source, "stop", None)
        if stop is not None and stop():
            self.app.notify("stopping the run at the next safe point; Ctrl+C again to quit", timeout=3)
            return
        self.action_close()
