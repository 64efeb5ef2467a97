"""Issue 17, bad input: endless or closed stdin, JSON nested 200,000 deep, a 5,000-digit integer,
a process file that cannot be read, a script that is not UTF-8: clear errors, never "internal error"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import json_lines, run_cli, subprocess_env, write_script

DEEP = "[" * 200_000 + "]" * 200_000
BIG_INT = "1" * 5000


def _clear(r, *words: str) -> None:
    assert r.returncode != 0
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["chat", "-p", "-"],
        ["structure", "-", "--schema", "x"],
        ["benjy", "run", "-"],
        ["schemas", "add", "thing", "-"],
        ["schemas", "add", "thing", "/dev/stdin"],
    ],
)
def test_stdin_that_never_ends_is_cut_with_a_clear_error(args, tmp_path):
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run(
            [sys.executable, "-m", "vance_cli", *args],
            stdin=zero, capture_output=True, text=True, timeout=120,
            env=subprocess_env({"VANCE_MODEL": "scripted:" + str(tmp_path / "none.json")}), cwd=tmp_path,
        )
    _clear(r, "stdin")
    assert "MiB" in r.stderr


def test_a_closed_stdin_is_a_clear_error(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "vance_cli", "chat", "-p", "-"],
        stdin=None, capture_output=True, text=True, timeout=120,
        env=subprocess_env(), cwd=tmp_path, preexec_fn=lambda: __import__("os").close(0),
    )
    _clear(r, "stdin")


def _proc_dir(vance_home: Path) -> Path:
    folder = vance_home / "processes"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.mark.parametrize("body", [DEEP, '{"id": ' + BIG_INT + "}"], ids=["deep", "big-int"])
def test_one_corrupt_process_file_does_not_break_the_others(vance_home, tmp_path, body):
    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}] * 4)
    assert run_cli("chat", "-p", "hello", "--model", model).returncode == 0
    good = json_lines(run_cli("ps", "--json").stdout)[0]["id"]
    bad = _proc_dir(vance_home) / "20990101-000000-badbad.json"
    bad.write_text(body)
    ps = run_cli("ps")
    assert ps.returncode == 0, ps.stderr
    assert good in ps.stdout and "internal error" not in ps.stderr
    assert "20990101-000000-badbad" in ps.stdout + ps.stderr and "unreadable" in (ps.stdout + ps.stderr)
    assert run_cli("show", good).returncode == 0
    r = run_cli("chat", "-p", "again", "--continue", "--model", model)
    assert r.returncode == 0, r.stderr
    shown = run_cli("show", "20990101-000000-badbad")
    _clear(shown, "unreadable")
    assert bad.read_text() == body  # kept


@pytest.mark.parametrize("body", [DEEP, '{"type": "object", "maxLength": ' + BIG_INT + "}"], ids=["deep", "big-int"])
def test_a_schema_too_deep_or_too_big_is_a_clear_error(tmp_path, body):
    path = tmp_path / "s.json"
    path.write_text(body)
    _clear(run_cli("schemas", "add", "thing", str(path)), "s.json")


@pytest.mark.parametrize("where", ["config", "trust"])
def test_a_config_or_trust_file_too_deep_is_a_clear_error(vance_home, where):
    if where == "config":
        (vance_home / "config.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    else:
        (vance_home / "trusted.json").write_text(DEEP)
    args = ("chat", "-p", "hi", "--model", "openai/x") if where == "config" else ("trust", "--list")
    _clear(run_cli(*args), str(vance_home))


def test_a_script_that_is_not_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "brain.json"
    path.write_bytes(b'["caf\xe9"]')
    _clear(run_cli("chat", "-p", "hi", "--model", f"scripted:{path}"), "brain.json", "UTF-8")


def test_an_unknown_schema_draft_is_an_error(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"$schema": "http://example.com/draft-99/schema", "type": "object"}))
    _clear(run_cli("schemas", "add", "thing", str(path)), "unknown JSON Schema draft", "draft-99")


def test_invalid_yaml_in_a_recipe_is_one_line_with_the_file_the_line_and_the_fix(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("engine: ford\ntools: [a\n  b: c\n")
    r = run_cli("recipes", "validate", str(path))
    _clear(r, "bad.yaml", "line 3", "fix:")
    error_lines = [line for line in r.stderr.splitlines() if not line.strip().startswith("fix:")]
    assert len(error_lines) == 1, r.stderr


def test_a_lock_file_that_is_a_symlink_is_never_written_through(vance_home, tmp_path):
    model = write_script(tmp_path / "s.json", [{"tool_calls": [{"name": "respond", "arguments": {"message": "hi", "awaiting_user_input": True}}]}] * 4)
    assert run_cli("chat", "-p", "hello", "--model", model).returncode == 0
    pid = json_lines(run_cli("ps", "--json").stdout)[0]["id"]
    victim = tmp_path / "victim.txt"
    victim.write_text("the person's file\n")
    lock = vance_home / "processes" / f"{pid}.lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)  # as a cloned .vance/ could ship it
    for args in (("--continue",), ("--resume", pid)):
        r = run_cli("chat", "-p", "again", *args, "--model", model)
        _clear(r, "symbolic link", f"rm {lock}")
        assert victim.read_text() == "the person's file\n"


def test_trust_hashes_links_out_of_the_project_by_their_path(tmp_path):
    import time

    proj = tmp_path / "work"
    (proj / ".vance").mkdir()
    (proj / ".vance" / "z").symlink_to("/usr")
    (proj / ".vance" / "p").symlink_to("/proc")
    started = time.monotonic()
    r = run_cli("trust", cwd=proj)
    took = time.monotonic() - started
    assert r.returncode == 0, r.stderr
    assert took < 5, f"vance trust took {took:.1f} s"  # it walked /usr (30 s+) before
    assert "trusted" in run_cli("trust", "--list", cwd=proj).stdout
