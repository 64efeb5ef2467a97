"""The journal of a Benjy or worker process, live from JournalEvent; Markdown entries appended.

Only the newest ``max_entries`` stay on screen (the process file keeps the rest).
"""

from __future__ import annotations

from textual.widgets import Markdown, Static

from vance_cli.tui.widgets import clean, tcss
from vance_cli.tui.widgets.following import FollowingScroll

MAX_ENTRIES = 200


class JournalPanel(FollowingScroll):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, title: str = "journal", max_entries: int = MAX_ENTRIES, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = title
        self.max_entries = max_entries
        self.texts: list[str] = []
        self._levels: list[str] = []

    def on_mount(self) -> None:
        if not self.texts:
            self.mount(Static("no journal entries yet", classes="journal-empty"))
        else:  # what came before the panel was mounted
            shown = list(zip(self.texts, self._levels))[-self.max_entries :]
            self.mount(*(Markdown(text, classes=f"journal-entry -{level}") for text, level in shown))

    def add_entry(self, text: str, level: str = "info", process_id: str | None = None) -> None:
        text = clean(text)
        self.texts.append(text)
        self._levels.append(level)
        # An event can arrive before the panel is mounted (on_mount shows it then) or while its
        # screen closes (the process file keeps it): mounting then raises MountError.
        if not self.is_attached or self._closing or self._pruning:
            return
        for empty in self.query(".journal-empty"):
            empty.remove()
        entry = Markdown(text, classes=f"journal-entry -{level}")
        self.mount(entry)
        entries = list(self.query(".journal-entry"))
        for old in entries[: max(0, len(entries) - self.max_entries)]:
            old.remove()
