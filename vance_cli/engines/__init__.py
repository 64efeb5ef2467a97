"""Engines: Ford (the tool loop with `respond`) and Arthur (the chat hub: Ford plus the inbox drain)."""

from __future__ import annotations

KNOWN_ENGINES = ("ford", "arthur")
