"""`vance acp` driven over stdio by the ACP SDK's own client side (spawn_agent_process), against the
fake OpenAI server: initialize, a new session, a prompt whose tool call asks the editor for
permission and writes through the editor's fs method, a cancel mid-turn (SUSPENDED, resumable),
and the same session loaded again by a second `vance acp`."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402
from tests.acp.editor import EditorClient  # noqa: E402
from tests.acp.editor import initialize as _start  # noqa: E402
from tests.helpers import json_lines, run_cli, subprocess_env  # noqa: E402

RUNNER = "engine: ford\ntools:\n  allowed: [respond, file_read, file_list, file_write, exec_run]\nsystemPrompt: do things\n"


@pytest.fixture
def env(fake_openai, vance_home):
    (vance_home / "recipes").mkdir()
    (vance_home / "recipes" / "runner.yaml").write_text(RUNNER)
    return subprocess_env({"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url})


def _agent(client: EditorClient, env: dict, *args: str):
    return spawn_agent_process(client, sys.executable, "-m", "vance_cli", "acp", "--recipe", "runner", *args,
                               env=env, cwd=str(Path.cwd()))


def _status(pid: str) -> str:
    rows = {r["id"]: r for r in json_lines(run_cli("ps", "--json").stdout)}
    return rows[pid]["status"]


def _tool_results(server) -> list[str]:
    return [m["content"] for r in server.requests for m in r["messages"] if m["role"] == "tool"]


async def test_a_whole_session_tool_call_permission_write_through_the_editor(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("file_write", {"path": "app.py", "content": "print('hi')\n"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "wrote app.py for you"})])
    client = EditorClient(answer="allow_once", fs=True)
    async with _agent(client, env) as (conn, _proc):
        await _start(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("write app.py")]), 60)
    assert reply.stop_reason == "end_turn"
    # the approval was asked of the editor, naming the call, with the options of the console's dialog
    assert len(client.permission_requests) == 1
    sid, tool_call, options = client.permission_requests[0]
    assert sid == session.session_id
    assert "file_write" in tool_call.title and "app.py" in tool_call.title
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    # the write went through the editor's fs method (the client wrote the file)
    assert client.writes == [(str(Path.cwd() / "app.py"), "print('hi')\n")]
    assert Path("app.py").read_text() == "print('hi')\n"
    # the tool call shows with its status, start to finish; the respond message streams as chunks
    call_id = tool_call.tool_call_id
    statuses = client.tool_statuses(call_id)
    assert statuses[0] == "pending" and statuses[-1] == "completed" and "in_progress" in statuses
    assert client.message_text() == "wrote app.py for you"
    assert "agent_message_chunk" in client.kinds()
    assert "created app.py" in _tool_results(fake_openai)[0]


async def test_a_rejected_call_is_not_run_and_the_model_is_told(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("file_write", {"path": "app.py", "content": "x\n"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "ok, not writing"})])
    client = EditorClient(answer="reject_once", fs=True)
    async with _agent(client, env) as (conn, _proc):
        await _start(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("write")]), 60)
    assert reply.stop_reason == "end_turn"
    assert not Path("app.py").exists() and client.writes == []
    call_id = client.permission_requests[0][1].tool_call_id
    assert client.tool_statuses(call_id)[-1] == "failed"
    assert "rejected in the editor" in _tool_results(fake_openai)[0]
    assert client.message_text() == "ok, not writing"


async def test_without_the_fs_capability_the_workspace_tool_writes(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("file_write", {"path": "app.py", "content": "local\n"})])
    fake_openai.enqueue(tool_calls=[("respond", {"message": "done"})])
    client = EditorClient(answer="allow_once", fs=False)
    async with _agent(client, env) as (conn, _proc):
        await _start(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        reply = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("write")]), 60)
    assert reply.stop_reason == "end_turn"
    assert client.writes == []
    assert Path("app.py").read_text() == "local\n"


async def test_cancel_mid_turn_suspends_and_the_session_loads_and_goes_on(fake_openai, env):
    fake_openai.enqueue(tool_calls=[("respond", {"message": "too late"})], delay=8)  # the model hangs
    client = EditorClient()
    async with _agent(client, env) as (conn, _proc):
        await _start(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("first question")]))
        for _ in range(200):  # until the model call is under way
            if fake_openai.requests:
                break
            await asyncio.sleep(0.05)
        assert fake_openai.requests, "the turn never called the model"
        await conn.cancel(session_id=sid)
        reply = await asyncio.wait_for(turn, 30)
    assert reply.stop_reason == "cancelled"
    assert _status(sid) == "SUSPENDED"
    assert "too late" not in client.message_text()

    # a second `vance acp` (the editor restarted) loads the session: the history is replayed,
    # and the next prompt goes on in the same process
    again = EditorClient()
    async with _agent(again, env) as (conn, _proc):
        await _start(conn, again)
        await conn.load_session(cwd=str(Path.cwd()), session_id=sid, mcp_servers=[])
        replayed = [u.content.text for _, u in again.updates if u.session_update == "user_message_chunk"]
        assert replayed == ["first question"]
        reply = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("second question")]), 60)
    assert reply.stop_reason == "end_turn"
    assert again.message_text().startswith("echo:")
    last = fake_openai.requests[-1]["messages"]
    users = [m["content"] for m in last if m["role"] == "user"]
    assert any("first question" in str(u) for u in users) and any("second question" in str(u) for u in users)
    assert _status(sid) != "SUSPENDED"


async def test_loading_an_unknown_session_is_a_clear_error(fake_openai, env):
    client = EditorClient()
    async with _agent(client, env) as (conn, _proc):
        await _start(conn, client)
        with pytest.raises(acp.RequestError) as caught:
            await conn.load_session(cwd=str(Path.cwd()), session_id="20260101-000000-nosuch", mcp_servers=[])
    assert "20260101-000000-nosuch" in json.dumps(caught.value.to_error_obj())
