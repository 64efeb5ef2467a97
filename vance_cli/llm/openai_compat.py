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
from urllib.parse import urlsplit, urlunsplit

import httpx

from vance_cli.errors import ModelError, TransportError
from vance_cli.llm.base import (
    EXTRA_CALL_KEYS,
    EXTRA_MESSAGE_KEYS,
    Capabilities,
    ChatRequest,
    Completion,
    ToolCall,
    Usage,
    wire_messages,
)
from vance_cli.llm.capabilities import OPENAI_HOST, default_capabilities
from vance_cli.llm.endpoints import normalize_api_base, shown_url
from vance_cli.llm.guard import check_request_allowed
from vance_cli.llm.model_map import max_output_tokens, resolve_max_tokens, resolve_price
from vance_cli.llm.retry import (
    Announce,
    announce_on_stderr,
    connection_error,
    error_for_status,
    parse_retry_after,
    retry_per_settings,
    retry_settings,
    timeout_error,
)
from vance_cli.llm.streaming import ChunkAssembler, OnDelta, replay, sse_data, stream_body, stream_with_retries
from vance_cli.names import DEFAULT_MODEL_TIMEOUT

DEFAULT_API_BASE = "https://api.openai.com/v1"
# Seconds to open a connection (the answer itself may take model.timeout).
CONNECT_TIMEOUT = 10.0


def endpoint_url(api_base: str, path: str = "/chat/completions") -> str:
    """``path`` appended to the path of ``api_base``, before any query string (Azure's ``?api-version=``)."""
    parts = urlsplit(api_base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def wire_model_name(model: str) -> str:
    """The model name the server expects: litellm's "openai/" routing prefix removed."""
    return model.removeprefix("openai/")


CONTENT_FILTER_REFUSAL = "The provider's content filter stopped the reply (finish_reason content_filter)."


def build_body(
    request: ChatRequest,
    model: str,
    capabilities: Capabilities,
    *,
    source: str | None = None,
    max_tokens: int | None = None,
    max_tokens_field: str = "max_tokens",
) -> dict[str, Any]:
    """The chat-completions request body for ``request`` (only the fields that are set).

    ``source`` is the ChatModel's name (whose provider extras may go back, see ``wire_messages``);
    ``max_tokens`` the model's default output limit, used when the request sets none, and sent as
    ``max_tokens_field`` (OpenAI's own API wants ``max_completion_tokens``).
    """
    body: dict[str, Any] = {"model": model, "messages": wire_messages(request.messages, source or model)}
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
    limit = request.max_tokens or max_tokens
    if limit:
        body[max_tokens_field] = int(limit)
    return body


def _text_of(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict)) or None
    return str(content)


def _new_call_id() -> str:
    return f"call_{secrets.token_hex(6)}"


def _extras(raw: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The non-empty ``keys`` of a message or tool call, also from litellm's provider_specific_fields."""
    nested = raw.get("provider_specific_fields")
    nested = nested if isinstance(nested, Mapping) else {}
    out: dict[str, Any] = {}
    for key in keys:
        value = raw.get(key)
        if value in (None, "", [], {}):
            value = nested.get(key)
        if value not in (None, "", [], {}):
            out[key] = value
    return out


def parse_response(data: Mapping[str, Any], *, model: str, source: str | None = None) -> Completion:
    """A chat-completions response body (a dict) as a Completion with ``usage.calls == 1``.

    Tolerates what local servers do: missing tool call ids (generated), arguments sent as an object
    (re-serialised), content as a list of parts, the legacy ``function_call`` field. Keeps what the
    provider wants back (``EXTRA_MESSAGE_KEYS``, credited to ``source``) and a refusal.
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
        calls.append(
            ToolCall(
                id=raw.get("id") or _new_call_id(),
                name=function.get("name") or "",
                arguments=arguments,
                extra=_extras(raw, EXTRA_CALL_KEYS),
            )
        )
    usage_data = data.get("usage") or {}
    usage = Usage(
        calls=1,
        prompt_tokens=int(usage_data.get("prompt_tokens") or 0),
        completion_tokens=int(usage_data.get("completion_tokens") or 0),
    )
    text = _text_of(message.get("content"))
    finish_reason = choice.get("finish_reason")
    specific = message.get("provider_specific_fields")
    specific = specific if isinstance(specific, Mapping) else {}
    refusal = message.get("refusal") or specific.get("refusal")
    if not refusal and not calls and (finish_reason == "content_filter" or specific.get("stop_reason") == "refusal"):
        # Gemini's SAFETY and Anthropic's "refusal" stop (litellm: content_filter); Anthropic's
        # refusal may come with text, which is then the refusal.
        refusal = (text or "").strip() or CONTENT_FILTER_REFUSAL
    return Completion(
        text=text,
        tool_calls=calls,
        usage=usage,
        finish_reason=finish_reason,
        model=data.get("model") or model,
        refusal=str(refusal) if refusal else None,
        extras=_extras(message, EXTRA_MESSAGE_KEYS),
        extras_from=source or model,
    )


def cached_prompt_tokens(data: Mapping[str, Any]) -> int:
    """Prompt tokens served from the provider's cache (OpenAI ``prompt_tokens_details.cached_tokens``)."""
    details = (data.get("usage") or {}).get("prompt_tokens_details") or {}
    try:
        return int(details.get("cached_tokens") or 0)
    except (TypeError, ValueError):
        return 0


def tool_use_failed(error: Any, *, source: str) -> Completion | None:
    """Groq's 400 ``tool_use_failed`` (the model produced a call the provider could not accept) as
    the completion the model made, or None for any other error body.

    The body carries what the model generated (``failed_generation``): a call (or a list of
    calls) comes back as tool calls marked with ``ToolCall.error``, which the engine answers with
    the malformed-call correction; plain text comes back as text (the no-tool-call correction).
    """
    if isinstance(error, Mapping) and isinstance(error.get("error"), Mapping):
        error = error["error"]
    if not isinstance(error, Mapping) or error.get("code") != "tool_use_failed":
        return None
    generation = error.get("failed_generation")
    generation = generation if isinstance(generation, str) else json.dumps(generation) if generation is not None else ""
    problem = f"the provider rejected the call: {error.get('message') or 'tool_use_failed'}"
    try:
        parsed: Any = json.loads(generation)
    except json.JSONDecodeError:
        parsed = None
    items = parsed if isinstance(parsed, list) else [parsed] if isinstance(parsed, Mapping) else []
    calls: list[ToolCall] = []
    for item in items:
        if not isinstance(item, Mapping) or not item.get("name"):
            continue
        arguments = item.get("arguments", item.get("parameters", {}))
        calls.append(
            ToolCall(
                id=_new_call_id(),
                name=str(item["name"]),
                arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                error=problem,
            )
        )
    if calls:
        return Completion(tool_calls=calls, usage=Usage(calls=1), finish_reason="tool_calls", model=source)
    return Completion(text=generation, usage=Usage(calls=1), finish_reason="stop", model=source)


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


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
        timeout: float = DEFAULT_MODEL_TIMEOUT,
        retries: Mapping[str, Any] | None = None,
        capabilities: Capabilities | None = None,
        *,
        max_tokens: int | None = None,
        price: Mapping[str, Any] | None = None,
        announce: Announce | None = announce_on_stderr,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.name = model
        self.wire_model = wire_model_name(model)
        self.api_base = normalize_api_base(model, api_base) or DEFAULT_API_BASE
        self.where = shown_url(self.api_base)  # for messages: no password or query
        openai_proper = (urlsplit(self.api_base).hostname or "") == OPENAI_HOST
        # Only OpenAI proper gets the provider's own key variable; local servers need none.
        if api_key is None and openai_proper:
            api_key = os.environ.get("OPENAI_API_KEY")
        self.api_key = api_key
        self.timeout = float(timeout or DEFAULT_MODEL_TIMEOUT)
        self.retries = retry_settings(retries)
        self.capabilities = capabilities or default_capabilities(model, self.api_base)
        # Always sent: a server's own default may be tiny (or, for some, larger than the model allows).
        self.max_tokens = resolve_max_tokens(model, max_tokens)
        self.max_output_tokens = max_output_tokens(model)  # None when litellm's map does not know the model
        # OpenAI's reasoning models reject max_tokens; max_completion_tokens works for all of its models.
        self._max_tokens_field = "max_completion_tokens" if openai_proper else "max_tokens"
        self.price = resolve_price(model, dict(price) if price else None)
        self._announce = announce
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
            # A refused or unreachable host should fail fast; the answer may take the full timeout.
            timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))
            self._client = httpx.AsyncClient(timeout=timeout, headers=headers, transport=self._transport, verify=verify)
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and not self._client.is_closed:
            try:
                await self._client.aclose()
            except RuntimeError:  # opened on another, now closed loop
                pass
        self._client = None

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        return build_body(
            request, self.wire_model, self.capabilities,
            source=self.name, max_tokens=self.max_tokens, max_tokens_field=self._max_tokens_field,
        )

    def _finish(self, completion: Completion, data: Mapping[str, Any], body: Mapping[str, Any]) -> Completion:
        """What every reply gets, streamed or not: its price and the output limit it ran with."""
        if self.price is not None:
            usage = completion.usage
            usage.cost = self.price.cost(usage.prompt_tokens, usage.completion_tokens, cached_prompt_tokens(data))
        completion.max_tokens = body.get(self._max_tokens_field)
        return completion

    def _timeout(self, exc: httpx.TimeoutException) -> TransportError:
        connecting = isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout))
        limit = min(self.timeout, CONNECT_TIMEOUT) if connecting else self.timeout
        return timeout_error(self.name, self.api_base, limit, connecting=connecting)

    def _rejected(self, response: httpx.Response) -> Completion:
        """An HTTP error status: Groq's tool_use_failed is the model's broken call (a Completion),
        anything else a TransportError."""
        if response.status_code == 400:
            failed = tool_use_failed(_json_or_none(response), source=self.name)
            if failed is not None:
                return failed
        raise error_for_status(
            response.status_code,
            _error_detail(response),
            model=self.name,
            api_base=self.api_base,
            retry_after=parse_retry_after(response.headers),
        )

    async def complete(self, request: ChatRequest) -> Completion:
        check_request_allowed(self.name, self.api_base)
        body = self._body(request)
        url = endpoint_url(self.api_base)

        async def attempt() -> Completion:
            return await self._post(url, body)

        return await retry_per_settings(
            attempt, self.retries, sleep=self._sleep, describe=f"{self.name} at {self.where}", announce=self._announce
        )

    async def _post(self, url: str, body: dict[str, Any]) -> Completion:
        try:
            response = await self._http().post(url, json=body)
        except httpx.TimeoutException as exc:
            raise self._timeout(exc) from exc
        except httpx.TransportError as exc:  # connect errors, resets, protocol errors
            raise connection_error(self.name, self.api_base, str(exc) or type(exc).__name__) from exc
        if response.status_code >= 400:
            return self._rejected(response)
        data = self._json_of(response)
        return self._finish(parse_response(data, model=self.name, source=self.name), data, body)

    # --- streaming (server-sent events) ----------------------------------------------------------

    async def stream(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        """``complete``, streamed: display deltas to ``on_delta``; the same Completion at the end."""
        check_request_allowed(self.name, self.api_base)
        body = stream_body(self._body(request))
        url = endpoint_url(self.api_base)
        return await stream_with_retries(
            lambda assembler: self._post_stream(url, body, on_delta, assembler), on_delta, self.retries,
            sleep=self._sleep, describe=f"{self.name} at {self.where}", announce=self._announce,
        )

    async def _post_stream(
        self, url: str, body: dict[str, Any], on_delta: OnDelta, assembler: ChunkAssembler
    ) -> Completion:
        done = False
        try:
            async with self._http().stream("POST", url, json=body) as response:
                if response.status_code >= 400:
                    await response.aread()
                    failed = self._rejected(response)
                    replay(failed, on_delta)
                    return failed
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    # a server that ignores "stream": one JSON body, shown at once
                    await response.aread()
                    data = self._json_of(response)
                    completion = self._finish(parse_response(data, model=self.name, source=self.name), data, body)
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
                            f"{self.name} at {self.where}: a streamed chunk is not JSON: {data[:200]!r}",
                            retryable=False,
                            hint="the server does not look OpenAI-compatible; check api_base",
                        ) from exc
                    for delta in assembler.add(chunk):
                        on_delta(delta)
        except httpx.TimeoutException as exc:
            raise self._timeout(exc) from exc
        except httpx.TransportError as exc:  # connect errors, resets, a stream cut short
            raise connection_error(self.name, self.api_base, str(exc) or type(exc).__name__) from exc
        if not (done or assembler.finished):
            raise TransportError(
                f"{self.name} at {self.where}: the stream was cut short after {assembler.chunks} chunks",
                retryable=True,
                hint="check the server; it closed the stream before the reply was complete",
            )
        data = assembler.body(self.name)
        return self._finish(parse_response(data, model=self.name, source=self.name), data, body)

    def _json_of(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise TransportError(
                f"{self.name} at {self.where}: the response is not JSON: {response.text[:200]!r}",
                status=response.status_code,
                retryable=False,
                hint="the server does not look OpenAI-compatible; check api_base (it usually ends in /v1)",
            ) from exc
