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
