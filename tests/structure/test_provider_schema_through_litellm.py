"""The provider schema as litellm sends it (issue 15: "the schema sent to a provider").

The suite and corpus tests judge the plan Vance hands to its client. For Anthropic and Gemini the
client is litellm, which maps ``response_format`` to the provider's own field; what arrives at the
(fake) provider must still be the plan: every ``$ref`` resolving inside it, the same values.
Found by the end-to-end runs of issue 15 (test_corpus_structure_cli.py's approach over the native
routes of tests/fakeserver.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakeserver import FakeOpenAIServer
from tests.structure.conftest import ANTHROPIC, GEMINI
from tests.structure.suite_driver import _refs_resolve
from vance_cli.llm.base import Capabilities, ChatRequest
from vance_cli.llm.output.json_call import call_for_json
from vance_cli.llm.output.plan import build_plan
from vance_cli.messages import Message

# A tree whose recursion points at the root: the plan keeps "$ref": "#" (allow_need=False, Benjy's
# controller calls; the envelope of vance structure moves the root into $defs).
TREE = {"type": "object", "properties": {"name": {"type": "string"}, "child": {"$ref": "#"}}, "required": ["name"]}
ANSWER = {"name": "a", "child": {"name": "b"}}


def sent_schema(body: dict[str, Any]) -> Any:
    """The response schema of a native Anthropic or Gemini request body."""
    if "generationConfig" in body:
        return body["generationConfig"].get("response_json_schema")
    if "output_format" in body:
        return body["output_format"]["schema"]
    return next(t["input_schema"] for t in body.get("tools", []) if t["name"] == "json_tool_call")


async def _call(model: str, caps: Capabilities, schema: Any, answer: Any) -> tuple[Any, Any]:
    from vance_cli.llm.litellm_model import LiteLLMModel
    from vance_cli.llm.profile import build_profile

    with FakeOpenAIServer() as server:
        server.responder = lambda body: (
            {"tool_calls": [("json_tool_call", answer)]} if body.get("tools") else {"text": json.dumps(answer)}
        )
        client = LiteLLMModel(build_profile(model, api_base=server.url_root, api_key="k", capabilities=caps, retries={"attempts": 1}))
        out = await call_for_json(client, messages=[Message(role="user", content="go")], schema=schema, max_loops=1)
        return out, sent_schema(server.requests[-1])


async def test_gemini_gets_the_plan_as_it_is():
    out, sent = await _call("gemini/gemini-2.5-flash", GEMINI, TREE, ANSWER)
    assert out.status == "ok" and out.data == ANSWER
    assert sent == build_plan(TREE, GEMINI, allow_need=False).schema


# e2e finding: litellm's get_json_schema_from_pydantic_object rewrites every $ref of a dict
# response_format to '/$defs/<last segment>': the root '$ref': '#' arrived as '#/$defs/#'. The
# anthropic plan now sends no ref (anthropic.inline_refs): recursion is sent as any value.
async def test_anthropic_gets_a_root_recursion_that_resolves():
    plan = build_plan(TREE, ANTHROPIC, allow_need=False)
    assert '"$ref"' not in json.dumps(plan.schema)  # the recursion is sent as any value (anthropic.inline_refs)
    assert any("recursive $ref #" in line for line in plan.downgrades), plan.downgrades
    out, sent = await _call("anthropic/claude-sonnet-4-5", ANTHROPIC, TREE, ANSWER)
    assert out.status == "ok" and out.data == ANSWER
    assert _refs_resolve(sent) == []


# pydantic's shape of a recursive model: the definition refers to itself.
RECURSIVE = {
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {"label": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            "required": ["label"],
        }
    },
    "$ref": "#/$defs/Node",
}


# e2e finding: on the output_format path litellm inlines $defs (unpack_defs) and drops them, leaving a
# recursive definition's '#/$defs/Node' dangling (every recursive pydantic model of the corpus).
async def test_anthropic_gets_a_recursive_definition_that_resolves():
    answer = {"label": "a", "children": [{"label": "b", "children": []}]}
    out, sent = await _call("anthropic/claude-sonnet-4-5", ANTHROPIC, RECURSIVE, answer)
    assert out.status == "ok" and out.data == answer
    assert _refs_resolve(sent) == []


# e2e finding: a boolean definition made litellm's unpack_defs raise AttributeError before any request.
async def test_anthropic_takes_a_boolean_definition():
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/anything"}}, "$defs": {"anything": True}}
    out, sent = await _call("anthropic/claude-sonnet-4-5", ANTHROPIC, schema, {"a": 1})
    assert out.status == "ok" and out.data == {"a": 1}
    assert _refs_resolve(sent) == []


async def test_a_litellm_failure_before_any_request_is_not_called_a_connection_error():
    """litellm wraps an exception of its own request mapping (a boolean definition: the anthropic
    plan no longer sends one, so the response format goes to the client as it is) as
    APIConnectionError with its bug-report notice; nothing was sent, so it is neither retried
    nor reported as "cannot connect"."""
    from vance_cli.errors import ModelError, TransportError
    from vance_cli.llm.litellm_model import LiteLLMModel
    from vance_cli.llm.profile import build_profile

    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/anything"}}, "$defs": {"anything": True}}
    with FakeOpenAIServer() as server:
        client = LiteLLMModel(build_profile(
            "anthropic/claude-sonnet-4-5", api_base=server.url_root, api_key="k", capabilities=ANTHROPIC,
            retries={"attempts": 3, "base_delay": 0.01},
        ))
        response_format = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": False}}
        with pytest.raises(ModelError) as raised:
            await client.complete(ChatRequest(messages=[Message(role="user", content="go")], response_format=response_format))
        assert server.requests == []
    error = raised.value
    assert not (isinstance(error, TransportError) and error.retryable)
    assert "cannot connect" not in error.message and "gave up after" not in error.message
    assert "litellm failed" in error.message and "'bool' object has no attribute 'get'" in error.message


async def test_anthropic_past_the_optional_limit_goes_out_as_the_json_tool_call_tool():
    """A closed schema past Anthropic's 24 optional parameters would go out as output_format (a
    400); the plan opens its root, so litellm sends it as its json_tool_call tool (review 15b)."""
    schema = {"type": "object", "properties": {f"o{i}": {"type": "string"} for i in range(30)}, "additionalProperties": False}
    with FakeOpenAIServer() as server:
        from vance_cli.llm.litellm_model import LiteLLMModel
        from vance_cli.llm.profile import build_profile

        server.responder = lambda body: {"tool_calls": [("json_tool_call", {"o1": "x"})]} if body.get("tools") else {"text": "{}"}
        client = LiteLLMModel(build_profile("anthropic/claude-sonnet-4-5", api_base=server.url_root, api_key="k",
                                            capabilities=ANTHROPIC, retries={"attempts": 1}))
        out = await call_for_json(client, messages=[Message(role="user", content="go")], schema=schema, max_loops=1)
        body = server.requests[-1]
    assert out.status == "ok" and out.data == {"o1": "x"}
    assert "output_format" not in body and sent_schema(body)["additionalProperties"] is True


# e2e finding (issue 15, review 15c): an object the caller leaves open (properties, no
# additionalProperties) is not "open" by litellm's own test (json_schema_utils._is_open_object), so
# litellm sent the schema as Anthropic's output_format, and its filter_anthropic_output_schema set
# additionalProperties: false on every object: the extra key the caller's schema allows was forbidden.
# The plan sends such objects with additionalProperties: true; litellm then takes its json_tool_call
# tool for the whole schema and sends it unfiltered (the plan as it is, other objects still closed).
OPEN = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
NESTED_OPEN = {
    "type": "object",
    "properties": {"inner": {"type": "object", "properties": {"x": {"type": "integer"}}},
                   "shut": {"type": "object", "properties": {"y": {"type": "integer"}}, "additionalProperties": False}},
    "required": ["inner"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(("schema", "answer"), [
    (OPEN, {"a": 1, "b": 2}),
    (NESTED_OPEN, {"inner": {"x": 1, "extra": [True]}, "shut": {"y": 2}}),
], ids=["root", "nested"])
async def test_anthropic_request_accepts_the_extra_keys_an_open_object_allows(schema, answer):
    import jsonschema

    jsonschema.validate(answer, schema)  # (the caller's schema accepts it)
    out, sent = await _call("anthropic/claude-sonnet-4-5", ANTHROPIC, schema, answer)
    assert out.status == "ok" and out.data == answer
    assert jsonschema.Draft202012Validator(sent).is_valid(answer), sent
    plan = build_plan(schema, ANTHROPIC, allow_need=False)
    assert sent == plan.schema  # the json_tool_call tool: the plan unfiltered
    if schema is NESTED_OPEN:  # what the caller closed stays closed
        assert not jsonschema.Draft202012Validator(sent).is_valid({"inner": {}, "shut": {"z": 1}})
        assert not jsonschema.Draft202012Validator(sent).is_valid({"inner": {}, "z": 1})
