"""Textual's terminal driver, made to survive the terminal going away under it.

When the terminal closes without a SIGHUP reaching the app (a pty whose session the app does not
lead, a terminal multiplexer killed hard), every write to it fails with EIO. Textual writes from a
thread through a queue of 30 writes; the first failed write ends that thread, the queue fills, and
the app's next write blocks forever — with the process lock held. The driver here writes through
an output that drops what cannot be written and remembers that the terminal is gone; the app sees
that (``VanceApp._check_terminal``) and exits with SIGHUP's code. The state is on disk either way.

It also marks the keys of one write (a paste, a slow link, a script): see ``tui/keys.py``.
"""

from __future__ import annotations

from typing import IO, Any


class GoneSafeOutput:
    """A text stream that swallows the errors of a vanished terminal (and says so in ``gone``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except OSError:
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except OSError:
                self.gone = True

    def __getattr__(self, name: str) -> Any:  # fileno, isatty, encoding: the real stream's
        return getattr(self._stream, name)


def gone_safe(driver_class: type) -> type:
    """``driver_class`` writing through a GoneSafeOutput (when it writes to a ``_file``), its keys
    marked as bursts where they follow each other within ``keys.BURST_GAP``."""
    from textual import events

    from vance_cli.tui.keys import BURST_GAP, burst_key

    class GoneSafeDriver(driver_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if getattr(self, "_file", None) is not None:
                self._file = GoneSafeOutput(self._file)
            self._last_key_time: float | None = None

        def process_message(self, message: Any) -> None:  # the input thread, one call per event
            if type(message) is events.Key:
                last, self._last_key_time = self._last_key_time, message.time
                if last is not None and message.time - last <= BURST_GAP:
                    message = burst_key(message)
            super().process_message(message)

        @property
        def terminal_gone(self) -> bool:
            return bool(getattr(getattr(self, "_file", None), "gone", False))

    GoneSafeDriver.__name__ = GoneSafeDriver.__qualname__ = f"GoneSafe{driver_class.__name__}"
    return GoneSafeDriver
