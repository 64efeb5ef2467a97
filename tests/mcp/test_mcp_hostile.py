"""The MCP client against a misbehaving server (tests/mcp/hostile_server.py) and tool schemas no
validator can use: nothing a server sends crashes a turn (the review of issue 19)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import vance
from vance_cli.config.mcp_servers import McpServer
from vance_cli.tools import mcp_client
from vance_cli.tools.base import Tool, ToolContext, ToolResult

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))


def hostile(tmp_path, env=(), timeout=20.0, name="h", **kw) -> McpServer:
    return McpServer(name=name, origin="user", source=tmp_path / "config.toml", command=sys.executable,
                     args=(HOSTILE,), cwd=str(tmp_path), timeout=timeout, env=tuple(sorted(dict(env).items())), **kw)


@pytest.fixture(autouse=True)
def _stop_servers():
    yield
    mcp_client.shutdown()


async def _ran(args, ctx) -> ToolResult:
    return ToolResult("ran")


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"x": {"type": 5}}},  # not a schema: the validator trips on it
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},  # a $ref that leads nowhere
        {"type": "object", "properties": {"x": {"$ref": "urn:nowhere"}}},
    ],
)
def test_a_tool_whose_schema_no_validator_can_use_gives_an_error_result(schema, tmp_path):
    tool = Tool(name="mcp__h__bad", description="", parameters=schema, run=_ran)
    r = asyncio.run(tool.invoke(json.dumps({"x": 1}), ToolContext(workspace=tmp_path)))  # never an exception
    assert not r.ok and r.content.startswith("ERROR:") and "mcp__h__bad" in r.content and "schema" in r.content
    assert r.content != "ran"


def test_a_server_tool_with_a_bad_schema_is_left_out_with_a_warning(tmp_path):
    async def go():
        warnings: list[str] = []
        tools = {t.name: t for t in await mcp_client.tools_of(hostile(tmp_path), warnings=warnings)}
        return tools, warnings

    tools, warnings = asyncio.run(go())
    assert "mcp__h__badtype" not in tools and "mcp__h__remote" not in tools
    assert any("mcp:h/badtype" in w and "left out" in w for w in warnings), warnings
    assert any("mcp:h/remote" in w and "left out" in w for w in warnings), warnings
    assert "mcp__h__deep" in tools and "mcp__h__liar" in tools  # the good ones stay

    async def call():  # the reviewer's call of each: an answer, never an exception
        return await tools["mcp__h__deep"].invoke(json.dumps({"a": 1}), ToolContext(workspace=tmp_path))

    r = asyncio.run(call())
    assert not r.ok and "invalid arguments" in r.content


def test_a_remote_ref_in_a_tool_schema_is_never_fetched(tmp_path):
    from http.server import BaseHTTPRequestHandler, HTTPServer
    import threading

    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"type": "integer"}')

        def log_message(self, *args):
            pass

    srv = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        remote = f"http://127.0.0.1:{srv.server_port}/leak?who=vance"
        tool = Tool(name="mcp__h__remote", description="", run=_ran,
                    parameters={"type": "object", "properties": {"x": {"$ref": remote}}})
        r = asyncio.run(tool.invoke(json.dumps({"x": "s"}), ToolContext(workspace=tmp_path)))
    finally:
        srv.shutdown()
        srv.server_close()
    assert hits == []  # jsonschema's default registry fetched it: GET /leak?who=vance
    assert not r.ok and r.content != "ran"


def test_a_json_rpc_error_is_a_tool_error_and_the_server_stays_up(tmp_path):
    async def go():
        tools = {t.name: t for t in await mcp_client.tools_of(hostile(tmp_path))}
        ctx = ToolContext(workspace=tmp_path)
        err = await tools["mcp__h__rpcerr"].invoke("{}", ctx)
        after = await tools["mcp__h__binary"].invoke("{}", ctx)
        again = await tools["mcp__h__rpcerr"].invoke("{}", ctx)
        return err, after, again

    err, after, again = asyncio.run(go())
    assert not err.ok and "bad params, try again with x" in err.content
    assert after.ok and "red" in after.content, after.content  # not "failed during rpcerr"
    assert not again.ok and "bad params" in again.content


def test_tool_names_that_collide_as_model_names_are_left_out_with_a_warning_naming_both(tmp_path):
    async def go():
        warnings: list[str] = []
        tools = await mcp_client.tools_of(hostile(tmp_path), warnings=warnings)
        return [t.name for t in tools], warnings

    names, warnings = asyncio.run(go())
    assert not {n for n in names if names.count(n) > 1}  # the registry kept the last one, silently
    assert "mcp__h__a_b" in names  # one of the two stays: the first by its server name
    (dot,) = [w for w in warnings if "a.b" in w]
    assert "mcp:h/a_b" in dot and "mcp__h__a_b" in dot and "left out" in dot
    long1, long2 = "x" * 70 + "1", "x" * 70 + "2"
    (cut,) = [w for w in warnings if long2 in w]
    assert cut.startswith(f"mcp:h/{long2} left out") and f"mcp:h/{long1}" in cut  # the read-only one stays


def test_two_servers_whose_tools_share_a_model_name_give_one_tool_and_a_warning():
    from vance_cli.tools.registry import ToolRegistry

    def tool(description):
        return Tool(name="mcp__a__b__c", description=description, parameters={"type": "object"}, run=_ran)

    first, second = tool("c of server a__b"), tool("b__c of server a")

    async def provider(name):
        return ([first] if name == "mcp:a__b/*" else [second]), None

    reg = ToolRegistry()
    reg.mcp = provider
    tools, warnings = asyncio.run(reg.pool(["mcp:a__b/*", "mcp:a/*"]))
    assert tools["mcp__a__b__c"] is first
    assert warnings == ["mcp:a/*: mcp__a__b__c left out: mcp:a__b/* has a tool of that name"]


def test_a_schema_too_deep_for_the_sdk_to_read_fails_the_start_at_once(tmp_path):
    started = time.monotonic()

    async def go():
        return await mcp_client.tools_of(hostile(tmp_path, env={"DEPTH": "120"}, timeout=30))

    with pytest.raises(mcp_client.McpUnavailable) as info:
        asyncio.run(go())
    assert time.monotonic() - started < 20  # it waited the whole timeout before
    assert "could not read" in str(info.value) and "recursion" in str(info.value), info.value


def test_a_server_that_never_answers_leaves_no_stray_future_exception(vance_home):
    (vance_home / "config.toml").write_text(
        f'[mcp.servers.mute]\ncommand = "{sys.executable}"\nargs = ["-c", "import time; time.sleep(60)"]\nstart_timeout = 2\n'
    )
    r = vance("mcp", "list", env={"VANCE_HOME": str(vance_home)})
    assert r.returncode == 0 and "did not start within 2 s" in r.stdout, r.stdout + r.stderr
    assert "Future exception was never retrieved" not in r.stderr and "Traceback" not in r.stderr, r.stderr
