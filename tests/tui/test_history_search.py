"""Ctrl+R searches the prompt's history like a shell's reverse incremental search (issue 16)."""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from tests.tui.test_snapshots import _chat_app, _steady
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.history import InputHistory
from vance_cli.tui.widgets.prompt_input import PromptInput

ENTRIES = ["run the tests", "explain the layout", "fix the Parser bug", "explain the parser", "hello"]


def _history() -> InputHistory:
    return InputHistory(None, list(ENTRIES))


def _sent(app):
    process = app.controller.runtime.store.load(app.controller.process_id)
    return [m.content for m in process.history if m.role == "user"]


def test_search_finds_the_newest_entry_older_than_a_point_with_smart_case():
    history = _history()
    assert history.search("explain") == 3
    assert history.search("explain", before=3) == 1
    assert history.search("explain", before=1) is None
    assert history.search("parser") == 3  # lower case: any case
    assert history.search("Parser") == 2  # a capital: exact case
    assert history.search("") == 4


async def test_typing_filters_ctrl_r_goes_older_and_enter_takes_the_entry_without_sending():
    app = make_app(ScriptedModel([respond("ok")]), history=_history())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await type_text(pilot, "draft")
        await pilot.press("ctrl+r")
        assert prompt.search is not None and "history search" in str(prompt.border_title)
        assert prompt.text == "draft"  # nothing typed yet: nothing found yet
        await type_text(pilot, "expl")
        assert prompt.text == "explain the parser"  # the newest entry holding it
        assert prompt.selected_text == "expl"
        assert "“expl”" in str(prompt.border_title)
        await pilot.press("ctrl+r")
        assert prompt.text == "explain the layout"  # an older one
        await pilot.press("ctrl+r")  # none older: the entry stays, the title says so
        assert prompt.text == "explain the layout" and "no match" in str(prompt.border_title)
        assert prompt.has_class("-search-failed")
        await pilot.press("enter")  # takes it into the prompt; does not send
        assert prompt.search is None and not prompt.border_title
        assert prompt.text == "explain the layout" and _sent(app) == []
        await type_text(pilot, " again")  # the cursor is at its end: edit, then send
        await pilot.press("enter")
        await wait_for(pilot, lambda: _sent(app) == ["explain the layout again"], describe=lambda: _sent(app))


async def test_esc_cancels_and_puts_back_what_was_typed():
    app = make_app(ScriptedModel([]), history=_history())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+r")
        await type_text(pilot, "tests")
        assert prompt.text == "run the tests"
        await pilot.press("escape")
        assert prompt.text == "half a thought" and prompt.search is None
        assert app.screen.focused is prompt  # Esc ended the search; it did not leave the prompt


async def test_backspace_widens_the_query_and_another_key_takes_the_entry_and_acts():
    app = make_app(ScriptedModel([]), history=_history())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("ctrl+r")
        await type_text(pilot, "layx")
        assert prompt.text == "explain the layout" and "no match" in str(prompt.border_title)
        await pilot.press("backspace")
        assert prompt.text == "explain the layout" and "no match" not in str(prompt.border_title)
        await pilot.press("end")  # not a search key: the entry is taken and End acts on it
        assert prompt.search is None
        await type_text(pilot, "!")
        assert prompt.text == "explain the layout!"


async def test_ctrl_r_with_an_empty_query_walks_back_through_the_history():
    app = make_app(ScriptedModel([]), history=_history())
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await pilot.press("ctrl+r", "ctrl+r")
        assert prompt.text == "hello"
        await pilot.press("ctrl+r")
        assert prompt.text == "explain the parser"


def test_history_search_snapshot(snap_compare):
    app = _chat_app()
    app.history = _history()

    async def search(pilot):
        await _steady(pilot)
        await pilot.press("ctrl+r", "p", "a", "r", "s")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=search)
