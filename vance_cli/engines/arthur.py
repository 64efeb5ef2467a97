"""Arthur: the chat hub. Ford's loop plus the inbox drain; an Arthur process is never DONE."""

from __future__ import annotations

from vance_cli.engines.ford import FordEngine
from vance_cli.errors import InvalidTransition
from vance_cli.store.process import Process, Status


class ArthurEngine(FordEngine):
    """Ford's ``run`` already drains the inbox turn after turn until the hub waits for the person
    (BLOCKED) or has nothing left to do (READY, empty inbox); Arthur adds the rule that a hub
    never finishes."""

    name = "arthur"

    def _set_status(self, process: Process, new: Status, reason: str | None = None) -> None:
        if new == Status.DONE:
            raise InvalidTransition(f"process {process.id}: an Arthur chat hub is never DONE")
        super()._set_status(process, new, reason)

