"""The driver's output survives a terminal that is gone: writes are dropped, never raised or blocked."""

from __future__ import annotations

import errno
import io

from vance_cli.tui.driver import GoneSafeOutput, gone_safe


class DeadTerminal(io.StringIO):
    def __init__(self, fail_after: int) -> None:
        super().__init__()
        self.left = fail_after

    def write(self, text):
        if self.left <= 0:
            raise OSError(errno.EIO, "Input/output error")
        self.left -= 1
        return super().write(text)

    def flush(self):
        if self.left <= 0:
            raise OSError(errno.EIO, "Input/output error")


def test_writes_after_the_terminal_is_gone_are_dropped_and_remembered():
    out = GoneSafeOutput(DeadTerminal(fail_after=2))
    assert out.write("a") == 1 and out.write("b") == 1 and not out.gone
    for _ in range(100):  # Textual's writer thread would have died on the first; its queue holds 30
        assert out.write("frame") == 5
    out.flush()
    assert out.gone and out.getvalue() == "ab"  # the real stream's attributes pass through


def test_the_app_uses_the_gone_safe_driver():
    from vance_cli.tui.app import VanceApp

    driver = VanceApp(preload=False).driver_class
    assert driver.__name__.startswith("GoneSafe") and hasattr(driver, "terminal_gone")
    assert gone_safe(object).__name__ == "GoneSafeobject"
