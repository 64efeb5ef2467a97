"""A Benjy run started from an ACP session, over stdio with the SDK's client side (spawn_agent_process):
the person asks the session's chat hub (Arthur, `vance acp`'s recipe) in words, Arthur starts the
run with process_spawn, the editor is asked once (goal, recipe, the full check), and the run's todo
projection arrives as ACP plan updates and its journal as agent messages, in the same prompt turn,
until Arthur relays the report."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

pytest.importorskip("acp")

from acp import spawn_agent_process, text_block  # noqa: E402

from tests.acp.editor import EditorClient, initialize  # noqa: E402
from tests.cli.test_cli_delegation import arthur, own_hub_with_commands  # noqa: E402
from tests.engines.benjy_brain import Brain  # noqa: E402
from tests.helpers import json_lines, run_cli, subprocess_env  # noqa: E402

CHECK_PY = "import glob, sys\nsys.exit(0 if glob.glob('item*.txt') else 1)\n"
CHECK = f"{sys.executable} check.py"


async def test_a_benjy_run_from_a_session_shows_its_todos_as_the_plan_and_its_journal_as_messages(fake_openai, vance_home):
    own_hub_with_commands(vance_home)  # the person's hub may give a worker a check command
    brain = Brain(items=2)
    fake_openai.responder = lambda body: arthur(body) or brain.reply_body(body)
    Path("check.py").write_text(CHECK_PY)
    env = subprocess_env({"VANCE_MODEL": "openai/fake-model", "VANCE_API_BASE": fake_openai.url})
    client = EditorClient(answer="allow_once", fs=True)
    async with spawn_agent_process(client, sys.executable, "-m", "vance_cli", "acp", env=env, cwd=str(Path.cwd())) as (conn, _):
        await initialize(conn, client)
        session = await conn.new_session(cwd=str(Path.cwd()), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("write item1.txt and item2.txt, check with check.py")]), 120
        )
    assert reply.stop_reason == "end_turn"

    # asked once, in the editor: the run with its full check; its workers' calls are approved with it
    assert len(client.permission_requests) == 1
    _, tool_call, _ = client.permission_requests[0]
    assert tool_call.title.startswith("process_spawn") and CHECK in tool_call.title

    # the todo projection as the plan: all pending, then item by item to completed; at DONE the run
    # clears its projection, and the plan with it
    plans = [[(e.content, e.status) for e in u.entries] for _, u in client.updates if u.session_update == "plan"]
    assert plans[0] == [("write item1.txt", "pending"), ("write item2.txt", "pending")]
    assert [("write item1.txt", "in_progress"), ("write item2.txt", "pending")] in plans
    assert [("write item1.txt", "completed"), ("write item2.txt", "in_progress")] in plans
    assert plans[-2:] == [[("write item1.txt", "completed"), ("write item2.txt", "completed")], []]

    # the journal as agent messages (the checks among them), and Arthur's relay of the report
    text = client.message_text()
    assert "**CHECK #1:** passed (exit 0)\n\n" in text and "**CHECK #2:** passed (exit 0)\n\n" in text
    assert text.startswith("I started a Benjy run for that.\n\n**GOAL:** write item1.txt\n\n")
    assert "**Open:**" not in text  # the worklist line: the plan shows it
    assert "The run is back: [worker " in text and "#2 [done] write item2.txt" in text
    assert text.index("**CHECK #2:** passed") < text.index("The run is back:")  # live, before the report
    assert all(sid == session.session_id for sid, _ in client.updates)

    # the workers wrote through the editor's fs method; the run is the session's child, DONE
    assert sorted(Path(p).name for p, _ in client.writes) == ["item1.txt", "item2.txt"]
    rows = {r["engine"]: r for r in json_lines(run_cli("ps", "--json").stdout) if r["engine"] != "ford"}
    assert rows["arthur"]["id"] == session.session_id
    assert rows["benjy"]["parent"] == session.session_id and rows["benjy"]["status"] == "DONE"
