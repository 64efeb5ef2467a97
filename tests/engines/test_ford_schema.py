"""Issue 18: tool calls by schema (tool_mode = schema | auto) for models that cannot call tools.

A turn sends no ``tools``; it asks under response_format for one JSON object that must be one of
the offered calls, and runs the reply exactly as the native call it names.
"""

from __future__ import annotations

import json

import pytest

from tests.engines.harness import recipe, run_engine
from vance_cli.engines.ford import NO_TOOL_CALL_CORRECTION, STARTED
from vance_cli.engines.ford_schema import FORMAT_KEY, resolve_tool_mode
from vance_cli.events import JournalEvent
from vance_cli.llm.base import Capabilities
from vance_cli.llm.capabilities import LOCAL_FAMILIES
from vance_cli.store.process import Status

LLAMA_SERVER = LOCAL_FAMILIES["llama-server"]
LLAMA_CPP_PYTHON = LOCAL_FAMILIES["llama-cpp-python"]
NOTES = "The meeting with Dana is on Thursday at 15:00 in room B12.\n"


def reply(tool: str, **arguments) -> str:
    """What a constrained model writes: the call object inside the plan's envelope."""
    return json.dumps({"result": {"tool": tool, "arguments": arguments}})


def journal(run) -> list[str]:
    return [e.text for e in run.events if isinstance(e, JournalEvent)]


def with_notes(tmp_path):
    (tmp_path / "ws").mkdir(exist_ok=True)
    (tmp_path / "ws" / "notes.md").write_text(NOTES)


def test_llama_server_turn_asks_for_one_call_by_json_schema_and_runs_it_natively(tmp_path):
    with_notes(tmp_path)
    replies = [reply("file_read", path="notes.md"), reply("respond", message="Thursday at 15:00, room B12.")]
    run = run_engine(tmp_path, replies, capabilities=LLAMA_SERVER)
    assert run.messages == ["Thursday at 15:00, room B12."]
    assert run.process.status == Status.BLOCKED
    # the history is the native one: a file_read call, its result, a respond call, delivered
    t = run.transcript()
    assert [e[0] for e in t] == ["user", "assistant", "tool", "assistant", "tool"]
    assert t[1] == ("assistant", ["file_read"]) and "room B12" in t[2][2] and t[4] == ("tool", "respond", "delivered")
    assert not any(m.meta.get("kind") == "correction" for m in run.process.history)
    first = run.model.requests[0]
    assert first.tools == []  # no tools parameter: the schema carries the calls
    fmt = first.response_format
    assert fmt["type"] == "json_schema"
    alternatives = fmt["json_schema"]["schema"]["properties"]["result"]["anyOf"]
    assert [a["properties"]["tool"] for a in alternatives] == [{"const": n} for n in ("respond", "file_read", "file_list")]
    from vance_cli.tools.respond import PARAMETERS

    assert alternatives[0]["properties"]["arguments"]["properties"].keys() == PARAMETERS["properties"].keys()
    # the model sees the tools in the system prompt, and the earlier call and result as text
    system = first.messages[0].content
    assert system.startswith("SYSTEM\n\n## Tools") and "`file_read`" in system and "`respond`" in system
    second = run.model.requests[1].messages
    assert (second[-2].role, json.loads(second[-2].content)) == ("assistant", {"result": {"tool": "file_read", "arguments": {"path": "notes.md"}}})
    assert second[-1].role == "user" and second[-1].content.startswith("Result of `file_read`:") and "room B12" in second[-1].content
    assert all(not m.tool_calls and m.role != "tool" for m in second)
    assert run.process.engine_params[FORMAT_KEY] == "json_schema"
    assert any("tool calls by schema" in line and "json_schema" in line for line in journal(run))


def test_llama_cpp_python_gets_json_object_and_the_schema_in_the_prompt(tmp_path):
    run = run_engine(tmp_path, [reply("respond", message="Hello! I am Arthur.")], capabilities=LLAMA_CPP_PYTHON)
    assert run.messages == ["Hello! I am Arthur."]
    request = run.model.requests[0]
    assert request.response_format == {"type": "json_object"}  # its server answers json_schema with HTTP 500
    assert request.tools == []
    system = request.messages[0].content
    assert '"message":{"type":"string"' in system  # the tools' argument schemas, in the prompt


@pytest.mark.parametrize(
    "caps,expected",
    [
        (Capabilities(), "native"),
        (Capabilities(tool_mode="schema"), "schema"),
        (Capabilities(tool_mode="auto"), "native"),
        (Capabilities(family="openai", tool_mode="auto"), "native"),
        (LLAMA_SERVER, "schema"),
        (LLAMA_CPP_PYTHON, "schema"),
        (LLAMA_SERVER.model_copy(update={"tool_mode": "native"}), "native"),
    ],
    ids=["default", "schema", "auto-other", "auto-openai", "llama-server", "llama-cpp-python", "llama-server-native"],
)
def test_tool_mode_resolves(caps, expected):
    assert resolve_tool_mode(caps) == expected


def test_native_mode_is_unchanged(tmp_path):
    run = run_engine(tmp_path, [{"tool_calls": [{"name": "respond", "arguments": {"message": "hi"}}]}], capabilities=Capabilities())
    request = run.model.requests[0]
    assert [t.name for t in request.tools] == ["respond", "file_read", "file_list"] and request.response_format is None
    assert FORMAT_KEY not in run.process.engine_params


def test_a_reply_that_is_no_call_gets_the_schema_correction_and_the_budget(tmp_path):
    run = run_engine(tmp_path, ["Hello! I am Arthur.", reply("respond", message="Hello! I am Arthur.")], capabilities=LLAMA_SERVER)
    assert run.messages == ["Hello! I am Arthur."]
    correction = run.process.history[2]
    assert correction.meta["kind"] == "correction" and correction.content != NO_TOOL_CALL_CORRECTION
    assert correction.content.startswith("VALIDATION CHECK: your previous response was not one tool call")
    assert 'the tool "respond"' in correction.content  # named, never written out as a call (an echo would be recovered)


def test_a_call_to_a_tool_not_offered_is_no_call(tmp_path):
    # json_object and prompt modes do not enforce the schema: the name is checked here
    run = run_engine(tmp_path, [reply("exec_run", command="rm -rf /"), reply("respond", message="ok")], capabilities=LLAMA_CPP_PYTHON)
    assert run.messages == ["ok"]
    assert run.transcript()[2][0] == "system"  # corrected, nothing ran
    assert not any(m.role == "tool" and m.name == "exec_run" for m in run.process.history)


def test_arguments_are_validated_like_a_native_call(tmp_path):
    run = run_engine(tmp_path, [reply("file_read", file="notes.md"), reply("respond", message="ok")], capabilities=LLAMA_CPP_PYTHON)
    result = run.transcript()[2]
    assert result[:2] == ("tool", "file_read") and result[2].startswith("ERROR")
    assert any("malformed tool call" in line for line in journal(run))


def test_the_respond_rules_hold_by_schema_too(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "big.txt").write_text("x" * 2000)
    replies = [reply("file_read", path="big.txt"), reply("respond", message="ok"), reply("respond", message="x" * 300)]
    run = run_engine(tmp_path, replies, capabilities=LLAMA_SERVER)
    assert run.messages == ["x" * 300]  # the data-relay correction fired once, as for native calls
    assert any("did not relay" in line for line in journal(run))


def test_a_side_effect_by_schema_is_recorded_as_started_before_it_runs(tmp_path):
    snap = recipe(tools={"allowed": ["respond", "file_write"]})
    run = run_engine(tmp_path, [reply("file_write", path="a.txt", content="alpha"), reply("respond", message="written")], capabilities=LLAMA_SERVER, recipe_snapshot=snap)
    written = run.process.history[1]
    assert [c.name for c in written.tool_calls] == ["file_write"]
    assert written.meta[STARTED] == [written.tool_calls[0].id]


def test_a_bare_call_without_the_envelope_is_read_too(tmp_path):
    run = run_engine(tmp_path, ['{"tool": "respond", "arguments": {"message": "hi"}}'], capabilities=LLAMA_CPP_PYTHON)
    assert run.messages == ["hi"] and len(run.model.requests) == 1


def test_the_prefix_is_byte_identical_across_a_schema_turn(tmp_path):
    from vance_cli.llm.wire import build_body

    with_notes(tmp_path)
    replies = ["not json", reply("file_read", path="notes.md"), reply("respond", message="Thursday")]
    run = run_engine(tmp_path, replies, capabilities=LLAMA_SERVER, recipe_snapshot=recipe(engine="arthur"))
    assert run.messages == ["Thursday"]
    bodies = [build_body(r, "m", LLAMA_SERVER) for r in run.model.requests]
    assert len(bodies) == 3 and all("tools" not in b for b in bodies)
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert json.dumps(before["response_format"]) == json.dumps(after["response_format"])
        sent = [json.dumps(m) for m in before["messages"]]
        assert [json.dumps(m) for m in after["messages"][: len(sent)]] == sent
        assert len(after["messages"]) > len(sent)
