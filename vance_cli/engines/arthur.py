"""Arthur: the chat hub. Ford's loop plus the inbox drain; an Arthur process is never DONE."""

from __future__ import annotations

from vance_cli.engines.ford import FordEngine
from vance_cli.store.process import Process, Status


class ArthurEngine(FordEngine):
    name = "arthur"

    async def run(self, process: Process) -> None:
        # The drain loop: every pending inbox message is taken in, turn after turn, until the
        # hub waits for the person (BLOCKED) or has nothing left to do (READY, empty inbox).
        await super().run(process)
        assert process.status != Status.DONE, "Arthur is never DONE"


def engine_class(name: str) -> type[FordEngine]:
    if name == "arthur":
        return ArthurEngine
    if name == "ford":
        return FordEngine
    raise KeyError(name)
