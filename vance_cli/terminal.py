"""Lines on the terminal: ``out`` and ``err`` for text, ``emit_json`` for ``--json`` output.

Used by the commands, the console and the demo. Text printed here often quotes what a model or a
file wrote, so control sequences are stripped (``text.for_terminal``); JSON keeps every character
of the data, escaped where a terminal would act on it (``text.json_text``).

Standard library only: the CLI imports this on every command.
"""

from __future__ import annotations

import sys
from typing import Any

from vance_cli.text import for_terminal, json_text


def out(text: str) -> None:
    """A line on stdout that carries text a model or a file wrote: control sequences stripped."""
    sys.stdout.write(for_terminal(text) + "\n")


def err(text: str) -> None:
    """A line on stderr (diagnostics often quote file or model text: control sequences stripped)."""
    sys.stderr.write(for_terminal(text) + "\n")
    sys.stderr.flush()


def emit_json(obj: Any) -> None:
    """``obj`` as one line of JSON on stdout (values JSON cannot hold are written as ``str``)."""
    sys.stdout.write(json_text(obj, default=str) + "\n")
    sys.stdout.flush()
