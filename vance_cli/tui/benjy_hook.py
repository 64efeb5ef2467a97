"""The seam between the run screen and the Benjy engine (issue 8).

``answer_by_files`` answers a run that another vance drives (or that waits, BLOCKED, with no
vance on it). Still to wire once a `vance benjy` command exists: ``vance benjy watch ID`` calls
``vance_cli.tui.run_watch(ID)``; ``vance benjy run`` on a terminal passes a RunSource over
``runtime/benjy.py``'s ``BenjyService`` (``run``/``answer`` with the bus subscribed,
``request_stop`` as ``stop``) to ``VanceApp(run_source=...)``.
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
