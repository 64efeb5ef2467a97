"""`@path` in the prompt (issue 16): completion from the workspace, the file's text in what the
model gets, a refused path sends nothing and gives the text back."""

from __future__ import annotations

from pathlib import Path

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import FunctionModel
from vance_cli.tui.widgets.command_hints import CommandHints
from vance_cli.tui.widgets.message_view import MessageView
from vance_cli.tui.widgets.note_line import NoteLine
from vance_cli.tui.widgets.prompt_input import PromptInput


def _workspace() -> Path:
    ws = Path.cwd()  # the suite starts every test in an empty folder: the chat's workspace
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def main():\n    return 42\n")
    (ws / "src" / "api.py").write_text("x = 1\n")
    (ws / "README.md").write_text("# readme\n")
    return ws


def _model():
    return FunctionModel(lambda request: respond("ok"))


def _notes(app) -> list[str]:
    return [str(n.render()) for n in app.screen.query(NoteLine)]


def _user_messages(request) -> list[str]:
    return [m.content for m in request.messages if m.role == "user"]


async def test_at_offers_workspace_files_tab_completes_and_the_model_gets_the_file():
    _workspace()
    model = _model()
    app = make_app(model)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        hints = app.screen.query_one(CommandHints)
        await type_text(pilot, "explain @sr")
        assert hints.display and hints.paths == ["src/", "src/api.py", "src/app.py"]
        await pilot.press("tab")  # what they share: the folder
        assert prompt.text == "explain @src/"
        await type_text(pilot, "app")
        assert hints.paths == ["src/app.py"]
        await pilot.press("tab")  # the one match: the whole path and a space
        assert prompt.text == "explain @src/app.py "
        assert not hints.display
        await type_text(pilot, "briefly")
        await pilot.press("enter")
        await wait_for(pilot, lambda: model.calls == 1)
        sent = _user_messages(model.requests[0])[-1]
        assert sent.startswith("explain @src/app.py briefly\n\n<attached file=\"src/app.py\" bytes=\"26\">\n")
        assert "def main():\n    return 42\n</attached>" in sent
        users = [m.text for m in app.screen.query(MessageView) if m.role == "user"]
        assert users == ["explain @src/app.py briefly"]  # as typed; the file is a note below it
        assert "attached src/app.py (26 bytes)" in _notes(app)


async def test_a_path_outside_the_workspace_is_refused_and_nothing_is_sent():
    ws = _workspace()
    (ws.parent / "secret.txt").write_text("s3cret")
    model = _model()
    app = make_app(model)
    async with app.run_test(size=SIZE) as pilot:
        prompt = app.screen.query_one(PromptInput)
        await type_text(pilot, "read @../secret.txt")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("cannot be attached" in n for n in _notes(app)), describe=lambda: _notes(app))
        await pilot.pause(0.1)
        assert model.calls == 0 and not app.controller.process.history and not app.controller.process.inbox
        assert [m for m in app.screen.query(MessageView) if m.role == "user"] == []
        assert prompt.text == "read @../secret.txt"  # given back to fix
        assert any("contains '..'" in n and "nothing was sent" in n for n in _notes(app))


async def test_a_secret_is_refused_and_never_offered(monkeypatch):
    ws = _workspace()
    monkeypatch.setenv("HOME", str(ws))
    (ws / ".ssh").mkdir()
    (ws / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    model = _model()
    app = make_app(model)
    async with app.run_test(size=SIZE) as pilot:
        hints = app.screen.query_one(CommandHints)
        await type_text(pilot, "@.ss")
        assert hints.paths == [] and "no file of the workspace matches @.ss" in str(hints.render())
        await type_text(pilot, "h/id_ed25519")
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("hidden from the tools" in n for n in _notes(app)), describe=lambda: _notes(app))
        assert model.calls == 0


async def test_a_resumed_chat_shows_the_typed_text_and_what_was_attached():
    _workspace()
    model = _model()
    app = make_app(model)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "see @README.md")
        await pilot.press("enter")
        await wait_for(pilot, lambda: model.calls == 1)
        await wait_for(pilot, lambda: not app.screen.turn_running)
        app.screen.load_process()  # as a resumed chat draws it, from the process file
        await pilot.pause()
        users = [m.text for m in app.screen.query(MessageView) if m.role == "user"]
        assert users == ["see @README.md"]
        assert "attached README.md (9 bytes)" in _notes(app)
