"""A ChatModel that speaks the OpenAI chat-completions wire format directly over httpx.

For ``openai/...`` models behind an ``api_base`` (OpenAI, Ollama's /v1, vLLM, llama.cpp server,
LM Studio): ``import litellm`` costs 7-9 s, which a one-shot CLI cannot pay, and these servers need
nothing litellm adds. ``complete`` posts and parses one response; ``stream`` reads server-sent
events (``llm/streaming.py`` folds them back into the same response). Transport retries via
``retry.with_transport_retries``. The body and the reply are the wire format of ``llm/wire.py``,
which the litellm transport shares.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from vance_cli.errors import TransportError
from vance_cli.llm.base import ChatRequest, Completion, OnDelta, replay
from vance_cli.llm.capabilities import OPENAI_HOST
from vance_cli.llm.guard import check_request_allowed
from vance_cli.llm.profile import ModelProfile
from vance_cli.llm.retry import (
    Announce,
    announce_on_stderr,
    connection_error,
    error_for_status,
    parse_retry_after,
    retry_per_settings,
    timeout_error,
)
from vance_cli.llm.streaming import ChunkAssembler, sse_data, stream_with_retries
from vance_cli.llm.wire import WireModel, build_body, cached_prompt_tokens, parse_response, stream_body, tool_use_failed

DEFAULT_API_BASE = "https://api.openai.com/v1"
# The local family whose calls are always streamed, with prompt progress (llama-server's
# return_progress): progress a slow CPU can show before its first token.
PROGRESS_FAMILY = "llama-server"
# Seconds to open a connection (the answer itself may take model.timeout).
CONNECT_TIMEOUT = 10.0


def _no_display(delta: Any) -> None:
    """The deltas of a call streamed only to watch its progress: nobody shows them."""


def endpoint_url(api_base: str, path: str = "/chat/completions") -> str:
    """``path`` appended to the path of ``api_base``, before any query string (Azure's ``?api-version=``)."""
    parts = urlsplit(api_base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + path))


def wire_model_name(model: str) -> str:
    """The model name the server expects: litellm's "openai/" routing prefix removed."""
    return model.removeprefix("openai/")


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


class OpenAICompatModel(WireModel):
    """ChatModel over ``POST {api_base}/chat/completions``."""

    def __init__(
        self,
        profile: ModelProfile,
        *,
        announce: Announce | None = announce_on_stderr,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(profile, announce=announce, sleep=sleep)
        self.wire_model = wire_model_name(self.name)
        self.api_base = self.api_base or DEFAULT_API_BASE
        openai_proper = (urlsplit(self.api_base).hostname or "") == OPENAI_HOST
        # Only OpenAI proper gets the provider's own key variable; local servers need none.
        if self.api_key is None and openai_proper:
            self.api_key = os.environ.get("OPENAI_API_KEY")
        # OpenAI's reasoning models reject max_tokens; max_completion_tokens works for all of its models.
        self._max_tokens_field = "max_completion_tokens" if openai_proper else "max_tokens"
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
            temperature=self._temperature(request),
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
        if self.profile.capabilities.family == PROGRESS_FAMILY:
            # llama-server on a slow CPU may work for minutes on one reply: streamed (with its
            # prompt-progress chunks), every chunk is progress, so a working server is never cut
            # off by max_total, while one that sends nothing still ends within it (issue 18).
            # Not llama-cpp-python's server: its stream carries no usage (token counts would be 0).
            return await self.stream(request, _no_display)
        check_request_allowed(self.name, self.api_base)
        body = self._body(request)
        url = endpoint_url(self.api_base)

        async def attempt() -> Completion:
            return await self._post(url, body)

        return await retry_per_settings(
            attempt, self.retries, sleep=self._sleep, describe=self._describe(), announce=self._announce, gate=self.gate,
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
        if self.profile.capabilities.family == PROGRESS_FAMILY:
            body["return_progress"] = True  # prompt-progress chunks while it reads the prompt
        url = endpoint_url(self.api_base)
        return await stream_with_retries(
            lambda assembler: self._post_stream(url, body, on_delta, assembler), on_delta, self.retries,
            sleep=self._sleep, describe=self._describe(), announce=self._announce, gate=self.gate,
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
                            f"{self._describe()}: a streamed chunk is not JSON: {data[:200]!r}",
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
                f"{self._describe()}: the stream was cut short after {assembler.chunks} chunks",
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
                f"{self._describe()}: the response is not JSON: {response.text[:200]!r}",
                status=response.status_code,
                retryable=False,
                hint="the server does not look OpenAI-compatible; check api_base (it usually ends in /v1)",
            ) from exc
