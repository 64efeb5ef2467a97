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
        self._raw = ""
        self._clean = ("", "")  # (raw, cleaned): cleaned once per paint, not once per delta
        self._painted = ""

    def compose(self) -> ComposeResult:
        yield Static("vance  ⋯ writing", classes="streaming-header")
        yield Markdown("", classes="streaming-body")

    def on_mount(self) -> None:
        self.set_interval(FLUSH_SECONDS, self.flush)

    def show(self, call: int, text: str) -> None:
        self.call = call
        self._raw = text

    @property
    def text(self) -> str:
        """The reply so far, sanitised (clean() of the whole text at every delta was quadratic)."""
        if self._clean[0] is not self._raw:
            self._clean = (self._raw, clean(self._raw))
        return self._clean[1]

    def flush(self) -> None:
        text = self.text
        if text == self._painted:
            return
        body = self.query_one(".streaming-body", Markdown)
        if self._painted and text.startswith(self._painted):
            body.append(text[len(self._painted):])
        else:
            body.update(text)
        self._painted = text
