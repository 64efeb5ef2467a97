"""The headless consumers of the event stream: the human printer and the JSON-lines printer."""

from __future__ import annotations

import json
import sys
from typing import TextIO

from vance_cli.events import (
    Event,
    JournalEvent,
    MessageEvent,
    ToolFinished,
    ToolStarted,
)


class HeadlessPrinter:
    """Respond messages on stdout; what the engine did (journal, tools) on stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None, *, verbose: bool = True) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.messages: list[str] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, MessageEvent):
            self.messages.append(event.text)
            self.out.write(event.text.rstrip("\n") + "\n")
            self.out.flush()
        elif not self.verbose:
            return
        elif isinstance(event, ToolStarted):
            self.err.write(f"· {event.name} {_short(event.arguments)}\n")
        elif isinstance(event, ToolFinished) and not event.ok:
            self.err.write(f"  ✗ {event.name}: {event.summary}\n")
        elif isinstance(event, JournalEvent) and event.level != "info":
            self.err.write(f"  ! {event.text}\n")


class JsonLinesPrinter:
    """Every event as one JSON object per line on stdout."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        self.out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
        self.out.flush()


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
