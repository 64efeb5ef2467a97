"""The seam between the run screen and the Benjy engine (issue 8).

``answer_by_files`` answers a run that another vance drives; ``make_benjy_source`` builds the
run source of ``vance benjy run`` on a terminal. Both go through the runtime's public calls only,
so the run screen stays the same when the engine lands.
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
