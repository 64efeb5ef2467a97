"""Answering a Benjy run through its files (the watch view's answer box).

``answer_by_files`` answers a run that another vance drives (or that waits, BLOCKED, with no
vance on it). A run driven in this process goes through ``BenjyService`` instead:
``make_benjy_source`` (kept for its callers) gives ``benjy_source.BenjyRunSource``, which
``vance benjy run`` on a terminal and ``vance_cli.tui.run_benjy_live`` use.
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


def make_benjy_source(service, pid: str):
    """The RunSource of a Benjy run driven in this process (benjy_source.BenjyRunSource)."""
    from vance_cli.tui.benjy_source import BenjyRunSource

    return BenjyRunSource(service, pid)
