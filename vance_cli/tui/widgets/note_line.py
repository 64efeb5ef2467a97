"""A quiet line in the transcript: corrections, stops, errors (with the CLI's fix text), notices."""

from __future__ import annotations

from textual.widgets import Static

from vance_cli.tui.widgets import clean, tcss


class NoteLine(Static):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, text: str, level: str = "info") -> None:
        text = clean(text)
        super().__init__(text, classes=f"note -{level}", markup=False)
        self.text = text
        self.level = level
