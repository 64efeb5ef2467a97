"""Sessions as people keep them (issue 16): the folder on screen, the resume picker, /model, /copy."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from tests.tui.test_snapshots import _steady
from vance_cli.config.scopes import Scopes
from vance_cli.config.settings import Settings
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.messages import Message, ToolCall
from vance_cli.runtime.runner import Runtime
from vance_cli.store.process import Process, Status
from vance_cli.tui.app import VanceApp
from vance_cli.tui.controller import ChatController
from vance_cli.tui.history import InputHistory
from vance_cli.tui.screens.chat_screen import ChatScreen
from vance_cli.tui.screens.resume_screen import ResumeScreen
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.note_line import NoteLine
from vance_cli.tui.widgets.status_bar import StatusBar


async def test_the_status_bar_shows_the_folder_the_chat_works_in(tmp_path, monkeypatch):
    proj = tmp_path / "home" / "proj"
    proj.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(proj)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        text = app.screen.query_one(StatusBar).render_text()
        assert text.endswith(" · in ~/proj"), text
    app.controller.close()


async def test_a_folder_outside_home_is_shown_whole(tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    monkeypatch.chdir(proj)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert f"in {proj.resolve()}" in app.screen.query_one(StatusBar).render_text()
    app.controller.close()


# --- the resume picker ------------------------------------------------------------------------

T0 = 1_767_268_800.0  # 2026-01-01 12:00 UTC


def _chat(store, pid: str, first: str, updated: float, *, workspace: str | None = None,
          status: Status = Status.BLOCKED, engine: str = "arthur") -> Process:
    """A chat on disk with the person's first message and a reply, last changed at ``updated``."""
    answer = ToolCall(id="c1", name="respond", arguments='{"message": "on it"}')
    process = Process(id=pid, engine=engine, recipe_name=engine, model="openai/gpt-test",
                      recipe={"name": engine, "engine": engine}, status=status, title=first[:60],
                      workspace=workspace or str(Path.cwd().resolve()), updated=updated, created=updated,
                      history=[Message(role="user", content=first),
                               Message(role="assistant", tool_calls=[answer]),
                               Message(role="tool", tool_call_id="c1", name="respond", content="delivered",
                                       meta={"ok": True, "delivered": True})])
    store.create(process)
    return process


def _runtime() -> Runtime:
    scopes = Scopes.discover()
    return Runtime(scopes, Settings.load(scopes), model_factory=lambda n, s: ScriptedModel([]), stream=True)


def _three_chats(runtime: Runtime) -> None:
    _chat(runtime.store, "20260101-100000-aaaaaa", "fix the login bug", T0 - 7200)
    _chat(runtime.store, "20260101-110000-bbbbbb", "write the README\nwith a quick start", T0 - 3600, status=Status.SUSPENDED)
    _chat(runtime.store, "20260101-113000-cccccc", "in another folder", T0 - 1800, workspace="/elsewhere")
    _chat(runtime.store, "20260101-114000-dddddd", "a Benjy run", T0 - 1200, engine="benjy")


def _picker_app(runtime: Runtime, **options) -> VanceApp:
    """The app as `vance chat --resume` (no id) opens it: no chat open, the picker on top."""
    return VanceApp(controller=ChatController(runtime, None), history=InputHistory(None), preload=False,
                    pick=True, **options)


def _options(app) -> list[str]:
    chats = app.screen.query_one(OptionList)
    return [str(chats.get_option_at_index(i).prompt) for i in range(chats.option_count)]


async def test_resume_without_an_id_picks_from_this_folders_chats_newest_first():
    runtime = _runtime()
    _three_chats(runtime)
    app = _picker_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ResumeScreen)
        rows = _options(app)
        # this folder's chats only (no other folder's, no Benjy run), newest first, with status and first message
        assert [r.split()[0] for r in rows] == ["20260101-110000-bbbbbb", "20260101-100000-aaaaaa"], rows
        assert "SUSPENDED" in rows[0] and "write the README with a quick start" in rows[0]
        assert "BLOCKED" in rows[1] and "fix the login bug" in rows[1]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        assert app.controller.process_id == "20260101-100000-aaaaaa"
        assert app.controller.runtime.store.holder("20260101-100000-aaaaaa") is not None  # locked: it is open
        shown = " ".join(m.text for m in app.screen.query(MessageView))
        assert "fix the login bug" in shown and "on it" in shown
    app.controller.close()


async def test_esc_on_the_start_picker_leaves_and_creates_nothing():
    runtime = _runtime()
    _three_chats(runtime)
    before = {p.id for p in runtime.store.list()[0]}
    app = _picker_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_code == 0 and app.controller.process_id is None
    assert {p.id for p in runtime.store.list()[0]} == before


async def test_the_start_picker_with_all_lists_every_folder():
    runtime = _runtime()
    _three_chats(runtime)
    app = _picker_app(runtime, pick_all_folders=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [r.split()[0] for r in _options(app)] == [
            "20260101-113000-cccccc", "20260101-110000-bbbbbb", "20260101-100000-aaaaaa"]
        await pilot.press("escape")


async def test_slash_resume_without_an_id_opens_the_picker_and_esc_keeps_the_chat():
    runtime = _runtime()
    _three_chats(runtime)
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        mine = app.controller.process_id
        await type_text(pilot, "/resume")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ResumeScreen)
        rows = _options(app)
        assert rows[0].startswith(mine) and "(this chat)" in rows[0], rows  # the newest: just made
        assert [r.split()[0] for r in rows[1:]] == ["20260101-110000-bbbbbb", "20260101-100000-aaaaaa"]
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen) and app.controller.process_id == mine
        await type_text(pilot, "/resume")
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert app.controller.process_id == "20260101-100000-aaaaaa"
        assert runtime.store.holder(mine) is None  # the chat it left is released
    app.controller.close()


async def test_slash_resume_with_no_other_chat_says_so():
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/resume")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        notes = " ".join(str(n.render()) for n in app.screen.query(NoteLine))
        assert "no other chat in this folder" in notes
    app.controller.close()


def test_the_resume_picker(snap_compare, monkeypatch, tmp_path):
    import time

    monkeypatch.setenv("HOME", str(tmp_path))  # the folder shows as ~/work on every machine
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    try:
        runtime = _runtime()
        _three_chats(runtime)
        assert snap_compare(_picker_app(runtime), terminal_size=SIZE, run_before=_steady)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


# --- /copy and /model -------------------------------------------------------------------------

def _notes(app) -> str:
    return "\n".join(n.text for n in app.screen.query(NoteLine))


async def test_slash_copy_copies_the_last_reply_and_says_so():
    app = make_app(ScriptedModel([respond("first answer"), respond("## the plan\n\n- parse\n- test")]))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        await pilot.pause()
        assert "nothing to copy" in _notes(app) and app.clipboard == ""
        for text in ("one", "two"):
            await type_text(pilot, text)
            await pilot.press("enter")
            await wait_for(pilot, lambda: not app.screen.turn_running and app.controller.process.status.value == "BLOCKED")
        await type_text(pilot, "/copy")
        await pilot.press("enter")
        await pilot.pause()
        assert app.clipboard == "## the plan\n\n- parse\n- test"  # the last reply, as the model wrote it
        assert "copied the last reply (27 characters) to the clipboard" in _notes(app)
    app.controller.close()


async def test_slash_model_without_a_name_shows_the_model_and_the_aliases(vance_home):
    (vance_home / "config.toml").write_text(
        '[model]\ndefault = "openai/main-model"\n\n[aliases]\n"default:fast" = "openai/fast-model"\n"default:mine" = "openai/my-model"\n',
        encoding="utf-8")
    app = make_app(ScriptedModel([]), model_name="openai/started-on")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await type_text(pilot, "/model")
        await pilot.press("enter")
        await pilot.pause()
        notes = _notes(app)
        assert "model: openai/started-on" in notes
        lines = [" ".join(line.split()) for line in notes.splitlines()]
        assert "default:fast openai/fast-model" in lines
        assert "default:analyze openai/main-model" in lines  # unset: falls back to model.default
        assert "default:mine openai/my-model" in lines
        await type_text(pilot, "/model default:fast")
        await pilot.press("enter")
        await pilot.pause()
        await type_text(pilot, "/model")
        await pilot.press("enter")
        await pilot.pause()
        assert "next turns: openai/fast-model" in _notes(app)
    app.controller.close()
