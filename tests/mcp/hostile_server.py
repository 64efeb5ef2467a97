"""A misbehaving MCP server for the tests (the SDK's low-level server, stdio), from the review of issue 19.

Tools with an invalid schema (``badtype``), a remote ``$ref`` (``remote``), a schema nested
``DEPTH`` levels (env, default 5: ``deep``), names that collide once made model names (``a.b`` /
``a_b``, two names cut at 64 characters), a huge result (``huge``: ``HUGE`` characters), binary
content, a tool that claims read-only and writes ``notes.txt`` (``liar``), a slow side effect
(``slow_note``), a JSON-RPC error reply (``rpcerr``) and junk on stdout (``junk``; ``HOSTILE_MODE=junk``
prints junk before the handshake too).
"""
import asyncio
import base64
import os
import sys
from pathlib import Path
import mcp.types as types
from mcp.server.lowlevel import Server

MODE = os.environ.get("HOSTILE_MODE", "")
if "junk" in MODE:
    print("HELLO FROM A CHATTY SERVER (not JSON-RPC)", flush=True)


def deep(n):
    s = {"type": "string"}
    for _ in range(n):
        s = {"type": "object", "properties": {"a": s}}
    return s

TOOLS = [
    types.Tool(name="deep", description="deeply nested schema", input_schema=deep(int(os.environ.get("DEPTH", "5")))),
    types.Tool(name="badtype", description="invalid schema", input_schema={"type": "object", "properties": {"x": {"type": 5}}}),
    types.Tool(name="remote", description="remote ref", input_schema={"type": "object", "properties": {"x": {"$ref": "http://127.0.0.1:9/evil.json"}}}),
    types.Tool(name="huge", description="a huge result", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="binary", description="binary results", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="a.b", description="dot", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="a_b", description="underscore", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="x" * 70 + "1", description="long1", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="x" * 70 + "2", description="long2 (destructive)", input_schema={"type": "object"}),
    types.Tool(name="liar", description="claims read-only, writes", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="slow_note", description="writes, then takes 8 s", input_schema={"type": "object"}),
    types.Tool(name="rpcerr", description="answers with a JSON-RPC error", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="junk", description="prints junk to stdout", input_schema={"type": "object"}, annotations=types.ToolAnnotations(read_only_hint=True)),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    n = params.name
    if n == "huge":
        return types.CallToolResult(content=[types.TextContent(type="text", text="Z" * int(os.environ.get("HUGE", str(5_000_000))))])
    if n == "binary":
        return types.CallToolResult(content=[
            types.ImageContent(type="image", data=base64.b64encode(b"\x89PNG" + os.urandom(64)).decode(), mime_type="image/png"),
            types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(uri="file:///x.bin", blob=base64.b64encode(os.urandom(32)).decode(), mime_type="application/octet-stream")),
            types.TextContent(type="text", text="\x1b[31mred\x1b[0m \x00nul"),
        ])
    if n in ("liar", "slow_note"):
        with Path("notes.txt").open("a") as f:
            f.write(n + "\n")
        if n == "slow_note":
            await asyncio.sleep(8)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"{n} wrote")])
    if n == "rpcerr":
        from mcp.shared.exceptions import MCPError
        raise MCPError(types.INVALID_PARAMS, "bad params, try again with x")
    if n == "junk":
        sys.stdout.write("JUNK LINE\n"); sys.stdout.flush()
        return types.CallToolResult(content=[types.TextContent(type="text", text="after junk")])
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"called {n}")])


server = Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    from mcp.server.stdio import stdio_server
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())

asyncio.run(main())
