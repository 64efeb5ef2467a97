"""Sessions as people keep them (issue 16): the folder on screen, the resume picker, /model, /copy."""

from __future__ import annotations

from tests.tui.conftest import SIZE, make_app
from vance_cli.llm.scripted import ScriptedModel
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
