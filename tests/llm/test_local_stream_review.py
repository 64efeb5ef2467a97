"""Issue 18 review (repros by the reviewer, kept). Review of issue 18's local streaming (llm/openai_compat.py complete() streams for LOCAL_FAMILIES)."""
import asyncio
import json

import httpx

from vance_cli.llm.base import ChatRequest
from vance_cli.llm.capabilities import LOCAL_FAMILIES
from vance_cli.llm.openai_compat import OpenAICompatModel
from vance_cli.llm.profile import build_profile
from vance_cli.messages import Message

USAGE = {"prompt_tokens": 1600, "completion_tokens": 12, "total_tokens": 1612}


def _llama_cpp_python(request: httpx.Request) -> httpx.Response:
    """What llama-cpp-python 0.3.36's server answers: usage in a plain JSON reply; a stream of
    chat.completion.chunk objects without any usage, whatever stream_options says
    (llama_chat_format._convert_text_completion_chunks_to_chat)."""
    body = json.loads(request.content)
    if not body.get("stream"):
        return httpx.Response(200, json={
            "id": "c", "object": "chat.completion", "model": "qwen",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!"}, "finish_reason": "stop"}],
            "usage": USAGE,
        })
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "model": "qwen",
         "choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]},
        {"id": "c", "object": "chat.completion.chunk", "model": "qwen",
         "choices": [{"index": 0, "delta": {"content": "Hello!"}, "finish_reason": None}]},
        {"id": "c", "object": "chat.completion.chunk", "model": "qwen",
         "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    text = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks) + "data: [DONE]\r\n\r\n"
    return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


def test_llama_cpp_python_calls_keep_their_token_counts():
    asyncio.run(_llama_cpp_python_usage())


async def _llama_cpp_python_usage():
    profile = build_profile("openai/qwen", api_base="http://127.0.0.1:9/v1",
                            capabilities=LOCAL_FAMILIES["llama-cpp-python"])
    model = OpenAICompatModel(profile, transport=httpx.MockTransport(_llama_cpp_python))
    try:
        completion = await model.complete(ChatRequest(messages=[Message(role="user", content="hi")]))
    finally:
        await model.aclose()
    assert completion.text == "Hello!"
    # Before e2040a2 this call was not streamed and reported 1,600 prompt tokens; streamed, the
    # server sends no usage and the call counts 0 tokens: process usage, Benjy's maxTokens net,
    # more_room_for's context cap (prompt_tokens) and eval.py's token columns all read 0.
    assert completion.usage.prompt_tokens == 1600, completion.usage


def test_a_llama_server_stream_asks_for_prompt_progress():
    """llama-server sends nothing between the 200 headers and the first token unless the request
    sets return_progress (tools/server/server-context.cpp: `if (stream && return_progress)
    send_partial_response(...)`); it sends no SSE keep-alive comments. So the new "anything heard
    is progress" rule never sees progress during a long prefill, and a prefill longer than
    model.timeout (120 s: the httpx read timeout between two lines) is cut as before."""
    seen = {}

    def server(request: httpx.Request) -> httpx.Response:
        seen.update(json.loads(request.content))
        return _llama_cpp_python(request)

    async def go():
        profile = build_profile("openai/qwen", api_base="http://127.0.0.1:9/v1", capabilities=LOCAL_FAMILIES["llama-server"])
        model = OpenAICompatModel(profile, transport=httpx.MockTransport(server))
        try:
            await model.complete(ChatRequest(messages=[Message(role="user", content="hi")]))
        finally:
            await model.aclose()

    asyncio.run(go())
    assert seen.get("stream") is True
    assert seen.get("return_progress") is True, sorted(seen)


def test_a_server_that_only_pings_still_ends_within_a_bound():
    """llama-cpp-python's server (sse_starlette) sends a `: ping` comment every 15 s from its event
    loop, also while the request waits for the model lock or the model thread is stuck. Every
    such line now counts as progress (assembler.heard), so neither max_total nor the read timeout
    ever ends the call: there is no bound at all. Here: max_total 1 s, read timeout 5 s, a server
    that pings every 0.3 s for 6 s and then answers; the call should have ended long before."""
    import time

    from tests.fakeserver import FakeOpenAIServer
    from vance_cli.errors import TransportError

    tight = {"attempts": 1, "base_delay": 0.0, "max_delay": 0.0, "max_total": 1.0}
    with FakeOpenAIServer() as fake:
        fake.enqueue(text="late", keepalive=20, chunk_delay=0.3)

        async def go():
            profile = build_profile("openai/qwen", api_base=fake.url, retries=tight, timeout=5.0,
                                    capabilities=LOCAL_FAMILIES["llama-cpp-python"])
            model = OpenAICompatModel(profile)
            try:
                return await model.complete(ChatRequest(messages=[Message(role="user", content="hi")]))
            finally:
                await model.aclose()

        started = time.monotonic()
        try:
            asyncio.run(go())
        except TransportError:
            pass
        took = time.monotonic() - started
    assert took < 4.0, f"a server that sent nothing but keep-alives held the call {took:.1f} s (max_total 1 s)"
