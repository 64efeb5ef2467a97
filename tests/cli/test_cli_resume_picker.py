"""`vance chat --resume` without an id (issue 16): the picker on a terminal; without one, a usage
error (exit 2) that lists this folder's recent chats to pass."""

from __future__ import annotations

from tests.helpers import json_lines, run_cli, write_script
from vance_cli.cli.chat import PICK, resume_argv


def respond(message):
    return {"tool_calls": [{"name": "respond", "arguments": {"message": message, "awaiting_user_input": True}}]}


def _chat(tmp_path, text, cwd=None) -> str:
    model = write_script(tmp_path / f"{abs(hash(text))}.json", [respond("ok")])
    r = run_cli("chat", "-p", text, "--json", env={"VANCE_MODEL": model}, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return json_lines(r.stdout)[0]["process_id"]


def test_a_bare_resume_without_a_terminal_lists_the_recent_chats_and_exits_2(tmp_path):
    older = _chat(tmp_path, "fix the login bug")
    newer = _chat(tmp_path, "write the README\nwith a quick start")
    other = tmp_path / "other"
    other.mkdir()
    theirs = _chat(tmp_path, "elsewhere", cwd=other)
    for args in (["chat", "-p", "go on", "--resume"], ["chat", "--resume"], ["chat", "--resume", "--json"]):
        r = run_cli(*args, env={"VANCE_MODEL": "scripted:/nonexistent"})
        assert r.returncode == 2, (args, r.stderr)
        assert r.stdout == "" and "Traceback" not in r.stderr
        assert "--resume without an id picks a chat on the full screen" in r.stderr
        lines = r.stderr.splitlines()
        rows = [i for i, line in enumerate(lines) if newer in line or older in line]
        assert len(rows) >= 2 and newer in lines[rows[0]] and "write the README with a quick start" in lines[rows[0]]
        assert "BLOCKED" in lines[rows[0]] and "fix the login bug" in lines[rows[1]]  # newest first
        assert theirs not in r.stderr  # another folder's chat is not this folder's
        assert f"vance chat --resume {newer}" in r.stderr
    r = run_cli("chat", "-p", "go on", "--resume", "--all", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode == 2 and theirs in r.stderr
    # nothing was created by the refusals
    assert len(json_lines(run_cli("ps", "--json").stdout)) == 3


def test_a_bare_resume_with_no_chat_here_says_so(tmp_path):
    r = run_cli("chat", "-p", "x", "--resume", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode == 2
    assert "there is no chat in this folder" in r.stderr and "--resume --all" in r.stderr


def test_a_bare_resume_and_continue_exclude_each_other(tmp_path):
    _chat(tmp_path, "one")
    r = run_cli("chat", "-p", "x", "--resume", "--continue")
    assert r.returncode == 2 and "exclude each other" in r.stderr


def test_resume_argv_marks_only_a_bare_resume():
    bare = f"--resume={PICK}"
    assert resume_argv(["chat", "--resume"]) == ["chat", bare]
    assert resume_argv(["chat", "--resume", "-p", "x"]) == ["chat", bare, "-p", "x"]
    assert resume_argv(["chat", "--resume", "--model", "--resume"]) == ["chat", bare, "--model", "--resume"]
    assert resume_argv(["chat", "--resume", "abc", "-p", "--resume"]) == ["chat", "--resume", "abc", "-p", "--resume"]
    assert resume_argv(["chat", "-p", "--resume"]) == ["chat", "-p", "--resume"]  # the prompt's text
    assert resume_argv(["chat", "--", "--resume"]) == ["chat", "--", "--resume"]
    assert resume_argv(["chat", "--resume=abc"]) == ["chat", "--resume=abc"]


def test_dash_r_resumes_as_in_claude_code(tmp_path):
    pid = _chat(tmp_path, "one")
    model = write_script(tmp_path / "again.json", [respond("two")])
    r = run_cli("chat", "-p", "again", "-r", pid[:12], "--json", "--model", model)
    assert r.returncode == 0, r.stderr
    assert json_lines(r.stdout)[0]["process_id"] == pid
    r = run_cli("chat", "-p", "again", "-r", env={"VANCE_MODEL": model})  # bare: the picker's listing
    assert r.returncode == 2 and pid in r.stderr


def test_dash_r_with_a_recipe_name_says_how_to_use_the_recipe(tmp_path):
    r = run_cli("chat", "-p", "hello", "-r", "coding", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "no process matches 'coding'" in r.stderr
    assert "-r is --resume" in r.stderr and "vance chat --recipe coding" in r.stderr
    r = run_cli("chat", "-p", "hello", "-r", "nosuchthing", env={"VANCE_MODEL": "scripted:/nonexistent"})
    assert "no process matches" in r.stderr and "--recipe" not in r.stderr  # not a recipe: no such hint
    assert len(json_lines(run_cli("ps", "--json").stdout)) == 0  # nothing was created
