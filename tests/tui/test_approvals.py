"""The approval dialog driven with Pilot (issue 16): each path a person can take.

allow once (y), allow always for this path (a) and for the tool (t), deny with a reason (n), not
now (Esc: the turn waits, Enter asks again), rules from config.toml (no dialog), a project's rules
ignored until the folder is trusted, /permissions.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.conftest import SIZE, make_app, respond, type_text, wait_for
from vance_cli.llm.scripted import ScriptedModel
from vance_cli.tui.screens.approval_screen import ApprovalScreen
from vance_cli.tui.widgets.message_view import MessageView


def _write(path="app.py", content="print('hi')\n") -> dict:
    return {"tool_calls": [{"name": "file_write", "arguments": {"path": path, "content": content}}]}


def _messages(app, role="assistant"):
    return [m.text for m in app.screen.query(MessageView) if m.role == role]


def _dialog(app) -> ApprovalScreen | None:
    return app.screen if isinstance(app.screen, ApprovalScreen) else None


def _tool_results(model: ScriptedModel) -> list[str]:
    """The tool results the model saw, in order (the last request holds them all)."""
    return [m.content for m in model.requests[-1].messages if m.role == "tool"] if model.requests else []


async def _send(pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_allow_once_runs_the_call_only_after_yes():
    model = ScriptedModel([_write(), respond("wrote it")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "write app.py")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        dialog = _dialog(app)
        assert dialog.request.tool == "file_write" and dialog.request.subject == "app.py"
        assert "+print('hi')" in dialog.request.preview.diff
        await pilot.pause(0.2)
        assert not Path("app.py").exists()  # the dialog is open: nothing written yet
        await pilot.press("y")
        await wait_for(pilot, lambda: _messages(app) == ["wrote it"])
        assert Path("app.py").read_text() == "print('hi')\n"
    # once: nothing was remembered
    assert not (Path.home() / "permissions.json").exists()


async def test_allow_always_for_the_path_is_remembered_for_the_project(vance_home):
    model = ScriptedModel([_write(), respond("one"), _write(content="v2\n"), respond("two"), _write("other.py"), respond("three")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "first")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        await pilot.press("a")
        await wait_for(pilot, lambda: _messages(app) == ["one"])
        await _send(pilot, "again")  # the same path: no dialog
        await wait_for(pilot, lambda: _messages(app) == ["one", "two"])
        assert Path("app.py").read_text() == "v2\n"
        await _send(pilot, "another file")  # another path asks
        await wait_for(pilot, lambda: _dialog(app) is not None)
        assert _dialog(app).request.subject == "other.py"
        await pilot.press("y")
        await wait_for(pilot, lambda: _messages(app) == ["one", "two", "three"])
    kept = json.loads((vance_home / "permissions.json").read_text())
    assert list(kept["projects"].values()) == [{"allow": ["file_write:app.py"]}]


async def test_allow_always_for_the_tool_covers_every_call_of_it(vance_home):
    model = ScriptedModel([_write(), respond("one"), _write("b.py"), respond("two")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "first")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        await pilot.press("t")
        await wait_for(pilot, lambda: _messages(app) == ["one"])
        await _send(pilot, "second")
        await wait_for(pilot, lambda: _messages(app) == ["one", "two"])
        assert Path("b.py").exists()
    assert list(json.loads((vance_home / "permissions.json").read_text())["projects"].values()) == [{"allow": ["file_write"]}]


async def test_deny_with_a_reason_tells_the_model_and_writes_nothing():
    model = ScriptedModel([_write(), respond("ok, I will not")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "write app.py")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        await pilot.press("n")
        await type_text(pilot, "use notes.md instead")
        await pilot.press("enter")
        await wait_for(pilot, lambda: _messages(app) == ["ok, I will not"])
    assert not Path("app.py").exists()
    result = _tool_results(model)[0]
    assert result.startswith("DENIED: the person did not allow this `file_write` call")
    assert "their reason: use notes.md instead" in result


async def test_not_now_keeps_the_turn_and_enter_asks_again():
    from vance_cli.engines import awaiting_approval

    model = ScriptedModel([_write(), respond("done")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "write app.py")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.turn_worker is not None and app.screen.turn_worker.is_finished)
        process = app.controller.process
        assert awaiting_approval(process) == "file_write" and process.status.value == "BLOCKED"
        assert not Path("app.py").exists()
        assert len(model.requests) == 1  # the model was not told anything
        await pilot.press("enter")  # an empty prompt continues the turn: it asks again
        await wait_for(pilot, lambda: _dialog(app) is not None)
        await pilot.press("y")
        await wait_for(pilot, lambda: _messages(app) == ["done"])
    assert Path("app.py").exists()


async def test_rules_from_the_user_config_decide_without_a_dialog(vance_home):
    (vance_home / "config.toml").write_text('[permissions]\nallow = ["file_write:*.py"]\ndeny = ["file_write:secret*"]\n')
    model = ScriptedModel([_write(), _write("secret.txt"), respond("done")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, lambda: _messages(app) == ["done"])
        assert _dialog(app) is None
    assert Path("app.py").exists() and not Path("secret.txt").exists()
    assert _tool_results(model)[1].startswith("DENIED")


async def test_an_untrusted_projects_rules_are_ignored():
    Path(".vance").mkdir()
    Path(".vance/config.toml").write_text('[permissions]\nallow = ["file_write"]\n')
    model = ScriptedModel([_write(), respond("done")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, lambda: _dialog(app) is not None)  # asked: the project's rule does not apply
        await pilot.press("y")
        await wait_for(pilot, lambda: _messages(app) == ["done"])


async def test_permissions_command_shows_and_changes_the_rules(vance_home):
    (vance_home / "config.toml").write_text('[permissions]\ndeny = ["exec_run:rm *"]\n')
    model = ScriptedModel([_write(), respond("done")])
    app = make_app(model, recipe="coding")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "/permissions")
        await wait_for(pilot, lambda: any("exec_run:rm *" in t for t in _messages(app, "system")))
        await _send(pilot, "/permissions allow file_write")
        await wait_for(pilot, lambda: any("allow file_write: kept for" in t for t in _messages(app, "system")))
        await _send(pilot, "write it")  # allowed by the rule just made: no dialog
        await wait_for(pilot, lambda: _messages(app) == ["done"])
        assert _dialog(app) is None
        await _send(pilot, "/permissions forget file_write")
        await wait_for(pilot, lambda: any("forgot file_write" in t for t in _messages(app, "system")))
    assert Path("app.py").exists()


async def test_a_command_dialog_shows_the_command_folder_and_sandbox_and_y_runs_it(vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text("engine: ford\ntools:\n  allowed: [respond, exec_run]\nsystemPrompt: run\n")
    model = ScriptedModel([{"tool_calls": [{"name": "exec_run", "arguments": {"command": "touch ran.txt"}}]}, respond("ran")])
    app = make_app(model, recipe="runner")
    async with app.run_test(size=SIZE) as pilot:
        await _send(pilot, "go")
        await wait_for(pilot, lambda: _dialog(app) is not None)
        fields = dict(_dialog(app).request.preview.fields)
        assert fields["command"] == "touch ran.txt"
        assert fields["folder"] == str(Path.cwd().resolve())
        assert "sandbox" in fields
        await pilot.pause(0.2)
        assert not Path("ran.txt").exists()
        await pilot.press("y")  # nothing in the dialog holds the focus: the letter answers
        await wait_for(pilot, lambda: _messages(app) == ["ran"], timeout=20)
    assert Path("ran.txt").exists()
