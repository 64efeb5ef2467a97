"""A run, live: the todo box, the journal, the status, and a pending question with an answer box.

Events come from a RunSource (``tui/sources/``): the run driven in this process (``vance benjy run``
on a terminal) or a run's files (``vance benjy watch ID``, ``/attach ID`` from the chat). The
source runs in a worker; this screen only paints what it reports and passes the answer back.

Keys: Ctrl+C on a run driven here asks it to stop at its next safe point (a second Ctrl+C stops
it at once; either way the run is saved and resumable) and otherwise closes the view; Esc and q
close a view but never stop work (a run driven here says how to stop it); r continues a run
driven here that stopped or failed; the footer shows r (when it applies), q and t. Closing a
watched run never stops it: it runs elsewhere.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker, WorkerCancelled, WorkerFailed

from vance_cli.errors import VanceError
from vance_cli.events import (
    JournalEvent,
    MessageEvent,
    StatusChanged,
    TodosUpdated,
    ToolFinished,
    ToolStarted,
    UsageEvent,
)
from vance_cli.text import shorten
from vance_cli.tui.messages import AnswerSubmitted, EngineEvent, TurnEnded
from vance_cli.tui.sources.base import RunSource
from vance_cli.tui.widgets.journal_panel import JournalPanel
from vance_cli.tui.widgets.question_box import QuestionBox
from vance_cli.tui.widgets.status_bar import StatusBar
from vance_cli.tui.widgets.todo_box import TodoBox


class RunScreen(Screen):
    CSS_PATH = "run_screen.tcss"
    # shown in the footer: r only when it can continue the run (check_action), q always
    BINDINGS = [
        Binding("r", "continue_run", "Continue the run"),
        Binding("q", "close", "Close"),
        Binding("t", "toggle_todos", "Todos"),
        Binding("escape", "close", "Close", show=False),
    ]

    def __init__(self, source: RunSource, *, closable: bool = False, close_when_finished: bool = False) -> None:
        super().__init__()
        self.source = source
        self.closable = closable
        self.close_when_finished = close_when_finished
        self.follow_worker: Worker | None = None

    def compose(self) -> ComposeResult:
        yield TodoBox(id="todos")
        yield JournalPanel(id="journal", title=f"journal · {self.source.process_id}")
        yield QuestionBox(id="question")
        yield StatusBar(id="status")
        yield Footer(id="keys")

    def on_mount(self) -> None:
        self.refresh_status()
        self.follow_worker = self.follow()
        take_keys = getattr(self.app, "take_keys", None)  # keys typed while the app started
        if take_keys is not None:
            self.call_later(take_keys)

    @property
    def driving(self) -> bool:
        """This process drives the run and it is working right now."""
        return self.source.running

    @work(group="run-source", exit_on_error=False)
    async def follow(self) -> None:
        try:
            await self.source.run(lambda event: self.post_message(EngineEvent(event)))
        except VanceError as exc:
            self.post_message(TurnEnded(error=exc.render()))
        except Exception as exc:  # a bug: say so in the app, keep the app alive
            self.post_message(TurnEnded(error=f"internal error: {type(exc).__name__}: {exc}\n  (set VANCE_DEBUG=1 and use --plain for a traceback)"))
        else:
            self.post_message(TurnEnded())

    def refresh_status(self) -> None:
        extra = "stopping…" if self.source.stopping else self.source.status_note()
        self.query_one(StatusBar).show(self.source.status(), extra)
        self.query_one(QuestionBox).ask(self.source.pending_question())
        self.refresh_bindings()  # r comes and goes with can_continue

    def can_continue(self) -> bool:
        """r would drive the run again: driven here, not working, not waiting for an answer, not over."""
        if not self.source.drives or self.driving:
            return False
        if self.follow_worker is not None and not self.follow_worker.is_finished:
            return False  # waiting for an answer: the question box takes it
        return self.source.status().status not in ("DONE", "BLOCKED")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self.follow_worker:
            self.refresh_bindings()  # the drive ended (or began): r may apply now

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "continue_run":
            return self.can_continue()
        return True

    def on_engine_event(self, message: EngineEvent) -> None:
        event = message.event
        mine = event.process_id == self.source.process_id
        if isinstance(event, TodosUpdated):
            if mine or event.todos:
                self.query_one(TodoBox).set_todos(event.process_id, event.todos)
            else:  # a worker finished: its todos leave the box
                self.query_one(TodoBox).set_todos(event.process_id, [])
        elif isinstance(event, JournalEvent):
            prefix = "" if mine else f"**{event.process_id}** "
            self.query_one(JournalPanel).add_entry(prefix + event.text, event.level)
        elif isinstance(event, MessageEvent):
            self.query_one(JournalPanel).add_entry(event.text if mine else f"**{event.process_id}** says: {event.text}")
        elif isinstance(event, ToolStarted) and not mine:
            self.query_one(JournalPanel).add_entry(f"`{event.process_id}` · {event.name} {shorten(event.arguments, 80, one_line=True)}", "tool")
        elif isinstance(event, ToolFinished) and not mine and not event.ok:
            self.query_one(JournalPanel).add_entry(f"`{event.process_id}` · {event.name} failed: {shorten(event.summary, 160, one_line=True)}", "warning")
        if mine and isinstance(event, (StatusChanged, UsageEvent, MessageEvent, TodosUpdated)):
            self.refresh_status()

    def on_turn_ended(self, message: TurnEnded) -> None:
        if message.error:
            hint = "\n\nr continues the run; q closes (it stays resumable)" if self.source.drives else ""
            self.query_one(JournalPanel).add_entry(f"```\n{message.error}\n```{hint}", "error")
        self.refresh_status()
        if self.close_when_finished and not self.driving:
            self.app.exit()  # a failure is raised again by run_benjy_live once the screen is gone

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
            self.refresh_status()

    def action_toggle_todos(self) -> None:
        box = self.query_one(TodoBox)
        box.collapsed = not box.collapsed

    def action_continue_run(self) -> None:
        """r: drive a run again that stopped or failed here (a DONE run, or a watched one: nothing)."""
        if not self.can_continue():
            return
        self.query_one(JournalPanel).add_entry("*continuing the run*")
        self.follow_worker = self.follow()
        self.call_after_refresh(self.refresh_status)

    def action_close(self) -> None:
        # Closing never stops work: a watched run goes on (or waits) in its own process, and a
        # run driven here keeps going until Ctrl+C stops it.
        if self.driving:
            self.app.notify("the run is working; Ctrl+C stops it at the next safe point", timeout=3)
            return
        if self.closable:
            self.dismiss()
        else:
            self.app.exit()

    def interrupt(self) -> None:
        """Ctrl+C: a run driven here stops at its next safe point; again: at once. Otherwise close."""
        if self.driving:
            if self.source.stop():
                self.refresh_status()
                self.app.notify("stopping the run at the next safe point; Ctrl+C again stops it now", timeout=3)
                return
            self.stop_now()
            return
        if self.closable:
            self.dismiss()
        else:
            self.app.exit()

    @work(group="stop", exit_on_error=False)
    async def stop_now(self) -> None:
        """Cancel the driving worker (the runtime saves the process where it was), then quit."""
        worker = self.follow_worker
        if worker is not None and not worker.is_finished:
            worker.cancel()
            try:
                await worker.wait()
            except (WorkerCancelled, WorkerFailed):
                pass  # cancelled is what was asked; a failure was shown by the worker
        self.app.exit()
