"""A run's process files as a run screen's source: a run that another vance drives, or none does.

``vance benjy watch ID`` and ``/attach ID`` show a run started elsewhere: the file is polled and
what changed becomes the events a run driven here would emit. Closing the view never stops the
run; an answer goes into the run's inbox, for the vance that drives it (or the next resume).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from vance_cli.errors import StoreError
from vance_cli.events import JournalEvent, StatusChanged, TodosUpdated
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import Process
from vance_cli.store.transcript import entries
from vance_cli.tui.sources.base import Emit, RunSource
from vance_cli.tui.status import StatusInfo, pending_question, status_info


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


class ProcessFileSource(RunSource):
    """Events from a process's file, polled: todos, journal, status, the pending question."""

    def __init__(self, store: ProcessStore, pid: str, *, interval: float = 0.5) -> None:
        self.store = store
        self.process_id = pid
        self.interval = interval
        self.process: Process | None = None
        self._journal_seen = 0
        self._answer: Callable[[str, str], Awaitable[None]] | None = None

    def status(self) -> StatusInfo:
        return status_info(self.process) if self.process is not None else StatusInfo(process_id=self.process_id)

    def pending_question(self) -> str | None:
        return pending_question(self.process) if self.process is not None else None

    def status_note(self) -> str:
        process = self.process
        if process is not None and process.status.value == "BLOCKED" and any(i.kind == "user" for i in process.inbox):
            return f"answered · taken in when the run goes on (vance benjy resume {process.id})"
        return ""

    def prime(self, process: Process) -> None:
        """Start from ``process`` as a screen already shows it: the next poll emits only what changed."""
        self.process = process
        self._journal_seen = len(journal_texts(process))

    def poll(self, emit: Emit) -> None:
        """Read the file once and emit what changed since the last read."""
        try:
            process = self.store.load(self.process_id)
        except StoreError:
            return  # being replaced right now, or gone: the next poll tells
        old = self.process
        self.process = process
        if old is None or old.status != process.status or len(old.inbox) != len(process.inbox):
            emit(
                StatusChanged(process.id, old.status.value if old else "", process.status.value, process.status_reason)
            )
        todos = [t.model_dump() for t in process.todos]
        if old is None or todos != [t.model_dump() for t in old.todos]:
            emit(TodosUpdated(process.id, todos))
        texts = journal_texts(process)
        for text in texts[self._journal_seen :]:
            emit(JournalEvent(process.id, text))
        self._journal_seen = len(texts)

    async def run(self, emit: Emit) -> None:
        while True:
            self.poll(emit)
            await asyncio.sleep(self.interval)

    async def answer(self, text: str) -> None:
        """Answer the pending question of a run that another vance drives: into its inbox."""
        from vance_cli.runtime.benjy_service import queue_answer

        queue_answer(self.store, self.process_id, text)
