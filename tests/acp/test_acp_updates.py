"""The event bus -> ACP session updates, in process (a Benjy run over stdio, started from a session:
tests/acp/test_acp_benjy.py): a Benjy run's todo projection is the plan, its journal lines are messages; the
respond message streams as the model writes it and the final message adds only what is missing."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

pytest.importorskip("acp")

from vance_cli.acp.agent import VanceAgent  # noqa: E402
from vance_cli.events import EventBus, JournalEvent, MessageDelta, MessageEvent, TodosUpdated  # noqa: E402


class Conn:
    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []

    async def session_update(self, session_id, update, **kw):
        self.sent.append((session_id, update))


async def _agent(engine: str = "benjy") -> tuple[VanceAgent, Conn, EventBus]:
    bus = EventBus()
    agent = VanceAgent(SimpleNamespace(bus=bus, approvals=None, stream=False), recipe="arthur")
    conn = Conn()
    agent.on_connect(conn)
    agent.sessions["p1"] = object()  # type: ignore[assignment]
    agent.engines["p1"] = engine
    agent._start_pump()
    return agent, conn, bus


async def test_benjy_todos_become_the_plan_and_its_journal_messages():
    agent, conn, bus = await _agent("benjy")
    bus.emit(TodosUpdated("p1", [{"id": "1", "text": "write the parser", "status": "done"},
                                 {"id": "2", "text": "test it", "status": "in_progress"},
                                 {"id": "3", "text": "ship", "status": "open"}]))
    bus.emit(JournalEvent("p1", "item 1 passed its check"))
    await agent._flush()
    plan, journal = (u for _, u in conn.sent)
    assert plan.session_update == "plan"
    assert [(e.content, e.status) for e in plan.entries] == [
        ("write the parser", "completed"), ("test it", "in_progress"), ("ship", "pending")]
    assert journal.session_update == "agent_message_chunk" and "item 1 passed its check" in journal.content.text
    agent._pump.cancel()


async def test_a_workers_journal_goes_to_the_running_session_as_messages():
    agent, conn, bus = await _agent("ford")
    agent.current = "p1"
    bus.emit(JournalEvent("child-7", "benjy: planned 3 items"))
    bus.emit(JournalEvent("p1", "a correction"))  # the chat's own notes are thoughts
    await agent._flush()
    assert [(sid, u.session_update) for sid, u in conn.sent] == [("p1", "agent_message_chunk"), ("p1", "agent_thought_chunk")]
    agent._pump.cancel()


async def test_the_respond_message_streams_and_the_final_message_adds_only_the_rest():
    agent, conn, bus = await _agent("ford")
    bus.emit(MessageDelta("p1", call=1, text="Hel", kind="respond"))
    bus.emit(MessageDelta("p1", call=1, text="Hello, wor", kind="respond"))
    bus.emit(MessageEvent("p1", "Hello, world"))
    await agent._flush()
    chunks = [u.content.text for _, u in conn.sent]
    assert chunks == ["Hel", "lo, wor", "ld"]
    await asyncio.sleep(0)
    agent._pump.cancel()
