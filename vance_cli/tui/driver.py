"""Textual's terminal driver, made to survive the terminal going away under it.

When the terminal closes without a SIGHUP reaching the app (a pty whose session the app does not
lead, a terminal multiplexer killed hard), every write to it fails with EIO. Textual writes from a
thread through a queue of 30 writes; the first failed write ends that thread, the queue fills, and
the app's next write blocks forever — with the process lock held. The driver here writes through
an output that drops what cannot be written and remembers that the terminal is gone; the app sees
that (``VanceApp._check_terminal``) and exits with SIGHUP's code. The state is on disk either way.
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
    """``driver_class`` writing through a GoneSafeOutput (when it writes to a ``_file``)."""

    class GoneSafeDriver(driver_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if getattr(self, "_file", None) is not None:
                self._file = GoneSafeOutput(self._file)

        @property
        def terminal_gone(self) -> bool:
            return bool(getattr(getattr(self, "_file", None), "gone", False))

    GoneSafeDriver.__name__ = GoneSafeDriver.__qualname__ = f"GoneSafe{driver_class.__name__}"
    return GoneSafeDriver
