"""`vance demo` runs offline on the scripted brain and leaves real process files and workspace files."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_cli


def test_demo_json_reports_what_it_did_and_the_files_prove_it(tmp_path):
    home = tmp_path / "demo-home"
    r = run_cli("demo", "--json", "--home", str(home))
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["scripted"] is True and report["home"] == str(home.resolve())
    assert report["ok"] is True and report["problems"] == [] and report["benjy"]["items"] == {"done": 1}
    from vance_cli.demo.brain import EXPENSE_SCHEMA  # the outro's `vance structure --schema` file is there

    assert json.loads((home / "expense.json").read_text()) == EXPENSE_SCHEMA

    chat = report["chat"]
    assert chat["status"] == "BLOCKED" and chat["corrections"] == 1
    assert "tool:file_read" in chat["events"]
    process = json.loads((home / "processes" / f"{chat['process']}.json").read_text())
    assert process["status"] == "BLOCKED" and process["model"] == "demo:chat"
    roles = [m["role"] for m in process["history"]]
    assert roles.count("tool") >= 1
    assert "Three changes" in json.dumps(process["history"])

    first, second = report["structure"]
    assert first["status"] == "ok" and first["iterations"] == 2 and first["data"]["amount"] == 42.8
    assert second["status"] == "need-more-input" and "date" in second["need"]

    benjy = report["benjy"]
    # two item checks and the DONE gate's final check on the finished workspace (issue 18)
    assert benjy["status"] == "DONE" and benjy["checks"] == 3 and benjy["workerSpawns"] == 2
    assert len(benjy["failedChecks"]) == 1 and "want 'vance-the-console'" in benjy["failedChecks"][0]
    assert benjy["todos"] == []  # cleared on DONE
    ws = home / "benjy-workspace"
    assert "re.findall" in (ws / "slug.py").read_text()  # the retry's file, which passes the check
    run = json.loads((home / "processes" / f"{benjy['process']}.json").read_text())
    assert run["engine"] == "benjy" and run["status"] == "DONE"
    workers = [p for p in report["processes"] if p["parent"] == benjy["process"]]
    assert len(workers) == 2 and all(w["status"] == "DONE" for w in workers)

    assert {p["id"] for p in report["processes"]} >= {chat["process"], benjy["process"]}
    assert (home / "workspace" / "notes.md").is_file()


def test_demo_narrates_that_the_model_is_scripted_and_where_state_lives(tmp_path):
    home = tmp_path / "h"
    r = run_cli("demo", "--home", str(home))
    assert r.returncode == 0, r.stderr
    assert "SCRIPTED" in r.stdout
    assert f"state folder: {home.resolve()}" in r.stdout
    assert (
        "CHECK #1: failed" in r.stdout and "the retry's worker was told:" in r.stdout and "# Benjy report" in r.stdout
    )
    assert "export VANCE_MODEL=" in r.stdout and f"VANCE_HOME={home.resolve()} vance ps" in r.stdout


def test_demo_ignores_the_persons_model_settings_and_touches_no_other_state(tmp_path, vance_home):
    r = run_cli(
        "demo",
        "--json",
        "--home",
        str(tmp_path / "d"),
        env={"VANCE_MODEL": "openai/gpt-4o", "VANCE_API_BASE": "http://127.0.0.1:9/v1"},
    )
    assert r.returncode == 0, r.stderr
    assert not (vance_home / "processes").exists()


def test_a_demo_process_resumes_with_the_same_brain(tmp_path):
    home = tmp_path / "d"
    report = json.loads(run_cli("demo", "--json", "--home", str(home)).stdout)
    pid = report["chat"]["process"]
    r = run_cli(
        "chat",
        "--resume",
        pid,
        "-p",
        "Thanks. What about notes.md again?",
        env={"VANCE_HOME": str(home)},
        cwd=home / "workspace",
    )
    assert r.returncode == 0, r.stderr
    assert "Three changes" in r.stdout


def test_demo_without_a_terminal_imports_neither_litellm_nor_textual(tmp_path):
    import os
    import subprocess
    import sys

    from tests.cli.test_cli_misc import PROBE
    from tests.helpers import REPO

    r = subprocess.run(
        [sys.executable, "-c", PROBE, "demo", "--json", "--home", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert "HEAVY=\n" in r.stderr, r.stderr


def test_on_a_terminal_the_benjy_part_runs_in_the_console(tmp_path, monkeypatch):
    """The console's run screen drives the demo's Benjy run (headless here), then the demo goes on."""
    import io

    from vance_cli.tui.app import VanceApp
    from vance_cli.tui.widgets.todo_box import TodoBox

    seen: dict = {}
    original_run = VanceApp.run

    def headless_run(self, **kwargs):
        async def pilot(p):
            for _ in range(400):
                await p.pause(0.05)
                process = self.run_source.process if hasattr(self.run_source, "process") else None
                if process is not None and process.status.value == "DONE":
                    break
            seen["todo_box"] = bool(self.screen.query(TodoBox))
            self.exit()

        return original_run(self, headless=True, auto_pilot=pilot)

    monkeypatch.setattr(VanceApp, "run", headless_run)
    from vance_cli.demo.run import run_demo

    out = io.StringIO()
    report = run_demo(home=tmp_path / "d", json_out=False, out=out, err=io.StringIO(), live=True)
    assert report["benjy"]["status"] == "DONE"
    assert seen["todo_box"] is True
    assert "shown in the console" in out.getvalue() and "── 4/4 vance ps" in out.getvalue()


def test_a_demo_part_that_does_not_go_as_scripted_fails_the_command(tmp_path, monkeypatch, capsys):
    # Found by review: with a check that never passes, the demo printed DONE and exited 0.
    from vance_cli.cli import main
    from vance_cli.demo import brain as demo_brain

    monkeypatch.setattr(demo_brain, "CHECK_SCRIPT", "raise SystemExit('always fails')\n")
    with pytest.raises(SystemExit) as exit_:
        main.run(["demo", "--home", str(tmp_path / "d")])
    out = capsys.readouterr().out
    assert exit_.value.code == 1
    assert "#1 [failed" in out and "NOT AS SCRIPTED: benjy:" in out
    assert "[pass] `python check_slug.py` passes" not in out


# Found by review of issue 14: the commands built their StructureService without the commands'
# model factory, so a `demo:` model went to the model layer, which knows no demo, and was refused
# as a real provider call (the suite switches those off: VANCE_ALLOW_MODEL_REQUESTS=0).


def test_structure_with_the_demo_model_runs_offline(tmp_path):
    from vance_cli.demo.brain import EXPENSE_SCHEMA, STRUCTURE_COMPLETE

    schema = tmp_path / "expense.json"
    schema.write_text(json.dumps(EXPENSE_SCHEMA))
    r = run_cli("structure", STRUCTURE_COMPLETE, "--schema", str(schema), "--model", "demo:structure")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"merchant": "City Cabs", "date": "2026-03-04", "amount": 42.8, "currency": "EUR"}


def test_schemas_infer_with_the_demo_model_runs_offline():
    # The demo's brain answers the content stage, not the builder: its answer fails the builder's
    # schema (exit 4, stale), which shows the demo brain was asked, and no provider was.
    r = run_cli("schemas", "infer", "an expense: merchant, date, amount", "--model", "demo:structure", "--no-cache")
    assert r.returncode == 4, r.stderr
    assert "switched off" not in r.stderr and "schema builder: /merchant" in r.stderr


def test_the_structure_tool_in_a_chat_uses_the_demo_model_offline(tmp_path, vance_home):
    from tests.helpers import respond, write_script
    from vance_cli.demo.brain import EXPENSE_SCHEMA, STRUCTURE_COMPLETE

    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "extractor.yaml").write_text(
        "name: extractor\ndescription: structures what it hears\nengine: ford\ntools:\n  add: [structure]\n"
        "systemPrompt: You extract records.\n")
    (vance_home / "config.toml").write_text('[structure]\nmodel = "demo:structure"\n')
    call = {"tool_calls": [{"name": "structure", "arguments": {"prompt": STRUCTURE_COMPLETE, "schema": EXPENSE_SCHEMA}}]}
    model = write_script(tmp_path / "chat.json", [call, respond("structured")])
    r = run_cli("chat", "-p", "file the taxi", "--recipe", "extractor", "--json", env={"VANCE_MODEL": model})
    assert r.returncode == 0, r.stderr
    pid = next(line["process_id"] for line in map(json.loads, r.stdout.splitlines()) if "process_id" in line)
    process = json.loads((vance_home / "processes" / f"{pid}.json").read_text())
    tool = next(m for m in process["history"] if m["role"] == "tool")
    assert not tool["content"].startswith("ERROR"), tool["content"]
    result = json.loads(tool["content"])
    assert result["status"] == "ok", result
    assert result["data"]["amount"] == 42.8
