"""A folder's chats as a person picks one to resume: the rows of the full-screen picker
(tui/screens/resume_screen.py) and of the list a headless `vance chat --resume` prints."""

from __future__ import annotations

import time
from dataclasses import dataclass

from vance_cli.store.process import Process
from vance_cli.store.transcript import first_message
from vance_cli.text import safe_text


@dataclass(frozen=True)
class ChatRow:
    id: str
    status: str
    when: str  # the last change, local time
    first: str  # the person's first message, on one line
    current: bool = False  # the chat on screen


def chat_rows(processes: list[Process], current: str | None = None) -> list[ChatRow]:
    """One row per chat, in the given order (Runtime.chats: newest first)."""
    return [
        ChatRow(p.id, p.status.value, time.strftime("%Y-%m-%d %H:%M", time.localtime(p.updated)),
                safe_text(first_message(p)) or "(no message yet)", p.id == current)
        for p in processes
    ]


def chat_lines(rows: list[ChatRow], *, width: int = 100) -> list[str]:
    """The rows as aligned lines of at most ``width`` characters (the first message is cut)."""
    lines = []
    for r in rows:
        head = f"{r.id:<23} {r.status:<9} {r.when}  "
        first = r.first + (" (this chat)" if r.current else "")
        room = max(10, width - len(head))
        lines.append(head + (first if len(first) <= room else first[: room - 1] + "…"))
    return lines
