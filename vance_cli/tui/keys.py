"""Keys as the terminal sends them: bursts (a paste, a slow link, a script) and Alt+Enter.

A terminal gives no sign that keys were pasted unless it brackets the paste. What it does give:
the keys of one write arrive in one read, and Textual's input thread turns them into events a
few microseconds apart, while keys a person types are tens of milliseconds apart. The driver
(``tui/driver.py``) marks a key that follows the one before it within ``BURST_GAP`` as a
``BurstKey``; the prompt turns an Enter followed by a burst key into a new line, so a pasted
``alpha one⏎alpha two⏎`` becomes one message of two lines, and ``hello⏎`` in one write sends
``hello`` (the Enter ends the burst).

Alt+Enter: terminals send ESC CR, and Textual's parser drops the Alt of a named key (it reads a
plain Enter, which sent the message: Textualize/textual#6663). ``register_alt_enter`` maps the
sequence to ``alt+enter`` as the parser does for ``ESC [13;3u`` (the kitty protocol's form).
"""

from __future__ import annotations

from textual import events
from textual._time import get_time

BURST_GAP = 0.015  # seconds between two keys of one write, at most (under load); people type slower


class BurstKey(events.Key):
    """A key that arrived within ``BURST_GAP`` of the key before it (the same write)."""


BurstKey.handler_name = events.Key.handler_name  # handled as any key (_on_key / on_key)


def burst_key(key: events.Key) -> BurstKey:
    marked = BurstKey(key.key, key.character)
    marked.time = key.time
    return marked


def is_burst(key: events.Key) -> bool:
    return isinstance(key, BurstKey)


class _Named:
    """What the parser reads from an entry of its sequence table: a key name in ``value``."""

    def __init__(self, value: str) -> None:
        self.value = value


def register_alt_enter() -> None:
    """ESC CR (and ESC LF is Ctrl+J already) reads as ``alt+enter``, not as a plain Enter."""
    from textual._ansi_sequences import ANSI_SEQUENCES_KEYS

    ANSI_SEQUENCES_KEYS.setdefault("\x1b\r", (_Named("alt+enter"),))  # type: ignore[index, arg-type]


KEY_FIRST_SECONDS = 0.05  # the longest a piece of the screen's work waits for keys in flight
KEY_RETRY_SECONDS = 0.005  # work put off for a key in flight is tried again after this


class KeysInFlight:
    """Keys the terminal has sent that have not been handled yet (issue 16).

    A key goes through three steps of the event loop (the driver's post, the app, the prompt);
    whatever is ready in between runs first: a layout and paint of the screen, a streamed
    reply's parse, a full collection of the garbage collector, 10-40 ms each. While a key is in
    flight they wait (``PutOff``), so the key waits for at most the step running as it comes.
    The prompt marks its keys handled, the app every other key once its target has taken it
    (``VanceApp.on_event``); a key nothing marks handled stops holding the work
    ``KEY_FIRST_SECONDS`` after the first of the keys sent since the last one handled.

    ``sent`` runs in the driver's input thread, the rest in the app's loop; each writes floats
    the other only reads.
    """

    def __init__(self, clock=get_time) -> None:
        self._clock = clock  # Textual's events' clock (``Key.time``)
        self._sent = 0.0  # the newest key sent (its time)
        self._first = 0.0  # the first key sent since the last one handled
        self._handled = 0.0  # the newest key handled

    def sent(self, key_time: float) -> None:
        if self._sent <= self._handled:
            self._first = key_time
        self._sent = max(self._sent, key_time)

    def handled(self, key_time: float) -> None:
        self._handled = max(self._handled, key_time)

    def waiting(self) -> bool:
        return self._sent > self._handled and self._clock() - self._first < KEY_FIRST_SECONDS

    def now(self) -> float:
        return self._clock()


class PutOff:
    """One piece of the screen's work that keys in flight go before: put off while one is, but
    never for longer than ``KEY_FIRST_SECONDS`` in a row (keys held down, auto-repeated, each
    handled before the next is sent: the work found a new one in flight at every retry, and a
    streamed reply was not painted for seconds, review 16v)."""

    def __init__(self) -> None:
        self.since: float | None = None  # put off since (None: not put off now)
        self._retry = None  # the timer that tries the work again

    def defer(self, widget, retry) -> bool:
        """``now`` for ``widget``'s app; when the work is put off, ``retry`` is called in
        ``KEY_RETRY_SECONDS`` (``later``). Returns whether it was put off."""
        if not self.now(widget.app):
            return False
        self.later(widget, retry)
        return True

    def later(self, widget, retry) -> None:
        """``retry`` called on ``widget``'s timer in ``KEY_RETRY_SECONDS``, once however often asked."""
        if self._retry is None:

            def again() -> None:
                self._retry = None
                retry()

            self._retry = widget.set_timer(KEY_RETRY_SECONDS, again)

    def now(self, app: object) -> bool:
        """Whether to put the work off now; False means: do it (and the count starts again)."""
        keys = getattr(app, "keys_in_flight", None)
        if keys is None or not keys.waiting():
            self.since = None
            return False
        now = keys.now()
        if self.since is None:
            self.since = now
        elif now - self.since >= KEY_FIRST_SECONDS:
            self.since = None
            return False
        return True


class KeysFirst:
    """A screen whose update (the layout and paint of what changed) waits while a key is in
    flight: Textual's update timer ticks again a frame later. And the paint that follows a layout
    comes in a loop step of its own (``KEY_RETRY_SECONDS`` later while a key is in flight): a key
    waits for the one running as it comes, a layout (reflow of the widgets) or a paint (the lines
    that changed), not for both (a streamed 60-item list: 85-160 ms steps, 35-100 ms each)."""

    _laying_out = False  # inside a layout
    _updating = False  # inside the update timer's callback
    _laid_out = False  # ... which made a layout
    _paint_due = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._update_put_off = PutOff()
        self._paint_put_off = PutOff()

    def _on_timer_update(self) -> None:
        if self._update_put_off.now(self.app):  # type: ignore[attr-defined]
            return  # the timer ticks again a frame later
        self._updating, self._laid_out = True, False
        try:
            super()._on_timer_update()  # type: ignore[misc]
        finally:
            self._updating = self._laid_out = False

    def _refresh_layout(self, size=None, scroll: bool = False) -> None:
        self._laying_out = True
        try:
            super()._refresh_layout(size, scroll)  # type: ignore[misc]
        finally:
            self._laying_out = False
            self._laid_out = self._updating

    def _compositor_refresh(self) -> None:
        # Textual paints in the step of a layout: in the next one instead. And not while a batch
        # of updates is open (a resize's layout during one paints later, Textual's call_later):
        # the update would be made, and dropped unwritten by App._display
        if self._laying_out or self._laid_out or getattr(self.app, "_batch_count", 0):  # type: ignore[attr-defined]
            if not self._paint_due:
                self._paint_due = True
                self.call_later(self._paint_after_layout)  # type: ignore[attr-defined]
            return
        super()._compositor_refresh()  # type: ignore[misc]

    def _paint_after_layout(self) -> None:
        # Not while a batch of updates is open either (Textual's Markdown.append holds one across
        # its mount, in another task): the update would be made, and dropped unwritten by App._display
        if getattr(self.app, "_batch_count", 0):  # type: ignore[attr-defined]
            self._paint_put_off.since = None  # a key's hold does not outlast the batch (review 16w)
            self._paint_put_off.later(self, self._paint_after_layout)
            return
        if self._paint_put_off.defer(self, self._paint_after_layout):
            return
        self._paint_due = False
        # what became dirty since the layout: Textual's paint forgets the screen's dirty widgets
        # (it paints right after it took them, in Textual's order): taken here as its update does
        self._compositor.update_widgets(self._dirty_widgets)  # type: ignore[attr-defined]
        super()._compositor_refresh()  # type: ignore[misc]
