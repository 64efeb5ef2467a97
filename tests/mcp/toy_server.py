"""A small MCP server the tests start, built with the SDK: over stdio (``python tests/mcp/toy_server.py``)
or over streamable HTTP on 127.0.0.1 (``python tests/mcp/toy_server.py --http PORT``: ``/mcp``).

Tools: ``lookup`` (read-only: answers from a table), ``note`` (a side effect: appends a line to the
file ``notes.txt`` in its working directory), ``hang`` (never answers), ``crash`` (the server dies
mid-call), ``stats`` (structured JSON output), ``header`` (read-only: an HTTP request header the
call came with, over HTTP).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("toy")
CAPITALS = {"france": "Paris", "peru": "Lima"}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def lookup(country: str) -> str:
    """The capital of a country."""
    if country.lower() not in CAPITALS:
        raise ValueError(f"no capital known for {country}")
    return CAPITALS[country.lower()]


@server.tool()
def note(text: str) -> str:
    """Append a line to notes.txt."""
    with Path("notes.txt").open("a", encoding="utf-8") as f:
        f.write(text + "\n")
    return f"noted: {text}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def hang() -> str:
    """Never answers."""
    time.sleep(3600)
    return "late"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def crash() -> str:
    """The server process dies during the call."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def stats(values: list[int]) -> dict:
    """Count and sum of some numbers."""
    return {"count": len(values), "sum": sum(values)}


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def header(name: str, ctx: Context) -> str:
    """An HTTP header of this call's request ("none" without one)."""
    return (ctx.headers or {}).get(name.lower(), "none")


if __name__ == "__main__":
    time.sleep(float(os.environ.get("TOY_START_DELAY", "0")))  # a slow start (a cold `npx`, a loaded machine)
    if sys.argv[1:2] == ["--http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
