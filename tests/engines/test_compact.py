"""Compaction (engines/compact.py): a chat that would not fit sends a summary and its last turns."""

from __future__ import annotations

import json

from tests.engines.harness import recipe, respond, run_engine
from vance_cli.llm.base import Capabilities
from vance_cli.llm.scripted import Script
from vance_cli.llm.wire import build_body
from vance_cli.messages import Message
from vance_cli.store.files import ProcessStore
from vance_cli.store.process import InboxItem, Process


def _long_chat(tmp_path, n_pairs: int, *, big_result: str | None = None) -> Process:
    snap = recipe(engine="arthur")
    p = Process(engine="arthur", recipe=snap, recipe_name="t", workspace=str(tmp_path / "ws"))
    p.engine_params["benjyState"] = {"counters": {"attempts": 3}}  # never compacted
    for i in range(n_pairs):
        p.history.append(Message(role="user", content=f"question {i}: what is in notes.md?"))
        p.history.append(Message(role="assistant", content=f"answer {i}: it lists item {i}", meta={"delivered": True}))
    if big_result is not None:
        p.history.append(Message(role="user", content="read big.txt"))
        p.history.append(Message(role="assistant", tool_calls=[{"id": "r1", "name": "file_read", "arguments": "{}"}]))
        p.history.append(Message(role="tool", tool_call_id="r1", name="file_read", content=big_result, meta={"ok": True}))
        p.history.append(Message(role="assistant", content="it is long", meta={"delivered": True}))
    p.inbox.append(InboxItem(content="and now?"))
    ProcessStore(tmp_path / "processes").create(p)
    return p


def test_a_10000_message_chat_resumes_and_answers_within_a_small_window(tmp_path):
    process = _long_chat(tmp_path, 5000)
    run = run_engine(
        tmp_path, Script(["The person asked 5000 questions about notes.md.", respond("within the window")], context_window=4000),
        process=process, store=ProcessStore(tmp_path / "processes"),
    )
    assert run.messages == ["within the window"]
    assert len(run.model.requests) == 2  # one summary call, one answer
    summary_req, answer_req = run.model.requests
    body = json.dumps(build_body(answer_req, "m", Capabilities()))
    summary_body = json.dumps(build_body(summary_req, "m", Capabilities()))
    # measured: the issue saw a 2.2 MB body; the window (4,000 tokens, 3 characters each) bounds it
    assert len(body.encode()) < 12_000, len(body)
    assert len(summary_body.encode()) < 12_000, len(summary_body)
    sent = [m.content for m in answer_req.messages]
    assert any("5000 questions" in (c or "") for c in sent)
    assert "question 4999: what is in notes.md?" in sent and "and now?" in sent  # the last turns verbatim
    reloaded = run.reloaded()
    assert len([m for m in reloaded.history if m.role == "user"]) == 5001  # nothing deleted
    summary = [m for m in reloaded.history if m.meta.get("kind") == "summary"]
    assert len(summary) == 1 and summary[0].meta["covers"] == 9998
    assert reloaded.engine_params["benjyState"] == {"counters": {"attempts": 3}}


def test_old_tool_results_are_shortened_before_whole_turns(tmp_path):
    process = _long_chat(tmp_path, 2, big_result="x" * 9000)
    run = run_engine(tmp_path, Script([respond("fits now")], context_window=4000), process=process,
                     store=ProcessStore(tmp_path / "processes"))
    assert run.messages == ["fits now"] and len(run.model.requests) == 1  # no summary call
    [tool] = [m for m in run.model.requests[0].messages if m.role == "tool"]
    assert len(tool.content) <= 400
    assert run.reloaded().history[6].content == "x" * 9000  # kept in full on disk


def test_a_file_without_summaries_is_sent_as_before(tmp_path):
    process = _long_chat(tmp_path, 3)
    run = run_engine(tmp_path, Script([respond("ok")]), process=process, store=ProcessStore(tmp_path / "processes"))
    assert [m.content for m in run.model.requests[0].messages[1:]] == [m.content for m in process.history[:7]]
