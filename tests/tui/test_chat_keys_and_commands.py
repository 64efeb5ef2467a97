"""Keys (Ctrl+C, Ctrl+D, Esc, history) and every slash command of the chat app."""

from __future__ import annotations

import asyncio

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import FunctionModel, ScriptedModel
from vance_cli.store.process import Status
from vance_cli.tui.history import InputHistory
from vance_cli.tui.widgets.command_hints import CommandHints
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.note_line import NoteLine
from vance_cli.tui.widgets.prompt_input import PromptInput
from vance_cli.tui.widgets.status_bar import StatusBar


def _messages(app, role="assistant"):
    return [m.text for m in app.screen.query(MessageView) if m.role == role]


def _notes(app):
    return [n.text for n in app.screen.query(NoteLine)]


async def _send(pilot, text):
    await type_text(pilot, text)
    await pilot.press("enter")


def _slow_model(started: asyncio.Event):
    async def fn(request):
        started.set()
        await asyncio.sleep(60)
        return respond("never")

    return FunctionModel(fn)


async def test_ctrl_c_stops_the_turn_saves_it_suspended_and_a_second_quits():
    started = asyncio.Event()
    app = make_app(_slow_model(started))
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "work hard")
        await wait_for(pilot, started.is_set)
        assert "working" in app.screen.query_one(StatusBar).render_text()
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any("stopped" in n for n in _notes(app)))
        process = app.controller.runtime.store.load(app.controller.process_id)
        assert process.status == Status.SUSPENDED
        assert [m.content for m in process.history if m.role == "user"] == ["work hard"]
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_a_single_ctrl_c_when_idle_does_not_quit_and_esc_never_stops_work():
    started = asyncio.Event()
    app = make_app(_slow_model(started))
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, started.is_set)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen.turn_running  # Esc left the prompt, the turn goes on
        assert not isinstance(app.focused, PromptInput)
        app.screen.turn_worker.cancel()
    app2 = make_app(ScriptedModel([]))
    async with app2.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert app2.is_running


async def test_ctrl_d_quits_only_on_an_empty_prompt():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "ab")
        await pilot.press("home", "ctrl+d")
        await pilot.pause()
        assert app.is_running and app.screen.query_one(PromptInput).text == "b"
        await pilot.press("ctrl+d", "ctrl+d")
        await pilot.pause()
        assert not app.is_running


async def test_the_prompt_is_multi_line_and_history_persists_per_scope(vance_home):
    path = vance_home / "tui" / "input-history.json"
    app = make_app(ScriptedModel([respond("one"), respond("two")]), history=InputHistory.load(path))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "line1")
        await pilot.press("ctrl+j")
        await type_text(pilot, "line2")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == ["one"])
        assert _messages(app, "user") == ["line1\nline2"]
        await _send(pilot, "second")
        await wait_for(pilot, lambda: _messages(app) == ["one", "two"])
    app.controller.close()
    again = make_app(ScriptedModel([]), history=InputHistory.load(path))
    async with again.run_test(size=SIZE) as pilot:
        prompt = again.screen.query_one(PromptInput)
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up")
        assert prompt.text == "line1\nline2"
        await pilot.press("down", "down")
        assert prompt.text == ""


async def test_slash_help_completion_and_unknown():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/re")
        hints = app.screen.query_one(CommandHints)
        assert hints.display and [c.name for c in hints.matches] == ["resume", "recipe", "retry"]
        await type_text(pilot, "c")
        await pilot.press("tab")
        assert app.screen.query_one(PromptInput).text == "/recipe "
        app.screen.query_one(PromptInput).load_text("/help")
        await pilot.press("enter")
        await pilot.pause()
        help_text = [m.text for m in app.screen.query(MessageView) if m.role == "system"][0]
        for name in ("/help", "/ps", "/attach ID", "/new", "/resume [ID]", "/recipe NAME", "/model [NAME]", "/copy", "/clear", "/quit"):
            assert name in help_text
        await _send(pilot, "/nosuch")
        await pilot.pause()
        assert any("unknown command /nosuch" in n for n in _notes(app))


async def test_slash_new_resume_ps_and_clear():
    app = make_app(ScriptedModel([respond("first reply"), respond("second reply")]))
    async with app.run_test(size=SIZE) as pilot:
        first = app.controller.process_id
        await _send(pilot, "hello")
        await wait_for(pilot, lambda: _messages(app) == ["first reply"])
        await _send(pilot, "/new")
        await pilot.pause()
        second = app.controller.process_id
        assert second != first and _messages(app) == [] and _messages(app, "user") == []
        # the first process is free again: its lock went with /new
        assert app.controller.runtime.store.holder(first) is None
        await _send(pilot, "/ps")
        await pilot.pause()
        listing = [n for n in _notes(app) if n.startswith("ID")][0]
        assert first in listing and second in listing and "(this chat)" in listing
        await _send(pilot, f"/resume {first[-6:]}")
        await pilot.pause()
        assert app.controller.process_id == first
        assert _messages(app) == ["first reply"] and _messages(app, "user") == ["hello"]
        await _send(pilot, "/clear")
        await pilot.pause()
        assert _messages(app) == [] and app.controller.process.history  # the history is kept
        await _send(pilot, "/resume nope")
        await pilot.pause()
        assert any("no process matches 'nope'" in n for n in _notes(app))


async def test_slash_recipe_and_model(tmp_path):
    app = make_app(ScriptedModel([respond("ok")]))
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "/recipe ford")
        await pilot.pause()
        assert app.controller.process.recipe_name == "ford"
        assert "ford" in app.screen.query_one(StatusBar).render_text()
        await _send(pilot, "/recipe no-such-recipe")
        await pilot.pause()
        assert any("no-such-recipe" in n and "fix:" in n for n in _notes(app))
        await _send(pilot, "/model scripted:other")
        await pilot.pause()
        assert "scripted:other" in app.screen.query_one(StatusBar).render_text()
        await _send(pilot, "hi")
        await wait_for(pilot, lambda: _messages(app) == ["ok"])
        assert app.controller.process.model == "scripted:other"


async def test_slash_quit():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "/quit")
        await pilot.pause()
        assert not app.is_running


async def test_resume_shows_the_earlier_conversation_and_continues_it():
    app = make_app(ScriptedModel([respond("earlier answer")]))
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "earlier question")
        await wait_for(pilot, lambda: _messages(app) == ["earlier answer"])
    pid = app.controller.process_id
    app.controller.close()
    again = make_app(ScriptedModel([respond("later answer")]), pid=pid)
    async with again.run_test(size=SIZE) as pilot:
        assert _messages(again) == ["earlier answer"] and _messages(again, "user") == ["earlier question"]
        await _send(pilot, "later question")
        await wait_for(pilot, lambda: _messages(again) == ["earlier answer", "later answer"])
    process = again.controller.runtime.store.load(pid)
    assert [m.content for m in process.history if m.role == "user"] == ["earlier question", "later question"]


async def test_resume_of_this_chat_or_of_a_benjy_run_says_what_to_do_instead():
    # Found by review: /resume of this chat said it was "in use by vance pid <own pid>"; /resume of
    # a Benjy run was accepted and the next message failed.
    from vance_cli.store.process import Process

    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        own = app.controller.process_id
        run = Process(engine="benjy", recipe_name="benjy-coding", status=Status.IDLE)
        app.controller.runtime.store.create(run)
        await _send(pilot, f"/resume {own}")
        await pilot.pause()
        assert any(f"{own} is this chat: it is already open" in n for n in _notes(app))
        await _send(pilot, f"/resume {run.id}")
        await pilot.pause()
        assert any(f"{run.id} is a Benjy run, not a chat: /attach {run.id}" in n for n in _notes(app))
        assert app.controller.process_id == own
    app.controller.close()


async def test_slash_compact_summarises_the_older_turns_and_shows_the_summary():
    app = make_app(ScriptedModel([respond("a"), respond("b"), respond("c"), "SUMMARY: asked one, two, three"]))
    async with app.run_test(size=SIZE) as pilot:
        for text, reply in (("one", "a"), ("two", "b"), ("three", "c")):
            await _send(pilot, text)
            await wait_for(pilot, lambda reply=reply: _messages(app)[-1:] == [reply])
        await _send(pilot, "/compact")
        await wait_for(pilot, lambda: any("SUMMARY: asked one, two, three" in n for n in _notes(app)))
        process = app.controller.runtime.store.load(app.controller.process_id)
        [summary] = [m for m in process.history if m.meta.get("kind") == "summary"]
        assert summary.content == "SUMMARY: asked one, two, three"
        assert [m.content for m in process.history if m.role == "user"] == ["one", "two", "three"]  # all kept
        await _send(pilot, "/compact")  # the last two turns stay verbatim: nothing more to summarise
        await wait_for(pilot, lambda: any("nothing to compact" in n for n in _notes(app)))
