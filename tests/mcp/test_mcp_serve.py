"""`vance mcp serve` driven by the MCP SDK's own client over stdio (mcp.client.stdio), against the
fake OpenAI server (tests/fakeserver.py) and the scripted Benjy brain (tests/engines/benjy_brain.py):
each tool, the schemas as resources, bad arguments, and a cancelled Benjy run that `vance benjy
resume` finishes."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from tests.docs import section as doc_section  # noqa: E402
from tests.engines.benjy_brain import Brain, stage_of  # noqa: E402
from tests.helpers import json_lines, run_cli, subprocess_env  # noqa: E402

CHECK_PY = "import glob, sys\nsys.exit(0 if glob.glob('item*.txt') else 1)\n"
CHECK = f"{sys.executable} check.py"
INLINE = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": False}


@pytest.fixture
def env(fake_openai):
    return {"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url}


class Served:
    """A `vance mcp serve` subprocess and the SDK's client on it; its stderr kept in a file."""

    def __init__(self, env: dict, errlog: Path) -> None:
        self.env = env
        self.errlog = errlog

    def client(self) -> Client:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "vance_cli", "mcp", "serve"], env=subprocess_env(self.env), cwd=str(Path.cwd())
        )
        return Client(stdio_client(params, errlog=self.errlog.open("a", encoding="utf-8")), read_timeout_seconds=60)

    @property
    def stderr(self) -> str:
        return self.errlog.read_text(encoding="utf-8") if self.errlog.exists() else ""


@pytest.fixture
def served(env, tmp_path):
    return Served(env, tmp_path / "serve-stderr.txt")


def _text(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def test_tools_and_schemas_are_listed_and_bad_arguments_are_clear_errors(served, fake_openai, vance_home, tmp_path):
    (vance_home / "schemas").mkdir()
    (vance_home / "schemas" / "ticket.json").write_text(json.dumps({**INLINE, "description": "A support ticket."}))
    async with served.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resources = {r.name: r for r in (await client.list_resources()).resources}
        read = await client.read_resource("vance://schemas/ticket")
        bundled = await client.read_resource("vance://schemas/contact")
        # bad arguments: isError results (or, for a resource, a JSON-RPC error) saying what is wrong
        missing = await client.call_tool("structure", {"prompt": "x"})
        wrong_type = await client.call_tool("benjy_run", {"goal": "g", "allowExec": "yes"})
        no_folder = await client.call_tool("benjy_run", {"goal": "g", "workspace": str(tmp_path / "nope")})
        unknown_name = await client.call_tool("structure", {"prompt": "x", "schema": "contcat"})
        unknown_tool = await client.call_tool("deploy", {})
        with pytest.raises(MCPError) as caught:
            await client.read_resource("vance://schemas/nosuch")
    assert set(tools) == {"structure", "benjy_run"}
    assert tools["structure"].annotations.read_only_hint is True and tools["benjy_run"].annotations.read_only_hint is False
    assert tools["benjy_run"].input_schema["required"] == ["goal"] and "model" in tools["structure"].input_schema["properties"]
    # project -> user -> bundled: the user's schema and the bundled ones, each once
    assert {"ticket", "contact", "bug-report"} <= set(resources)
    assert str(resources["ticket"].uri) == "vance://schemas/ticket" and "A support ticket." in resources["ticket"].description
    assert resources["ticket"].mime_type == "application/schema+json"
    assert json.loads(read.contents[0].text) == {**INLINE, "description": "A support ticket."}
    assert json.loads(bundled.contents[0].text)["title"] == "contact"
    assert missing.is_error and "invalid arguments for structure" in _text(missing) and "'schema' is a required property" in _text(missing)
    assert wrong_type.is_error and "allowExec" in _text(wrong_type) and "boolean" in _text(wrong_type)
    assert no_folder.is_error and "is not an existing folder" in _text(no_folder)
    assert unknown_name.is_error and "contcat" in _text(unknown_name) and "contact" in _text(unknown_name)
    assert unknown_tool.is_error and "no tool 'deploy'" in _text(unknown_tool)
    assert "nosuch" in caught.value.message
    assert fake_openai.requests == []  # nothing reached the model
    assert json_lines(run_cli("ps", "--json").stdout) == []  # no run was created
    assert "Traceback" not in served.stderr


def test_structure_returns_what_vance_structure_json_prints(served, fake_openai, env):
    async def calls():
        async with served.client() as client:
            inline = await client.call_tool("structure", {"prompt": "Mike broke the build", "schema": INLINE})
            named = await client.call_tool(
                "structure", {"prompt": "Ada Lovelace, ada@example.org", "schema": "contact", "model": "openai/other-model"}
            )
            return inline, named

    fake_openai.enqueue(text=json.dumps({"result": {"name": "Mike"}, "_need": None}))
    fake_openai.enqueue(text=json.dumps({"result": {"name": "Ada Lovelace", "email": "ada@example.org"}, "_need": None}))
    inline, named = asyncio.run(calls())
    assert inline.is_error is False, _text(inline)
    served_result = json.loads(_text(inline))
    assert inline.structured_content == served_result
    # a registry name (inferred), and the model the caller chose
    payload = json.loads(_text(named))
    assert payload["status"] == "ok" and payload["schemaMode"] == "named" and payload["modeInferred"] is True
    assert payload["schemaOrigin"] == "registry:bundled" and payload["data"]["name"] == "Ada Lovelace"
    assert fake_openai.requests[1]["model"] == "other-model"

    fake_openai.enqueue(text=json.dumps({"result": {"name": "Mike"}, "_need": None}))
    cli = run_cli("structure", "Mike broke the build", "--schema", json.dumps(INLINE), "--json", env=env)
    assert cli.returncode == 0, cli.stderr
    assert served_result == json.loads(cli.stdout)  # the same object, usage and all
    assert served_result["status"] == "ok" and served_result["data"] == {"name": "Mike"}
    assert fake_openai.requests[0]["messages"] == fake_openai.requests[2]["messages"]  # the same request
    assert "Traceback" not in served.stderr


def test_benjy_run_reports_progress_and_a_cancelled_run_resumes_with_vance_benjy_resume(served, fake_openai, tmp_path, env):
    ws, other = tmp_path / "ws", tmp_path / "other"
    for folder in (ws, other):
        folder.mkdir()
        (folder / "check.py").write_text(CHECK_PY)
    brain = Brain(items=2)
    slow = threading.Event()
    interpreting = threading.Event()

    def reply(body):
        if slow.is_set() and stage_of(body.get("messages") or []) == "INTERPRET":
            interpreting.set()
            time.sleep(1.0)  # the cancel comes while the model thinks
        return brain.reply_body(body)

    fake_openai.responder = reply
    messages: list[tuple[float, str]] = []
    cancelled: list[str] = []

    async def progress(value, total, message):
        messages.append((value, message))

    async def on_cancelled(value, total, message):
        cancelled.append(message)

    async def session():
        async with served.client() as client:
            done = await client.call_tool(
                "benjy_run", {"goal": "write two item files", "workspace": str(ws), "check": CHECK}, progress_callback=progress
            )
            slow.set()
            call = asyncio.ensure_future(client.call_tool(
                "benjy_run", {"goal": "write two item files", "workspace": str(other), "check": CHECK}, progress_callback=on_cancelled
            ))
            for _ in range(200):
                if interpreting.is_set() and cancelled:
                    break
                await asyncio.sleep(0.05)
            assert cancelled and interpreting.is_set(), served.stderr
            call.cancel()  # the SDK sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await call
            pid = cancelled[0].split()[2]
            info: dict = {}
            for _ in range(200):  # the run reaches its safe point (the interpret call ends) and is saved
                info = json.loads(run_cli("benjy", "status", pid, "--json", env=env).stdout)
                if info["status"] == "SUSPENDED":
                    break
                await asyncio.sleep(0.05)
            # the server is still there for the next call
            return done, pid, info, {t.name for t in (await client.list_tools()).tools}

    result, pid, info, tools = asyncio.run(session())

    # the whole run: its report, and progress per item and per check
    assert result.is_error is False, _text(result)
    report = result.structured_content
    assert report["status"] == "DONE" and report["type"] == "report"
    assert _text(result).startswith("# Benjy report") and "#2 [done] write item2.txt" in _text(result)
    assert (ws / "item1.txt").read_text() == "item 1\n" and (ws / "item2.txt").read_text() == "item 2\n"
    texts = [m for _, m in messages]
    done_id = report["process_id"]
    assert texts[0].startswith(f"benjy run {done_id} in {ws}") and f"vance benjy resume {done_id}" in texts[0]
    assert "0/2 items done" in texts and "2/2 items done" in texts  # per item
    assert any(t.startswith("CHECK #1: passed") for t in texts) and any(t.startswith("CHECK #2: passed") for t in texts)
    values = [v for v, _ in messages]
    assert values == sorted(set(values))  # every notification's progress larger than the one before
    rows = {r["id"]: r for r in json_lines(run_cli("ps", "--json").stdout)}
    assert rows[done_id]["status"] == "DONE"  # the check ran as approved by the caller: nothing waited

    # the cancelled run: stopped at the safe point after the interpret call, not cut in the middle
    assert (info["status"], info["reason"]) == ("SUSPENDED", "stopped; resume with vance benjy resume")
    assert info["taskType"] == "coding" and tools == {"structure", "benjy_run"}
    assert f"continue it with: vance benjy resume {pid}" in cancelled[0]
    assert not (other / "item1.txt").exists()  # no worker ran
    slow.clear()
    r = run_cli("benjy", "resume", pid, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("# Benjy report") and (other / "item2.txt").read_text() == "item 2\n"
    assert "Traceback" not in served.stderr



def test_without_the_sdk_vance_mcp_serve_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)  # None in sys.modules makes `import mcp` fail
    r = run_cli("mcp", "serve")
    assert r.returncode == 1, r.stderr
    assert "needs the MCP SDK" in r.stderr and "vance-cli[mcp]" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_the_documented_block_for_another_agent_is_json_that_starts_this_server():
    section = doc_section("MCP servers: their tools in your recipes").split("**Vance as an MCP server.**", 1)[1]
    block = json.loads(section.split("```json\n", 1)[1].split("```", 1)[0])
    server = block["mcpServers"]["vance"]
    assert [server["command"], *server["args"]] == ["vance", "mcp", "serve"]


def test_a_cancel_that_finds_no_safe_point_cuts_the_call_and_the_run_stays_resumable(fake_openai, env, monkeypatch, tmp_path):
    # in process (the server's own object), with a short grace: the interpret call hangs, so no safe
    # point comes; the cancel then cuts the call as Ctrl+C does, and the file is saved SUSPENDED
    from vance_cli.cli.common import model_factory
    from vance_cli.config.context import load_context
    from vance_cli.mcp_server import server

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(server, "STOP_GRACE", 0.3)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    fake_openai.enqueue(text="{}", delay=30)
    said: list[str] = []

    async def progress(count, message):
        said.append(message)

    async def cancelled() -> float:
        vance = server.VanceMcp(*load_context(), model_factory)
        call = asyncio.ensure_future(vance.call("benjy_run", {"goal": "one file", "workspace": str(ws), "check": CHECK}, progress))
        for _ in range(200):
            if fake_openai.requests:
                break
            await asyncio.sleep(0.05)
        started = time.monotonic()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        return time.monotonic() - started

    took = asyncio.run(cancelled())
    assert took < 10  # the grace, not the model's 30 s
    pid = said[0].split()[2]
    info = json.loads(run_cli("benjy", "status", pid, "--json", env=env).stdout)
    assert (info["status"], info["reason"]) == ("SUSPENDED", "interrupted")
    assert said[-1].startswith(f"cancelled: run {pid} stopped (SUSPENDED); continue it with: vance benjy resume {pid}")
    fake_openai.responder = Brain(items=1).reply_body
    r = run_cli("benjy", "resume", pid, env=env)
    assert r.returncode == 0, r.stderr
    assert (ws / "item1.txt").is_file()
