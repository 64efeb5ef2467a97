"""Arthur delegates to Benjy: `vance chat -p` starts a Benjy run, is woken by its report, relays it."""

from __future__ import annotations

import sys

from tests.engines.benjy_brain import Brain
from tests.helpers import REPO, json_lines, run_cli

CHECK_PY = "import os, sys\nsys.exit(0 if os.path.isfile('item1.txt') else 1)\n"


def arthur(body):
    """Arthur, scripted: a request -> process_spawn (with a check); its result -> respond; the report -> relay."""
    messages = body.get("messages") or []
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    if "You are Arthur" not in system:
        return None
    last = messages[-1]
    if last["role"] == "user" and last["content"].startswith("[worker "):
        return {
            "tool_calls": [
                {
                    "name": "respond",
                    "arguments": {"message": "The run is back: " + last["content"], "awaiting_user_input": True},
                }
            ]
        }
    if last["role"] == "user":
        return {
            "tool_calls": [
                {
                    "name": "process_spawn",
                    "arguments": {"goal": "write item1.txt", "check": f"{sys.executable} check.py"},
                }
            ]
        }
    if last["role"] == "tool" and last.get("name") == "process_spawn":
        assert last["content"].startswith("Started worker ")
        return {
            "tool_calls": [
                {
                    "name": "respond",
                    "arguments": {"message": "I started a Benjy run for that.", "awaiting_user_input": False},
                }
            ]
        }
    return {"tool_calls": [{"name": "respond", "arguments": {"message": "?"}}]}


def own_hub_with_commands(vance_home) -> None:
    """The person's own chat hub (user scope) grants exec_run: only then may the model give a
    worker a check command (a check runs a command; tests/hostile/test_spawn_limits.py)."""
    bundled = (REPO / "recipes" / "arthur.yaml").read_text()
    line = "  allowed: [respond, file_read, file_list, process_spawn, process_status, process_steer]"
    assert line in bundled
    (vance_home / "recipes").mkdir(exist_ok=True)
    (vance_home / "recipes" / "arthur.yaml").write_text(bundled.replace(line, line[:-1] + ", exec_run]"))


def test_arthur_starts_benjy_and_reports_its_result(fake_openai, tmp_path, vance_home):
    own_hub_with_commands(vance_home)
    brain = Brain(items=1)
    fake_openai.responder = lambda body: arthur(body) or brain.reply_body(body)
    (tmp_path / "work" / "check.py").write_text(CHECK_PY)
    env = {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}
    r = run_cli("chat", "-p", "please create item1.txt", "--yes", env=env)
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.split("\n", 1)
    assert first == "I started a Benjy run for that."
    assert second.startswith("The run is back: [worker ") and "# Benjy report" in second
    assert "#1 [done] write item1.txt" in second
    assert (tmp_path / "work" / "item1.txt").is_file()
    assert "· CHECK #1: passed" in r.stderr or "CHECK #1: passed" in r.stderr  # the run's progress
    rows = {row["id"]: row for row in json_lines(run_cli("ps", "--json", env=env).stdout)}
    by_engine = {row["engine"]: row for row in rows.values()}
    hub, benjy, ford = by_engine["arthur"], by_engine["benjy"], by_engine["ford"]
    assert (hub["depth"], benjy["depth"], ford["depth"]) == (0, 1, 2)
    assert benjy["parent"] == hub["id"] and ford["parent"] == benjy["id"]
    assert (hub["status"], benjy["status"], ford["status"]) == ("BLOCKED", "DONE", "DONE")
