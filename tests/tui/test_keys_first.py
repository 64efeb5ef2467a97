"""A key on its way to the prompt goes before the screen's heavy work (issue 16, tui/keys.py).

A key takes three steps of the event loop (the driver's post, the app, the prompt); a layout and
paint of the screen (20-40 ms during a 64 KB stream) or a streamed reply's paint that was ready
in between ran first, and the key waited for two long steps instead of the one running as it came.
"""

from __future__ import annotations

import asyncio

import pytest

from textual import events
from textual._time import get_time

from tests.tui.conftest import make_app, wait_for
from vance_cli.events import MessageDelta, MessageEvent
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui import keys
from vance_cli.tui.keys import KEY_FIRST_SECONDS, KeysInFlight
from vance_cli.tui.messages import EngineEvent
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
from vance_cli.tui.widgets.prompt_input import PromptInput
from vance_cli.tui.widgets.streaming_message import StreamingMessage


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_key_sent_is_waited_for_until_handled_and_never_for_long():
    clock = Clock()
    flight = KeysInFlight(clock)
    assert not flight.waiting()
    flight.sent(clock.now)
    assert flight.waiting()
    flight.sent(clock.now + 0.001)  # a second key behind it
    flight.handled(clock.now)  # the first one handled: the second is still on its way
    assert flight.waiting()
    flight.handled(clock.now + 0.001)
    assert not flight.waiting()
    # keys nothing marks handled (a Textual binding took them) hold the work for
    # KEY_FIRST_SECONDS after the first of them, however many follow
    clock.now += 1
    flight.sent(clock.now)
    clock.now += KEY_FIRST_SECONDS / 2
    flight.sent(clock.now)
    assert flight.waiting()
    clock.now += KEY_FIRST_SECONDS / 2 + 0.001
    flight.sent(clock.now)
    assert not flight.waiting()


def test_work_is_put_off_for_keys_never_longer_than_the_limit_in_a_row():
    """Keys held down (auto-repeat), each handled before the next is sent: every retry of the
    work found a new key in flight, and a streamed reply was not painted for seconds (review
    16v). Whatever the keys do, a piece of work waits at most KEY_FIRST_SECONDS in a row."""
    from vance_cli.tui.keys import PutOff

    clock = Clock()

    class App:
        keys_in_flight = KeysInFlight(clock)

    app, work = App(), PutOff()
    done = []
    for step in range(400):  # 2 s in steps of 5 ms, a new key every step
        clock.now += 0.005
        app.keys_in_flight.handled(clock.now - 0.005)
        app.keys_in_flight.sent(clock.now)
        if not work.now(app):
            done.append(clock.now)
    gaps = [b - a for a, b in zip(done, done[1:])]
    assert done and max(gaps) <= KEY_FIRST_SECONDS + 2 * 0.005 + 0.001, max(gaps)  # and a retry step or two
    app.keys_in_flight.handled(clock.now)
    assert not work.now(app)  # no key in flight: done at once


@pytest.fixture
def long_hold(monkeypatch):
    """Keys hold the work as long as the test needs (50 ms passes quickly on a loaded machine)."""
    monkeypatch.setattr(keys, "KEY_FIRST_SECONDS", 30.0)


def test_an_app_that_does_not_count_keys_never_waits():
    assert not keys.PutOff().now(object())


async def test_the_screen_lays_out_only_once_the_prompt_holds_a_key_sent_before(long_hold):
    """The screen's update comes due (a layout pending, its timer's event queued) just as a key is
    sent: the prompt gets the key first, the layout comes after it (and does come)."""
    app = make_app(ScriptedModel([]))
    order: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        prompt = screen.query_one(PromptInput)
        original = type(screen)._refresh_layout

        def layout(self, *args, **kwargs):
            order.append(f"layout {prompt.text!r}")
            return original(self, *args, **kwargs)

        type(screen)._refresh_layout = layout
        try:
            for _ in range(5):
                order.clear()
                before = prompt.text
                screen.refresh(layout=True)
                app._driver.send_message(events.Key("x", "x"))
                screen._on_timer_update()  # the update timer's tick, as it comes while the key is on its way
                await wait_for(pilot, lambda before=before: prompt.text != before)
                await wait_for(pilot, lambda: bool(order))  # the layout is not lost, only later
                assert order[0] == f"layout {prompt.text!r}", order
        finally:
            type(screen)._refresh_layout = original


async def test_a_streamed_reply_paints_after_a_key_on_its_way_and_soon(long_hold):
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        screen.post_message(EngineEvent(MessageDelta(screen.controller.process_id, 1, "first words")))
        await wait_for(pilot, lambda: bool(screen.query(StreamingMessage)))
        streaming = screen.query_one(StreamingMessage)
        body = streaming.query_one(MarkdownPieces)
        await wait_for(pilot, lambda: body.text == "first words")
        streaming.show(1, "first words and more")
        app.keys_in_flight.sent(get_time())  # a key is on its way
        streaming._paint()
        assert body.text == "first words"  # not painted meanwhile
        app.keys_in_flight.handled(get_time())
        await wait_for(pilot, lambda: body.text == "first words and more", timeout=5)


async def test_keys_typed_during_a_stream_all_arrive_in_order():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        prompt = screen.query_one(PromptInput)
        text = ""
        typed = "keys first"
        for i, character in enumerate(typed):
            text += "word " * 40 + "\n\n"
            screen.post_message(EngineEvent(MessageDelta(screen.controller.process_id, 1, text)))
            app._driver.send_message(events.Key(character if character != " " else "space", character))
            await asyncio.sleep(0.005 * (i % 3))
        await wait_for(pilot, lambda: prompt.text == typed, describe=lambda: repr(prompt.text))
        assert not app.keys_in_flight.waiting()


def _recording(monkeypatch, screen) -> list[str]:
    """What the screen does, in order: "layout", "paint", "paint inside the layout"."""
    from textual.screen import Screen

    done: list[str] = []
    laying = []
    layout, paint = Screen._refresh_layout, Screen._compositor_refresh

    def recorded_layout(self, *args, **kwargs):
        laying.append(1)
        try:
            return layout(self, *args, **kwargs)
        finally:
            laying.pop()
            if self is screen:
                done.append("layout")

    def recorded_paint(self):
        if self is screen:
            done.append("paint inside the layout" if laying else "paint")
        return paint(self)

    monkeypatch.setattr(Screen, "_refresh_layout", recorded_layout)
    monkeypatch.setattr(Screen, "_compositor_refresh", recorded_paint)
    return done


async def test_the_paint_after_a_layout_comes_in_a_step_of_its_own(monkeypatch):
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        done = _recording(monkeypatch, screen)
        screen.refresh(layout=True)
        screen._on_timer_update()
        assert done == ["layout"]  # the paint is not in this step
        await wait_for(pilot, lambda: "paint" in done)
        assert "paint inside the layout" not in done and done.index("paint") > done.index("layout")


async def test_the_paint_after_a_layout_waits_for_a_key_in_flight(monkeypatch, long_hold):
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        done = _recording(monkeypatch, screen)
        app.keys_in_flight.sent(get_time())
        screen._refresh_layout()  # a layout already running as the key came
        await asyncio.sleep(0.03)
        assert done == ["layout"]
        app.keys_in_flight.handled(get_time())
        await wait_for(pilot, lambda: "paint" in done)


async def test_what_turns_dirty_before_the_paint_after_a_layout_is_painted(monkeypatch):
    """Textual's paint forgets the screen's dirty widgets: it paints in the step where they were
    taken. Put off, a widget that turned dirty in between (the status bar as the turn ended) was
    never painted (a pty test: "waiting for you" never on screen)."""
    from textual._compositor import Compositor

    from vance_cli.tui.widgets.status_bar import StatusBar

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        status = screen.query_one(StatusBar)
        painted: list[set] = []
        render = Compositor.render_update

        def recorded(self, *args, **kwargs):
            painted.append(set(self._dirty_regions))
            return render(self, *args, **kwargs)

        monkeypatch.setattr(Compositor, "render_update", recorded)
        screen._layout_required = True  # as a widget's growth asks (no repaint of the whole screen)
        screen._on_timer_update()  # the layout; its paint comes in a later step
        status.refresh()  # then the status bar turns dirty, and the screen hears of it
        screen._dirty_widgets.add(status)
        await wait_for(pilot, lambda: bool(painted))
        row = status.region
        assert any(region.overlaps(row) for region in painted[0]), (row, painted[0])


async def test_the_paint_after_a_layout_waits_for_a_batch_of_updates(monkeypatch):
    """A batch opened after the layout (Textual's Markdown.append holds one across its mount, in
    another task): a paint made then is dropped unwritten (App._display), so it waits."""
    from textual._compositor import Compositor

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        painted: list[int] = []
        render = Compositor.render_update
        monkeypatch.setattr(Compositor, "render_update", lambda self, *a, **k: painted.append(1) or render(self, *a, **k))
        screen._layout_required = True
        screen._on_timer_update()
        app._begin_batch()
        try:
            await asyncio.sleep(0.05)
            assert not painted
        finally:
            app._end_batch()
        await wait_for(pilot, lambda: bool(painted))


async def test_a_parking_pass_waits_for_a_key_in_flight(monkeypatch, long_hold):
    """A pass that parks and pictures pieces (5-40 ms) waits too, and comes soon after."""
    from vance_cli.tui.widgets.transcript import Transcript

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        transcript = app.screen.query_one(Transcript)
        passes: list[int] = []
        original = MarkdownPieces.park_outside
        monkeypatch.setattr(MarkdownPieces, "park_outside", lambda self, *a: passes.append(1) or original(self, *a))
        app.screen.post_message(EngineEvent(MessageEvent(app.screen.controller.process_id, "a reply\n\n" * 5)))
        await wait_for(pilot, lambda: bool(transcript.query(MarkdownPieces)))
        await pilot.pause(0.2)
        passes.clear()
        app.keys_in_flight.sent(get_time())
        transcript.park()
        await asyncio.sleep(0.03)
        assert not passes
        app.keys_in_flight.handled(get_time())
        await wait_for(pilot, lambda: bool(passes))


async def test_a_key_the_prompt_never_gets_holds_nothing_once_taken():
    """Only the prompt marked its keys handled: a key for a modal, the transcript or a binding
    held the screen's work the whole 50 ms, its own effect painted 54-66 ms late (review 16v)."""
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        clock = Clock()
        clock.now = get_time()  # frozen now (the keys' times are Textual's clock): no key stops holding by itself
        app.keys_in_flight = KeysInFlight(clock)
        await pilot.press("escape")  # the prompt gives the focus up (ChatScreen's binding)
        await pilot.pause()
        assert not isinstance(app.focused, PromptInput)
        for key in ("down", "f2", "f2"):  # the transcript's key, then a screen binding
            app._driver.send_message(events.Key(key, None))
            await wait_for(pilot, lambda: not app.keys_in_flight.waiting(), timeout=5)
            await pilot.pause()  # the binding done too


async def test_keys_held_down_do_not_keep_a_streamed_reply_from_the_screen():
    """Keys at 100 a second, each handled before the next is sent, while a reply streams and the
    loop is busy: the reply still reaches its widget every few paints (review 16v: gaps of 1-3 s)."""
    import threading
    import time

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        pid = screen.controller.process_id
        text = ["first"]
        screen.post_message(EngineEvent(MessageDelta(pid, 1, text[0])))
        await wait_for(pilot, lambda: bool(screen.query(StreamingMessage)))
        body = screen.query_one(StreamingMessage).query_one(MarkdownPieces)
        shown: list[tuple[float, str]] = []

        def grow() -> None:
            text[0] += " word"
            screen.post_message(EngineEvent(MessageDelta(pid, 1, text[0])))
            if not shown or shown[-1][1] != body.text:
                shown.append((time.perf_counter(), body.text))
            time.sleep(0.015)  # a busy loop step

        timer = app.set_interval(0.02, grow)
        stop = threading.Event()

        def hold_a_key() -> None:
            while not stop.is_set():
                app._driver.send_message(events.Key("x", "x"))
                time.sleep(0.01)

        thread = threading.Thread(target=hold_a_key)
        start = time.perf_counter()
        thread.start()
        try:
            await asyncio.sleep(2.0)
        finally:
            stop.set()
            thread.join()
            timer.stop()
        end = time.perf_counter()
        times = [start] + [t for t, _ in shown if t >= start] + [end]
        gap = max(b - a for a, b in zip(times, times[1:]))
        assert gap < 0.9, f"the reply reached its widget at most every {gap:.2f} s"  # 0.16-0.2 s; 1.3-2.9 s starved


async def test_a_keys_hold_on_the_paint_does_not_outlast_a_batch(monkeypatch):
    """Put off for a key, then a batch longer than the limit: the next key found the old hold
    expired and the paint went first (review 16w). A batch starts the count again."""
    from textual._compositor import Compositor
    from textual.screen import Screen

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        clock = Clock()
        clock.now = get_time()
        app.keys_in_flight = KeysInFlight(clock)
        painted: list[int] = []
        render = Compositor.render_update
        monkeypatch.setattr(Compositor, "render_update", lambda self, *a, **k: painted.append(1) or render(self, *a, **k))
        app.keys_in_flight.sent(clock.now)
        screen._layout_required = True
        Screen._on_timer_update(screen)  # the layout, made whatever the keys (KeysFirst's check passed by)
        await asyncio.sleep(0.02)
        assert not painted and screen._paint_put_off.since is not None  # held for the key
        app.keys_in_flight.handled(clock.now)
        app._begin_batch()
        try:
            await asyncio.sleep(0.03)
            clock.now += 1.0  # the batch lasts long
        finally:
            app._end_batch()
        app.keys_in_flight.sent(clock.now)  # a new key as the batch ends
        await asyncio.sleep(0.03)
        assert not painted  # held for it: the old hold did not count
        app.keys_in_flight.handled(clock.now)
        await wait_for(pilot, lambda: bool(painted))
