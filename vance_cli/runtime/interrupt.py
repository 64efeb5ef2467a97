"""SIGTERM and SIGHUP stop a running turn the way Ctrl+C does: the process is saved SUSPENDED.

``asyncio.run`` already turns SIGINT into a cancellation of the main task; this does the same for
the termination signals, so the engine unwinds at an ``await`` (never half-way through a save),
the runtime marks the process SUSPENDED, and the caller gets :class:`Interrupted` naming the signal.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from vance_cli.errors import Interrupted

T = TypeVar("T")

STOP_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


async def stop_on_signals(awaitable: Awaitable[T], *, before: Callable[[], object] | None = None) -> T:
    """Await ``awaitable`` in the current task; a stop signal cancels it and raises Interrupted.

    ``before`` is called first (`vance mcp serve` shortens the grace its runs get to stop)."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        if not received and task is not None:
            received.append(signum)
            if before is not None:
                before()
            task.cancel()

    installed = []
    for signum in STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread, Windows
            loop.add_signal_handler(signum, on_signal, signum)
            installed.append(signum)
    try:
        return await awaitable
    except asyncio.CancelledError:
        if not received:
            raise
        if task is not None:
            task.uncancel()
        raise Interrupted(signal.Signals(received[0]).name, signum=received[0]) from None
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
