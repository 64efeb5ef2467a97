"""A first frame written before Textual is imported (stdlib only): the terminal shows the chat's
frame within the CLI's own start-up time, and the app paints over it a moment later.

``leave()`` restores the normal screen when the app never starts (an error before it runs).
"""

from __future__ import annotations

import os
import shutil
import sys

_ENTER = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
_LEAVE = "\x1b[?25h\x1b[?1049l"

_shown = False


def show(text: str = "vance · starting the chat…") -> None:
    global _shown
    if os.environ.get("VANCE_NO_SPLASH") == "1":
        return
    cols, rows = shutil.get_terminal_size((80, 24))
    box = "╭" + "─" * (cols - 4) + "╮"
    bottom = "╰" + "─" * (cols - 4) + "╯"
    frame = [
        _ENTER,
        f"\x1b[{max(1, rows - 3)};2H{box}",
        f"\x1b[{max(1, rows - 2)};2H│ {' ' * (cols - 6)} │",
        f"\x1b[{max(1, rows - 1)};2H{bottom}",
        f"\x1b[{rows};2H{text[: cols - 2]}",
    ]
    sys.stdout.write("".join(frame))
    sys.stdout.flush()
    _shown = True


def leave() -> None:
    global _shown
    if _shown:
        sys.stdout.write(_LEAVE)
        sys.stdout.flush()
        _shown = False


def hand_over() -> None:
    """The app takes the screen over (it leaves the alternate screen itself on exit)."""
    global _shown
    _shown = False
