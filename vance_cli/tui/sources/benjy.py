"""A Benjy run driven in this process, as a run screen's source (`vance benjy run` on a terminal).

The run screen calls ``run(emit)`` in a worker: it drives ``BenjyService.run`` (or ``answer``)
with the runtime's event bus forwarded to ``emit``, and when the run stops on a question it waits
there for the person's answer (``answer()`` only hands the text over) and goes on. All model and
engine work therefore happens in that one worker; cancelling it is the hard stop (the runtime
saves the process at the await it was in). ``stop()`` is the soft one: the run ends at its next
safe point (between two tasks), SUSPENDED and resumable.
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from vance_cli.errors import StoreError
from vance_cli.events import Event, StatusChanged, TodosUpdated, UsageEvent
from vance_cli.runtime.benjy_service import BenjyService, RunResult
from vance_cli.store.process import Process, Status
from vance_cli.tui.sources.base import Emit, RunSource
from vance_cli.tui.status import StatusInfo, pending_question, status_info


class BenjyRunSource(RunSource):
    drives: ClassVar[bool] = True

    def __init__(self, service: BenjyService, pid: str, *, answer: str | None = None) -> None:
        self.service = service
        self.store = service.runtime.store
        self.process_id = pid
        self.first_answer = answer
        self.process: Process | None = self.store.load(pid)  # as on disk; refreshed as the run reports
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self.running_since: float | None = None
        self._answers: asyncio.Queue[str] = asyncio.Queue()
        self._answering = False
        self._dirty = True
        self._emit: Emit | None = None

    # --- what the screen reads ----------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The run is being driven right now (stopping it needs a Ctrl+C, closing must not)."""
        return self.running_since is not None

    @property
    def stopping(self) -> bool:
        return self.running and self.service.stop_requested

    def _current(self) -> Process | None:
        if self._dirty:
            try:
                self.process = self.store.load(self.process_id)
                self._dirty = False
            except StoreError:
                pass  # being replaced right now: the last read stands
        return self.process

    def status(self) -> StatusInfo:
        process = self._current()
        if process is None:
            return StatusInfo(process_id=self.process_id, running_since=self.running_since)
        # the status on disk, as `ps` and `benjy watch` show it (a stop between two drives can
        # leave the root IDLE, waiting on its worker); that nothing drives it is status_note's
        return status_info(process, running_since=self.running_since)

    def status_note(self) -> str:
        if not self.running and self.result is not None and self.result.stopped:
            return "stopped here · r continues"
        return ""

    def pending_question(self) -> str | None:
        process = self._current()
        if process is None or self._answering or self.running:
            return None
        return pending_question(process)

    # --- driving ------------------------------------------------------------------------------

    def _forward(self, event: Event) -> None:
        if event.process_id == self.process_id and isinstance(event, (StatusChanged, UsageEvent, TodosUpdated)):
            self._dirty = True
        if self._emit is not None:
            self._emit(event)

    async def run(self, emit: Emit) -> None:
        """Drive the run until it ends (DONE, a failure, a stop); a question waits for the answer."""
        self._emit = emit
        self.service.clear_stop()
        self.error = None
        unsubscribe = self.service.runtime.bus.subscribe(self._forward)
        text, self.first_answer = self.first_answer, None
        try:
            while True:
                self.running_since = time.time()
                self.result = None  # a drive that is cut off must not leave the last one's result
                try:
                    if text is None:
                        self.result = await self.service.run(self.process_id)
                    else:
                        self.result = await self.service.answer(self.process_id, text)
                except BaseException as exc:
                    self.error = exc
                    raise
                finally:
                    self.running_since = None
                    self._answering = False
                    self._dirty = True
                self.process = self.result.process
                self._dirty = False
                status = self.result.status
                if self.service.stop_requested and status not in (Status.DONE, Status.BLOCKED):
                    self.result.stopped = True
                # Nothing drives the run now: the screen re-reads the status (no timer, the question).
                emit(StatusChanged(self.process_id, status.value, status.value, self.process.status_reason))
                if status != Status.BLOCKED or self.result.stopped:
                    return
                text = await self._answers.get()
        finally:
            unsubscribe()

    async def answer(self, text: str) -> None:
        """Hand the answer to the running ``run()``, which continues the run with it."""
        self._answering = True
        self._answers.put_nowait(text)

    def stop(self) -> bool:
        """Ask the run to stop at its next safe point; False when it is not running or already asked."""
        if not self.running or self.service.stop_requested:
            return False
        self.service.request_stop()
        return True

    def outcome(self) -> RunResult:
        """How the run stands now (after the screen closed): stopped when it never finished."""
        if self.result is not None and not self.running and self.error is None:
            return self.result
        process = self.store.load(self.process_id)
        return RunResult(process, stopped=process.status not in (Status.DONE, Status.BLOCKED))
