"""The reply while the model writes it: replaced as it grows, removed when the turn delivers.

Deltas arrive faster than a terminal needs; the text is kept and painted on a short timer, so
key presses stay responsive however fast the model writes.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Markdown, Static

from vance_cli.tui.widgets import clean, tcss

FLUSH_SECONDS = 0.05


class StreamingMessage(Vertical):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self) -> None:
        super().__init__(classes="streaming")
        self.call: int | None = None
        self.text = ""
        self._painted = ""

    def compose(self) -> ComposeResult:
        yield Static("vance  ⋯ writing", classes="streaming-header")
        yield Markdown("", classes="streaming-body")

    def on_mount(self) -> None:
        self.set_interval(FLUSH_SECONDS, self.flush)

    def show(self, call: int, text: str) -> None:
        self.call = call
        self.text = clean(text)

    def flush(self) -> None:
        if self.text == self._painted:
            return
        body = self.query_one(".streaming-body", Markdown)
        if self._painted and self.text.startswith(self._painted):
            body.append(self.text[len(self._painted):])
        else:
            body.update(self.text)
        self._painted = self.text
