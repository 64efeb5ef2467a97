"""The small messages the app's workers and widgets post; widgets never call engines."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from vance_cli.events import Event, MessageDelta


@dataclass
class EngineEvent(Message):
    """An event of the runtime's stream, carried into the app's message queue."""

    event: Event

    def can_replace(self, message: Message) -> bool:
        """A reply's delta waiting behind the next delta of the same process is not handled: the
        next one holds the whole text so far (a fast model's deltas, queued faster than the
        screen takes them: 2,681 for a 64 KB reply, ~0.1 ms each to dispatch; only the last one
        is painted anyway)."""
        return (isinstance(self.event, MessageDelta) and isinstance(message, EngineEvent)
                and isinstance(message.event, MessageDelta) and message.event.process_id == self.event.process_id)


@dataclass
class TurnEnded(Message):
    """A turn worker finished: ``error`` is the CLI's rendered error text, ``stopped`` a Ctrl+C."""

    error: str | None = None
    stopped: bool = False


@dataclass
class Submitted(Message):
    """The person pressed Enter in the prompt (text may be empty: retry an open turn)."""

    text: str


@dataclass
class QuitRequested(Message):
    """Ctrl+D on an empty prompt."""


@dataclass
class AnswerSubmitted(Message):
    """An answer to a run's pending question."""

    text: str
