"""call_for_json (the loop under `vance structure` and Benjy) against recorded provider replies.

Each failure the issue found, through both transports and litellm's native Gemini and Anthropic
providers: an empty reply must never go back as an empty assistant turn (the fake server answers
that with the provider's own 400), a reply cut off at the output limit is retried with more room
and never steps the format down, and a refusal ends the call as ``refused`` with its text.
"""

from __future__ import annotations

import json

import pytest

from tests.replay.conftest import response, serve
from vance_cli.llm.base import Capabilities
from vance_cli.llm.output.json_call import call_for_json
from vance_cli.messages import Message

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
    "additionalProperties": False,
}
ANSWER = {"city": "Paris", "country": "France"}
PROMPT = [Message(role="system", content="Extract."), Message(role="user", content="Paris is the capital of France.")]
STRICT = Capabilities(family="openai", json_schema=True, strict_json_schema=True, json_object=True)

# (transport, model string, base attribute of the fake server, capabilities)
ROUTES = [
    pytest.param("direct", "openai/gpt-4o-mini", "url", STRICT, id="direct-openai"),
    pytest.param("litellm", "openai/gpt-4o-mini", "url", STRICT, id="litellm-openai"),
    pytest.param("litellm", "gemini/gemini-2.5-flash", "url_root", None, id="litellm-gemini"),
    pytest.param("litellm", "anthropic/claude-haiku-4-5", "url_root", None, id="litellm-anthropic"),
]


def assistant_turns(body: dict) -> list:
    """The assistant/model turns of an OpenAI, Anthropic or Gemini request body."""
    if "contents" in body:
        return [c for c in body["contents"] if c.get("role") == "model"]
    return [m for m in body.get("messages") or [] if m.get("role") == "assistant"]


@pytest.mark.parametrize("kind,model_name,base,caps", ROUTES)
async def test_an_empty_reply_is_corrected_and_never_sent_back_as_an_empty_turn(
    kind, model_name, base, caps, fake_openai, make_model
):
    fake_openai.enqueue(text="")  # the model answers nothing (in the route's own shape)
    fake_openai.enqueue(text=json.dumps({"result": ANSWER, "_need": None} if caps is STRICT else ANSWER))
    model = make_model(kind, model_name, getattr(fake_openai, base), capabilities=caps)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA, allow_need=True)
    assert out.status == "ok", out
    assert out.data == ANSWER
    assert out.iterations == 2
    assert not out.format_fallbacks  # an empty reply is no format rejection
    second = fake_openai.requests[1]
    # Gemini answers 400 "empty text parameter" and Anthropic "text content blocks must be
    # non-empty" to an empty assistant turn (tests/fakeserver.py applies both rules).
    assert assistant_turns(second) == []
    assert "not valid JSON" in json.dumps(second)  # the correction went out instead
    # The transcript still says what happened.
    assert [m.meta.get("kind") for m in out.messages if m.role == "assistant"][0] == "empty"


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_reply_cut_at_max_tokens_is_asked_again_with_more_room_not_stepped_down(kind, fake_openai, make_model):
    serve(fake_openai, "openai_length")  # gpt-4o: content '{"', finish_reason length
    fake_openai.enqueue(text=json.dumps({"result": ANSWER, "_need": None}))
    model = make_model(kind, "openai/some-model", fake_openai.url, capabilities=STRICT, max_tokens=1000)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA, allow_need=True)
    assert out.status == "ok" and out.data == ANSWER
    assert out.output_mode == "json_schema:strict"  # never stepped down to prompt mode
    assert out.format_fallbacks == []
    first, second = fake_openai.requests
    assert first["max_tokens"] == 1000 and second["max_tokens"] == 2000
    assert second["response_format"] == first["response_format"]
    assert second["messages"] == first["messages"]  # the same request, with more room
    assert out.notes == [
        "the reply was cut off at the output limit (finish_reason length, max_tokens 1000); asked again with max_tokens 2000"
    ]
    assert out.iterations == 1 and out.usage.calls == 2


async def test_a_gemini_thinking_model_that_spent_its_limit_on_thoughts_gets_more_room(fake_openai, make_model):
    serve(fake_openai, "gemini_max_tokens_empty")  # empty reply, finishReason MAX_TOKENS
    fake_openai.enqueue(text=json.dumps(ANSWER))
    model = make_model("litellm", "gemini/gemini-2.5-pro", fake_openai.url_root, max_tokens=5)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA)
    assert out.status == "ok" and out.data == ANSWER
    configs = [body["generationConfig"] for body in fake_openai.requests]
    limits = [cfg.get("maxOutputTokens", cfg.get("max_output_tokens")) for cfg in configs]
    assert limits == [5, 10]
    assert not out.format_fallbacks


async def test_anthropic_max_tokens_stop_is_truncation_too(fake_openai, make_model):
    serve(fake_openai, "anthropic_max_tokens")
    fake_openai.enqueue(text=json.dumps(ANSWER))
    model = make_model("litellm", "anthropic/claude-haiku-4-5", fake_openai.url_root, max_tokens=300)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA)
    assert out.status == "ok" and not out.format_fallbacks
    assert [body["max_tokens"] for body in fake_openai.requests] == [300, 600]


async def test_truncation_without_more_room_is_corrected_not_stepped_down(fake_openai, make_model):
    # gpt-4o-mini's limit (16384, from litellm's map) is already what was asked: no more room.
    for _ in range(2):
        serve(fake_openai, "openai_length")
    model = make_model("direct", "openai/gpt-4o-mini", fake_openai.url, capabilities=STRICT)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA, max_loops=2, allow_need=True)
    assert out.status == "stale"
    assert out.errors == ["(root): the output was cut off at the output limit (max_tokens 16384) before it was complete"]
    assert out.output_mode == "json_schema:strict" and out.format_fallbacks == []
    assert "cut off at the output limit" in fake_openai.requests[1]["messages"][-1]["content"]


REFUSALS = [
    pytest.param("direct", "openai/gpt-4o", "url", "openai_refusal", "I'm very sorry, but I can't assist with that.", id="direct-openai"),
    pytest.param("litellm", "openai/gpt-4o", "url", "openai_refusal", "I'm very sorry, but I can't assist with that.", id="litellm-openai"),
    pytest.param("litellm", "gemini/gemini-2.5-flash", "url_root", "gemini_safety",
                 "The provider's content filter stopped the reply (finish_reason content_filter).", id="litellm-gemini-safety"),
    pytest.param("litellm", "anthropic/claude-haiku-4-5", "url_root", "anthropic_refusal",
                 "The provider's content filter stopped the reply (finish_reason content_filter).", id="litellm-anthropic"),
]


@pytest.mark.parametrize("kind,model_name,base,recording,said", REFUSALS)
async def test_a_refusal_ends_the_call_as_refused_with_its_text(kind, model_name, base, recording, said, fake_openai, make_model):
    serve(fake_openai, recording)
    model = make_model(kind, model_name, getattr(fake_openai, base), capabilities=STRICT if "openai" in model_name else None)
    out = await call_for_json(model, messages=PROMPT, schema=SCHEMA, max_loops=3, allow_need=True)
    assert out.status == "refused"
    assert out.refusal == said
    assert len(fake_openai.requests) == 1  # no correction loop pressing the model again
    assert out.messages[-1].role == "assistant" and out.messages[-1].content == said
    assert out.format_fallbacks == []


def test_the_recorded_refusal_is_the_openai_shape():
    message = response("openai_refusal")["choices"][0]["message"]
    assert message["content"] is None and message["refusal"]


@pytest.mark.parametrize("kind,model_name,base,caps", ROUTES)
async def test_an_empty_system_prompt_is_not_sent(kind, model_name, base, caps, fake_openai, make_model):
    # Benjy's controller builds its system message from a stage recipe that may have no prompt:
    # Gemini would get an empty text part in system_instruction, OpenAI an empty system turn.
    fake_openai.enqueue(text=json.dumps(ANSWER))
    model = make_model(kind, model_name, getattr(fake_openai, base))
    messages = [Message(role="system", content=""), PROMPT[1]]
    out = await call_for_json(model, messages=messages, schema=SCHEMA, capabilities=caps)
    assert out.status == "ok"
    body = fake_openai.requests[0]
    parts = (body.get("system_instruction") or body.get("systemInstruction") or {}).get("parts") or []
    system = body.get("system") or []
    blocks = system if isinstance(system, list) else [{"text": system}]
    messages_sent = [m for m in body.get("messages") or [] if m.get("role") == "system"]
    assert all(p.get("text") for p in parts), parts
    assert all(b.get("text") for b in blocks), blocks
    assert all(m.get("content") for m in messages_sent), messages_sent
