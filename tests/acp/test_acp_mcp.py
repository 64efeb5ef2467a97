"""An MCP tool's call in an ACP session asks the editor (session/request_permission), as a built-in
side effect does, and runs only once allowed (the review of issue 19: not shown by a test)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")
pytest.importorskip("mcp")

from acp import spawn_agent_process, text_block  # noqa: E402
from tests.acp.editor import EditorClient  # noqa: E402
from tests.acp.editor import initialize as _start  # noqa: E402
from tests.helpers import subprocess_env  # noqa: E402

TOY = str(Path(__file__).parents[1] / "mcp" / "toy_server.py")
RECIPE = "engine: ford\ntools:\n  allowed: [respond]\n  add: ['mcp:toy/*']\nsystemPrompt: use tools\n"


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_an_mcp_tool_call_asks_the_editor_first(answer, fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "mcpr.yaml").write_text(RECIPE)
    (vance_home / "config.toml").write_text(f'[mcp.servers.toy]\ncommand = "{sys.executable}"\nargs = ["{TOY}"]\ntimeout = 20\n')
    env = subprocess_env({"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url})
    fake_openai.enqueue(tool_calls=[("mcp__toy__note", {"text": "from the editor"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    client = EditorClient(answer=answer, fs=True)
    async with spawn_agent_process(client, sys.executable, "-m", "vance_cli", "acp", "--recipe", "mcpr",
                                   env=env, cwd=str(Path.cwd())) as (conn, _):
        await _start(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("note it")]), 90)
    assert reply.stop_reason == "end_turn"
    (sid, tool_call, options) = client.permission_requests[0]
    assert len(client.permission_requests) == 1 and sid == session.session_id
    assert "mcp__toy__note" in tool_call.title and tool_call.raw_input == {"text": "from the editor"}
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    if answer == "allow_once":
        assert Path("notes.txt").read_text() == "from the editor\n"
    else:
        assert not Path("notes.txt").exists()
        assert any("DENIED" in m["content"] for m in fake_openai.requests[-1]["messages"] if m["role"] == "tool")
