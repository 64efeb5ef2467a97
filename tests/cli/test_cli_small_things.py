"""Small things a new user hit: empty flags, flags that were silently ignored, quiet output,
--json failures, the REPL banner, recipes without respond, an unwritable VANCE_HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import respond, run_cli, write_script


def _no_processes(home: Path) -> bool:
    folder = home / "processes"
    return not folder.exists() or not any(folder.iterdir())


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--resume", ""], "empty process id"),
        (["--model", ""], "--model is empty"),
        (["--model", "  "], "--model is empty"),
        (["--plain"], "--plain and -p exclude each other"),
    ],
)
def test_empty_or_conflicting_flags_are_usage_errors_that_create_nothing(tmp_path, vance_home, args, says):
    model = write_script(tmp_path / "s.json", [respond("should not run")])
    r = run_cli("chat", "-p", "hello", *args, env={"VANCE_MODEL": model})
    assert r.returncode == 2, r.stderr
    assert says in r.stderr and r.stdout == ""
    assert _no_processes(vance_home)


def test_structure_model_empty_is_a_usage_error():
    r = run_cli("structure", "x", "--schema", '{"type": "object"}', "--model", "")
    assert r.returncode == 2 and "--model is empty" in r.stderr


def test_quiet_prints_no_id_line(tmp_path):
    model = write_script(tmp_path / "s.json", [respond("hi")])
    r = run_cli("chat", "-p", "hello", "-q", env={"VANCE_MODEL": model})
    assert r.returncode == 0 and r.stdout == "hi\n"
    assert r.stderr == ""
    r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": write_script(tmp_path / "t.json", [respond("hi")])})
    assert "BLOCKED]" in r.stderr  # without -q the id line is there


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["x", "--schema", "missing-file.json"], 1, "InvalidSchema"),
        (["x", "--schema", '{"type": "object"}', "--max-loops", "0"], 2, "UsageError"),
        (["", "--schema", '{"type": "object"}'], 2, "UsageError"),
        (["x", "--schema", '{"type": "object"}'], 1, "ConfigError"),  # no model configured
    ],
)
def test_structure_json_prints_an_error_object_when_it_fails(args, code, kind):
    r = run_cli("structure", *args, "--json")
    assert r.returncode == code, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "error" and out["errorType"] == kind and out["exitCode"] == code
    assert out["errors"] and out["errors"][0] in r.stderr


def test_the_repl_banner_shows_the_model_given_with_model(tmp_path):
    first = write_script(tmp_path / "a.json", [respond("one")])
    r = run_cli("chat", "-p", "hello", env={"VANCE_MODEL": first})
    assert r.returncode == 0, r.stderr
    second = write_script(tmp_path / "b.json", [respond("two")])
    r = run_cli("chat", "--continue", "--plain", "--model", second, input="again\n")
    assert r.returncode == 0, r.stderr
    assert f"model {second}" in r.stderr.splitlines()[0]
    assert r.stdout == "two\n"


def test_validate_says_a_recipe_without_respond_takes_the_legacy_path(tmp_path):
    path = tmp_path / "plain.yaml"
    path.write_text("engine: arthur\ntools:\n  remove: [respond]\n")
    r = run_cli("recipes", "validate", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok  plain")
    assert "note: plain: it has no `respond` tool, so the engine takes the legacy path" in r.stderr
    r = run_cli("recipes", "validate", "arthur")
    assert "legacy path" not in r.stderr


def test_validate_rejects_a_yaml_alias_bomb(tmp_path):
    from tests.config.test_recipes import BOMB

    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)
    r = run_cli("recipes", "validate", str(path))
    assert r.returncode == 1
    assert "expands to more than" in r.stderr and "Traceback" not in r.stderr
