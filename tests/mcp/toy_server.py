"""A small MCP server the tests start over stdio (``python tests/mcp/toy_server.py``), built with the SDK.

Tools: ``lookup`` (read-only: answers from a table), ``note`` (a side effect: appends a line to the
file ``notes.txt`` in its working directory), ``hang`` (never answers), ``crash`` (the server dies
mid-call), ``stats`` (structured JSON output).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mcp.server.mcpserver import MCPServer
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


if __name__ == "__main__":
    server.run("stdio")
