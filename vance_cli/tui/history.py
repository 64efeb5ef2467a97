"""The prompt's input history, persisted per scope (project scope if there is one, else the user's).

↑/↓ walk it (``previous``/``next``); Ctrl+R searches it (``search``, the prompt's reverse search).
"""

from __future__ import annotations

import json
from pathlib import Path

from vance_cli.store.atomic import atomic_write_json

MAX_ENTRIES = 500


class InputHistory:
    def __init__(self, path: Path | None, entries: list[str] | None = None) -> None:
        self.path = path
        self.entries: list[str] = list(entries or [])
        self._cursor: int | None = None
        self._draft = ""

    @classmethod
    def load(cls, path: Path | None) -> InputHistory:
        entries: list[str] = []
        if path is not None:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, list):
                    entries = [str(e) for e in data if isinstance(e, str)]
            except (OSError, ValueError):
                entries = []  # missing or damaged: start afresh, the next save rewrites it
        return cls(path, entries[-MAX_ENTRIES:])

    def add(self, text: str) -> None:
        self._cursor = None
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        del self.entries[:-MAX_ENTRIES]
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_json(self.path, self.entries)
            except OSError:
                pass  # history is a convenience: never stop a chat over it

    def previous(self, draft: str) -> str | None:
        if not self.entries:
            return None
        if self._cursor is None:
            self._draft = draft
            self._cursor = len(self.entries)
        if self._cursor == 0:
            return None
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        if self._cursor is None:
            return None
        self._cursor += 1
        if self._cursor >= len(self.entries):
            self._cursor = None
            return self._draft
        return self.entries[self._cursor]

    def reset(self) -> None:
        """Forget where ↑/↓ stood (an entry was taken by other means: the search)."""
        self._cursor = None

    def search(self, query: str, before: int | None = None) -> int | None:
        """The index of the newest entry older than ``before`` (None: all) that holds ``query``,
        or None. Case matters only when the query has a capital letter (smart case)."""
        fold = query == query.lower()
        needle = query.lower() if fold else query
        start = len(self.entries) if before is None else min(before, len(self.entries))
        for i in range(start - 1, -1, -1):
            entry = self.entries[i]
            if needle in (entry.lower() if fold else entry):
                return i
        return None
