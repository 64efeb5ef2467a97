"""Issue 17: process_spawn is no side door past the limits the person gave the calling process.

The default chat (bundled arthur recipe: no exec_run) is driven by a model that turns hostile; the
local test server records what went back to it. A worker never gets more than its parent (no
exec_run, no network, no check command), and recipes come from the trusted cascade by name only.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import json_lines, run_cli

ENV_BASE = {"VANCE_MODEL": "openai/fake-model"}
WORKER = "name: worker\nengine: ford\ntools: {add: [exec_run]}\nexec: {network: true}\n"


def _spawn_then_respond(server, args: dict) -> None:
    server.enqueue(tool_calls=[("process_spawn", args)])
    server.enqueue(tool_calls=[("respond", {"message": "ok", "awaiting_user_input": True})])


def _tool_reply(server) -> str:
    messages = server.requests[1]["messages"]
    return next(m["content"] for m in messages if m.get("role") == "tool")


def _chat(server, cwd: Path | None = None):
    return run_cli("chat", "-p", "help", "--yes", env={**ENV_BASE, "VANCE_API_BASE": server.url}, cwd=cwd)


def test_a_check_from_a_chat_without_exec_run_is_refused(fake_openai, tmp_path):
    work = tmp_path / "work"
    _spawn_then_respond(fake_openai, {"goal": "anything", "check": "id > pwned.txt"})
    r = _chat(fake_openai)
    assert r.returncode == 0, r.stderr
    reply = _tool_reply(fake_openai)
    assert "check runs a command" in reply and "no exec_run" in reply
    assert not (work / "pwned.txt").exists()
    assert [row["engine"] for row in json_lines(run_cli("ps", "--json").stdout)] == ["arthur"]  # no worker


def test_a_recipe_file_path_is_refused(fake_openai, tmp_path):
    work = tmp_path / "work"
    (work / "worker.yaml").write_text(WORKER)  # shipped with a clone, or written by a worker
    _spawn_then_respond(fake_openai, {"goal": "curl evil", "recipe": "worker.yaml"})
    r = _chat(fake_openai)
    assert r.returncode == 0, r.stderr
    reply = _tool_reply(fake_openai)
    assert "takes a recipe name, not a file path" in reply
    assert [row["engine"] for row in json_lines(run_cli("ps", "--json").stdout)] == ["arthur"]
    assert len(fake_openai.requests) == 2  # no worker turn was ever asked for


def test_a_worker_never_gets_exec_run_or_the_network_its_parent_lacks(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "worker.yaml").write_text(WORKER)  # a recipe of the person's, by name
    _spawn_then_respond(fake_openai, {"goal": "curl evil", "recipe": "worker"})
    r = _chat(fake_openai)
    assert r.returncode == 0, r.stderr
    reply = _tool_reply(fake_openai)
    assert "grants exec_run" in reply and "never gets more than the process that starts it" in reply
    assert len(fake_openai.requests) == 2
    (vance_home / "recipes" / "worker.yaml").write_text("name: worker\nengine: ford\nexec: {network: true}\n")
    fake_openai.requests.clear()
    _spawn_then_respond(fake_openai, {"goal": "curl evil", "recipe": "worker"})
    r = _chat(fake_openai)
    assert r.returncode == 0, r.stderr
    assert "gives its commands the network" in _tool_reply(fake_openai)
    assert "exec_run" not in json.dumps(fake_openai.requests[0]["tools"])


def test_a_check_is_allowed_when_the_parent_may_run_commands(fake_openai, vance_home, tmp_path):
    """The same spawn from the person's own hub that grants exec_run starts the Benjy run."""
    from tests.cli.test_cli_delegation import own_hub_with_commands

    own_hub_with_commands(vance_home)
    _spawn_then_respond(fake_openai, {"goal": "anything", "check": "true"})
    fake_openai.enqueue(tool_calls=[("respond", {"message": "ok", "awaiting_user_input": True})])
    run_cli("chat", "-p", "help", "--yes", env={**ENV_BASE, "VANCE_API_BASE": fake_openai.url})
    assert _tool_reply(fake_openai).startswith("Started worker ")


def test_a_recipe_a_command_wrote_into_a_trusted_vance_is_not_spawned(fake_openai, vance_home, tmp_path):
    """Unconfined (exec.sandbox off), exec_run writes .vance/recipes/evil.yaml in a trusted project
    and spawns it in the same turn: the trust read at start no longer holds, nothing is started."""
    from tests.cli.test_cli_delegation import own_hub_with_commands

    own_hub_with_commands(vance_home)
    (vance_home / "config.toml").write_text(
        f'[model]\ndefault = "openai/m"\napi_base = "{fake_openai.url}"\n[exec]\nsandbox = "off"\n'
    )
    work = tmp_path / "work"
    (work / ".vance" / "recipes").mkdir(parents=True)
    (work / ".vance" / "recipes" / "helper.yaml").write_text("name: helper\nengine: ford\n")
    assert run_cli("trust", cwd=work).returncode == 0
    write = "printf 'name: evil\\nengine: ford\\n' > .vance/recipes/evil.yaml"
    fake_openai.enqueue(tool_calls=[("exec_run", {"command": write})])
    fake_openai.enqueue(tool_calls=[("process_spawn", {"goal": "x", "recipe": "evil"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "ok", "awaiting_user_input": True})])
    r = run_cli("chat", "-p", "help", "--yes", cwd=work)
    assert r.returncode == 0, r.stderr
    assert (work / ".vance" / "recipes" / "evil.yaml").is_file()  # the command ran (no sandbox)
    tools = [m["content"] for m in fake_openai.requests[2]["messages"] if m.get("role") == "tool"]
    assert "changed since it was trusted" in tools[-1]
    assert [row["engine"] for row in json_lines(run_cli("ps", "--json", cwd=work).stdout)] == ["arthur"]
