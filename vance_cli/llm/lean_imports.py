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


def skip_pydantic_plugins() -> None:
    """Build pydantic models without looking for pydantic plugins (about 10 ms of every command).

    When it builds its first model, pydantic imports ``importlib.metadata`` and reads the entry
    points of every installed distribution, looking for plugins (observability tools that watch
    validations). Vance's models are its own file formats; nothing is gained by instrumenting them.
    ``pydantic.plugin._loader`` is pydantic's one place that finds plugins (its ``get_plugins()``,
    which ``PYDANTIC_DISABLE_PLUGINS=__all__`` also makes return nothing); a stand-in with the same
    function returning no plugins is put in its place, before pydantic first imports it. A test
    (tests/llm/test_lean_imports.py) checks that pydantic still calls it by that name.

    Why not pydantic's documented switch alone: ``PYDANTIC_DISABLE_PLUGINS=__all__`` skips the
    scan, but the loader still imports ``importlib.metadata`` at its top, 6-10 ms here. Measured
    (2026-12-03, 2 cores, interleaved; the env var set in entry.py instead of this stand-in): one
    headless turn ``chat -p hi`` 372 -> 378 ms CPU and 434 -> 454 ms wall (60 alternating runs each),
    and bench_startup.py's ratio to the httpx floor 1.39/1.48/1.48 -> 1.54/1.45/1.53 (three
    alternating runs each), past its 1.5 goal. The stand-in stays while that figure does.

    Called by the CLI's entry point only; code importing vance_cli as a library gets pydantic as is.
    """
    name = "pydantic.plugin._loader"
    if name in sys.modules:
        return
    import types

    stand_in = types.ModuleType(name, "Vance's stand-in: no pydantic plugins (see vance_cli/llm/lean_imports.py)")
    stand_in.get_plugins = lambda: ()  # type: ignore[attr-defined]
    sys.modules[name] = stand_in
