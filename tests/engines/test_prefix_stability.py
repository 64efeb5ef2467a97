"""The prompt prefix stays byte-identical across the calls of a turn (llama.cpp and hosted prompt
caches reuse only an identical prefix): system prompt, tool schemas and earlier messages."""

from __future__ import annotations

import json

from tests.engines.harness import call, recipe, respond, run_engine
from vance_cli.llm.base import Capabilities
from vance_cli.llm.wire import build_body


def _assert_prefix_stable(requests):
    bodies = [build_body(r, "m", Capabilities()) for r in requests]
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert json.dumps(before["tools"]) == json.dumps(after["tools"])
        sent = [json.dumps(m, sort_keys=False) for m in before["messages"]]
        assert [json.dumps(m) for m in after["messages"][: len(sent)]] == sent
        assert len(after["messages"]) > len(sent)


def test_the_prefix_is_byte_identical_across_a_turn_with_corrections_and_tool_calls(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("alpha\n")
    run = run_engine(
        tmp_path,
        ["plain text, no tool", {"tool_calls": [call("file_read", {"path": "notes.md"})]}, {"text": ""}, respond("alpha")],
        recipe_snapshot=recipe(engine="arthur"),
    )
    assert run.messages == ["alpha"] and len(run.model.requests) == 4
    _assert_prefix_stable(run.model.requests)


def test_the_prefix_stays_across_turns(tmp_path):
    from vance_cli.store.files import ProcessStore
    from vance_cli.store.process import InboxItem

    store = ProcessStore(tmp_path / "processes")
    first = run_engine(tmp_path, [respond("one")], store=store)
    process = first.reloaded()
    process.inbox.append(InboxItem(content="again"))
    second = run_engine(tmp_path, [respond("two")], process=process, store=store)
    _assert_prefix_stable([first.model.requests[0], second.model.requests[0]])
