"""The RunSource protocol: what a run screen asks of the place its run's events come from."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol

from vance_cli.events import Event
from vance_cli.tui.status import StatusInfo

Emit = Callable[[Event], None]


class RunSource(Protocol):
    """The runtime's events (TodosUpdated, JournalEvent, StatusChanged, ...) for one process, what
    its status and pending question are, and where the person's answer goes.

    The run screen calls ``run(emit)`` in a worker and paints what is emitted; it reads
    ``status()``, ``status_note()`` and ``pending_question()`` whenever the process may have
    changed. A source that only shows a run subclasses this and keeps the defaults: it never
    drives the run, so there is nothing to stop or to continue. A source that drives the run in
    this process (``drives``) says when it is working (``running``), takes a stop request at the
    run's next safe point (``stop``) and can be run again after a stop or a failure (r).
    """

    process_id: str
    drives: ClassVar[bool] = False  # the run is driven in this process: r continues it here

    @property
    def running(self) -> bool:
        """The run is being driven right now (stopping it needs a Ctrl+C, closing must not)."""
        return False

    @property
    def stopping(self) -> bool:
        """A stop was asked for and the run has not reached its next safe point yet."""
        return False

    def status(self) -> StatusInfo:
        """The status line of the process as it stands now."""
        ...

    def status_note(self) -> str:
        """A word beside the status (e.g. that an answer waits to be taken in); "" for none."""
        return ""

    def pending_question(self) -> str | None:
        """The question the run waits on, or None (none, or already answered)."""
        ...

    async def run(self, emit: Emit) -> None:
        """Emit the run's events until it ends or waits; the screen runs this in a worker."""
        ...

    async def answer(self, text: str) -> None:
        """Take the person's answer to the pending question."""
        ...

    def stop(self) -> bool:
        """Ask a running run to stop at its next safe point; False when there is nothing to ask."""
        return False
