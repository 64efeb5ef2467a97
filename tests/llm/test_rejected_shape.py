"""An HTTP 500 that rejects the request shape is not a transient fault (issue 18).

llama-cpp-python's server answers response_format json_schema with HTTP 500 (recorded body:
data/llama_cpp_python_json_schema_500.json, see data/SOURCES.md). It is not retried four times: the
format steps down (json_schema -> json_object -> prompt) and the step is remembered for the model
for the rest of the process (llm/output/json_call.py, ``_FORMAT_STEPS``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.llm.test_contract import litellm_loaded  # noqa: F401  (fixture)
from vance_cli.errors import TransportError
from vance_cli.llm.base import Capabilities, ChatRequest
from vance_cli.llm.factory import transport_for
from vance_cli.llm.output.json_call import call_for_json, remembered_format
from vance_cli.llm.profile import build_profile
from vance_cli.llm.retry import rejected_request_shape
from vance_cli.messages import Message

REJECTION = json.loads((Path(__file__).parent / "data" / "llama_cpp_python_json_schema_500.json").read_text())
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
RETRIES = {"attempts": 4, "base_delay": 0.0, "max_delay": 0.0, "max_total": 60.0}


@pytest.fixture(params=["direct", "litellm"])
def model_at(request):
    if request.param == "litellm":
        request.getfixturevalue("litellm_loaded")

    def make(url):
        # json_schema and json_object both believed: the family was not detected ("other" with both on)
        profile = build_profile("openai/qwen", api_base=url, transport=request.param, retries=RETRIES,
                                capabilities=Capabilities(json_schema=True, json_object=True))
        return transport_for(profile, announce=None)

    return make


def _ask():
    return [Message(role="user", content="Ada")]


async def test_the_500_steps_the_format_down_once_and_is_remembered(fake_openai, model_at):
    fake_openai.enqueue_error(500, body=REJECTION)
    fake_openai.enqueue(text='{"name": "Ada"}')
    model = model_at(fake_openai.url)
    result = await call_for_json(model, messages=_ask(), schema=SCHEMA)
    assert (result.status, result.data, result.output_mode) == ("ok", {"name": "Ada"}, "json_object")
    # two requests: the rejected one (never retried) and the stepped-down one
    assert [b["response_format"]["type"] for b in fake_openai.requests] == ["json_schema", "json_object"]
    assert "HTTP 500" in result.format_fallbacks[0] and "Input should be" in result.format_fallbacks[0]
    assert remembered_format(model) == "json_object"

    # the next call to the same model (a new instance too) starts where the server said it can
    fake_openai.enqueue(text='{"name": "Bob"}')
    again = model_at(fake_openai.url)
    second = await call_for_json(again, messages=_ask(), schema=SCHEMA)
    assert second.status == "ok" and second.format_fallbacks == []
    assert [b["response_format"]["type"] for b in fake_openai.requests[2:]] == ["json_object"]
    await model.aclose()
    await again.aclose()


async def test_the_500_itself_is_not_retried_and_says_why(fake_openai, model_at):
    fake_openai.enqueue_error(500, body=REJECTION)
    model = model_at(fake_openai.url)
    request = ChatRequest(messages=_ask(), response_format={"type": "json_schema", "json_schema": {
        "name": "x", "schema": SCHEMA}})
    with pytest.raises(TransportError) as caught:
        await model.complete(request)
    assert len(fake_openai.requests) == 1
    assert caught.value.status == 500 and not caught.value.retryable
    assert "does not accept this request shape" in caught.value.hint
    await model.aclose()


async def test_a_plain_500_is_still_a_transient_fault(fake_openai, model_at):
    fake_openai.enqueue_error(500)
    fake_openai.enqueue_error(500, body={"error": {"message": "CUDA out of memory"}})
    fake_openai.enqueue(text='{"name": "Ada"}')
    model = model_at(fake_openai.url)
    result = await call_for_json(model, messages=_ask(), schema=SCHEMA)
    assert result.status == "ok" and result.output_mode == "json_schema" and result.format_fallbacks == []
    assert len(fake_openai.requests) == 3
    assert remembered_format(model) is None
    await model.aclose()


def test_what_counts_as_a_rejected_shape():
    assert rejected_request_shape(500, REJECTION["error"]["message"])
    assert rejected_request_shape(500, "response_format.type: Input should be 'text' or 'json_object'")
    assert not rejected_request_shape(500, "fake error 500")
    assert not rejected_request_shape(500, "validation error in the model runner")  # no request field
    # a gateway or an overloaded server is transient whatever its text names (review of issue 18)
    for status in (502, 503, 504, 529):
        assert not rejected_request_shape(status, "upstream: temperature not supported while loading; try again")
    assert not rejected_request_shape(503, "the model is loading")
    assert not rejected_request_shape(400, REJECTION["error"]["message"])  # a 400 is not retried anyway
