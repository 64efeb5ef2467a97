"""The engine contract: what an engine gets from the runtime (EngineDeps, EngineHost) and owes it (Engine).

An engine drives one process: ``run(process)`` takes in its inbox and works until it waits (for a
person, a worker) or has nothing left to do, calling ``deps.persist`` after each step. Messages,
status changes and journal lines describe saved state, so an engine queues them (``_emit``) and
they reach the bus only once that state is on disk (``_persist``); the runtime flushes what is
left when a run ends in an error (``flush_events``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from vance_cli.events import Event, EventBus, StatusChanged
from vance_cli.store.process import Process, Status
from vance_cli.tools.base import ToolContext, WorkerHost

if TYPE_CHECKING:
    from vance_cli.config.settings import Settings
    from vance_cli.llm.base import ChatModel
    from vance_cli.store.files import ProcessStore
    from vance_cli.tools.approval import Gate
    from vance_cli.tools.registry import ToolRegistry

# The key of engine_params under which a turn engine (ford, arthur) saves its open turn's counters
# (engines/ford.py TurnState). An old or hand-edited file may hold null there: no open turn.
TURN_KEY = "turn"


def turn_state(process: Process) -> dict[str, Any]:
    """The saved counters of ``process``'s turn; {} when there are none (absent, null, not an object)."""
    raw = process.engine_params.get(TURN_KEY)
    return raw if isinstance(raw, dict) else {}


def turn_open(process: Process) -> bool:
    """True when ``process`` has a turn that was opened and not finished (a crash, Ctrl+C, an approval)."""
    return bool(turn_state(process).get("open"))


@runtime_checkable
class EngineHost(WorkerHost, Protocol):
    """What an engine that runs workers (Benjy) asks of the scheduler driving it (runtime/scheduler.py)."""

    # When this run began: wallclock limits count time inside runs only.
    started: float

    @property
    def settings(self) -> Settings: ...

    @property
    def store(self) -> ProcessStore: ...

    def stop_requested(self) -> bool:
        """A stop was asked for (Ctrl+C in the console): end at the next safe point."""
        ...

    def model_for(self, name: str | None) -> ChatModel:
        """The model for a recipe's ``model`` (an alias or a model string; ``--model`` wins)."""
        ...


@runtime_checkable
class Compacting(Protocol):
    """An engine with a chat history it can summarise on demand (``/compact``): ford and arthur.
    Benjy's machine state is never compacted, so it is not one (runtime/runner.py refuses)."""

    async def compact(self, process: Process) -> bool:
        """Summarise the older turns; False when nothing is left to summarise."""
        ...


@dataclass
class EngineDeps:
    """What an engine needs from the runtime; built once per run."""

    model: ChatModel
    tools: ToolRegistry
    bus: EventBus
    persist: Callable[[Process], None]
    tool_context: ToolContext
    # Stream model calls and emit display-only MessageDelta events (the TUI turns it on).
    stream: bool = False
    # The scheduler driving this process tree; None when the process is driven alone.
    host: EngineHost | None = None
    # The process file lies in an untrusted project: (its folder, the command that trusts it).
    untrusted: tuple[Path, str] | None = None
    # Decides on tool calls that need approval (runtime/approvals.py); None: no gate (engine tests).
    approvals: Gate | None = None


class Engine:
    """The shared part of every engine: the outbox of events, saving, and status changes."""

    name: ClassVar[str]

    def __init__(self, deps: EngineDeps) -> None:
        self.deps = deps
        self._outbox: list[Event] = []

    async def run(self, process: Process) -> None:
        raise NotImplementedError

    def _emit(self, event: Any) -> None:
        """Queue ``event`` until the state it describes is saved."""
        self._outbox.append(event)

    def flush_events(self) -> None:
        events, self._outbox = self._outbox, []
        for event in events:
            self.deps.bus.emit(event)

    def _persist(self, process: Process) -> None:
        """Save ``process``, then show what the save made true."""
        self.deps.persist(process)
        self.flush_events()

    def _set_status(self, process: Process, new: Status, reason: str | None = None) -> None:
        """The process's status changes through here (a StatusChanged event when it does)."""
        old = process.status
        if old == new and process.status_reason == reason:
            return
        process.transition(new, reason)
        if old != new:
            self._emit(StatusChanged(process.id, old.value, new.value, reason))
