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
from vance_cli.text import shorten
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


@dataclass
class TurnState:
    """The counters of the open turn (ford, arthur); persisted in engine_params so resume continues them."""

    open: bool = False
    iterations: int = 0
    corrections: int = 0
    relay_corrected_last: bool = False
    max_tool_chars: int = 0
    # Raised after a reply was cut off at the output limit; None: the model's own default.
    max_tokens: int | None = None
    # The tool whose call waits for the person's approval (the turn is paused, not lost).
    awaiting_approval: str | None = None

    @classmethod
    def of(cls, process: Process) -> TurnState:
        raw = turn_state(process)
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__ if k in raw})

    def store(self, process: Process) -> None:
        process.engine_params[TURN_KEY] = dict(self.__dict__)


def turn_problem(process: Process) -> str | None:
    """Why the saved turn counters of ``process`` cannot be used (a field not of TurnState's type,
    a negative count), or None: checked before a resume (runtime/checks.py), so a hand-edited or
    planted file is an error naming the field, not a crash in the turn."""
    import typing

    raw = turn_state(process)
    for name, hint in typing.get_type_hints(TurnState).items():
        if name not in raw:
            continue
        kinds = typing.get_args(hint) or (hint,)
        value = raw[name]
        fits = any(value is None if kind is type(None) else isinstance(value, kind) for kind in kinds)
        if not fits or (bool not in kinds and isinstance(value, bool)):
            wanted = " or ".join("null" if kind is type(None) else {bool: "true/false", int: "a whole number", str: "a text"}[kind] for kind in kinds)
            return f"its open turn's {name} is {shorten(repr(value), 40)}, not {wanted}"
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            return f"its open turn's {name} is {value}, not a count"
    return None


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
