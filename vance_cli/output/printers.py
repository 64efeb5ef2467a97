"""The plain terminal's consumers of the event stream: the chat's printer, the JSON-lines printer, and
Benjy's printer with its todo box (also printed by `vance benjy status`)."""

from __future__ import annotations

import sys
from typing import TextIO

from vance_cli.events import (
    ApprovalNeeded,
    Event,
    JournalEvent,
    MessageEvent,
    ToolFinished,
    ToolStarted,
)
from vance_cli.text import for_terminal, json_text, shorten


class HeadlessPrinter:
    """Respond messages on stdout; what the engine did (journal, tools) on stderr.

    Everything printed here was written by the model or a tool: control sequences are stripped.
    """

    def __init__(
        self, out: TextIO | None = None, err: TextIO | None = None, *, verbose: bool = True, root: str | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.verbose = verbose
        self.root = root  # when set, other processes' events (workers) are progress, never stdout
        self.messages: list[str] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, ApprovalNeeded) and not event.answered:
            # said even with -q: the turn stopped on it and the exit code is 10
            what = f"{event.title}: {event.subject}" if event.subject else event.title
            self.err.write(for_terminal(f"vance: not run, needs your approval: {event.tool} ({what})") + "\n")
            if event.hint:
                self.err.write(for_terminal(f"  fix: {event.hint}") + "\n")
            return
        if self.root is not None and event.process_id != self.root:
            if self.verbose and isinstance(event, MessageEvent):
                self.err.write(for_terminal(f"  ↳ worker {event.process_id}: {shorten(event.text, 100, one_line=True)}") + "\n")
            elif self.verbose and isinstance(event, ToolStarted):
                self.err.write(for_terminal(f"    · {event.name} {shorten(event.arguments, 70, one_line=True)}") + "\n")
            elif self.verbose and isinstance(event, JournalEvent):
                head = event.text.split("\n\n", 1)[0].replace("**", "")
                self.err.write(for_terminal(f"  · {shorten(head, 110, one_line=True)}") + "\n")
            return
        if isinstance(event, MessageEvent):
            self.messages.append(event.text)
            self.out.write(for_terminal(event.text.rstrip("\n")) + "\n")
            self.out.flush()
        elif not self.verbose:
            return
        elif isinstance(event, ToolStarted):
            self.err.write(for_terminal(f"· {event.name} {shorten(event.arguments, 80, one_line=True)}") + "\n")
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


class BenjyPrinter:
    """A Benjy run on a plain terminal: journal lines and the todo box on stderr, the synthesis on stdout.

    Events of the run's workers (other process ids) show as indented tool lines; their messages
    never reach stdout. Questions and diagnoses go to stderr; the command prints how to answer.
    """

    BOX_LINES = 10

    def __init__(self, root_id: str, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.root_id = root_id
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def _e(self, text: str) -> None:
        self.err.write(for_terminal(text) + "\n")
        self.err.flush()

    def __call__(self, event: Event) -> None:
        from vance_cli.events import TodosUpdated

        root = event.process_id == self.root_id
        if isinstance(event, JournalEvent) and root:
            mark = "!" if event.level != "info" else "·"
            for block in journal_blocks(event.text):
                self._e(f"{mark} {block.replace('**', '')}")
        elif isinstance(event, TodosUpdated) and root:
            for line in todo_box(event.todos, self.BOX_LINES):
                self._e(line)
        elif isinstance(event, MessageEvent):
            if root and not event.awaiting_user_input:
                self.out.write(for_terminal(event.text.rstrip("\n")) + "\n")
                self.out.flush()
            elif root:
                self._e(event.text.rstrip("\n"))
            else:
                self._e(f"    ↳ {shorten(event.text, 100, one_line=True)}")
        elif isinstance(event, ToolStarted) and not root:
            self._e(f"    · {event.name} {shorten(event.arguments, 70, one_line=True)}")
        elif isinstance(event, ToolFinished) and not root and not event.ok:
            self._e(f"    ✗ {event.name}: {event.summary}")


def journal_blocks(text: str) -> list[str]:
    """The records of a Benjy journal entry a person follows, one block each: its worklist line
    (``**Open:** ...``) left out, the todos show that."""
    return [b for b in text.split("\n\n") if b.strip() and not b.startswith("**Open:**")]


_TODO_MARK = {"done": "✓", "in_progress": "▸", "failed": "✗", "open": "○"}


def todo_box(todos: list[dict], limit: int = 10) -> list[str]:
    """The todo box as text lines: counts, then the work in progress, failures, open and done items."""
    if not todos:
        return ["┌ todos · cleared", "└"]
    done = sum(1 for t in todos if t.get("status") == "done")
    order = {"in_progress": 0, "failed": 1, "open": 2, "done": 3}
    shown = sorted(todos, key=lambda t: (order.get(t.get("status", "open"), 2), int(t["id"]) if str(t.get("id", "")).isdigit() else 0))
    lines = [f"┌ todos · {done}/{len(todos)} done"]
    for t in sorted(shown[:limit], key=lambda t: int(t["id"]) if str(t.get("id", "")).isdigit() else 0):
        lines.append(f"│ {_TODO_MARK.get(t.get('status', 'open'), '○')} #{t['id']} {shorten(t.get('text', ''), 70, one_line=True)}")
    if len(todos) > limit:
        lines.append(f"│ … {len(todos) - limit} more")
    lines.append("└")
    return lines
