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
        model = OpenAICompatModel(build_profile("openai/test-model", api_base=fake_openai.url, ...))
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
  ``cut_after`` (a chunk count) closes a stream after that many chunks, without ``[DONE]``;
  ``keepalive`` (a count) sends that many ``: ping`` comment lines and ``progress`` that many
  llama-server prompt-progress chunks (no choices), ``chunk_delay`` apart, before the first chunk
  (a local server reading a long prompt).
- ``enqueue_error(status, body=None, headers=None)``: queue an HTTP error; ``body`` is a dict (sent
  as JSON) or a string; default ``{"error": {"message": "fake error <status>", ...}}``.
- ``enqueue_raw(body, status=200, headers=None, delay=0.0)``: queue a response with exactly this JSON
  body (a recorded provider body, say), whatever route the request came in on.
- ``requests``: list of the parsed JSON request bodies, in arrival order (errors included);
  ``request_headers``: the matching request headers, names lower-cased (``["authorization"]``);
  ``paths``: the matching request paths (query string included); ``times``: when each arrived
  (``time.monotonic()``), for tests that check how requests were spread over time; ``peers``: the
  client's ``(host, port)`` of each (which process sent it: tests/structure/test_batch_ray.py).
- ``pending``: how many queued replies are left. ``reset()`` clears the queue and ``requests``.
- ``responder``: optional ``fn(request_body) -> {"text", "tool_calls", "usage"} | None`` that answers
  when the queue is empty (a stateless scripted brain, e.g. tests/engines/benjy_brain.py); None from
  it falls back to the default responder.

Queued replies are consumed one per request, in order. When the queue is empty a default responder
answers: if the request offers a ``respond`` tool, a single ``respond`` call with
``{"message": "echo: <last user message>", "awaiting_user_input": true}``; otherwise the text
``"echo: <last user message>"``. That makes the server usable for benchmarks and the CLI smoke test
without scripting.

Routes: ``POST /v1/chat/completions`` (also ``/chat/completions``), ``GET /v1/models``, and two
native provider routes so litellm's own providers can be served too: Anthropic's
``POST .../v1/messages`` and Gemini's ``POST .../models/<model>:generateContent``. On those,
``enqueue`` replies and the default responder are translated into that provider's response shape
(``enqueue_raw`` bodies never are), and the provider's documented request checks are applied:
Anthropic answers 400 "text content blocks must be non-empty" and Gemini 400 "empty text
parameter" for a request with an empty text part, with the error bodies those APIs send (sources
in tests/replay/SOURCES.md). ``url_root`` (``http://127.0.0.1:<port>``) is the base without /v1. A request
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
import re
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
    """The last user text of an OpenAI, Anthropic (``messages``) or Gemini (``contents``) request."""
    for message in reversed(body.get("messages") or body.get("contents") or []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content", message.get("parts"))
            if isinstance(content, list):  # content parts / blocks
                texts = [p.get("text", "") for p in content if isinstance(p, dict) and "text" in p]
                if not texts:
                    continue  # an Anthropic tool_result / Gemini functionResponse turn
                return " ".join(texts)
            return content or ""
    return ""


def _tool_names(body: dict[str, Any]) -> set[str]:
    """Tool names offered by an OpenAI, Anthropic or Gemini request."""
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if "function" in tool:
            names.add((tool.get("function") or {}).get("name"))
        elif "name" in tool:  # Anthropic
            names.add(tool["name"])
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:  # Gemini
            names.add(decl.get("name"))
    return names


# --- native provider routes ------------------------------------------------------------------

# Error bodies as the providers send them (sources: tests/replay/SOURCES.md).
ANTHROPIC_EMPTY_TEXT = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": "messages: text content blocks must be non-empty"},
}
GEMINI_EMPTY_TEXT = {
    "error": {
        "code": 400,
        "message": (
            "Unable to submit request because it has an empty text parameter. Add a value to the parameter and "
            "try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
        ),
        "status": "INVALID_ARGUMENT",
    }
}

_GEMINI_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")


def route_of(path: str) -> str | None:
    """"openai", "anthropic" or "gemini" for a request path; None for an unknown route."""
    bare = path.split("?")[0].rstrip("/")
    if bare in ("/v1/chat/completions", "/chat/completions") or bare.endswith("/chat/completions"):
        return "openai"
    if bare.endswith("/v1/messages"):
        return "anthropic"
    if _GEMINI_PATH.search(bare):
        return "gemini"
    return None


def provider_check(route: str, body: dict[str, Any]) -> _Reply | None:
    """The provider's own rejection of ``body`` (empty text parts), or None when it would accept it."""
    if route == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            if not blocks or any(b.get("type") == "text" and not b.get("text") for b in blocks if isinstance(b, dict)):
                return _Reply(400, ANTHROPIC_EMPTY_TEXT)
    if route == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if isinstance(part, dict) and "text" in part and not part["text"]:
                    return _Reply(400, GEMINI_EMPTY_TEXT)
    return None


_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
_GEMINI_FINISH = {"stop": "STOP", "tool_calls": "STOP", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


def translate(route: str, body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI chat-completion body in the ``route`` provider's native response shape."""
    if route == "openai":
        return body
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    usage = body.get("usage") or {}
    calls = message.get("tool_calls") or []
    finish = choice.get("finish_reason") or "stop"
    if route == "anthropic":
        content: list[dict[str, Any]] = []
        if message.get("content"):
            content.append({"type": "text", "text": message["content"]})
        for call in calls:
            function = call["function"]
            content.append({"type": "tool_use", "id": call["id"].replace("call_", "toolu_"), "name": function["name"],
                            "input": _json_or_raw(function["arguments"])})
        return {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "fake-model"),
            "content": content, "stop_reason": _ANTHROPIC_STOP.get(finish, "end_turn"), "stop_sequence": None,
            "usage": {"input_tokens": usage.get("prompt_tokens", 0), "output_tokens": usage.get("completion_tokens", 0)},
        }
    parts: list[dict[str, Any]] = []
    if message.get("content"):
        parts.append({"text": message["content"]})
    for call in calls:
        function = call["function"]
        parts.append({"functionCall": {"name": function["name"], "args": _json_or_raw(function["arguments"])}})
    return {
        "candidates": [{"content": {"parts": parts, "role": "model"}, "finishReason": _GEMINI_FINISH.get(finish, "STOP"),
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": usage.get("prompt_tokens", 0),
                          "candidatesTokenCount": usage.get("completion_tokens", 0),
                          "totalTokenCount": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)},
        "modelVersion": body.get("model", "fake-model"),
    }


def _json_or_raw(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return {"_raw": arguments}


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
        *,
        generic: bool = False,
        keepalive: int = 0,
        progress: int = 0,
    ) -> None:
        self.keepalive = keepalive
        self.progress = progress
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.delay = delay
        self.chunk_delay = chunk_delay
        self.cut_after = cut_after
        # An OpenAI-shaped reply made by enqueue() or the default responder: translated into the
        # native shape when the request came in on the Anthropic or Gemini route.
        self.generic = generic


class FakeOpenAIServer:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._queue: collections.deque[_Reply] = collections.deque()
        self._counter = 0
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.times: list[float] = []
        self.peers: list[tuple[str, int]] = []
        # When the queue is empty: fn(request body) -> {"text"?, "tool_calls"?, "usage"?} or None (default responder)
        self.responder: Any = None
        # GET routes: the /v1/models body (None: a plain list of "fake-model"), a /props body
        # (None: 404, as servers without it answer), and the GET paths seen, in order.
        self.models_body: Any = None
        self.props_body: Any = None
        self.get_paths: list[str] = []
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

    @property
    def url_root(self) -> str:
        return f"http://{self._host}:{self.port}"

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
        keepalive: int = 0,
        progress: int = 0,
    ) -> None:
        with self._lock:
            calls = []
            for item in tool_calls or []:
                self._counter += 1
                calls.append(_tool_call_dict(item, self._counter))
        body = self._completion_body(text, calls, finish_reason, usage)
        self._push(_Reply(200, body, delay=delay, chunk_delay=chunk_delay, cut_after=cut_after, generic=True, keepalive=keepalive, progress=progress))

    def enqueue_error(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None, *, delay: float = 0.0
    ) -> None:
        if body is None:
            body = {"error": {"message": f"fake error {status}", "type": "fake_error", "code": status}}
        self._push(_Reply(status, body, headers, delay=delay))

    def enqueue_raw(
        self, body: Any, status: int = 200, headers: dict[str, str] | None = None, *, delay: float = 0.0
    ) -> None:
        self._push(_Reply(status, body, headers, delay=delay))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.request_headers.clear()
            self.paths.clear()
            self.times.clear()
            self.peers.clear()

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

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str], path: str = "/v1/chat/completions",
                    peer: tuple[str, int] = ("", 0)) -> _Reply:
        with self._lock:
            self.peers.append(peer)
            self.requests.append(body)
            self.request_headers.append(headers)
            self.paths.append(path)
            self.times.append(time.monotonic())
            # The provider's own checks come first: a rejected request consumes no queued reply.
            rejected = provider_check(route_of(path) or "openai", body)
            if rejected is not None:
                return rejected
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
                return _Reply(200, self._completion_body(spec.get("text"), calls, None, spec.get("usage")), generic=True)
        echo = "echo: " + _last_user_text(body)
        if "respond" in _tool_names(body):
            call = _tool_call_dict(("respond", {"message": echo, "awaiting_user_input": True}), counter)
            return _Reply(200, self._completion_body(None, [call], None, None), generic=True)
        return _Reply(200, self._completion_body(echo, [], None, None), generic=True)


def _stream_events(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """Split a full completion body into OpenAI-style streaming chunks."""
    choice = (body.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    base = {"id": body.get("id", "chatcmpl-fake"), "object": "chat.completion.chunk",
            "created": body.get("created", 0), "model": body.get("model", "fake-model")}

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    for key in ("reasoning_content", "refusal"):  # text fields stream in pieces, like content
        value = message.get(key) or ""
        for start in range(0, len(value), 8):
            events.append(chunk({key: value[start:start + 8]}))
    for key, value in message.items():  # other provider fields (extra_content, ...) in one piece
        if key not in ("role", "content", "tool_calls", "reasoning_content", "refusal") and value not in (None, [], {}, ""):
            events.append(chunk({key: value}))
    text = message.get("content") or ""
    for start in range(0, len(text), 8):
        events.append(chunk({"content": text[start:start + 8]}))
    for index, call in enumerate(message.get("tool_calls") or []):
        function = call.get("function") or {}
        arguments = function.get("arguments") or ""
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        extra = {k: v for k, v in call.items() if k not in ("id", "type", "function", "index")}
        events.append(chunk({"tool_calls": [{"index": index, "id": call.get("id"), "type": "function",
                                             "function": {"name": function.get("name"), "arguments": ""}, **extra}]}))
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
        self.fake.get_paths.append(self.path)
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            body = self.fake.models_body
            self._send_json(200, body if body is not None else {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})
        elif self.path.rstrip("/") == "/props" and self.fake.props_body is not None:
            self._send_json(200, self.fake.props_body)
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        route = route_of(self.path)
        if route is None:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send_json(400, {"error": {"message": f"invalid JSON body: {exc}"}})
            return
        reply = self.fake._next_reply(body, {k.lower(): v for k, v in self.headers.items()}, self.path, self.client_address[:2])
        if reply.delay:
            time.sleep(reply.delay)  # lets tests provoke client timeouts
        if reply.generic and reply.status == 200 and route != "openai":
            reply = _Reply(200, translate(route, reply.body), reply.headers)
        if reply.status != 200 or not body.get("stream") or route != "openai":
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
        for _ in range(reply.keepalive):  # SSE comments (llama-cpp-python's ": ping")
            self.wfile.write(b": ping\n\n")
            self.wfile.flush()
            time.sleep(reply.chunk_delay)
        for n in range(reply.progress):  # llama-server's prompt-progress chunks (return_progress)
            step = {"object": "chat.completion.chunk", "choices": [],
                    "prompt_progress": {"total": reply.progress, "cache": 0, "processed": n + 1, "time_ms": 1}}
            self.wfile.write(f"data: {json.dumps(step)}\n\n".encode())
            self.wfile.flush()
            time.sleep(reply.chunk_delay)
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
