"""The shared fake OpenAI server behaves like the API the model layer and other tests rely on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.fakeserver import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
# One client for the module; verify=False skips loading the CA bundle (~0.1 s per client), no TLS here.
HTTP = httpx.Client(timeout=5, verify=False)


def _post(server, **body):
    body.setdefault("model", "m")
    body.setdefault("messages", [{"role": "user", "content": "hello"}])
    return HTTP.post(f"{server.url}/chat/completions", json=body)


def test_queued_text_reply_is_returned_and_request_recorded(fake_openai):
    fake_openai.enqueue(text="hi there", usage={"prompt_tokens": 3, "completion_tokens": 4})
    data = _post(fake_openai, temperature=0.5).json()
    assert data["choices"][0]["message"]["content"] == "hi there"
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["usage"] == {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    assert fake_openai.requests[0]["temperature"] == 0.5
    assert fake_openai.pending == 0


def test_tool_calls_accept_tuples_raw_strings_and_dicts(fake_openai):
    fake_openai.enqueue(tool_calls=[("a", {"x": 1}), ("b", "{not json"), {"name": "c", "arguments": {}, "id": "id9"}])
    message = _post(fake_openai).json()["choices"][0]["message"]
    calls = message["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["a", "b", "c"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"x": 1}
    assert calls[1]["function"]["arguments"] == "{not json"
    assert calls[2]["id"] == "id9"
    assert calls[0]["id"] and calls[0]["id"] != calls[1]["id"]


def test_errors_and_raw_bodies_are_sent_in_queue_order(fake_openai):
    fake_openai.enqueue_error(429, headers={"Retry-After": "3"})
    fake_openai.enqueue_raw({"choices": [], "custom": True})
    first = _post(fake_openai)
    assert first.status_code == 429 and first.headers["retry-after"] == "3"
    assert "fake error 429" in first.json()["error"]["message"]
    assert _post(fake_openai).json() == {"choices": [], "custom": True}
    assert len(fake_openai.requests) == 2


def test_default_responder_calls_respond_when_offered(fake_openai):
    tools = [{"type": "function", "function": {"name": "respond", "parameters": {}}}]
    call = _post(fake_openai, tools=tools).json()["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "respond"
    assert json.loads(call["function"]["arguments"]) == {"message": "echo: hello", "awaiting_user_input": True}


def test_default_responder_echoes_text_without_respond_tool(fake_openai):
    assert _post(fake_openai).json()["choices"][0]["message"]["content"] == "echo: hello"


def test_stream_true_sends_sse_chunks_that_reassemble(fake_openai):
    fake_openai.enqueue(text="a longer streamed text", tool_calls=[("t", {"k": "v" * 20})])
    with HTTP.stream("POST", f"{fake_openai.url}/chat/completions", json={
        "model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}) as response:
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    args = "".join(
        d["function"].get("arguments") or ""
        for c in chunks if c["choices"] for d in c["choices"][0]["delta"].get("tool_calls") or []
    )
    assert text == "a longer streamed text"
    assert json.loads(args) == {"k": "v" * 20}
    assert chunks[-1]["usage"]["completion_tokens"] == 5


def test_unknown_route_is_404(fake_openai):
    assert HTTP.post(f"{fake_openai.url}/embeddings", json={}).status_code == 404


def test_context_manager_stops_the_server():
    with FakeOpenAIServer() as server:
        url = server.url
        assert _post(server).status_code == 200
    try:
        httpx.post(f"{url}/chat/completions", json={}, timeout=1, verify=False)
    except httpx.TransportError:
        pass
    else:
        raise AssertionError("server still answering after stop()")


def test_standalone_server_prints_url_and_serves():
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakeserver", "--port", "0"],
        cwd=REPO, stdout=subprocess.PIPE, text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        data = HTTP.post(f"{url}/chat/completions", json={"messages": [{"role": "user", "content": "x"}]})
        assert data.json()["choices"][0]["message"]["content"] == "echo: x"
    finally:
        proc.terminate()
        proc.wait(timeout=5)
