"""While a reply streams, the garbage collector's full collections run between paints, never
inside a layout (issue 16: a full collection, 25-70 ms, started inside a layout of 30-50 ms and a
key pressed then waited for both). tui/collector.py."""

from __future__ import annotations

import gc
import time

import pytest
from textual.screen import Screen

from tests.tui.conftest import make_app, wait_for
from tests.tui.test_streaming import reply
from vance_cli.events import MessageDelta, MessageEvent
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui import app as app_module, collector
from vance_cli.tui.widgets import markdown_pieces
from vance_cli.tui.widgets.transcript import Transcript


@pytest.fixture
def thresholds(monkeypatch):
    saved = gc.get_threshold()
    monkeypatch.setattr(collector, "_settled", None)
    monkeypatch.setattr(collector, "_saved", None)
    monkeypatch.setattr(collector, "_released_at", None)
    monkeypatch.setattr(collector, "_counted", None)
    yield
    while collector.held():
        collector.release()
    gc.set_threshold(*saved)
    gc.unfreeze()  # what a hold froze: not left to the tests after this one (review 16r)


def test_hold_keeps_full_collections_for_later_and_the_leftovers_give_the_thresholds_back(thresholds):
    gc.set_threshold(500, 7, 9)
    collector.hold()
    collector.hold()  # two streams at once
    assert gc.get_threshold()[:2] == (500, 7) and gc.get_threshold()[2] > 10**6
    collector.release()
    assert collector.held() and gc.get_threshold()[2] > 10**6  # the other still streams
    assert not collector.leftovers(idle=True)  # not while one streams
    collector.release()
    assert not collector.held() and gc.get_threshold()[2] > 10**6  # the leftovers wait for an idle moment
    collector.release()  # once too often: nothing happens
    assert not collector.leftovers(idle=False)  # the person is at it
    assert collector.leftovers(idle=True)
    assert gc.get_threshold() == (500, 7, 9)
    assert not collector.leftovers(idle=True)  # once


def test_the_leftovers_of_a_reply_are_collected_idle_or_late(thresholds, monkeypatch):
    """Collected and frozen when the person is idle, or ``LEFTOVER_SECONDS`` after the reply ended
    whatever they do (memory stays bounded); a reply that starts meanwhile collects them itself."""
    import weakref

    gc.set_threshold(500, 7, 9)
    clock = [1000.0]
    monkeypatch.setattr(collector.time, "monotonic", lambda: clock[0])
    collector.hold()
    collector.release()
    garbage = _Cycle()
    dead = weakref.ref(garbage)
    del garbage
    clock[0] += collector.LEFTOVER_SECONDS - 1
    assert not collector.leftovers(idle=False) and dead() is not None
    clock[0] += 2
    assert collector.leftovers(idle=False) and dead() is None
    assert gc.get_threshold() == (500, 7, 9)
    collector.hold()  # a new reply: thresholds saved again, the leftovers its own settle's
    collector.release()
    collector.hold()  # one more before the leftovers were collected: the saved thresholds are CPython's
    assert gc.get_threshold()[:2] == (500, 7)
    collector.release()
    assert collector.leftovers(idle=True) and gc.get_threshold() == (500, 7, 9)
    collector.hold()
    collector.release()
    gc.set_threshold(300, 6, 8)  # someone else's, while the leftovers wait (review 16t)
    collector.hold()
    assert gc.get_threshold()[:2] == (300, 6) and gc.get_threshold()[2] > 10**6  # held, theirs saved
    collector.release()
    assert collector.leftovers(idle=True) and gc.get_threshold() == (300, 6, 8)


def test_a_collection_is_due_when_cpython_would_make_one(thresholds, monkeypatch):
    """CPython's rule: its third threshold of young collections, and the oldest generation grown by
    a quarter since the last full collection (review 16p: without the second half, six times as
    many full collections as CPython's own on a large heap)."""
    gc.set_threshold(10**7, 1000, 3)  # only the collections below (no automatic young ones)
    assert not collector.due()  # not held: the collector decides itself
    collector.hold()
    collector.collect()
    for _ in range(3):
        gc.collect(1)
    assert not collector.due()  # young collections enough, but the oldest generation has not grown
    kept = [[] for _ in range(len(gc.get_objects(generation=2)) // 3)]  # a third more, alive
    for _ in range(2):
        gc.collect(1)  # they move up to the oldest generation
    assert not collector.due()  # grown, but looked again only after three more young collections
    gc.collect(1)
    assert not collector.due()  # grown: counted at this paint...
    counts = []
    original = collector._oldest_size
    monkeypatch.setattr(collector, "_oldest_size", lambda: counts.append(1) or original())
    assert collector.due()  # ...and collected at the next, without counting again (4-10 ms)
    collector.collect()
    assert counts == []
    assert not collector.due()
    del kept


def test_release_leaves_thresholds_someone_else_set_meanwhile(thresholds):
    collector.hold()
    gc.set_threshold(123, 4, 5)
    collector.release()
    collector.leftovers(idle=True)
    assert gc.get_threshold() == (123, 4, 5)


async def test_no_full_collection_starts_inside_a_layout_while_a_reply_streams(thresholds, monkeypatch):
    """Thresholds this low make a full collection every few dozen allocations: without the hold,
    dozens start inside the layouts of the stream."""
    gc.set_threshold(100, 2, 2)
    monkeypatch.setattr(markdown_pieces, "CHUNK", 300)
    inside = {"layout": False}
    starts: list[tuple[bool, bool]] = []  # (inside a layout, streaming) of each full collection

    original = Screen._refresh_layout

    def refresh_layout(self, *args, **kwargs):
        inside["layout"] = True
        try:
            return original(self, *args, **kwargs)
        finally:
            inside["layout"] = False

    def seen(phase, info):
        if phase == "start" and info["generation"] == 2:
            starts.append((inside["layout"], collector.held()))

    monkeypatch.setattr(Screen, "_refresh_layout", refresh_layout)
    monkeypatch.setattr(app_module, "IDLE_SECONDS", 0.2)
    app = make_app(ScriptedModel([]))
    text = reply(10)
    gc.callbacks.append(seen)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            pid = app.controller.process_id
            for end in range(120, len(text) + 120, 120):
                app.controller.emit(MessageDelta(pid, 1, text[:end], "respond"))
                await pilot.pause(0.03)
            assert collector.held()
            streamed = [s for s in starts if s[1]]
            app._last_input = time.monotonic() + 3600  # the person is at it (never idle until below)
            app.controller.emit(MessageEvent(pid, text))
            await wait_for(pilot, lambda: not collector.held())
            ended = len(starts)
            for _ in range(5):  # reads the reply and scrolls
                app.screen.query_one(Transcript).scroll_relative(y=-3, animate=False)  # layouts, allocations
                await pilot.pause(0.05)
            after = starts[ended:]
            assert gc.get_threshold()[2] > 10**6  # the leftovers wait for an idle moment
            app._last_input = 0.0  # idle now: the app's idle timer collects them
            await wait_for(pilot, lambda: gc.get_threshold() == (100, 2, 2))
    finally:
        gc.callbacks.remove(seen)
    assert len(streamed) >= 2, starts  # the collections were made (by the paints), not skipped
    assert not [s for s in streamed if s[0]], f"{sum(1 for s in streamed if s[0])} of {len(streamed)} inside a layout"
    assert not [s for s in after if s[0]], f"{len(after)} full collections after the reply, in layouts"


def _self_looped(garbage: list) -> list:
    """The lines in ``garbage`` that hold themselves in their own caches."""
    from textual.strip import Strip

    def holds(line, value) -> bool:
        return value is line or (isinstance(value, list) and any(item is line for item in value))

    return [o for o in garbage if isinstance(o, Strip)
            and any(holds(o, value) for cache in (o._divide_cache, o._crop_extend_cache) for value in cache._cache.values())]


def test_a_line_cut_or_cropped_whole_is_freed_without_the_collector():
    """Textual's Strip cached ``[self]`` for a cut at its own length and itself for a crop over its
    whole length: a cycle, so every painted line waited for a full collection."""
    from rich.segment import Segment
    from textual.strip import Strip

    collector.lighter_strips()
    collector.lighter_strips()  # once is enough; twice changes nothing
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        line = Strip([Segment("hello "), Segment("world")])
        assert line.divide([11]) == [line] and line.divide(iter([11, 40]))[0] is line
        assert line.crop_extend(0, 11, None) is line
        assert [part.text for part in line.divide([5, 11])] == ["hello", " world"]  # Textual's own
        line.divide([5, 11])
        assert len(line._divide_cache) == 0  # the line keeps no cut piece (each a line with seven caches)
        assert line.crop_extend(0, 13, None).text == "hello world  "
        assert line.crop_extend(6, 11, None).text == "world"
        del line
        gc.collect()
        lines = [o for o in gc.garbage if isinstance(o, Strip)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert lines == []


async def test_the_lines_of_a_streamed_reply_are_not_cyclic_garbage(thresholds):
    app = make_app(ScriptedModel([]))
    text = reply(6)
    async with app.run_test(size=(100, 30)) as pilot:
        pid = app.controller.process_id
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            for end in range(120, len(text) + 120, 120):
                app.controller.emit(MessageDelta(pid, 1, text[:end], "respond"))
                await pilot.pause(0.03)
            app.controller.emit(MessageEvent(pid, text))
            await wait_for(pilot, lambda: not collector.held())
            gc.collect()
            looped = len(_self_looped(gc.garbage))
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
    assert looped == 0


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_stream_starts_with_the_garbage_collected_and_what_lives_frozen(thresholds):
    """What lives when a reply starts (the chat so far) is not walked by the stream's full
    collections; garbage made before is collected then, and what was frozen and died meanwhile
    at the next full settle (due: the frozen objects grew from none)."""
    import weakref

    gc.unfreeze()
    before = _Cycle()
    dead_before = weakref.ref(before)
    del before  # garbage: a cycle only a collection frees
    alive = _Cycle()
    collector.hold()
    try:
        assert dead_before() is None  # collected as the reply started
        assert gc.is_tracked(alive) and not any(o is alive for o in gc.get_objects())  # frozen: walked by no collection
        made_during = _Cycle()
        assert any(o is made_during for o in gc.get_objects())
        assert not collector.full_settle_due()  # never while a reply streams
    finally:
        collector.release()
    dying = weakref.ref(alive)
    del alive  # frozen at the hold, garbage now
    gc.collect()
    assert dying() is not None  # frozen: a collection does not free it...
    assert collector.full_settle_due()
    collector.settle(full=True)
    assert dying() is None  # ...a full settle does
    assert not collector.full_settle_due()


def test_a_settle_leaves_what_others_froze_to_a_full_one_due_when_the_frozen_grew_by_a_quarter(thresholds):
    """The app freezes its start and its model's client (~400,000 objects): a reply's start walks
    only what came since; a full settle, when the frozen objects grew by a quarter."""
    import weakref

    gc.unfreeze()
    theirs = [_Cycle() for _ in range(4000)]
    gc.freeze()  # someone else's (the app's)
    dying = weakref.ref(theirs[0])
    del theirs  # frozen by them, garbage now
    collector.settle()
    assert dying() is not None and not collector.full_settle_due()  # theirs: not walked by a settle
    mine = [[] for _ in range(gc.get_freeze_count())]
    collector.settle()  # freezes these: a quarter more and then some
    assert dying() is not None and collector.full_settle_due()
    collector.settle(full=True)
    assert dying() is None and not collector.full_settle_due()
    del mine


async def test_the_full_settle_waits_until_the_person_has_pressed_nothing_for_a_while(thresholds, monkeypatch):
    import time

    from vance_cli.tui import app as app_module

    made: list[bool] = []
    monkeypatch.setattr(app_module, "IDLE_SECONDS", 3600.0)  # the app's own interval: not in this test
    monkeypatch.setattr(collector, "full_settle_due", lambda: True)
    monkeypatch.setattr(collector, "settle", lambda full=False: made.append(full))
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        app._last_input = 0.0
        await pilot.press("a")
        assert time.monotonic() - app._last_input < app_module.IDLE_SECONDS  # a key counts
        app._settle_when_idle()
        assert made == []  # pressed just now: not yet
        app._last_input = time.monotonic() - app_module.IDLE_SECONDS
        app._settle_when_idle()
        assert made == [True]
