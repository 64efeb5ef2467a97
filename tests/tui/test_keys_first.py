"""A key on its way to the prompt goes before the screen's heavy work (issue 16, tui/keys.py).

A key takes three steps of the event loop (the driver's post, the app, the prompt); a layout and
paint of the screen (20-40 ms during a 64 KB stream) or a streamed reply's paint that was ready
in between ran first, and the key waited for two long steps instead of the one running as it came.
"""

from __future__ import annotations

import asyncio

from textual import events
from textual._time import get_time

from tests.tui.conftest import make_app, wait_for
from vance_cli.events import MessageDelta
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui import keys
from vance_cli.tui.keys import KEY_FIRST_SECONDS, KeysInFlight
from vance_cli.tui.messages import EngineEvent
from vance_cli.tui.widgets.markdown_pieces import MarkdownPieces
from vance_cli.tui.widgets.prompt_input import PromptInput
from vance_cli.tui.widgets.streaming_message import StreamingMessage


def test_a_key_sent_is_waited_for_until_handled_and_never_for_long():
    flight = KeysInFlight()
    assert not flight.waiting()
    now = get_time()
    flight.sent(now)
    assert flight.waiting()
    flight.sent(now + 0.001)  # a second key behind it
    flight.handled(now)  # the first one handled: the second is still on its way
    assert flight.waiting()
    flight.handled(now + 0.001)
    assert not flight.waiting()
    # keys nothing marks handled (the focus is elsewhere) hold the work for KEY_FIRST_SECONDS after
    # the first of them, however many follow (a key held down must not starve the screen)
    old = get_time() - KEY_FIRST_SECONDS - 0.01
    flight.sent(old)
    flight.sent(get_time())
    assert not flight.waiting()


def test_an_app_that_does_not_count_keys_never_waits():
    assert not keys.keys_waiting(object())


async def test_the_screen_lays_out_only_once_the_prompt_holds_a_key_sent_before():
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


async def test_a_streamed_reply_paints_after_a_key_on_its_way_and_soon():
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


async def test_the_paint_after_a_layout_waits_for_a_key_in_flight(monkeypatch):
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
