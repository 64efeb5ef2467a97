"""Approvals in headless mode (issue 16): `chat -p` never runs a call the person did not allow.

Without a flag a call that needs approval is not run: the turn stops BLOCKED (exit 10), the
message names --allow and --yes, and the process resumes (asking again). --allow TOOL[:PATTERN]
and --yes allow; config.toml [permissions] rules allow / deny (a project's only once trusted);
--json gets an approval_needed event.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import json_lines, run_cli

RUNNER = "engine: ford\ntools:\n  allowed: [respond, file_read, file_list, file_write, exec_run]\nsystemPrompt: do things\n"


@pytest.fixture
def env(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text(RUNNER)
    return {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}


def _write_then_respond(server, path="app.py", content="print('hi')\n"):
    server.enqueue(tool_calls=[("file_write", {"path": path, "content": content})])
    server.enqueue(tool_calls=[("respond", {"message": "wrote it"})])


def _tool_results(server) -> list[str]:
    return [m["content"] for r in server.requests for m in r["messages"] if m["role"] == "tool"]


def test_chat_p_denies_by_default_naming_the_flags_and_keeps_the_turn(fake_openai, env):
    _write_then_respond(fake_openai)
    r = run_cli("chat", "--recipe", "runner", "-p", "write app.py", env=env)
    assert r.returncode == 10, r.stderr
    assert not Path("app.py").exists()  # never written
    assert "not run, needs your approval: file_write (write a file: app.py)" in r.stderr
    assert "--allow file_write:app.py" in r.stderr and "--yes" in r.stderr
    assert len(fake_openai.requests) == 1  # the turn stopped at the call; nothing told the model
    row = json_lines(run_cli("ps", "--json", env=env).stdout)[0]
    assert row["status"] == "BLOCKED"

    # resume asks again: now with the flag the call runs and the turn ends as the model meant
    r = run_cli("chat", "--continue", "-p", "and then?", "--allow", "file_write:app.py", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("app.py").read_text() == "print('hi')\n"
    assert r.stdout.startswith("wrote it\n")
    assert _tool_results(fake_openai)[0].startswith("wrote") or "app.py" in _tool_results(fake_openai)[0]


def test_yes_allows_every_call(fake_openai, env):
    _write_then_respond(fake_openai)
    r = run_cli("chat", "--recipe", "runner", "-p", "write app.py", "--yes", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("app.py").read_text() == "print('hi')\n"


def test_allow_with_a_pattern_allows_only_matching_commands(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "echo ok > ok.txt"})])
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "touch bad.txt"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "runner", "-p", "go", "--allow", "exec_run:echo *", env=env)
    assert r.returncode == 10, r.stderr
    assert Path("ok.txt").read_text() == "ok\n"
    assert not Path("bad.txt").exists()
    assert "needs your approval: exec_run (run a command: touch bad.txt)" in r.stderr


def test_a_malformed_allow_is_a_usage_error(env):
    r = run_cli("chat", "-p", "hi", "--allow", "exec_run:", env=env)
    assert r.returncode == 2
    assert "--allow" in r.stderr and "pattern after ':' is empty" in r.stderr


def test_json_gets_an_approval_needed_event_with_the_diff(fake_openai, env):
    Path("app.py").write_text("old line\n")
    _write_then_respond(fake_openai, content="new line\n")
    r = run_cli("chat", "--recipe", "runner", "-p", "edit", "--json", env=env)
    assert r.returncode == 10, r.stderr
    events = json_lines(r.stdout)
    needed = [e for e in events if e["type"] == "approval_needed"]
    assert len(needed) == 1
    e = needed[0]
    assert e["tool"] == "file_write" and e["subject"] == "app.py" and e["answered"] is False
    assert "-old line\n+new line\n" in e["diff"]
    assert "--allow file_write:app.py" in e["hint"]
    assert Path("app.py").read_text() == "old line\n"


def test_user_config_rules_allow_and_deny(fake_openai, env, vance_home):
    (vance_home / "config.toml").write_text(
        '[permissions]\nallow = ["file_write"]\ndeny = ["exec_run:rm *"]\n'
    )
    Path("keep.txt").write_text("keep")
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "rm keep.txt"})])
    fake_openai.enqueue(tool_calls=[("file_write", {"path": "a.txt", "content": "a"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    r = run_cli("chat", "--recipe", "runner", "-p", "go", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("keep.txt").exists()  # denied by the rule
    assert Path("a.txt").read_text() == "a"  # allowed by the rule
    denied = _tool_results(fake_openai)[0]
    assert denied.startswith("DENIED: the person did not allow this `exec_run` call")
    assert "exec_run:rm *" in denied and "NOT run" in denied


def test_a_bad_permissions_table_is_a_config_error(env, vance_home):
    (vance_home / "config.toml").write_text('[permissions]\nallow = "file_write"\n')
    r = run_cli("chat", "-p", "hi", env=env)
    assert r.returncode != 0
    assert "permissions.allow must be a list of rules" in r.stderr


def test_untrusted_project_rules_are_ignored_until_trusted(fake_openai, env, tmp_path):
    repo = Path.cwd()
    (repo / ".vance").mkdir()
    (repo / ".vance" / "config.toml").write_text('[permissions]\nallow = ["file_write"]\n')
    _write_then_respond(fake_openai)
    r = run_cli("chat", "--recipe", "runner", "-p", "write", env=env)
    assert r.returncode == 10, r.stderr
    assert "permissions" in r.stderr  # the untrusted-folder line names what it ignored
    assert not Path("app.py").exists()

    assert run_cli("trust", str(repo), env=env).returncode == 0
    fake_openai.reset()
    _write_then_respond(fake_openai)
    r = run_cli("chat", "--recipe", "runner", "-p", "write", env=env)
    assert r.returncode == 0, r.stderr
    assert Path("app.py").exists()


def test_process_spawn_asks_showing_the_full_check(fake_openai, env, vance_home):
    # a recipe that may run commands itself: from one that may not, the check is refused (issue 17)
    (vance_home / "recipes" / "spawner.yaml").write_text(RUNNER.replace("exec_run]", "exec_run, process_spawn]"))
    check = "python -c 'import sys; sys.exit(0)' && echo " + "x" * 80
    fake_openai.enqueue(tool_calls=[("process_spawn", {"goal": "make item1.txt", "check": check})])
    r = run_cli("chat", "--recipe", "spawner", "-p", "delegate", "--json", env=env)
    assert r.returncode == 10, r.stderr
    e = next(e for e in json_lines(r.stdout) if e["type"] == "approval_needed")
    assert e["tool"] == "process_spawn"
    assert e["fields"]["check"] == check  # the whole command, not cut
    assert e["fields"]["goal"] == "make item1.txt" and e["fields"]["recipe"] == "benjy-coding"
    rows = json_lines(run_cli("ps", "--json", env=env).stdout)
    assert len(rows) == 1  # no worker was started


def test_unconfined_commands_are_said_out_loud_and_ask(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": "echo hi"})])
    r = run_cli("chat", "--recipe", "runner", "-p", "go", "--json", env={**env, "VANCE_SANDBOX": "off"})
    assert r.returncode == 10
    events = json_lines(r.stdout)
    warnings = [e for e in events if e["type"] == "journal" and "WITHOUT a sandbox" in e["text"]]
    assert len(warnings) == 1
    needed = next(e for e in events if e["type"] == "approval_needed")
    assert needed["sandboxed"] is False and "WITHOUT a sandbox" in needed["notice"]
    assert needed["fields"]["sandbox"].startswith("NONE")


def test_doctor_says_unconfined_commands_ask(env):
    checks = {c["name"]: c for c in json_lines(run_cli("doctor", "--offline", "--json", env={**env, "VANCE_SANDBOX": "off"}).stdout)[0]["checks"]}
    assert checks["sandbox"]["outcome"] == "warn"
    assert "unconfined: each command asks first" in checks["sandbox"]["detail"]


def test_a_call_the_tool_refuses_is_not_asked_about(fake_openai, env):
    """process_spawn of a recipe that does not exist (the 0.5B model's "your_recipe") is refused by
    the tool whatever the person says: the model is told at once, the person is not asked, and
    the turn goes on (before: exit 10, "needs your approval" for a call that could never run)."""
    fake_openai.enqueue(tool_calls=[("process_spawn", {"goal": "g", "recipe": "your_recipe", "check": "your_check"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "could not start it"})])
    r = run_cli("chat", "-p", "hello", "--json", env=env)
    assert r.returncode == 0, r.stderr
    events = json_lines(r.stdout)
    assert not [e for e in events if e["type"] == "approval_needed"]
    result = _tool_results(fake_openai)[0]
    assert result.startswith("ERROR:") and "your_recipe" in result
    assert [e["text"] for e in events if e["type"] == "message"] == ["could not start it"]
