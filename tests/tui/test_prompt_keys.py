"""The prompt keeps what was typed: keys in order, bursts, Alt+Enter, the focus trap, escapes."""

from __future__ import annotations

from textual import events

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.keys import burst_key
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.note_line import NoteLine
from vance_cli.tui.widgets.prompt_input import PromptInput


def _users(app):
    return [m.text for m in app.screen.query(MessageView) if m.role == "user"]


def _sent(app):
    process = app.controller.runtime.store.load(app.controller.process_id)
    return [m.content for m in process.history if m.role == "user"]


async def _burst(pilot, keys: str) -> None:
    """Keys as the driver delivers one write: each after the first marked as a burst key."""
    app = pilot.app
    for i, ch in enumerate(keys):
        key = events.Key("enter", "\r") if ch == "\r" else events.Key("space" if ch == " " else ch, ch)
        app.post_message(burst_key(key) if i else key)
    await pilot.pause(0.2)


async def test_a_burst_with_enters_inside_is_one_message_and_its_last_enter_sends_it():
    app = make_app(ScriptedModel([respond("ok"), respond("ok2")]))
    async with app.run_test(size=SIZE) as pilot:
        await _burst(pilot, "alpha one\ralpha two\ralpha three\r")
        await wait_for(pilot, lambda: _sent(app) == ["alpha one\nalpha two\nalpha three"], describe=lambda: _sent(app))
        assert app.screen.query_one(PromptInput).text == ""
        await wait_for(pilot, lambda: not app.screen.turn_running)
        await _burst(pilot, "hello\r")  # text and Enter in one write
        await wait_for(pilot, lambda: len(_sent(app)) == 2)
        assert _sent(app)[-1] == "hello"


async def test_a_burst_without_a_final_enter_stays_in_the_box():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _burst(pilot, "one\rtwo")
        await pilot.pause(0.2)
        assert app.screen.query_one(PromptInput).text == "one\ntwo"
        assert _sent(app) == []


async def test_alt_enter_and_ctrl_j_break_the_line():
    app = make_app(ScriptedModel([respond("ok")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "a")
        await pilot.press("alt+enter")
        await type_text(pilot, "b")
        await pilot.press("ctrl+j")
        await type_text(pilot, "c")
        assert app.screen.query_one(PromptInput).text == "a\nb\nc"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _sent(app) == ["a\nb\nc"])


async def test_your_multi_line_message_shows_its_lines():
    app = make_app(ScriptedModel([respond("ok")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "first *line*")
        await pilot.press("ctrl+j")
        await type_text(pilot, "second line")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _users(app) == ["first *line*\nsecond line"])
        view = [m for m in app.screen.query(MessageView) if m.role == "user"][0]
        body = view.query_one(".message-body")
        assert str(body.render()).splitlines() == ["first *line*", "second line"]  # as typed, two lines


async def test_printable_keys_typed_anywhere_land_in_the_prompt():
    app = make_app(ScriptedModel([respond("the reply")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any(m.role == "assistant" for m in app.screen.query(MessageView)))
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("escape", "tab")  # the trap: the focus is on the transcript's entries now
        await pilot.pause()
        assert app.focused is not prompt
        await type_text(pilot, "copy that")  # `c` used to copy a message instead
        assert prompt.text == "copy that" and app.focused is prompt
        await pilot.press("escape")
        assert app.focused is not prompt
        await pilot.press("escape")  # and back
        assert app.focused is prompt


async def test_a_message_can_start_with_a_slash_and_end_with_a_backslash():
    app = make_app(ScriptedModel([respond("one"), respond("two")]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "\\/etc/hosts lists what?")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _sent(app) == ["/etc/hosts lists what?"])
        await wait_for(pilot, lambda: not app.screen.turn_running)
        await type_text(pilot, "a path ends in \\\\")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(_sent(app)) == 2)
        assert _sent(app)[-1] == "a path ends in \\"
        await type_text(pilot, "/etc/hosts")
        await pilot.press("enter")
        await pilot.pause()
        notes = [n.text for n in app.screen.query(NoteLine)]
        assert any("unknown command /etc/hosts" in n and "\\/" in n for n in notes)
