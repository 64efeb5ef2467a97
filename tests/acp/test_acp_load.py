"""ACP ``session/load`` of ids that are not a chat `vance chat --resume` would continue: a Benjy run
(DONE or not), a prefix of a chat's id, nonsense (the review of issue 19)."""

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
from tests.engines.benjy_brain import Brain  # noqa: E402
from tests.helpers import json_lines, run_cli, subprocess_env  # noqa: E402

CHECK_PY = "import glob, sys\nsys.exit(0 if glob.glob('item*.txt') else 1)\n"


def _error(exc: BaseException) -> str:
    return json.dumps(exc.to_error_obj()) if hasattr(exc, "to_error_obj") else str(exc)


@pytest.fixture
def env(fake_openai):
    return {"VANCE_MODEL": "openai/some-model", "VANCE_API_BASE": fake_openai.url}


@pytest.fixture
def ids(fake_openai, env, tmp_path) -> tuple[str, str]:
    """(a DONE Benjy run, a chat), made through the CLI."""
    ws = tmp_path / "bws"
    ws.mkdir()
    (ws / "check.py").write_text(CHECK_PY)
    fake_openai.responder = Brain(items=1).reply_body
    assert run_cli("benjy", "run", "one file", "--workspace", str(ws), "--check", f"{sys.executable} check.py", env=env).returncode == 0
    fake_openai.responder = None
    fake_openai.enqueue(tool_calls=[("respond", {"message": "hi"})])
    assert run_cli("chat", "-p", "hello", env=env).returncode == 0
    rows = json_lines(run_cli("ps", "--json", "--all").stdout)
    (benjy,) = [r for r in rows if r["engine"] == "benjy"]
    (chat,) = [r for r in rows if r["engine"] != "benjy" and not r["parent"]]
    assert benjy["status"] == "DONE"
    return benjy["id"], chat["id"]


def test_vance_chat_resume_refuses_a_benjy_run(ids, env):
    refused = run_cli("chat", "--resume", ids[0], "-p", "hello", env=env)
    assert refused.returncode == 2 and "Benjy run" in refused.stderr and f"vance benjy resume {ids[0]}" in refused.stderr, refused.stderr


async def test_a_benjy_run_or_a_prefix_does_not_load_as_a_session_and_a_chat_does(fake_openai, env, ids, vance_home):
    benjy_id, chat_id = ids
    client = EditorClient()
    outcome: dict[str, str] = {}
    async with spawn_agent_process(client, sys.executable, "-m", "vance_cli", "acp", env=subprocess_env(env),
                                   cwd=str(Path.cwd())) as (conn, proc):
        await _start(conn, client)
        for sid in ["../../etc/passwd", "", benjy_id, benjy_id[:10], chat_id[:12]]:
            try:
                await conn.load_session(cwd=str(Path.cwd()), session_id=sid, mcp_servers=[])
                outcome[sid] = "loaded"
            except Exception as exc:  # noqa: BLE001 - a JSON-RPC error reply
                outcome[sid] = _error(exc)
        await conn.load_session(cwd=str(Path.cwd()), session_id=chat_id, mcp_servers=[])
        fake_openai.enqueue(tool_calls=[("respond", {"message": "again"})])
        reply = await asyncio.wait_for(conn.prompt(session_id=chat_id, prompt=[text_block("more")]), 60)
        alive = proc.returncode is None
    assert alive and reply.stop_reason == "end_turn"
    for sid in ("../../etc/passwd", ""):
        assert outcome[sid] != "loaded", sid
    # loaded, prompted and driven from DONE to BLOCKED before; refused as vance chat --resume refuses it
    assert "Benjy run" in outcome[benjy_id] and f"vance benjy resume {benjy_id}" in outcome[benjy_id], outcome[benjy_id]
    assert outcome[benjy_id[:10]] != "loaded"
    # a prefix loaded before, registered under the full id: the client's next prompt got "unknown session"
    assert outcome[chat_id[:12]] != "loaded" and chat_id in outcome[chat_id[:12]], outcome[chat_id[:12]]
    assert json.loads((vance_home / "processes" / f"{benjy_id}.json").read_text())["status"] == "DONE"


async def test_a_new_session_needs_an_absolute_existing_folder(fake_openai, env, tmp_path):
    client = EditorClient()
    outcome: dict[str, str] = {}
    async with spawn_agent_process(client, sys.executable, "-m", "vance_cli", "acp", env=subprocess_env(env),
                                   cwd=str(Path.cwd())) as (conn, _):
        await _start(conn, client)
        for cwd in ["relative/dir", str(tmp_path / "nonexistent"), str(tmp_path)]:
            try:
                outcome[cwd] = (await conn.new_session(cwd=cwd, mcp_servers=[])).session_id
            except Exception as exc:  # noqa: BLE001 - a JSON-RPC error reply
                outcome[cwd] = "refused: " + _error(exc)
    assert outcome["relative/dir"].startswith("refused") and "absolute" in outcome["relative/dir"]
    assert outcome[str(tmp_path / "nonexistent")].startswith("refused") and "not an existing folder" in outcome[str(tmp_path / "nonexistent")]
    assert not outcome[str(tmp_path)].startswith("refused")
