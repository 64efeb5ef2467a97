"""The app's widgets, one class per file with its ``.tcss`` beside it."""

from __future__ import annotations

from pathlib import Path


def tcss(module_file: str) -> str:
    """The stylesheet beside a widget's module (``foo.py`` → ``foo.tcss``), as DEFAULT_CSS."""
    return Path(module_file).with_suffix(".tcss").read_text(encoding="utf-8")
