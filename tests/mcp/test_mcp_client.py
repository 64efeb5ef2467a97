"""The MCP client against a real server (tests/mcp/toy_server.py over stdio): tools, schema checks,
results, errors, and bounded time for a server that hangs or dies."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from vance_cli.config.mcp_servers import McpServer
from vance_cli.tools import mcp_client
from vance_cli.tools.base import ToolContext

TOY = str(Path(__file__).with_name("toy_server.py"))


def _server(tmp_path, timeout=10.0, trust_read_only=True, **kw):
    return McpServer(name="toy", origin="user", source=tmp_path / "config.toml", command=sys.executable,
                     args=(TOY,), cwd=str(tmp_path), timeout=timeout, trust_read_only=trust_read_only, **kw)


@pytest.fixture(autouse=True)
def _stop_servers():
    yield
    mcp_client.shutdown()


def test_tools_results_side_effects_and_bounded_failures(tmp_path):
    async def go():
        tools = {t.name: t for t in await mcp_client.tools_of(_server(tmp_path, timeout=6))}
        ctx = ToolContext(workspace=tmp_path)
        assert set(tools) >= {"mcp__toy__lookup", "mcp__toy__note", "mcp__toy__hang", "mcp__toy__crash"}
        assert not tools["mcp__toy__lookup"].side_effects and tools["mcp__toy__note"].side_effects
        r = await tools["mcp__toy__lookup"].invoke(json.dumps({"country": "peru"}), ctx)
        assert r.ok and r.content == "Lima"
        bad = await tools["mcp__toy__lookup"].invoke(json.dumps({"country": 3}), ctx)  # checked locally
        assert not bad.ok and "invalid arguments" in bad.content
        s = await tools["mcp__toy__stats"].invoke(json.dumps({"values": [1, 2]}), ctx)
        assert json.loads(s.content) == {"count": 2, "sum": 3}
        n = await tools["mcp__toy__note"].invoke(json.dumps({"text": "hello"}), ctx)
        assert n.ok and (tmp_path / "notes.txt").read_text() == "hello\n"
        started = time.monotonic()
        h = await tools["mcp__toy__hang"].invoke("{}", ctx)
        assert not h.ok and "did not answer" in h.content and time.monotonic() - started < 12
        c = await tools["mcp__toy__crash"].invoke("{}", ctx)
        assert not c.ok and "MCP server toy" in c.content
        # the server died: the next call starts it again (once) and is answered
        after = await tools["mcp__toy__lookup"].invoke(json.dumps({"country": "peru"}), ctx)
        assert after.ok and after.content == "Lima", after.content

    asyncio.run(go())


def test_a_server_that_cannot_start_is_unavailable(tmp_path):
    broken = McpServer(name="gone", origin="user", source=tmp_path, command="/nonexistent/cmd", timeout=3)

    async def go():
        with pytest.raises(mcp_client.McpUnavailable) as info:
            await mcp_client.tools_of(broken)
        assert "gone" in str(info.value)

    asyncio.run(go())


def test_a_slow_start_is_bounded_by_start_timeout_not_by_the_call_timeout(tmp_path):
    """A server that takes 2 s to start works with a 1 s call timeout (start_timeout is its own,
    default 30 s); with start_timeout 1 s it is unavailable, and says which bound it missed."""
    slow = {"env": (("TOY_START_DELAY", "2"),)}

    async def go():
        tools = {t.name: t for t in await mcp_client.tools_of(_server(tmp_path, timeout=1, **slow))}
        r = await tools["mcp__toy__lookup"].invoke(json.dumps({"country": "peru"}), ToolContext(workspace=tmp_path))
        assert r.ok and r.content == "Lima"
        mcp_client.shutdown()
        with pytest.raises(mcp_client.McpUnavailable) as info:
            await mcp_client.tools_of(_server(tmp_path, timeout=1, start_timeout=1, **slow))
        assert "did not start within 1 s (its start_timeout)" in str(info.value)

    asyncio.run(go())


def test_a_read_only_claim_counts_only_when_the_server_is_trusted_with_it(tmp_path):
    async def go(trust):
        tools = {t.name: t for t in await mcp_client.tools_of(_server(tmp_path, trust_read_only=trust))}
        return tools["mcp__toy__lookup"], tools["mcp__toy__note"]

    lookup, note = asyncio.run(go(False))
    assert lookup.claims_read_only and lookup.side_effects and lookup.needs_approval  # asks, at most once
    assert note.side_effects and not note.claims_read_only
    mcp_client.shutdown()
    lookup, note = asyncio.run(go(True))
    assert not lookup.side_effects and not lookup.needs_approval and lookup.ruled  # rules still decide it
    assert note.side_effects and note.needs_approval
