"""Answering a Benjy run through its files (the watch view's answer box).

``answer_by_files`` answers a run that another vance drives (or that waits, BLOCKED, with no
vance on it). A run driven in this process is answered through ``BenjyService.answer`` instead
(``benjy_source.BenjyRunSource``, `vance benjy run` on a terminal).
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
