"""Import httpx without the parts Vance never uses, so a one-shot turn does not pay for them.

httpx imports its command-line client (click, rich, pygments) whenever those are installed, and
httpcore imports the HTTP/2 stack (h2, hpack) whenever h2 is installed; litellm installs all of
them. Vance talks HTTP/1.1 and never runs httpx's CLI, so while httpx is first imported both are
marked missing (``sys.modules[name] = None`` makes ``import name`` raise ImportError, which httpx
and httpcore catch and replace with a stub). The marks are removed right after, so any other code
that wants h2 later can still import it.
"""

from __future__ import annotations

import sys

_SKIPPED = ("h2", "httpx._main")


def import_httpx():
    """``import httpx``, about 60 ms cheaper on first import (see the module docstring)."""
    if "httpx" in sys.modules:
        return sys.modules["httpx"]
    placed = [name for name in _SKIPPED if name not in sys.modules]
    for name in placed:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import httpcore  # noqa: F401  (httpx imports it lazily, when the first client is made)
        import httpx
    finally:
        for name in placed:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
    return httpx
