"""A ChatModel that speaks the OpenAI chat-completions wire format directly over httpx.

For ``openai/...`` models behind an ``api_base`` (OpenAI, Ollama's /v1, vLLM, llama.cpp server,
LM Studio): ``import litellm`` costs 7-9 s, which a one-shot CLI cannot pay, and these servers need
nothing litellm adds. ``complete`` posts and parses one response; ``stream`` reads server-sent
events (``llm/streaming.py`` folds them back into the same response). Transport retries via
``retry.with_transport_retries``. The response parser here is shared with the litellm implementation.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx

from vance_cli.errors import ModelError, TransportError
from vance_cli.llm.base import Capabilities, ChatRequest, Completion, ToolCall, Usage
from vance_cli.llm.capabilities import OPENAI_HOST, default_capabilities
from vance_cli.llm.guard import check_request_allowed
from vance_cli.llm.retry import (
    connection_error,
    error_for_status,
    parse_retry_after,
    retry_per_settings,
    retry_settings,
    timeout_error,
)
from vance_cli.llm.streaming import RESTART, ChunkAssembler, OnDelta, replay, sse_data, stream_body

DEFAULT_API_BASE = "https://api.openai.com/v1"


def wire_model_name(model: str) -> str:
    """The model name the server expects: litellm's "openai/" routing prefix removed."""
    return model.removeprefix("openai/")


def build_body(request: ChatRequest, model: str, capabilities: Capabilities) -> dict[str, Any]:
    """The chat-completions request body for ``request`` (only the fields that are set)."""
    body: dict[str, Any] = {"model": model, "messages": [m.to_openai() for m in request.messages]}
    if request.tools:
        body["tools"] = [t.to_openai() for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
        # Servers that do not know the parameter may reject it, and OpenAI rejects it without tools.
        if request.parallel_tool_calls is not None and capabilities.parallel_tool_calls:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        body["response_format"] = request.response_format
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    return body


def _text_of(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict)) or None
    return str(content)


def _new_call_id() -> str:
    return f"call_{secrets.token_hex(6)}"


def parse_response(data: Mapping[str, Any], *, model: str) -> Completion:
    """A chat-completions response body (a dict) as a Completion with ``usage.calls == 1``.

    Tolerates what local servers do: missing tool call ids (generated), arguments sent as an object
    (re-serialised), content as a list of parts, the legacy ``function_call`` field.
    """
    choices = data.get("choices") if isinstance(data, Mapping) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], Mapping):
        raise ModelError(
            f"{model}: the response has no choices: {json.dumps(data, default=str)[:300]}",
            hint="the server does not look OpenAI-compatible; check api_base and the transport setting",
        )
    choice = choices[0]
    message = choice.get("message") or {}
    raw_calls = list(message.get("tool_calls") or [])
    if not raw_calls and isinstance(message.get("function_call"), Mapping):
        raw_calls = [{"function": message["function_call"]}]
    calls: list[ToolCall] = []
    for raw in raw_calls:
        if not isinstance(raw, Mapping):
            continue
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        if arguments is None:
            arguments = "{}"
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(ToolCall(id=raw.get("id") or _new_call_id(), name=function.get("name") or "", arguments=arguments))
    usage_data = data.get("usage") or {}
    usage = Usage(
        calls=1,
        prompt_tokens=int(usage_data.get("prompt_tokens") or 0),
        completion_tokens=int(usage_data.get("completion_tokens") or 0),
    )
    return Completion(
        text=_text_of(message.get("content")),
        tool_calls=calls,
        usage=usage,
        finish_reason=choice.get("finish_reason"),
        model=data.get("model") or model,
    )


def _error_detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text
    if isinstance(data, Mapping):
        error = data.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if data.get("detail"):
            return str(data["detail"])
    return json.dumps(data)[:300]


class OpenAICompatModel:
    """ChatModel over ``POST {api_base}/chat/completions``."""

    def __init__(
        self,
        model: str,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: Mapping[str, Any] | None = None,
        capabilities: Capabilities | None = None,
        *,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = model
        self.wire_model = wire_model_name(model)
        self.api_base = (api_base or DEFAULT_API_BASE).rstrip("/")
        # Only OpenAI proper gets the provider's own key variable; local servers need none.
        if api_key is None and (urlsplit(self.api_base).hostname or "") == OPENAI_HOST:
            api_key = os.environ.get("OPENAI_API_KEY")
        self.api_key = api_key
        self.timeout = float(timeout or 60.0)
        self.retries = retry_settings(retries)
        self.capabilities = capabilities or default_capabilities(model, self.api_base)
        self._sleep = sleep
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _http(self) -> httpx.AsyncClient:
        # A client's connections belong to the loop that opened them; a CLI that runs several
        # asyncio.run() calls gets a fresh client per loop instead of "Event loop is closed".
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            # Plain-http endpoints (local servers) never use TLS: skip loading the CA bundle, which
            # costs ~0.1 s on the first call.
            verify = not self.api_base.startswith("http://")
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout), headers=headers, transport=self._transport, verify=verify
            )
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and not self._client.is_closed:
            try:
                await self._client.aclose()
            except RuntimeError:  # opened on another, now closed loop
                pass
        self._client = None

    async def complete(self, request: ChatRequest) -> Completion:
        check_request_allowed(self.name, self.api_base)
        body = build_body(request, self.wire_model, self.capabilities)
        url = f"{self.api_base}/chat/completions"

        async def attempt() -> Completion:
            return await self._post(url, body)

        return await retry_per_settings(attempt, self.retries, sleep=self._sleep, describe=f"{self.name} at {self.api_base}")

    async def _post(self, url: str, body: dict[str, Any]) -> Completion:
        try:
            response = await self._http().post(url, json=body)
        except httpx.TimeoutException as exc:
            raise timeout_error(self.name, self.api_base, self.timeout, type(exc).__name__) from exc
        except httpx.TransportError as exc:  # connect errors, resets, protocol errors
            raise connection_error(self.name, self.api_base, str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            raise error_for_status(
                response.status_code,
                _error_detail(response),
                model=self.name,
                api_base=self.api_base,
                retry_after=parse_retry_after(response.headers),
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise TransportError(
                f"{self.name} at {self.api_base}: the response is not JSON: {response.text[:200]!r}",
                status=response.status_code,
                retryable=False,
                hint="the server does not look OpenAI-compatible; check api_base (it usually ends in /v1)",
            ) from exc
        return parse_response(data, model=self.name)

    # --- streaming (server-sent events) ----------------------------------------------------------

    async def stream(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        """``complete``, streamed: display deltas to ``on_delta``; the same Completion at the end."""
        check_request_allowed(self.name, self.api_base)
        body = stream_body(build_body(request, self.wire_model, self.capabilities))
        url = f"{self.api_base}/chat/completions"
        attempts = 0

        async def attempt() -> Completion:
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                on_delta(RESTART)
            return await self._post_stream(url, body, on_delta)

        return await retry_per_settings(attempt, self.retries, sleep=self._sleep, describe=f"{self.name} at {self.api_base}")

    async def _post_stream(self, url: str, body: dict[str, Any], on_delta: OnDelta) -> Completion:
        assembler = ChunkAssembler()
        done = False
        try:
            async with self._http().stream("POST", url, json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise error_for_status(
                        response.status_code,
                        _error_detail(response),
                        model=self.name,
                        api_base=self.api_base,
                        retry_after=parse_retry_after(response.headers),
                    )
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    # a server that ignores "stream": one JSON body, shown at once
                    await response.aread()
                    completion = parse_response(self._json_of(response), model=self.name)
                    replay(completion, on_delta)
                    return completion
                async for line in response.aiter_lines():
                    data = sse_data(line)
                    if data is None or not data:
                        continue
                    if data == "[DONE]":
                        done = True
                        break
                    try:
                        chunk = json.loads(data)
                    except ValueError as exc:
                        raise TransportError(
                            f"{self.name} at {self.api_base}: a streamed chunk is not JSON: {data[:200]!r}",
                            retryable=False,
                            hint="the server does not look OpenAI-compatible; check api_base",
                        ) from exc
                    for delta in assembler.add(chunk):
                        on_delta(delta)
        except httpx.TimeoutException as exc:
            raise timeout_error(self.name, self.api_base, self.timeout, type(exc).__name__) from exc
        except httpx.TransportError as exc:  # connect errors, resets, a stream cut short
            raise connection_error(self.name, self.api_base, str(exc) or type(exc).__name__) from exc
        if not (done or assembler.finished):
            raise TransportError(
                f"{self.name} at {self.api_base}: the stream was cut short after {assembler.chunks} chunks",
                retryable=True,
                hint="check the server; it closed the stream before the reply was complete",
            )
        return parse_response(assembler.body(self.name), model=self.name)

    def _json_of(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise TransportError(
                f"{self.name} at {self.api_base}: the response is not JSON: {response.text[:200]!r}",
                status=response.status_code,
                retryable=False,
                hint="the server does not look OpenAI-compatible; check api_base (it usually ends in /v1)",
            ) from exc
