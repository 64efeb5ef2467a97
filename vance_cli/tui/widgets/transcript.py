"""The scrolling transcript: messages, tool lines and notes, with the streaming reply at the end.

A long chat stays responsive because only the newest ``max_mounted`` entries are widgets; older
ones are pruned (as Toad does) and counted in a line at the top. The process file keeps them all
(``vance show ID`` prints the whole transcript). Within the entries kept, the Markdown of a
long reply far from the view is parked (``MarkdownPieces.park_outside``): after every layout or
scroll the pieces more than ``PARK_MARGIN`` views above or below it drop their widgets, and the
ones that come near it are parsed again; the settled ones near it are shown as pictures of their
blocks (``Piece.picture``), blocks again under the mouse or while text is selected.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widget import Widget
from textual.widgets import Static

from vance_cli.tui.keys import PutOff
from vance_cli.tui.widgets import tcss
from vance_cli.tui.widgets.following import FollowingScroll
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
from vance_cli.tui.widgets.streaming_message import StreamingMessage

MAX_MOUNTED = 60
PARK_MARGIN = 1.0  # views above and below the view whose Markdown stays built
PICTURE_SECONDS = 0.1  # a parking pass again after this, when a piece waits to be pictured
STALE_SECONDS = 0.02  # a pass found the entries where they were before a scroll: again after this
STALE_PASSES = 10


class Transcript(FollowingScroll):
    DEFAULT_CSS = tcss(__file__)

    def __init__(self, *, max_mounted: int = MAX_MOUNTED, id: str | None = None) -> None:
        super().__init__(id=id)
        self.max_mounted = max_mounted
        self.hidden = 0
        self._marker = Static("", classes="pruned")
        self._stream: StreamingMessage | None = None
        self._parking_due = False
        self._stale_passes = 0  # passes put off in a row, waiting for a layout (``park``)
        self._put_off = PutOff()  # a pass put off for keys in flight (``park``)

    def on_mount(self) -> None:
        self._marker.display = False
        self.mount(self._marker)
        self.watch(self.screen, "selections", self._selections_changed, init=False)

    def on_mouse_down(self) -> None:
        self._thaw()  # a drag may start: what it selects must be blocks

    def on_mouse_up(self) -> None:
        self._park_soon()

    def _selections_changed(self, selections: dict) -> None:
        """Text selected turns the pictures into blocks, which hold the selection's highlight and
        text (``MarkdownPieces.thaw``); once nothing is selected, they are pictured again."""
        if selections:
            self._thaw()
        else:
            self._park_soon()

    def _thaw(self) -> None:
        for body in self.query(MarkdownPieces):
            body.thaw()

    def _park_soon(self) -> None:
        """A parking pass in a moment: pieces may be pictured or parked again by then."""
        self.set_timer(PICTURE_SECONDS, self._schedule_parking)

    # --- parking: only the Markdown near the view is built ------------------------------------

    def _schedule_parking(self) -> None:
        if not self._parking_due and self.is_mounted:
            self._parking_due = True
            self.call_after_refresh(self.park)

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        self._schedule_parking()

    def _scroll_update(self, virtual_size) -> None:
        super()._scroll_update(virtual_size)
        self._schedule_parking()

    def on_resize(self) -> None:
        self._schedule_parking()

    def _laid_out_scroll(self) -> int | None:
        """The scroll offset at which the screen last placed the entries (None: not known)."""
        for child in reversed(self.children):
            if child.display:
                try:
                    return self.content_region.y + child.virtual_region.y - child.region.y
                except Exception:  # noqa: BLE001 - not laid out
                    return None
        return None

    def on_markdown_pieces_grown(self, message: MarkdownPieces.Grown) -> None:
        """A piece above the view was built and changed height (it was parked at an estimate):
        the view moves with what it shows, not with the lines above it. Whether it was above is
        decided by where it was before it was built (review 16r: judged after, a piece that grew
        into the view was not counted, and several built at once moved each other)."""
        message.stop()
        if self.following or not message.piece.is_attached:
            return
        if message.was.bottom <= self.region.y:  # wholly above the view when it was parked
            self.scroll_to(y=self.scroll_y + message.lines, animate=False, immediate=True)

    def on_markdown_pieces_laid(self, message: MarkdownPieces.Laid) -> None:
        message.stop()
        self._schedule_parking()  # a settled piece near the view can be pictured now

    def on_markdown_pieces_thaw(self, message: MarkdownPieces.Thaw) -> None:
        message.stop()
        self._park_soon()  # to park or picture it again

    def park(self) -> None:
        """Park the pieces far from the view, build again the ones near it (as laid out now).

        A pass after a scroll can run before the screen has placed the entries at the new offset
        (nothing else to refresh: no cursor blinking): it would find the pieces where they were.
        Then it waits for the layout (a few times at most: an offset that never agrees, e.g. a
        Textual whose geometry differs, must not keep a timer going)."""
        self._parking_due = False
        if self._put_off.defer(self, self._schedule_parking):  # a key on its way goes first (tui/keys.py)
            return
        view = self.region
        if not view.height:
            return
        laid = self._laid_out_scroll()
        if laid is not None and laid != round(self.scroll_offset.y) and self._stale_passes < STALE_PASSES:
            self._stale_passes += 1
            self.set_timer(STALE_SECONDS, self._schedule_parking)
            return
        self._stale_passes = 0
        margin = round(view.height * PARK_MARGIN)
        top, bottom = view.y - margin, view.bottom + margin
        later = False
        for entry in self.children:
            for body in entry.query_children(MarkdownPieces):
                later |= body.park_outside(top, bottom)
        if later:  # a piece to picture once laid out (MarkdownPieces.park_outside)
            self._park_soon()

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
