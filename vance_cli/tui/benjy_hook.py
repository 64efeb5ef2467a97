"""The seam between the run screen and the Benjy engine (issue 8).

``answer_by_files`` answers a run that another vance drives (or that waits, BLOCKED, with no
vance on it). ``vance benjy watch ID`` calls ``vance_cli.tui.run_watch(ID)``; ``vance benjy run``
on a terminal passes ``make_benjy_source`` (a RunSource over ``runtime/benjy.py``'s
``BenjyService``: ``run``/``answer`` with the bus subscribed, ``request_stop`` as ``stop``) to
``VanceApp(run_source=...)``.
"""

from __future__ import annotations

from vance_cli.errors import UsageError
from vance_cli.store.files import ProcessStore


async def answer_by_files(store: ProcessStore, pid: str, text: str) -> None:
    """Put the answer in the run's inbox under its lock; the vance driving it takes it in.

    When no vance drives the run, the answer waits in the inbox for `vance benjy resume ID`.
    """
    from vance_cli.store.process import InboxItem

    with store.lock(pid):
        process = store.load(pid)
        if process.status.value != "BLOCKED":
            raise UsageError(f"process {pid} is {process.status.value}, not waiting for an answer",
                             hint="answer when the run shows a question")
        process.inbox.append(InboxItem(kind="user", content=text))
        store.save(process)


class BenjyRunSource:
    """A run driven in this process (``vance benjy run`` on a terminal): the service's events,
    its status and question, the answer through ``BenjyService.answer``; ``stop`` ends the run
    at the next safe point (SUSPENDED, resumable)."""

    def __init__(self, service, pid: str) -> None:
        self.service = service
        self.store = service.runtime.store
        self.process_id = pid
        self.process = self.store.load(pid)
        self._emit = None
        self._stopping = False

    def status(self):
        from vance_cli.tui.run_source import status_of

        return status_of(self.process)

    def pending_question(self) -> str | None:
        from vance_cli.engines.benjy.state import encode, load_state

        if self.process.status.value != "BLOCKED":
            return None
        question = encode(load_state(self.process)).get("pendingQuestion")
        return question["text"] if question else None

    async def _drive(self, call) -> None:
        unsubscribe = self.service.runtime.bus.subscribe(self._emit) if self._emit is not None else None
        try:
            self.process = (await call()).process
        finally:
            if unsubscribe is not None:
                unsubscribe()

    async def run(self, emit) -> None:
        self._emit = emit
        await self._drive(lambda: self.service.run(self.process_id))

    async def answer(self, text: str) -> None:
        await self._drive(lambda: self.service.answer(self.process_id, text))

    def stop(self) -> bool:
        """Ask the run to stop; False when it is not running (the screen closes instead)."""
        if self._stopping or self.process.status.value in ("DONE", "BLOCKED"):
            return False
        self._stopping = True
        self.service.request_stop()
        return True


def make_benjy_source(service, pid: str) -> BenjyRunSource:
    return BenjyRunSource(service, pid)
