"""The scrolling transcript: messages, tool lines and notes, with the streaming reply at the end.

A long chat stays responsive because only the newest ``max_mounted`` entries are widgets; older
ones are pruned (as Toad does) and counted in a line at the top. The process file keeps them all
(``vance show ID`` prints the whole transcript).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widget import Widget
from textual.widgets import Static

from vance_cli.tui.widgets import tcss
from vance_cli.tui.widgets.following import FollowingScroll
from vance_cli.tui.widgets.streaming_message import StreamingMessage

MAX_MOUNTED = 60


class Transcript(FollowingScroll):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, max_mounted: int = MAX_MOUNTED, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_mounted = max_mounted
        self.hidden = 0
        self._marker = Static("", classes="pruned")
        self._stream: StreamingMessage | None = None

    def on_mount(self) -> None:
        self._marker.display = False
        self.mount(self._marker)

    @property
    def entries(self) -> list[Widget]:
        return [w for w in self.children if w is not self._marker and w is not self._stream]

    def add(self, widget: Widget) -> None:
        self.add_many([widget])

    def add_many(self, widgets: Iterable[Widget]) -> None:
        """Mount entries at the end (before a streaming reply); only the newest are kept."""
        widgets = list(widgets)
        if not widgets:
            return
        overflow = len(widgets) - self.max_mounted
        if overflow > 0:  # a long history loaded at once: never build what would be pruned
            self.hidden += overflow
            widgets = widgets[overflow:]
        if self._stream is not None:
            self.mount_all(widgets, before=self._stream)
        else:
            self.mount_all(widgets)
        self._prune()

    def _prune(self) -> None:
        entries = self.entries
        extra = len(entries) - self.max_mounted
        if extra > 0:
            for widget in entries[:extra]:
                widget.remove()
            self.hidden += extra
        if self.hidden:
            self._marker.update(f"… {self.hidden} earlier entries not shown (the process file keeps them: vance show ID)")
            self._marker.display = True

    def stream(self, call: int, text: str) -> None:
        """Show the reply as it is written; a new call (or a restart) replaces the text."""
        if self._stream is None:
            self._stream = StreamingMessage()
            self.mount(self._stream)
        self._stream.show(call, text)

    @property
    def streaming_text(self) -> str | None:
        return self._stream.text if self._stream is not None else None

    def finish_stream(self, text: str) -> bool:
        """The turn's message: the streaming reply becomes it in place (what was streamed is not
        parsed again). False when nothing streams (then the caller adds a MessageView)."""
        stream = self._stream
        if stream is None:
            return False
        self._stream = None
        stream.finish(text)
        self._prune()
        return True

    def end_stream(self) -> None:
        """Drop the streaming reply (a stopped turn, a corrected call): nothing replaces it here."""
        if self._stream is not None:
            self._stream.remove()
            self._stream = None

    def clear(self) -> None:
        self.end_stream()
        for widget in self.entries:
            widget.remove()
        self.hidden = 0
        self._marker.display = False
