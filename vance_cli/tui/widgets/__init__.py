"""The app's widgets, one class per file with its ``.tcss`` beside it.

Text a model, a tool or a file wrote goes through ``clean`` where a widget takes it in: Rich and
Textual keep ESC, so an OSC 52 in a reply would reach the terminal (the clipboard), a CSI 2J
clear it. ``clean`` is the plain CLI's ``text.for_terminal``.
"""

from __future__ import annotations

from pathlib import Path

from vance_cli.text import for_terminal as clean

__all__ = ["clean", "tcss"]


def tcss(module_file: str) -> str:
    """The stylesheet beside a widget's module (``foo.py`` → ``foo.tcss``), as DEFAULT_CSS."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
