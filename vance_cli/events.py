"""The one event stream: engines emit typed events; the headless printer, --json and the TUI consume them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Event:
    process_id: str
    ts: float = field(default_factory=time.time, kw_only=True)

    @property
    def type(self) -> str:
        return _TYPE_NAMES[type(self)]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **asdict(self)}


@dataclass
class MessageEvent(Event):
    """A message for the person (the respond message, or the legacy final text)."""

    text: str
    awaiting_user_input: bool = True


@dataclass
class MessageDelta(Event):
    """Display only: the reply as the model writes it; never saved, never decided on.

    ``text`` is the whole visible text so far (the growing `respond` message, or free text);
    ``call`` numbers the model call: a new number, or a shorter text (a transport retry), replaces
    what was shown. The turn's MessageEvent (or a correction) supersedes it.
    """

    call: int
    text: str
    kind: str = "text"  # text | respond


@dataclass
class JournalEvent(Event):
    """A line for the journal: what the engine did (corrections, diagnoses)."""

    text: str
    level: str = "info"


@dataclass
class TodosUpdated(Event):
    todos: list[dict[str, Any]]


@dataclass
class StatusChanged(Event):
    old: str
    new: str
    reason: str | None = None


@dataclass
class ToolStarted(Event):
    call_id: str
    name: str
    arguments: str


@dataclass
class ToolFinished(Event):
    call_id: str
    name: str
    ok: bool
    summary: str
    size: int | None = None  # characters of the whole result (the summary is cut short)


@dataclass
class ApprovalNeeded(Event):
    """A tool call waits for the person's yes (tools/approval.py): what it would do, and how to allow it.

    ``answered`` is False where nobody can answer (``chat -p`` without ``--allow``/``--yes``): the
    call was not run, the turn is kept, and ``hint`` names the flag or command that allows it.
    """

    call_id: str
    tool: str
    title: str
    subject: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    diff: str | None = None
    sandboxed: bool | None = None
    notice: str | None = None
    answered: bool = True
    hint: str | None = None


@dataclass
class UsageEvent(Event):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost: float


_TYPE_NAMES: dict[type, str] = {
    MessageEvent: "message",
    MessageDelta: "message_delta",
    JournalEvent: "journal",
    TodosUpdated: "todos_updated",
    StatusChanged: "status_changed",
    ToolStarted: "tool_started",
    ToolFinished: "tool_finished",
    UsageEvent: "usage",
    ApprovalNeeded: "approval_needed",
}

Listener = Callable[[Event], None]


class EventBus:
    """Synchronous fan-out; listeners must be quick (the TUI posts to its own queue)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)
