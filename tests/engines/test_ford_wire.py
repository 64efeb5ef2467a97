"""Issue 18 over the wire: Ford on the direct transport against the local test server, with the
exact bodies a llama.cpp server sends (content as the model wrote it, no ``tool_calls``)."""

from __future__ import annotations

from tests.replay.conftest import FAST, chat
from vance_cli.llm.capabilities import LOCAL_FAMILIES
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile


def llama_body(content: str, prompt_tokens: int = 1581, completion_tokens: int = 30) -> dict:
    """A chat completion as llama-server (b-series, --jinja) returns it when its parser found no call."""
    return {
        "choices": [{"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": content}}],
        "created": 1796389889,
        "model": "qwen-coder-0.5b",
        "system_fingerprint": "b1-unknown",
        "object": "chat.completion",
        "usage": {"completion_tokens": completion_tokens, "prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens},
        "id": "chatcmpl-test",
        "timings": {"prompt_n": 60, "prompt_ms": 1200.0, "predicted_n": completion_tokens, "predicted_ms": 1250.0},
    }


def model(url: str, family: str | None = None) -> OpenAICompatModel:
    caps = LOCAL_FAMILIES[family] if family else None
    profile = build_profile("openai/qwen-coder-0.5b", api_base=url, api_key="k", retries=FAST, timeout=10.0, capabilities=caps)
    return OpenAICompatModel(profile, announce=None)


async def test_a_tool_call_block_in_the_content_runs_as_a_call(tmp_path, fake_openai):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.md").write_text("Thursday 15:00\n")
    fake_openai.enqueue_raw(llama_body('<tool_call>\n{"name": "file_read", "arguments": {"path": "notes.md"}}\n</tool_call>'))
    fake_openai.enqueue_raw(llama_body('```json\n{"name": "respond", "arguments": {"message": "Thursday 15:00."}}\n```'))
    run = await chat(tmp_path, model(fake_openai.url, None))
    assert run.messages == ["Thursday 15:00."]
    assert len(fake_openai.requests) == 2
    second = fake_openai.requests[1]["messages"]
    call = next(m for m in second if m.get("tool_calls"))
    assert call["tool_calls"][0]["function"]["name"] == "file_read"
    assert next(m for m in second if m["role"] == "tool")["content"].startswith("Thursday 15:00")
    assert not any("correction" in line for line in run.journal)


async def test_llama_server_gets_the_call_schema_and_no_tools(tmp_path, fake_openai):
    fake_openai.enqueue_raw(llama_body('{"result": {"tool": "respond", "arguments": {"message": "Hello! I am Arthur."}}}'))
    run = await chat(tmp_path, model(fake_openai.url, "llama-server"))
    assert run.messages == ["Hello! I am Arthur."]
    body = fake_openai.requests[0]
    assert "tools" not in body and "tool_choice" not in body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["result"]


async def test_a_rejected_response_format_steps_down_and_is_remembered(tmp_path, fake_openai):
    fake_openai.enqueue_error(400, {"error": {"message": "response_format json_schema is not supported", "type": "invalid_request_error"}})
    fake_openai.enqueue_raw(llama_body('{"result": {"tool": "respond", "arguments": {"message": "hi"}}}'))
    run = await chat(tmp_path, model(fake_openai.url, "llama-server"))
    assert run.messages == ["hi"]
    formats = [b.get("response_format", {}).get("type") for b in fake_openai.requests]
    assert formats == ["json_schema", "json_object"]
    assert run.process.engine_params["tool_format"] == "json_object"
    assert any("json_schema rejected by the provider" in line for line in run.journal)
    assert run.process.usage.calls == 1  # the rejected request is not a model call of the turn
