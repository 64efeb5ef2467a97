"""A local OpenAI-compatible chat server for tests and benchmarks (stdlib only, no internet).

Use it through the pytest fixture (imported suite-wide by tests/conftest.py)::

    async def test_something(fake_openai):
        fake_openai.enqueue(text="hello")                                   # plain text reply
        fake_openai.enqueue(tool_calls=[("respond", {"message": "hi"})])    # one tool call
        fake_openai.enqueue(tool_calls=[("file_read", '{"path": "a"}'),     # raw argument text,
                                        {"name": "x", "arguments": {}, "id": "call_9"}])  # or a dict
        fake_openai.enqueue_error(500)                                      # HTTP 500, default error body
        fake_openai.enqueue_error(429, headers={"Retry-After": "1"})
        fake_openai.enqueue_raw({"choices": [...]})                        # any JSON body, sent as is
        model = OpenAICompatModel("openai/test-model", api_base=fake_openai.url, ...)
        ...
        assert fake_openai.requests[0]["response_format"] == {...}          # parsed request bodies

API (exact):

- ``FakeOpenAIServer(host="127.0.0.1", port=0)``; ``start()`` / ``stop()``; also a context manager.
- ``url``: ``"http://127.0.0.1:<port>/v1"``, what you pass as ``api_base``. ``port``.
- ``enqueue(text=None, tool_calls=None, finish_reason=None, usage=None)``: queue one reply.
  ``tool_calls`` is a list of ``(name, arguments)`` tuples (arguments a dict, or a raw string sent
  verbatim, malformed JSON included) or dicts ``{"name", "arguments", "id"?}``; ids default to
  ``call_<n>``. ``finish_reason`` defaults to ``"tool_calls"`` / ``"stop"``. ``usage`` is a dict like
  ``{"prompt_tokens": 3, "completion_tokens": 4}`` (default: 10 and 5). Keyword-only ``delay``
  (seconds) holds the answer back, for timeout tests; ``enqueue_error`` takes it too. Keyword-only
  ``chunk_delay`` (seconds) pauses between streamed chunks, so a display can be seen growing;
  ``cut_after`` (a chunk count) closes a stream after that many chunks, without ``[DONE]``.
- ``enqueue_error(status, body=None, headers=None)``: queue an HTTP error; ``body`` is a dict (sent
  as JSON) or a string; default ``{"error": {"message": "fake error <status>", ...}}``.
- ``enqueue_raw(body: dict)``: queue a 200 response with exactly this JSON body.
- ``requests``: list of the parsed JSON request bodies, in arrival order (errors included);
  ``request_headers``: the matching request headers, names lower-cased (``["authorization"]``).
- ``pending``: how many queued replies are left. ``reset()`` clears the queue and ``requests``.
- ``responder``: optional ``fn(request_body) -> {"text", "tool_calls", "usage"} | None`` that answers
  when the queue is empty (a stateless scripted brain, e.g. tests/engines/benjy_brain.py); None from
  it falls back to the default responder.

Queued replies are consumed one per request, in order. When the queue is empty a default responder
answers: if the request offers a ``respond`` tool, a single ``respond`` call with
``{"message": "echo: <last user message>", "awaiting_user_input": true}``; otherwise the text
``"echo: <last user message>"``. That makes the server usable for benchmarks and the CLI smoke test
without scripting.

Routes: ``POST /v1/chat/completions`` (also ``/chat/completions``), ``GET /v1/models``. A request
with ``"stream": true`` gets server-sent events (role chunk, content deltas, tool call deltas, a
finish chunk, a usage chunk when ``stream_options.include_usage``, then ``data: [DONE]``); queued
errors are sent as plain HTTP errors either way.

Standalone (benchmarks): ``python -m tests.fakeserver --port N`` prints the ``url`` on stdout, one
line, then serves until killed; it only ever uses the default responder.
"""

from __future__ import annotations

import argparse
import collections
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

try:  # pytest is only needed for the fixture; benchmarks run the server without it
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

_DEFAULT_USAGE = {"prompt_tokens": 10, "completion_tokens": 5}


def _tool_call_dict(item: Any, index: int) -> dict[str, Any]:
    if isinstance(item, dict):
        name, arguments, call_id = item["name"], item.get("arguments", {}), item.get("id")
    else:
        name, arguments = item
        call_id = None
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "id": call_id or f"call_{index}",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }


def _last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content or ""
    return ""


class _Reply:
    """One queued answer: a 200 JSON body or an HTTP error."""

    def __init__(
        self,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        cut_after: int | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.cut_after = cut_after


class FakeOpenAIServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._queue: collections.deque[_Reply] = collections.deque()
        self._counter = 0
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        # When the queue is empty: fn(request body) -> {"text"?, "tool_calls"?, "usage"?} or None (default responder)
        self.responder: Any = None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer((self._host, self._port), handler)
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() quick (shutdown waits for the next poll).
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:  # noqa: PYI034 - start() returns the same object
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------------

    def enqueue(
        self,
        text: str | None = None,
        tool_calls: list[Any] | None = None,
        finish_reason: str | None = None,
        usage: dict[str, int] | None = None,
        *,
        delay: float = 0.0,
        chunk_delay: float = 0.0,
        cut_after: int | None = None,
    ) -> None:
        with self._lock:
            calls = []
            for item in tool_calls or []:
                self._counter += 1
                calls.append(_tool_call_dict(item, self._counter))
        body = self._completion_body(text, calls, finish_reason, usage)
        self._push(_Reply(200, body, delay=delay, chunk_delay=chunk_delay, cut_after=cut_after))

    def enqueue_error(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None, *, delay: float = 0.0
    ) -> None:
        if body is None:
            body = {"error": {"message": f"fake error {status}", "type": "fake_error", "code": status}}
        self._push(_Reply(status, body, headers, delay=delay))

    def enqueue_raw(self, body: dict[str, Any]) -> None:
        self._push(_Reply(200, body))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.request_headers.clear()

    def _push(self, reply: _Reply) -> None:
        with self._lock:
            self._queue.append(reply)

    # -- answering -------------------------------------------------------------------------------

    @staticmethod
    def _completion_body(
        text: str | None, calls: list[dict[str, Any]], finish_reason: str | None, usage: dict[str, int] | None
    ) -> dict[str, Any]:
        usage = dict(usage or _DEFAULT_USAGE)
        usage.setdefault("prompt_tokens", 0)
        usage.setdefault("completion_tokens", 0)
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "fake-model",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason or ("tool_calls" if calls else "stop")}
            ],
            "usage": usage,
        }

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> _Reply:
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            if self._queue:
                return self._queue.popleft()
            self._counter += 1
            counter = self._counter
        if self.responder is not None:
            spec = self.responder(body)
            if spec is not None:
                with self._lock:
                    calls = []
                    for item in spec.get("tool_calls") or []:
                        self._counter += 1
                        calls.append(_tool_call_dict(item, self._counter))
                return _Reply(200, self._completion_body(spec.get("text"), calls, None, spec.get("usage")))
        echo = "echo: " + _last_user_text(body)
        tool_names = {
            (t.get("function") or {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)
        }
        if "respond" in tool_names:
            call = _tool_call_dict(("respond", {"message": echo, "awaiting_user_input": True}), counter)
            return _Reply(200, self._completion_body(None, [call], None, None))
        return _Reply(200, self._completion_body(echo, [], None, None))


def _stream_events(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """Split a full completion body into OpenAI-style streaming chunks."""
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    base = {"id": body.get("id", "chatcmpl-fake"), "object": "chat.completion.chunk",
            "created": body.get("created", 0), "model": body.get("model", "fake-model")}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    text = message.get("content") or ""
    for start in range(0, len(text), 8):
        events.append(chunk({"content": text[start:start + 8]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        events.append(chunk({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                             "function": {"name": function.get("name"), "arguments": ""}}]}))
        for start in range(0, len(arguments), 16):
            events.append(chunk({"tool_calls": [{"index": index,
                                                 "function": {"arguments": arguments[start:start + 16]}}]}))
    events.append(chunk({}, choice.get("finish_reason") or "stop"))
    if include_usage and body.get("usage"):
        events.append({**base, "choices": [], "usage": body["usage"]})
    return events


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAIServer
    # HTTP/1.1 keep-alive: clients reuse connections, as they would against a real server.
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus the client's
        # delayed ACK adds ~40 ms to every response.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests); nothing to report

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json" if not isinstance(payload, str) else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.split("?")[0].rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
            return
        reply = self.fake._next_reply(body, {k.lower(): v for k, v in self.headers.items()})
        if reply.delay:
            time.sleep(reply.delay)  # lets tests provoke client timeouts
        if reply.status != 200 or not body.get("stream"):
            self._send_json(reply.status, reply.body, reply.headers)
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        # No Content-Length for a stream: close the connection to mark its end.
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for number, event in enumerate(_stream_events(reply.body, include_usage)):
            if reply.cut_after is not None and number >= reply.cut_after:
                self.wfile.flush()
                return  # the connection closes mid-stream
            if reply.chunk_delay and number:
                self.wfile.flush()
                time.sleep(reply.chunk_delay)
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def _fake_openai():
    """A started FakeOpenAIServer; stopped after the test."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


fake_openai = pytest.fixture(_fake_openai, name="fake_openai") if pytest is not None else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible chat API on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free port)")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(port=args.port).start()
    print(server.url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
