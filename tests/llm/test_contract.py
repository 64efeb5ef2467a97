"""Contract tests: the direct (httpx) and litellm models behave the same against a local server.

Each test runs against both implementations, talking to the fake OpenAI server over real HTTP.
litellm is imported once for the module (its import costs seconds).
"""

from __future__ import annotations

import json
import socket

import pytest

from vance_cli.errors import ModelRequestsForbidden, TransportError
from vance_cli.llm.base import Capabilities, ChatRequest, ToolSpec
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile
from vance_cli.messages import Message, ToolCall

RESPOND = ToolSpec(
    name="respond",
    description="reply",
    parameters={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
)
READ = ToolSpec(name="file_read", description="read", parameters={"type": "object", "properties": {}})
FAST = {"attempts": 3, "base_delay": 0.0, "max_delay": 0.0, "max_total": 60.0}  # the whole call: room for litellm's slow first call


@pytest.fixture(scope="module")
def litellm_loaded():
    from vance_cli.llm.litellm_model import _litellm

    return _litellm()


@pytest.fixture(params=["direct", "litellm"])
async def make(request):
    """make(api_base, **kwargs) -> (model, recorded_sleeps) for the parametrised implementation."""
    kind = request.param
    if kind == "litellm":
        request.getfixturevalue("litellm_loaded")
    built = []

    def factory(api_base, *, model="openai/test-model", retries=None, timeout=5.0, capabilities=None, api_key=None):
        delays: list[float] = []

        async def sleep(seconds):
            delays.append(seconds)

        if kind == "direct":
            cls = OpenAICompatModel
        else:
            from vance_cli.llm.litellm_model import LiteLLMModel as cls
        profile = build_profile(model, api_base=api_base, api_key=api_key, timeout=timeout,
                                retries=retries or FAST, capabilities=capabilities or Capabilities())
        instance = cls(profile, sleep=sleep)
        built.append(instance)
        return instance, delays

    factory.kind = kind
    yield factory
    for instance in built:
        await instance.aclose()


def user(text="hello", **kwargs):
    return ChatRequest(messages=[Message(role="system", content="be brief"), Message(role="user", content=text)], **kwargs)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def test_plain_text_reply(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue(text="Hello there", usage={"prompt_tokens": 11, "completion_tokens": 3})
    completion = await model.complete(user())
    assert completion.text == "Hello there"
    assert completion.tool_calls == []
    assert completion.finish_reason == "stop"
    assert (completion.usage.calls, completion.usage.prompt_tokens, completion.usage.completion_tokens) == (1, 11, 3)
    assert completion.usage.cost == 0.0
    sent = fake_openai.requests[0]
    assert sent["model"] == "test-model"  # the "openai/" routing prefix never reaches the server
    assert sent["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]


async def test_multiple_tool_calls_are_parsed_with_ids_and_arguments(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue(tool_calls=[
        {"name": "file_read", "arguments": {"path": "a.txt"}, "id": "call_a"},
        {"name": "respond", "arguments": {"message": "done"}, "id": "call_b"},
    ])
    completion = await model.complete(user(tools=[READ, RESPOND]))
    assert completion.tool_calls == [
        ToolCall(id="call_a", name="file_read", arguments='{"path": "a.txt"}'),
        ToolCall(id="call_b", name="respond", arguments='{"message": "done"}'),
    ]
    assert completion.finish_reason == "tool_calls"
    tools = fake_openai.requests[0]["tools"]
    assert [t["function"]["name"] for t in tools] == ["file_read", "respond"]
    assert tools[1]["function"]["parameters"] == RESPOND.parameters


async def test_malformed_tool_arguments_reach_the_engine_verbatim(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue(tool_calls=[("respond", '{"message": "unterminated')])
    call = (await model.complete(user(tools=[RESPOND]))).tool_calls[0]
    assert call.name == "respond" and call.arguments == '{"message": "unterminated'


async def test_tool_history_round_trips_in_openai_shape(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue(text="ok")
    history = user(tools=[READ]).messages + [
        Message(role="assistant", content=None, tool_calls=[ToolCall(id="c1", name="file_read", arguments="{}")]),
        Message(role="tool", content="file text", tool_call_id="c1", name="file_read"),
    ]
    await model.complete(ChatRequest(messages=history, tools=[READ]))
    sent = fake_openai.requests[0]["messages"]
    assert sent[2]["tool_calls"][0]["id"] == "c1"
    assert sent[2]["tool_calls"][0]["function"] == {"name": "file_read", "arguments": "{}"}
    assert sent[3]["role"] == "tool" and sent[3]["tool_call_id"] == "c1" and sent[3]["content"] == "file text"


async def test_response_format_and_sampling_options_pass_through(make, fake_openai):
    model, _ = make(fake_openai.url)
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "strict": True, "schema": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
        "additionalProperties": False}}}
    fake_openai.enqueue(text='{"name": "Ada"}')
    completion = await model.complete(user(response_format=fmt, temperature=0.0, max_tokens=50))
    assert json.loads(completion.text) == {"name": "Ada"}
    sent = fake_openai.requests[0]
    assert sent["response_format"] == fmt
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 50


async def test_parallel_tool_calls_sent_only_when_set_and_supported(make, fake_openai):
    capable, _ = make(fake_openai.url, capabilities=Capabilities(parallel_tool_calls=True))
    incapable, _ = make(fake_openai.url, capabilities=Capabilities(parallel_tool_calls=False))
    for _ in range(3):
        fake_openai.enqueue(text="x")
    await capable.complete(user(tools=[RESPOND], parallel_tool_calls=False, tool_choice="required"))
    await capable.complete(user(tools=[RESPOND]))
    await incapable.complete(user(tools=[RESPOND], parallel_tool_calls=False))
    first, second, third = fake_openai.requests
    assert first["parallel_tool_calls"] is False and first["tool_choice"] == "required"
    assert "parallel_tool_calls" not in second and "tool_choice" not in second
    assert "parallel_tool_calls" not in third


async def test_http_500_is_retried_then_succeeds(make, fake_openai):
    model, delays = make(fake_openai.url, retries={"attempts": 3, "base_delay": 0.01, "max_delay": 1, "max_total": 60})
    fake_openai.enqueue_error(500)
    fake_openai.enqueue_error(503)
    fake_openai.enqueue(text="finally")
    completion = await model.complete(user())
    assert completion.text == "finally"
    assert len(fake_openai.requests) == 3  # no hidden retries inside litellm/the SDK
    assert delays == [0.01, 0.02]


async def test_http_500_every_time_gives_up_with_attempt_count(make, fake_openai):
    model, delays = make(fake_openai.url)
    for _ in range(3):
        fake_openai.enqueue_error(500, body={"error": {"message": "server on fire"}})
    with pytest.raises(TransportError) as info:
        await model.complete(user())
    assert len(fake_openai.requests) == 3 and len(delays) == 2
    assert "gave up after 3 attempts" in info.value.message
    assert "HTTP 500" in info.value.message and "server on fire" in info.value.message
    assert info.value.status == 500


async def test_429_retry_after_is_honoured(make, fake_openai):
    model, delays = make(fake_openai.url, retries={"attempts": 3, "base_delay": 0.0, "max_delay": 4, "max_total": 10})
    fake_openai.enqueue_error(429, headers={"Retry-After": "2"})
    fake_openai.enqueue(text="after the wait")
    assert (await model.complete(user())).text == "after the wait"
    assert delays == [2.0]


async def test_400_fails_at_once_with_the_servers_reason(make, fake_openai):
    model, delays = make(fake_openai.url)
    fake_openai.enqueue_error(400, body={"error": {"message": "tools are not supported by this model"}})
    with pytest.raises(TransportError) as info:
        await model.complete(user(tools=[RESPOND]))
    assert len(fake_openai.requests) == 1 and delays == []
    assert info.value.status == 400 and not info.value.retryable
    assert "tools are not supported by this model" in info.value.message
    assert "capabilities" in info.value.hint


async def test_401_fails_at_once_with_an_api_key_hint(make, fake_openai):
    model, _ = make(fake_openai.url, api_key="wrong")
    fake_openai.enqueue_error(401, body={"error": {"message": "invalid api key"}})
    with pytest.raises(TransportError) as info:
        await model.complete(user())
    assert len(fake_openai.requests) == 1
    assert info.value.status == 401 and "VANCE_API_KEY" in info.value.hint


async def test_api_key_is_sent_as_bearer_token(make, fake_openai):
    model, _ = make(fake_openai.url, api_key="sk-test-123")
    fake_openai.enqueue(text="x")
    await model.complete(user())
    assert fake_openai.request_headers[0]["authorization"] == "Bearer sk-test-123"


async def test_keyless_local_server_works_without_any_api_key(make, fake_openai):
    model, _ = make(fake_openai.url, api_key=None)
    fake_openai.enqueue(text="no key needed")
    assert (await model.complete(user())).text == "no key needed"


async def test_connection_refused_is_a_transport_error_after_retries(make):
    model, delays = make(f"http://127.0.0.1:{free_port()}/v1")
    with pytest.raises(TransportError) as info:
        await model.complete(user())
    assert "gave up after 3 attempts" in info.value.message
    assert "cannot connect" in info.value.message
    assert len(delays) == 2
    assert "VANCE_API_BASE" in info.value.hint


async def test_timeout_is_a_retryable_transport_error(make, fake_openai):
    model, _ = make(fake_openai.url, timeout=0.05, retries={"attempts": 1})
    fake_openai.enqueue(text="too late", delay=0.15)
    with pytest.raises(TransportError) as info:
        await model.complete(user())
    assert "timed out" in info.value.message
    assert "model.timeout" in info.value.hint


@pytest.mark.parametrize("api_base", ["http://10.255.255.1:8000/v1", None])
async def test_guard_refuses_non_loopback_endpoints_before_any_http(make, api_base):
    model, delays = make(api_base)
    with pytest.raises(ModelRequestsForbidden):
        await model.complete(user())
    assert delays == []


async def test_missing_ids_and_object_arguments_are_tolerated(make, fake_openai):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue_raw({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None,
                     "tool_calls": [{"type": "function", "function": {"name": "respond", "arguments": "{}"}},
                                    {"type": "function", "function": {"name": "respond",
                                                                      "arguments": {"message": "obj"}}}]}}],
    })
    calls = (await model.complete(user(tools=[RESPOND]))).tool_calls
    assert [c.name for c in calls] == ["respond", "respond"]
    assert all(c.id for c in calls) and calls[0].id != calls[1].id
    assert calls[1].parsed_arguments() == {"message": "obj"}


async def test_default_responder_drives_a_respond_turn(make, fake_openai):
    model, _ = make(fake_openai.url)
    call = (await model.complete(user("ping", tools=[RESPOND]))).tool_calls[0]
    assert call.name == "respond"
    assert call.parsed_arguments() == {"message": "echo: ping", "awaiting_user_input": True}


async def test_litellm_prints_nothing(make, fake_openai, capfd):
    model, _ = make(fake_openai.url)
    fake_openai.enqueue(text="quiet")
    fake_openai.enqueue_error(400)
    await model.complete(user())
    with pytest.raises(TransportError):
        await model.complete(user())
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_direct_model_survives_several_event_loops(fake_openai):
    # The CLI may call asyncio.run() once per turn; the lazily made client must follow the loop.
    import asyncio

    model = OpenAICompatModel(build_profile("openai/m", api_base=fake_openai.url, timeout=5, retries=FAST))
    fake_openai.enqueue(text="one")
    fake_openai.enqueue(text="two")
    assert asyncio.run(model.complete(user())).text == "one"
    assert asyncio.run(model.complete(user())).text == "two"


async def test_direct_model_accepts_minimal_bodies_and_reports_missing_choices(fake_openai):
    model = OpenAICompatModel(build_profile("openai/m", api_base=fake_openai.url, timeout=5, retries=FAST))
    fake_openai.enqueue_raw({"choices": [{"message": {"content": "x"}}]})
    fake_openai.enqueue_raw({"no": "choices"})
    assert (await model.complete(user())).text == "x"  # minimal bodies are fine
    from vance_cli.errors import ModelError

    with pytest.raises(ModelError, match="no choices"):
        await model.complete(user())
    await model.aclose()


async def test_direct_model_falls_back_to_openai_api_key_only_for_openai(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAICompatModel(build_profile("openai/gpt-4o")).api_key == "sk-env"
    assert OpenAICompatModel(build_profile("openai/gpt-4o", api_base="https://api.openai.com/v1/")).api_key == "sk-env"
    assert OpenAICompatModel(build_profile("openai/m", api_base="http://127.0.0.1:1/v1")).api_key is None
