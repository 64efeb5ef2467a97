"""A Benjy run driven in this process, as a run screen's source (`vance benjy run` on a terminal).

The run screen calls ``run(emit)`` in a worker: it drives ``BenjyService.run`` (or ``answer``)
with the runtime's event bus forwarded to ``emit``, and when the run stops on a question it waits
there for the person's answer (``answer()`` only hands the text over) and goes on. All model and
engine work therefore happens in that one worker; cancelling it is the hard stop (the runtime
saves the process at the await it was in). ``stop()`` is the soft one: the run ends at its next
safe point (between two tasks), SUSPENDED and resumable.

While it waits for the answer nothing holds the run's lock, so another command may answer it:
``vance benjy watch`` (or ``/attach``) puts the answer in the run's inbox, ``vance benjy answer``
drives the run itself. The wait reads the process file every ``POLL_SECONDS``: an answer in the
inbox is taken in by driving the run here; a run another vance drives is followed from its file
(as ``benjy watch`` follows it) until it waits for an answer again (then this screen asks) or ends.
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from vance_cli.errors import ProcessLocked, StoreError
from vance_cli.events import Event, JournalEvent, StatusChanged, TodosUpdated, UsageEvent
from vance_cli.runtime.benjy_service import BenjyService, RunResult
from vance_cli.store.lock import describe_holder
from vance_cli.store.process import Process, Status
from vance_cli.tui.sources.base import Emit, RunSource
from vance_cli.tui.sources.files import ProcessFileSource
from vance_cli.tui.status import StatusInfo, pending_question, status_info

POLL_SECONDS = 0.25  # how often a run waiting for an answer reads its file (answered elsewhere?)
SHOW_SECONDS = 0.05  # the screen's turn to paint an answer found on disk, before the drive starts


def _answered(process: Process) -> str | None:
    """The answer waiting in the inbox of a BLOCKED run (put there by another command), or None."""
    if process.status != Status.BLOCKED:
        return None
    return next((item.content for item in process.inbox if item.kind == "user"), None)


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
        self.elsewhere: str | None = None  # who drives the run while another vance does

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
        if self.elsewhere:
            return self.elsewhere
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
        """Drive the run until it ends (DONE, a failure, a stop); a question waits for the answer
        (typed here, or given by another command: see the module's docstring)."""
        self._emit = emit
        self.service.clear_stop()
        self.error = None
        unsubscribe = self.service.runtime.bus.subscribe(self._forward)
        text, self.first_answer = self.first_answer, None
        try:
            while True:
                try:
                    if not await self._drive(emit, text):
                        return
                except ProcessLocked:  # another vance took the run first: follow it
                    pass
                else:
                    text = await self._answer_or_change()
                    if text is not None:
                        continue
                while True:  # the run moved on without this screen: see where it stands
                    how = await self._follow(emit)
                    if how != "wait":
                        break
                    text = await self._answer_or_change()
                    if text is not None:
                        break
                if how == "ended":
                    return
                # "drive": an answer waits in its inbox and nobody drives the run; or one typed here.
                # The screen takes the news (question answered) before the drive holds the loop.
                await asyncio.sleep(SHOW_SECONDS)
        finally:
            self.elsewhere = None
            unsubscribe()

    async def _drive(self, emit: Emit, text: str | None) -> bool:
        """One drive (with ``text`` as the answer, or taking in what the inbox holds); True when the
        run stopped on a question and waits for its answer. ProcessLocked: another vance drives it."""
        self.running_since = time.time()
        self.result = None  # a drive that is cut off must not leave the last one's result
        try:
            if text is None:
                self.result = await self.service.run(self.process_id)
            else:
                self.result = await self.service.answer(self.process_id, text)
        except ProcessLocked as exc:
            if text is not None:
                emit(JournalEvent(self.process_id, f"your answer was not taken: {exc.message}", "warning"))
            raise
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
        return status == Status.BLOCKED and not self.result.stopped

    async def _answer_or_change(self) -> str | None:
        """The answer typed here; None once the file says the run moved on without this screen (an
        answer in its inbox, or another status: another vance drives it)."""
        getter = asyncio.ensure_future(self._answers.get())
        try:
            while True:
                done, _ = await asyncio.wait({getter}, timeout=POLL_SECONDS)
                if done:
                    return getter.result()
                try:
                    process = self.store.load(self.process_id)
                except StoreError:
                    continue  # being replaced right now
                if process.status != Status.BLOCKED or _answered(process) is not None:
                    return None
        finally:
            getter.cancel()  # an answer that arrives meanwhile stays in the queue

    async def _follow(self, emit: Emit) -> str:
        """Follow the run from its file while another vance drives it: "drive" (an answer waits in
        its inbox and nobody drives it), "wait" (a new question) or "ended" (DONE, failed, stopped)."""
        files = ProcessFileSource(self.store, self.process_id)
        if self.process is not None:
            files.prime(self.process)
        told = False
        while True:
            files.poll(emit)
            process = files.process
            if process is not None:
                self.process, self._dirty = process, False
                answer = _answered(process)
                if answer is not None and not told:
                    emit(JournalEvent(self.process_id, f"**answered elsewhere**: {answer}"))
                    told = True
                holder = self.store.holder(self.process_id)
                if holder is None:
                    self.elsewhere = None
                    if process.status == Status.BLOCKED:
                        return "drive" if answer is not None else "wait"
                    # DONE, failed, stopped (or RUNNING with nobody driving it: r continues it here)
                    self.result = RunResult(process)
                    emit(StatusChanged(self.process_id, process.status.value, process.status.value, process.status_reason))
                    return "ended"
                if process.status != Status.BLOCKED:  # (BLOCKED: an answer being written)
                    if self.elsewhere is None:
                        emit(JournalEvent(self.process_id, f"*the run goes on in {describe_holder(holder)}*"))
                        self.elsewhere = f"driven by vance pid {holder.get('pid', '?')}"
                        emit(StatusChanged(self.process_id, process.status.value, process.status.value, process.status_reason))
            await asyncio.sleep(POLL_SECONDS)

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
