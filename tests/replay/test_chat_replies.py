"""Ford (the chat engine) against recorded provider replies, through both transports and litellm's
native providers: Groq's tool_use_failed is corrected like any broken call, a refusal ends the turn
honestly, and what thinking models need back (DeepSeek reasoning_content, Gemini thought
signatures, Anthropic thinking blocks) goes back within the tool loop."""

from __future__ import annotations

import json

import pytest

from tests.replay.conftest import chat, response, serve
from vance_cli.store.process import Status


def respond_reply(server, message: str = "done") -> None:
    server.enqueue(tool_calls=[("respond", {"message": message, "awaiting_user_input": True})])


def groq_respond_reply(server, message: str = "done") -> None:
    """Groq's recorded success body (service_tier, x_groq, usage_breakdown: litellm's groq provider
    needs them) with its tool call swapped for a `respond` call."""
    import copy

    body = copy.deepcopy(response("groq_tool_use_failed", 1))
    call = body["choices"][0]["message"]["tool_calls"][0]
    call["function"] = {"name": "respond", "arguments": json.dumps({"message": message, "awaiting_user_input": True})}
    server.enqueue_raw(body)


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m.get("role") == "tool"]


GROQ = [
    pytest.param("direct", "openai/gpt-oss-120b", id="direct"),
    pytest.param("litellm", "groq/openai/gpt-oss-120b", id="litellm-groq"),
]


@pytest.mark.parametrize("kind,model_name", GROQ)
async def test_groq_tool_use_failed_gets_the_malformed_call_correction(kind, model_name, tmp_path, fake_openai, make_model):
    serve(fake_openai, "groq_tool_use_failed", 0)  # HTTP 400 tool_use_failed, failed_generation = the call
    groq_respond_reply(fake_openai, "fixed it")
    model = make_model(kind, model_name, fake_openai.url)
    run = await chat(tmp_path, model)

    assert run.messages == ["fixed it"]  # the turn went on: a model mistake, not a failed request
    assert run.process.status == Status.BLOCKED
    assert len(fake_openai.requests) == 2
    second = fake_openai.requests[1]["messages"]
    call = next(m for m in second if m.get("role") == "assistant" and m.get("tool_calls"))["tool_calls"][0]
    assert call["function"]["name"] == "get_something_by_name"
    assert json.loads(call["function"]["arguments"]) == {"foo": "bar"}  # what the model generated
    result = tool_messages(fake_openai.requests[1])[0]
    assert result["tool_call_id"] == call["id"]
    assert result["content"].startswith("ERROR: malformed call to `get_something_by_name`: the provider rejected the call: ")
    assert "missing properties: 'name'" in result["content"]
    assert any("malformed tool call" in line for line in run.journal)


@pytest.mark.parametrize("kind,model_name", GROQ)
async def test_groq_tool_use_failed_with_text_gets_the_no_tool_call_correction(kind, model_name, tmp_path, fake_openai, make_model):
    serve(fake_openai, "groq_tool_use_failed_with_text", 0)  # failed_generation "maybe": text, no call
    groq_respond_reply(fake_openai)
    run = await chat(tmp_path, make_model(kind, model_name, fake_openai.url))
    assert run.messages == ["done"]
    second = fake_openai.requests[1]["messages"]
    assert {"role": "assistant", "content": "maybe"} in second
    assert second[-1]["content"].startswith("VALIDATION CHECK: your previous response had no tool call.")


CHAT_REFUSALS = [
    pytest.param("direct", "openai/gpt-4o", "url", "openai_refusal", "I'm very sorry, but I can't assist with that.", id="direct-openai"),
    pytest.param("litellm", "openai/gpt-4o", "url", "openai_refusal", "I'm very sorry, but I can't assist with that.", id="litellm-openai"),
    pytest.param("litellm", "gemini/gemini-2.5-flash", "url_root", "gemini_safety",
                 "The provider's content filter stopped the reply (finish_reason content_filter).", id="litellm-gemini"),
]


@pytest.mark.parametrize("kind,model_name,base,recording,said", CHAT_REFUSALS)
async def test_a_refusal_is_shown_recorded_and_ends_the_turn(kind, model_name, base, recording, said, tmp_path, fake_openai, make_model):
    serve(fake_openai, recording)
    run = await chat(tmp_path, make_model(kind, model_name, getattr(fake_openai, base)))
    assert run.messages == [said]  # shown to the person
    assert len(fake_openai.requests) == 1  # no correction pressing the model
    saved = run.store.load(run.process.id)
    assert saved.status == Status.BLOCKED and saved.status_reason == "the model refused"
    last = saved.history[-1]
    assert (last.role, last.content, last.meta.get("kind")) == ("assistant", said, "refusal")
    assert any("refused" in line for line in run.journal)


EXTRAS = [
    # (transport, model, recording, the key on the assistant message that must come back)
    pytest.param("direct", "openai/deepseek-reasoner", "deepseek_thinking_tool_calls", "reasoning_content", id="direct-deepseek"),
    pytest.param("litellm", "deepseek/deepseek-reasoner", "deepseek_thinking_tool_calls", "reasoning_content", id="litellm-deepseek"),
    pytest.param("direct", "openai/gemini-2.5-pro", "gemini_openai_thought_signature", "extra_content", id="direct-gemini-openai"),
    pytest.param("litellm", "openai/gemini-2.5-pro", "gemini_openai_thought_signature", "extra_content", id="litellm-gemini-openai"),
]


@pytest.mark.parametrize("kind,model_name,recording,key", EXTRAS)
async def test_provider_extras_go_back_within_the_tool_loop(kind, model_name, recording, key, tmp_path, fake_openai, make_model):
    serve(fake_openai, recording, 0)  # a tool call with the provider's extra beside it
    respond_reply(fake_openai)
    run = await chat(tmp_path, make_model(kind, model_name, fake_openai.url))
    assert run.messages == ["done"]
    sent = [m for m in fake_openai.requests[1]["messages"] if m.get("role") == "assistant"]
    assert sent[0][key] == response(recording)["choices"][0]["message"][key]
    # Persisted with the process, so a resumed turn sends it back too.
    saved = run.store.load(run.process.id)
    assert saved.history[1].extras[key] == sent[0][key]


async def test_anthropic_thinking_blocks_go_back_before_the_tool_use(tmp_path, fake_openai, make_model):
    serve(fake_openai, "anthropic_thinking_tool", 0)  # thinking (with signature) + text + tool_use
    respond_reply(fake_openai)
    run = await chat(tmp_path, make_model("litellm", "anthropic/claude-sonnet-4-0", fake_openai.url_root))
    assert run.messages == ["done"]
    recorded_thinking = response("anthropic_thinking_tool")["content"][0]
    assistant = [m for m in fake_openai.requests[1]["messages"] if m["role"] == "assistant"][0]
    first = assistant["content"][0]
    # Anthropic rejects a tool_result after an assistant turn that lost its thinking block.
    assert first["type"] == "thinking" and first["signature"] == recorded_thinking["signature"]
    assert [b["type"] for b in assistant["content"]] == ["thinking", "text", "tool_use"]


async def test_gemini_thought_signatures_go_back_with_the_function_call(tmp_path, fake_openai, make_model):
    serve(fake_openai, "gemini_tool_thought_signature", 0)
    respond_reply(fake_openai)
    run = await chat(tmp_path, make_model("litellm", "gemini/gemini-2.5-pro", fake_openai.url_root))
    assert run.messages == ["done"]
    recorded_part = response("gemini_tool_thought_signature")["candidates"][0]["content"]["parts"][0]
    model_turn = [c for c in fake_openai.requests[1]["contents"] if c["role"] == "model"][0]
    call_part = next(p for p in model_turn["parts"] if "function_call" in p or "functionCall" in p)
    assert call_part.get("thoughtSignature", call_part.get("thought_signature")) == recorded_part["thoughtSignature"]


async def test_an_empty_reply_in_chat_never_reaches_gemini_as_an_empty_turn(tmp_path, fake_openai, make_model):
    fake_openai.enqueue(text="")
    respond_reply(fake_openai)
    run = await chat(tmp_path, make_model("litellm", "gemini/gemini-2.5-flash", fake_openai.url_root))
    assert run.messages == ["done"]  # the fake answers an empty text part with Gemini's 400
    assert [c for c in fake_openai.requests[1]["contents"] if c["role"] == "model"] == []




@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_streamed_reply_keeps_the_extras_it_must_send_back(kind, tmp_path, fake_openai, make_model):
    fake_openai.enqueue_raw(response("deepseek_thinking_tool_calls", 0))  # streamed as SSE by the fake
    model = make_model(kind, "openai/deepseek-reasoner" if kind == "direct" else "deepseek/deepseek-reasoner", fake_openai.url)
    from vance_cli.llm.base import ChatRequest
    from vance_cli.messages import Message

    completion = await model.stream(ChatRequest(messages=[Message(role="user", content="hi")]), lambda d: None)
    recorded = response("deepseek_thinking_tool_calls", 0)["choices"][0]["message"]
    assert completion.extras["reasoning_content"] == recorded["reasoning_content"]
    assert [c.name for c in completion.tool_calls] == ["load_capability"]


@pytest.mark.parametrize("kind", [
    "direct",
    pytest.param("litellm", marks=pytest.mark.xfail(
        strict=True, reason="litellm's stream wrapper drops chunks that carry only a refusal delta (1.110.2)")),
])
async def test_a_streamed_refusal_is_a_refusal(kind, fake_openai, make_model):
    from vance_cli.llm.base import ChatRequest
    from vance_cli.messages import Message
    serve(fake_openai, "openai_refusal")
    model = make_model(kind, "openai/gpt-4o", fake_openai.url)
    completion = await model.stream(ChatRequest(messages=[Message(role="user", content="hi")]), lambda d: None)
    assert completion.refusal == "I'm very sorry, but I can't assist with that."


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_reply_cut_off_at_max_tokens_gets_more_room_for_the_rest_of_the_turn(kind, tmp_path, fake_openai, make_model):
    # A respond call cut off mid-arguments: corrected as malformed, and asked again with more room.
    fake_openai.enqueue(tool_calls=[("respond", '{"message": "The capital of Fra')], finish_reason="length")
    respond_reply(fake_openai, "The capital of France is Paris.")
    run = await chat(tmp_path, make_model(kind, "openai/some-model", fake_openai.url, max_tokens=500))
    assert run.messages == ["The capital of France is Paris."]
    assert [body["max_tokens"] for body in fake_openai.requests] == [500, 1000]
    assert "the reply was cut off at max_tokens 500; the next call gets max_tokens 1000" in run.journal


@pytest.mark.parametrize("kind", ["direct", "litellm"])
async def test_a_thought_signature_on_the_tool_call_alone_goes_back(kind, tmp_path, fake_openai, make_model):
    """Gemini's OpenAI endpoint documents the signature on the call (``tool_calls[].extra_content``),
    with nothing on the message: the call's extras alone must still travel back to that model."""
    import copy

    body = copy.deepcopy(response("gemini_openai_thought_signature", 0))
    message = body["choices"][0]["message"]
    signature = message.pop("extra_content")
    message.pop("thought_signature")
    message["tool_calls"][0]["extra_content"] = signature
    fake_openai.enqueue_raw(body)
    respond_reply(fake_openai)
    run = await chat(tmp_path, make_model(kind, "openai/gemini-2.5-pro", fake_openai.url))
    assert run.messages == ["done"]
    sent = [m for m in fake_openai.requests[1]["messages"] if m.get("role") == "assistant"][0]
    assert sent["tool_calls"][0]["extra_content"] == signature
