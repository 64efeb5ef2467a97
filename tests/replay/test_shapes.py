"""Every recorded response body reads back right through both transports (and litellm's native
Anthropic and Gemini providers): text, tool calls, finish reason, usage, refusal, provider extras."""

from __future__ import annotations

import json

import pytest

from tests.replay.conftest import recorded, response
from vance_cli.llm.base import ChatRequest, ToolSpec
from vance_cli.messages import Message

ASK = ChatRequest(messages=[Message(role="system", content="be brief"), Message(role="user", content="hello")])
ANY_TOOL = ToolSpec(name="get", description="d", parameters={"type": "object", "properties": {}})

# (recording, interaction) for every OpenAI-shaped 200 body in tests/replay/data
OPENAI_SHAPED = [
    ("openai_text", 0), ("openai_tool_call", 0), ("openai_tool_call", 1), ("openai_refusal", 0), ("openai_length", 0),
    ("groq_tool_use_failed", 1), ("groq_tool_use_failed_with_text", 1), ("deepseek_thinking_text", 0),
    ("deepseek_thinking_tool_calls", 0), ("deepseek_thinking_tool_calls", 1), ("deepseek_thinking_tool_calls", 2),
    ("gemini_openai_thought_signature", 0), ("gemini_openai_thought_signature", 1), ("openrouter_tool_call", 0),
    ("openrouter_reasoning", 0), ("ollama_reasoning_json", 0), ("cerebras_text", 0),
]


def test_every_recording_names_its_public_source():
    from pathlib import Path

    sources = Path(__file__).with_name("SOURCES.md").read_text(encoding="utf-8")
    for path in sorted(Path(__file__).with_name("data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["source"]["repo"] in ("pydantic/pydantic-ai", "openai/openai-python"), path.name
        assert data["source"]["path"] and data["source"]["commit"], path.name
        assert f"`{path.name}`" in sources, f"{path.name} is not listed in SOURCES.md"


@pytest.mark.parametrize("kind", ["direct", "litellm"])
@pytest.mark.parametrize("name,index", OPENAI_SHAPED)
async def test_openai_shaped_recordings_read_back_whole(kind, name, index, fake_openai, make_model):
    body = response(name, index)
    fake_openai.enqueue_raw(body)
    model = make_model(kind, "openai/recorded-model", fake_openai.url)
    completion = await model.complete(ASK.model_copy(update={"tools": [ANY_TOOL]}))
    await model.aclose()

    choice = body["choices"][0]
    message = choice["message"]
    assert (completion.text or "") == (message.get("content") or "")
    calls = message.get("tool_calls") or []
    assert [c.name for c in completion.tool_calls] == [c["function"]["name"] for c in calls]
    assert [json.loads(c.arguments) for c in completion.tool_calls] == [json.loads(c["function"]["arguments"]) for c in calls]
    assert all(c.id for c in completion.tool_calls)  # Gemini's OpenAI endpoint sends id ""
    assert completion.finish_reason == choice["finish_reason"]
    assert completion.usage.prompt_tokens == body["usage"]["prompt_tokens"]
    assert completion.usage.completion_tokens == body["usage"]["completion_tokens"]
    assert completion.refusal == message.get("refusal")
    for key in ("reasoning_content", "reasoning_details", "extra_content"):
        if message.get(key):
            assert completion.extras[key] == message[key], key
    assert completion.extras_from == "openai/recorded-model"


NATIVE = [
    # (recording, index, model, expected text, expected tool names, finish_reason, refusal)
    ("anthropic_text", 0, "anthropic/claude-haiku-4-5", "The capital of France is Paris.", [], "stop", None),
    ("anthropic_thinking_tool", 0, "anthropic/claude-sonnet-4-0",
     "I'll help you find the largest city in your country. First, let me determine which country you're from.",
     ["get_user_country"], "tool_calls", None),
    ("anthropic_max_tokens", 0, "anthropic/claude-haiku-4-5", '{"name": "Ad', [], "length", None),
    ("anthropic_refusal", 0, "anthropic/claude-haiku-4-5", "", [], "content_filter",
     "The provider's content filter stopped the reply (finish_reason content_filter)."),
    ("gemini_text", 0, "gemini/gemini-2.5-flash", "Hello! How can I help you today?", [], "stop", None),
    ("gemini_tool_thought_signature", 0, "gemini/gemini-2.5-pro", "", ["get_capital"], "tool_calls", None),
    ("gemini_max_tokens", 0, "gemini/gemini-2.5-flash", "The capital of France is", [], "length", None),
    ("gemini_safety", 0, "gemini/gemini-2.5-flash", "", [], "content_filter",
     "The provider's content filter stopped the reply (finish_reason content_filter)."),
]


@pytest.mark.parametrize("name,index,model_name,text,tools,finish,refusal", NATIVE)
async def test_native_anthropic_and_gemini_recordings_read_back_through_litellm(
    name, index, model_name, text, tools, finish, refusal, fake_openai, make_model
):
    fake_openai.enqueue_raw(response(name, index))
    model = make_model("litellm", model_name, fake_openai.url_root)
    completion = await model.complete(ASK.model_copy(update={"tools": [ANY_TOOL]}))
    assert (completion.text or "") == text
    assert [c.name for c in completion.tool_calls] == tools
    assert completion.finish_reason == finish
    assert completion.refusal == refusal
    path = fake_openai.paths[0]
    assert path.split("?")[0] == ("/v1/messages" if model_name.startswith("anthropic/") else
                                  f"/v1beta/models/{model_name.split('/')[1]}:generateContent")


async def test_recorded_usage_of_native_providers_is_counted(fake_openai, make_model):
    body = response("gemini_text")
    fake_openai.enqueue_raw(body)
    model = make_model("litellm", "gemini/gemini-2.5-flash", fake_openai.url_root)
    usage = (await model.complete(ASK)).usage
    assert usage.prompt_tokens == body["usageMetadata"]["promptTokenCount"]
    assert usage.calls == 1


def test_recordings_are_what_the_notes_say():
    # Guards the data files themselves: a re-extraction that lost a field would make tests vacuous.
    assert response("openai_refusal")["choices"][0]["message"]["refusal"]
    assert response("openai_length")["choices"][0]["finish_reason"] == "length"
    assert recorded("groq_tool_use_failed")["interactions"][0]["response"]["error"]["code"] == "tool_use_failed"
    assert response("deepseek_thinking_tool_calls")["choices"][0]["message"]["reasoning_content"]
    assert response("gemini_openai_thought_signature")["choices"][0]["message"]["extra_content"]["google"]["thought_signature"]
    assert response("gemini_max_tokens")["candidates"][0]["finishReason"] == "MAX_TOKENS"
    assert response("gemini_safety")["candidates"][0]["finishReason"] == "SAFETY"
    blocks = response("anthropic_thinking_tool")["content"]
    assert blocks[0]["type"] == "thinking" and blocks[0]["signature"]
    parts = response("gemini_tool_thought_signature")["candidates"][0]["content"]["parts"]
    assert parts[0]["functionCall"] and parts[0]["thoughtSignature"]
