"""A list of events played as a run screen's source (tests, demos): nothing is driven."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from vance_cli.events import Event, StatusChanged
from vance_cli.store.process import Process, Status
from vance_cli.tui.sources.base import Emit, RunSource
from vance_cli.tui.status import StatusInfo, status_info


class ScriptedRunSource(RunSource):
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
        return status_info(self.process)

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
