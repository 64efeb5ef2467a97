"""The garbage collector's full collections, at moments the screen chooses while a reply streams.

A streamed reply makes widgets and throws them away (the last piece parsed again at each paint,
blocks of the pieces that scroll away): cyclic garbage that only CPython's full collections
free. One takes ~25-70 ms here, and it starts wherever the allocations reach its threshold:
mostly inside a layout and paint of the screen, which takes ~30-50 ms itself, so a key pressed
then waited for both (issue 16: the worst key during a 64 KB stream, 60-120 ms). Textual does the
same for its smooth scrolling (``App.PAUSE_GC_ON_SCROLL`` turns the collector off meanwhile).

While a reply streams (``hold``), the collector makes no full collection by itself (its third
threshold is out of reach; the young generations are collected as always). The streaming widget
asks ``due`` at each paint, and when as many young collections have passed as CPython's own
threshold would wait for, it calls ``collect`` instead of painting that time: the collection and
a layout never add up. ``collect`` first empties Textual's caches of geometry results (Region
intersections and the like, ~13,000 entries and ~30,000 objects after a minute of streaming,
every one walked by every full collection; computing them again costs microseconds).
"""

from __future__ import annotations

import gc

_OUT_OF_REACH = 1 << 30

_holds = 0
_saved: tuple[int, int, int] | None = None


def hold() -> None:
    """A reply starts streaming: no full collection by the collector itself until ``release``."""
    global _holds, _saved
    if _holds == 0:
        _saved = gc.get_threshold()
        gc.set_threshold(_saved[0], _saved[1], _OUT_OF_REACH)
    _holds += 1


def release() -> None:
    """A reply stopped streaming (once for each ``hold``): the collector's thresholds come back."""
    global _holds, _saved
    if _holds == 0:
        return
    _holds -= 1
    if _holds == 0 and _saved is not None:
        if gc.get_threshold()[2] == _OUT_OF_REACH:  # not changed by someone else meanwhile
            gc.set_threshold(*_saved)
        _saved = None


def held() -> bool:
    return _holds > 0


def due() -> bool:
    """Whether the collector would have made a full collection by now (held only)."""
    if not _holds or _saved is None:
        return False
    return _saved[2] > 0 and gc.get_count()[2] >= _saved[2]


def collect() -> int:
    """A full collection (what the collector would have done), Textual's geometry caches first."""
    _clear_geometry_caches()
    return gc.collect()


def _clear_geometry_caches() -> None:
    try:
        from textual.css.scalar import Scalar
        from textual.geometry import Offset, Region, Size, Spacing
    except ImportError:  # pragma: no cover - no Textual: nothing cached
        return
    for cls in (Region, Size, Offset, Spacing, Scalar):
        for value in vars(cls).values():
            clear = getattr(getattr(value, "fget", value), "cache_clear", None)
            if clear is not None:
                clear()
