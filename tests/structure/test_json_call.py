"""call_for_json: the content-stage loop shared by StructureService and Benjy."""

from __future__ import annotations

import json

import pytest

from tests.structure.conftest import ANTHROPIC, OTHER
from vance_cli.errors import TransportError
from vance_cli.llm.base import Completion
from vance_cli.llm.output.json_call import call_for_json, format_rejected, parse_reply
from vance_cli.messages import Message, ToolCall, Usage
from vance_cli.schema.reasons import REASON_FOOTER

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "note": {"type": "string"},
    },
    "required": ["name", "priority"],
    "additionalProperties": False,
}
MESSAGES = [Message(role="system", content="Extract the task."), Message(role="user", content="Fix the build, priority 2")]


async def test_valid_first_reply_is_ok_in_one_iteration(scripted):
    model = scripted({"name": "fix build", "priority": 2, "note": None})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA)
    assert out.status == "ok"
    assert out.data == {"name": "fix build", "priority": 2}  # the injected null is gone
    assert out.iterations == 1
    assert out.usage.calls == 1 and out.usage.prompt_tokens == 10
    req = model.requests[0]
    assert req.response_format["type"] == "json_schema" and req.response_format["json_schema"]["strict"] is True
    assert req.tools == []
    assert out.output_mode == "json_schema:strict"


async def test_invalid_reply_gets_the_reason_and_keeps_the_previous_output(scripted):
    bad = {"name": "fix build", "priority": 7, "note": None}
    model = scripted(bad, {"name": "fix build", "priority": 5, "note": None})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, max_loops=3)
    assert out.status == "ok" and out.data["priority"] == 5 and out.iterations == 2
    second = model.requests[1].messages
    assert second[-2].role == "assistant" and json.loads(second[-2].content) == bad
    assert second[-1].role == "user"
    assert second[-1].content == (
        "The previous output did not conform to the schema:\n- /priority: value must be ≤ 5 (was 7)\n\n" + REASON_FOOTER
    )
    assert second[-1].meta == {"kind": "correction"}
    # one response_format per loop
    assert all(r.response_format is not None for r in model.requests)
    assert out.usage.calls == 2 and out.usage.completion_tokens == 10
    assert out.usage.cost == pytest.approx(0.002)


async def test_max_loops_exceeded_is_stale_with_the_last_errors(scripted):
    model = scripted({"name": "x", "priority": 9}, {"name": "x", "priority": 0}, {"priority": 3})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, max_loops=3)
    assert out.status == "stale"
    assert out.errors == ["/name: required property is missing"]
    assert out.iterations == 3 and len(model.requests) == 3
    assert out.messages[-1].role == "assistant"  # transcript ends with the last reply


async def test_need_is_detected_before_validation(scripted):
    model = scripted({"result": None, "_need": "the priority is not in the input"})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, allow_need=True)
    assert out.status == "need-more-input"
    assert out.need == "the priority is not in the input"
    assert out.iterations == 1
    system = [m.content for m in model.requests[0].messages if m.role == "system"]
    assert any("If — and only if — the input does not contain enough information" in s for s in system)
    env = model.requests[0].response_format["json_schema"]["schema"]
    assert set(env["properties"]) == {"result", "_need"}


async def test_bare_need_object_counts_too(scripted):
    model = scripted({"_need": "no name given"}, caps=OTHER)
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, allow_need=True)
    assert out.status == "need-more-input" and out.need == "no name given"


async def test_need_is_ignored_when_not_allowed(scripted):
    model = scripted({"_need": "x"}, {"name": "a", "priority": 1, "note": None})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, allow_need=False)
    assert out.status == "ok" and out.iterations == 2


async def test_null_need_with_result_is_ok(scripted):
    model = scripted({"result": {"name": "a", "priority": 1, "note": None}, "_need": None})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA, allow_need=True)
    assert out.status == "ok" and out.data == {"name": "a", "priority": 1}


async def test_rejected_response_format_falls_back_and_is_recorded(scripted):
    rejected = TransportError("openai/x: HTTP 400: Invalid schema for response_format 'output'", status=400, retryable=False)
    rejected2 = TransportError("HTTP 400: response_format json_object is not supported", status=400, retryable=False)
    model = scripted(rejected, rejected2, {"name": "a", "priority": 1})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA)
    assert out.status == "ok" and out.iterations == 1
    assert [r.response_format for r in model.requests][1:] == [{"type": "json_object"}, None]
    assert len(out.format_fallbacks) == 2
    assert out.format_fallbacks[0].startswith("json_schema:strict → json_object: rejected by the provider")
    assert out.format_fallbacks[1].startswith("json_object → prompt")
    assert out.output_mode == "prompt"
    # in prompt mode the exact schema travels in the system prompt
    system = " ".join(m.content for m in model.requests[2].messages if m.role == "system")
    assert json.dumps(SCHEMA, ensure_ascii=False) in system
    assert out.schema_downgrades == ["(schema): not enforced by the provider (prompt); checked locally"]


async def test_other_transport_errors_propagate(scripted):
    model = scripted(TransportError("HTTP 503 after 4 attempts", status=503, retryable=True))
    with pytest.raises(TransportError):
        await call_for_json(model, messages=MESSAGES, schema=SCHEMA)


async def test_a_400_about_something_else_is_not_a_format_rejection():
    assert not format_rejected(TransportError("HTTP 400: context length exceeded", status=400, retryable=False))
    assert not format_rejected(TransportError("HTTP 500: schema", status=500, retryable=True))
    assert format_rejected(TransportError("HTTP 400: 'response_format' unsupported", status=400, retryable=False))


async def test_non_json_reply_steps_down_and_asks_again(scripted):
    model = scripted("Sure! The task is fix build.", {"name": "a", "priority": 1})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA)
    assert out.status == "ok" and out.iterations == 2
    assert out.format_fallbacks == ["json_schema:strict → json_object: the reply was not JSON"]
    correction = model.requests[1].messages[-1]
    assert correction.role == "user" and correction.content.startswith("The previous output was not valid JSON:")


async def test_empty_reply_is_corrected_without_stepping_down(scripted):
    model = scripted("", {"name": "a", "priority": 1, "note": None})
    out = await call_for_json(model, messages=MESSAGES, schema=SCHEMA)
    assert out.status == "ok" and out.format_fallbacks == []
    assert "the reply was empty" in model.requests[1].messages[-1].content


async def test_code_fences_and_tool_call_replies_are_tolerated(scripted):
    fenced = '```json\n{"name": "a", "priority": 1}\n```'
    tool = Completion(tool_calls=[ToolCall(id="1", name="json_tool_call", arguments='{"name": "b", "priority": 2}')], usage=Usage(calls=1))
    model = scripted(fenced, tool, caps=ANTHROPIC)
    assert (await call_for_json(model, messages=MESSAGES, schema=SCHEMA)).data == {"name": "a", "priority": 1}
    assert (await call_for_json(model, messages=MESSAGES, schema=SCHEMA)).data == {"name": "b", "priority": 2}


async def test_extra_check_errors_are_fed_back(scripted):
    model = scripted({"name": "a", "priority": 1, "note": None}, {"name": "b", "priority": 1, "note": None})
    out = await call_for_json(
        model,
        messages=MESSAGES,
        schema=SCHEMA,
        extra_check=lambda d: [] if d["name"] == "b" else ["/name: must be b (was \"a\")"],
    )
    assert out.status == "ok" and out.data["name"] == "b"
    assert '- /name: must be b (was "a")' in model.requests[1].messages[-1].content


async def test_caller_messages_are_not_mutated(scripted):
    messages = list(MESSAGES)
    model = scripted({"name": "a", "priority": 9}, {"name": "a", "priority": 1, "note": None})
    await call_for_json(model, messages=messages, schema=SCHEMA)
    assert messages == MESSAGES and len(messages) == 2


async def test_non_object_schema_round_trips_through_the_envelope(scripted):
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 1}
    model = scripted({"result": [1, 2]})
    out = await call_for_json(model, messages=MESSAGES, schema=schema)
    assert out.status == "ok" and out.data == [1, 2]


def test_parse_reply_reports_the_problem():
    assert parse_reply('{"a": 1}') == ({"a": 1}, None)
    assert parse_reply('Here: {"a": 1} done') == ({"a": 1}, None)
    value, problem = parse_reply("{nope")
    assert value is None and "line 1" in problem
