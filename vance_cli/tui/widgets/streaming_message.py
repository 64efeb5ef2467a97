"""The reply while the model writes it; when the turn delivers it, it becomes the message.

Deltas arrive faster than a terminal needs; the text is kept and painted on a short timer, so
key presses stay responsive however fast the model writes. The body is ``MarkdownPieces``: the
settled part of the reply is parsed once, piece by piece, and only the last piece is parsed
again at a paint (issue 16: one Markdown widget re-parsed a 60-item list at every paint). When
the message arrives (``finish``) and is the streamed text, nothing is parsed again: the same
widgets are the message (``MessageView``), which is what a reloaded chat shows too.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from vance_cli.tui import collector
from vance_cli.tui.keys import PutOff
from vance_cli.tui.widgets import clean, tcss
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
from vance_cli.tui.widgets.message_view import MessageView

FLUSH_SECONDS = 0.1


class StreamingMessage(MessageView):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self) -> None:
        super().__init__("", "streaming", label="vance")
        self.add_class("streaming")
        self.call: int | None = None
        self._raw = ""
        self._clean = ("", "")  # (raw, cleaned): cleaned once per paint, not once per delta
        self._timer = None
        self._holding = False  # the collector's full collections are ours while it streams
        self._put_off = PutOff()  # a paint put off for a key in flight

    def compose(self) -> ComposeResult:
        yield Static(self._header(), classes="message-header", markup=True)
        yield MarkdownPieces(self.text, classes="message-body", growing=self.streaming)

    def _header(self) -> str:
        return f"{self.label}  ⋯ writing" if self.streaming else f"{self.label}  [@click=copy]⧉ copy[/]"

    def on_mount(self) -> None:
        self._timer = self.set_interval(FLUSH_SECONDS, self._paint)
        if self.streaming and not self._holding:
            self._holding = True
            collector.hold()

    def on_unmount(self) -> None:
        self._let_go()

    def _let_go(self) -> None:
        if self._holding:
            self._holding = False
            collector.release()

    def _paint(self) -> None:
        """The timer's paint; a full collection of the garbage collector instead, when one is due
        (``tui/collector.py``: never inside the layout that follows a paint). Neither while a key
        is on its way to the prompt (``tui/keys.py``): the paint comes a moment later."""
        if self._put_off.defer(self, self._paint):
            return
        if self._holding and collector.due():
            collector.collect()
            return
        self.flush()

    def show(self, call: int, text: str) -> None:
        self.call = call
        self._raw = text

    @property
    def text(self) -> str:
        """The reply so far, sanitised (clean() of the whole text at every delta was quadratic)."""
        if self._clean[0] is not self._raw:
            self._clean = (self._raw, clean(self._raw))
        return self._clean[1]

    @text.setter
    def text(self, value: str) -> None:  # MessageView.__init__ sets it
        self._raw = value
        self._clean = (value, clean(value))

    @property
    def streaming(self) -> bool:
        return self.role == "streaming"

    def flush(self) -> None:
        bodies = list(self.query_children(MarkdownPieces))
        if bodies and (bodies[0].text != self.text or bodies[0].growing != self.streaming):
            bodies[0].set_text(self.text, growing=self.streaming)

    def finish(self, text: str) -> None:
        """The delivered message: the streamed widgets become it (only what differs is parsed)."""
        self.show(self.call or 0, text)
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._let_go()
        self.role = "assistant"
        # Its look changes (the border), not its blocks': Textual restyles every descendant at a
        # class change (a 64 KB reply: ~120 widgets, ~80 ms in which a key waited); no rule below
        # a message depends on these classes (message_view.tcss, streaming_message.tcss).
        self.remove_class("streaming", "-streaming", update=False)
        self.add_class("-assistant", update=False)
        self.app.stylesheet.update_nodes([self])
        for header in self.query_children(".message-header").results(Static):
            header.update(self._header())
        self.flush()  # not composed yet: compose takes the text
