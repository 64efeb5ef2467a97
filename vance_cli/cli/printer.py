"""The headless consumers of the event stream: the human printer and the JSON-lines printer."""

from __future__ import annotations

import sys
from typing import TextIO

from vance_cli.events import (
    Event,
    JournalEvent,
    MessageEvent,
    ToolFinished,
    ToolStarted,
)
from vance_cli.sanitize import for_terminal, json_text


class HeadlessPrinter:
    """Respond messages on stdout; what the engine did (journal, tools) on stderr.

    Everything printed here was written by the model or a tool: control sequences are stripped.
    """

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, verbose: bool = True) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.messages: list[str] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, MessageEvent):
            self.messages.append(event.text)
            self.out.write(for_terminal(event.text.rstrip("\n")) + "\n")
            self.out.flush()
        elif not self.verbose:
            return
        elif isinstance(event, ToolStarted):
            self.err.write(for_terminal(f"· {event.name} {_short(event.arguments)}") + "\n")
        elif isinstance(event, ToolFinished) and not event.ok:
            self.err.write(for_terminal(f"  ✗ {event.name}: {event.summary}") + "\n")
        elif isinstance(event, JournalEvent) and event.level != "info":
            self.err.write(for_terminal(f"  ! {event.text}") + "\n")


class JsonLinesPrinter:
    """Every event as one JSON object per line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        self.out.write(json_text(event.to_dict()) + "\n")
        self.out.flush()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
