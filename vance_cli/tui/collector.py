"""The garbage collector's full collections, at moments the screen chooses while a reply streams.

A streamed reply makes widgets and throws them away (the last piece parsed again at each paint,
blocks of the pieces that scroll away): cyclic garbage that only CPython's full collections
free. One takes ~25-70 ms here, and it starts wherever the allocations reach its threshold:
mostly inside a layout and paint of the screen, which takes ~30-50 ms itself, so a key pressed
then waited for both (issue 16: the worst key during a 64 KB stream, 60-120 ms). Textual does the
same for its smooth scrolling (``App.PAUSE_GC_ON_SCROLL`` turns the collector off meanwhile).

When a reply starts streaming (``hold``), everything alive is collected once and frozen
(``settle``): the earlier chat is not walked again by the stream's collections. While it
streams, the collector makes no full collection by itself (its third threshold is out of reach;
the young generations are collected as always). The streaming widget
asks ``due`` at each paint, and when one is due, it calls ``collect`` instead of painting that
time: the collection and a layout never add up. Due: at most as often as CPython would make one
(its rule: more young collections than its third threshold, and more objects moved into the
oldest generation than a quarter of it since the last full collection). Here the oldest
generation must have grown by a quarter (objects freed by reference counting meanwhile need no
collection), looked at once per threshold of young collections: later and less often than
CPython, but never not at all (cyclic garbage stays in the oldest generation until collected: it
makes it grow, which bounds the memory it holds). ``collect`` first empties Textual's caches of
geometry results (Region intersections and the like, ~13,000 entries and ~30,000 objects after a
minute of streaming, every one walked by every full collection; computing them again costs
microseconds).

When the reply ends (``release``), the thresholds stay out of reach until the person is idle:
then what the stream left is collected and frozen (``leftovers``), not in whatever layout CPython's
next full collection would have started in (a 47-76 ms step as the person starts to type).
"""

from __future__ import annotations

import gc
import time

_OUT_OF_REACH = 1 << 30

_holds = 0
_saved: tuple[int, int, int] | None = None
_oldest = 0  # objects in the oldest generation after the last full collection (or at ``hold``)
_next = 0  # young collections counted when ``due`` looks at the oldest generation again
_counted: int | None = None  # the oldest generation's size when ``due`` found it grown enough
_released_at: float | None = None  # when the last hold ended, its leftovers not collected yet (``leftovers``)
LEFTOVER_SECONDS = 30.0
_settled: int | None = None  # objects frozen after the last full ``settle`` (or before the first)


def _oldest_size() -> int:
    return len(gc.get_objects(generation=2))  # ~1 ms per 50,000 objects; at most once a threshold


def hold() -> None:
    """A reply starts streaming: no full collection by the collector itself until ``release``;
    what came since the last settle is collected once and frozen (``settle``)."""
    global _holds, _saved, _oldest, _next, _released_at, _counted
    if _holds == 0:
        if _saved is None or gc.get_threshold()[2] != _OUT_OF_REACH:  # else the last reply's
            # leftovers still wait (collected here instead) and the thresholds saved then stand
            _saved = gc.get_threshold()
            gc.set_threshold(_saved[0], _saved[1], _OUT_OF_REACH)
        _released_at = None
        settle()
        _oldest, _next, _counted = _oldest_size(), _saved[2], None
    _holds += 1


def settle(*, full: bool = False) -> int:
    """Collect what is not frozen yet, then freeze what is left out of later full collections.

    What lives when a reply starts (the chat so far: every earlier message, its pieces, ~500
    objects a widget) outlives the reply; every full collection of the stream walked it again
    (three 64 KB replies before: 106-212 ms each, a dozen per reply, against 9-78 ms frozen).
    Collected first, so no garbage is frozen. Frozen objects that become garbage later (blocks
    near the view when the reply started, entries pruned) wait for a ``full`` settle: everything
    unfrozen, collected and frozen again. That walks what others froze too (the app's start and
    its model client: ~400,000 objects, 0.3-1 s here), so it is not made as a reply starts but
    when the person is idle, once due (``full_settle_due``). Returns the objects collected."""
    global _settled
    if _settled is None:
        _settled = gc.get_freeze_count()  # what others froze before: left to a full settle
    if full:
        gc.unfreeze()
    found = collect()
    gc.freeze()
    if full:
        _settled = gc.get_freeze_count()
    return found


def thaw_all() -> None:
    """Nothing frozen any more (the app ends): the next settle starts afresh, the thresholds are
    CPython's again."""
    global _settled
    gc.unfreeze()
    _settled = None
    _give_back()


def full_settle_due() -> bool:
    """No reply streams, and the objects frozen since the last full settle grew by a quarter of
    those frozen then (review 16r: ~100,000 objects frozen by each long reply's start, most of
    them garbage soon after; memory held so stays within a quarter more)."""
    return _holds == 0 and _settled is not None and gc.get_freeze_count() - _settled > _settled // 4


def release() -> None:
    """A reply stopped streaming (once for each ``hold``). What the stream left (its pieces, what
    it made since its last collection: ~45,000-100,000 objects after a 64 KB reply) is collected
    and frozen by ``leftovers``, when the person is idle: given back at once, the thresholds let
    CPython start a full collection that walks it all (47-76 ms) in the next layout or so, just as
    the person reads the reply and starts typing."""
    global _holds, _released_at
    if _holds == 0:
        return
    _holds -= 1
    if _holds == 0:
        _released_at = time.monotonic()


def leftovers(*, idle: bool) -> bool:
    """After the last ``release``: when the person is ``idle`` (or ``LEFTOVER_SECONDS`` later
    whatever they do, so that memory stays bounded), what is not frozen is collected and the rest
    frozen (``settle``), and the collector's thresholds come back. Returns whether it ran."""
    if _holds or _released_at is None:
        return False
    if not idle and time.monotonic() - _released_at < LEFTOVER_SECONDS:
        return False
    settle()
    _give_back()
    return True


def _give_back() -> None:
    """The thresholds saved at ``hold`` come back (unless someone else changed them meanwhile)."""
    global _saved, _released_at
    if _saved is not None and gc.get_threshold()[2] == _OUT_OF_REACH:
        gc.set_threshold(*_saved)
    _saved, _released_at = None, None


def held() -> bool:
    return _holds > 0


def due() -> bool:
    """Whether a full collection is due (held only; see the module's docstring). The oldest
    generation is counted at one paint (``len(gc.get_objects)``: 4-10 ms for 50,000-100,000
    objects) and the collection made at the next: the two in one step of the loop were 20-37 ms
    that a key waited for."""
    global _next, _counted
    if not _holds or _saved is None or _saved[2] <= 0:
        return False
    if _counted is not None:
        return True  # counted at the last paint: grown enough
    young = gc.get_count()[2]
    if young < _next:
        return False
    size = _oldest_size()
    if size - _oldest > _oldest // 4:
        _counted = size
        return False  # made at the next paint
    _next = young + _saved[2]  # not grown enough: look again after as many young collections
    return False


def collect() -> int:
    """A full collection, Textual's geometry caches emptied first. The oldest generation then
    holds what survived: what ``due`` counted less what was found (the young generations' garbage
    is found too, a few thousand objects at most: the next collection comes a little sooner), or
    counted again when ``due`` did not count it."""
    global _oldest, _next, _counted
    _clear_geometry_caches()
    found = gc.collect()
    _oldest = max(0, _counted - found) if _counted is not None else _oldest_size()
    _counted, _next = None, (_saved[2] if _saved is not None else 0)
    return found


def lighter_strips() -> None:
    """Lines that do not keep what was cut from them.

    Textual's lines (``Strip``) cache what is made of them, in seven caches each. Two of those
    results are the line itself: ``divide`` at its own length (``[self]``: how the compositor cuts
    a line no other widget overlaps, most lines of every paint) and ``crop_extend`` over its whole
    length. A line in its own cache is a reference cycle: every line painted became cyclic
    garbage, with its seven caches (~16 objects), that only a full collection frees (a 64 KB
    stream: ~12,000 lines and ~150,000 objects of the ~400,000 its full collections freed; Textual
    8.2.8). Those two results are returned uncached. And every line still shown kept the pieces
    the compositor cut it into at each paint (``divide``'s cache: a list of new lines, each with
    its seven caches): ~60 % of the lines alive while a 64 KB reply streamed, ~30 % of the objects
    each full collection walked (46,000 against 65,000). They are not cached: cutting a line again
    at the next paint costs microseconds. Every other call is Textual's. Once per process; a
    Textual without these methods is left alone."""
    try:
        from textual.strip import Strip
    except ImportError:  # pragma: no cover - no Textual: no lines
        return
    divide, crop_extend = getattr(Strip, "divide", None), getattr(Strip, "crop_extend", None)
    if divide is None or crop_extend is None or getattr(divide, "lighter", False):
        return

    def divide_uncached(self, cuts):
        strips = divide(self, cuts)  # a cut at its own length is ``[self]``: a cycle once cached
        cache = getattr(self, "_divide_cache", None)  # Textual's (8.2); another Textual: its own way
        if cache is not None:
            cache.clear()
        return strips

    def crop_extend_without_self_loop(self, start, end, style):
        if start <= 0 and end == self.cell_length:
            return self
        return crop_extend(self, start, end, style)

    for function, original in ((divide_uncached, divide), (crop_extend_without_self_loop, crop_extend)):
        function.__doc__ = original.__doc__
        function.lighter = True  # type: ignore[attr-defined]
    Strip.divide = divide_uncached  # type: ignore[method-assign]
    Strip.crop_extend = crop_extend_without_self_loop  # type: ignore[method-assign]


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
