"""Where a run screen's events come from: a run driven in this process, or a run's files.

A ``RunSource`` produces the runtime's events (TodosUpdated, JournalEvent, StatusChanged, ...)
for one process, says what its status and pending question are, and takes the person's answer.

- ``ProcessFileSource`` watches the process files of a run started elsewhere (``vance benjy
  watch ID``, ``/attach ID``): it polls the file and turns what changed into the same events.
- ``ScriptedRunSource`` plays a list of events (tests, demos).
- ``benjy_source.BenjyRunSource`` drives a Benjy run in this process (``vance benjy run`` on a
  terminal, ``vance_cli.tui.run_benjy_live``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from vance_cli.errors import StoreError
from vance_cli.events import Event, JournalEvent, StatusChanged, TodosUpdated
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import Process, Status
from vance_cli.store.transcript import entries
from vance_cli.tui.controller import StatusInfo

Emit = Callable[[Event], None]


def pending_question(process: Process) -> str | None:
    """The question a BLOCKED run waits on (benjyState.pendingQuestion; a chat's last message)."""
    if process.status.value != "BLOCKED":
        return None
    if any(item.kind == "user" for item in process.inbox):
        return None  # answered: the answer waits in the inbox for the run to take it in
    from vance_cli.engines import pending_question as engine_question

    question = engine_question(process)
    if question is not None:
        return question
    delivered = [e.text for e in entries(process) if e.kind == "message"]
    return delivered[-1] if delivered else None


def status_of(process: Process) -> StatusInfo:
    u = process.usage
    return StatusInfo(
        process_id=process.id,
        recipe=process.recipe_name or "",
        model=process.model or "",
        status=process.status.value,
        calls=u.calls,
        tokens=u.prompt_tokens + u.completion_tokens,
        cost=u.cost,
    )


def journal_texts(process: Process) -> list[str]:
    """The journal of a process as Markdown entries.

    Engine-written journal entries (history messages with ``meta.kind == "journal"``, and the
    final report, ``"synthesis"``) when the engine keeps them; otherwise the transcript as short lines, so any process can be watched.
    """
    marked = [m.content or "" for m in process.history if m.meta.get("kind") in ("journal", "synthesis")]
    if marked:
        return marked
    out: list[str] = []
    for e in entries(process):
        if e.kind == "user":
            out.append(f"**goal/message**: {e.text}")
        elif e.kind == "message":
            out.append(e.text)
        elif e.kind == "call":
            out.append(f"`{e.name}` {' '.join(e.text.split())[:120]}")
        elif e.kind == "note":
            out.append(f"*{' '.join(e.text.split())[:160]}*")
    return out


class ProcessFileSource:
    """Events from a process's file, polled: todos, journal, status, the pending question."""

    def __init__(self, store: ProcessStore, pid: str, *, interval: float = 0.5) -> None:
        self.store = store
        self.process_id = pid
        self.interval = interval
        self.process: Process | None = None
        self._journal_seen = 0
        self._answer: Callable[[str, str], Awaitable[None]] | None = None

    def status(self) -> StatusInfo:
        return status_of(self.process) if self.process is not None else StatusInfo(process_id=self.process_id)

    def pending_question(self) -> str | None:
        return pending_question(self.process) if self.process is not None else None

    def status_note(self) -> str:
        process = self.process
        if process is not None and process.status.value == "BLOCKED" and any(i.kind == "user" for i in process.inbox):
            return f"answered · taken in when the run goes on (vance benjy resume {process.id})"
        return ""

    def poll(self, emit: Emit) -> None:
        """Read the file once and emit what changed since the last read."""
        try:
            process = self.store.load(self.process_id)
        except StoreError:
            return  # being replaced right now, or gone: the next poll tells
        old = self.process
        self.process = process
        if old is None or old.status != process.status or len(old.inbox) != len(process.inbox):
            emit(StatusChanged(process.id, old.status.value if old else "", process.status.value, process.status_reason))
        todos = [t.model_dump() for t in process.todos]
        if old is None or todos != [t.model_dump() for t in old.todos]:
            emit(TodosUpdated(process.id, todos))
        texts = journal_texts(process)
        for text in texts[self._journal_seen:]:
            emit(JournalEvent(process.id, text))
        self._journal_seen = len(texts)

    async def run(self, emit: Emit) -> None:
        while True:
            self.poll(emit)
            await asyncio.sleep(self.interval)

    async def answer(self, text: str) -> None:
        """Answer the pending question of a run that another vance drives: into its inbox."""
        from vance_cli.tui.benjy_hook import answer_by_files

        await answer_by_files(self.store, self.process_id, text)


class ScriptedRunSource:
    """Plays events in order (with an optional pause between them); records the answers."""

    def __init__(
        self,
        process: Process,
        events: Iterable[Event],
        *,
        delay: float = 0.0,
        question: str | None = None,
    ) -> None:
        self.process = process
        self.process_id = process.id
        self.events = list(events)
        self.delay = delay
        self.question = question
        self.answers: list[str] = []

    def status(self) -> StatusInfo:
        return status_of(self.process)

    def pending_question(self) -> str | None:
        return self.question if self.process.status.value == "BLOCKED" else None

    async def run(self, emit: Emit) -> None:
        for event in self.events:
            if isinstance(event, StatusChanged):
                self.process.status = Status(event.new)
            emit(event)
            if self.delay:
                await asyncio.sleep(self.delay)

    async def answer(self, text: str) -> None:
        self.answers.append(text)
        self.question = None
        self.process.status = Status.RUNNING

