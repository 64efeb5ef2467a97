"""A terminal a few columns wide (a narrow tmux pane) opens and resizes without crashing (found by review)."""

from __future__ import annotations

import pytest

from tests.tui.conftest import make_app
from vance_cli.llm.scripted import ScriptedModel


@pytest.mark.parametrize("width", [1, 2, 4, 6, 8])
async def test_a_narrow_terminal_opens_and_resizes(width):
    app = make_app(ScriptedModel([]))
    async with app.run_test(size=(width, 20)) as pilot:
        await pilot.pause(0.2)
        await pilot.resize_terminal(3, 10)
        await pilot.pause(0.2)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        assert app.is_running
    assert app.return_code in (0, None)
    app.controller.close()
