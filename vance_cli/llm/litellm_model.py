"""A ChatModel over litellm: every provider litellm speaks (Anthropic, Gemini, Ollama, OpenAI, ...).

litellm is imported lazily (``_litellm()``): the import costs seconds, and without
LITELLM_LOCAL_MODEL_COST_MAP it also fetches a price list from the internet. Its own retries are
off (``num_retries=0``): transport retries are ours (``retry.py``), so the budget is one thing.
This is the only module that imports litellm; its exceptions are translated here.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import functools
import json
import logging
import os
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

from vance_cli.errors import ModelError
from vance_cli.llm.base import ChatRequest, Completion, OnDelta, replay
from vance_cli.llm.endpoints import credential_names, foreign_base
from vance_cli.llm.guard import check_request_allowed
from vance_cli.llm.retry import (
    connection_error,
    error_for_status,
    parse_retry_after,
    retry_per_settings,
    timeout_error,
)
from vance_cli.llm.streaming import ChunkAssembler, stream_with_retries
from vance_cli.llm.wire import WireModel, build_body, cached_prompt_tokens, parse_response, stream_body, tool_use_failed
from vance_cli.text import shorten

# OpenAI-compatible servers need no key, but the OpenAI SDK under litellm refuses to start without
# one (and litellm reports that as a retryable HTTP 500).
_PLACEHOLDER_KEY = "sk-no-key-needed"

_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm")


# The environment variables hidden from the litellm call running in this context (None: none).
_HIDDEN: contextvars.ContextVar[frozenset[str] | None] = contextvars.ContextVar("vance_hidden_environ", default=None)


@functools.cache
def _scoped_environ_class() -> type:
    """The class ``credential_scope`` gives ``os.environ`` (made on first use: nothing reads
    the environment when this module is imported; tests/cli/test_helpers.py)."""

    class _CallScopedEnviron(type(os.environ)):  # type: ignore[misc]  # os._Environ
        """``os.environ`` minus the names hidden for the call in the current context (``credential_scope``).

        litellm reads a provider's credentials from the environment wherever the call goes (the token
        of watsonx/, the organization of openai/, ...), through os.environ / os.getenv in the call and
        in the threads it starts for it (with the call's context copied). Outside a scope, and in every
        other task or thread, the environment is unchanged; nothing is written.

        Its limits: it is Python's mapping only (``os.environb``, and a child process started inside
        the scope with the default environment, still see every variable; litellm starts none on the
        paths Vance uses), and ``pop`` / ``del`` of a hidden name inside the scope change nothing."""

        def __getitem__(self, key: str) -> str:
            hidden = _HIDDEN.get()
            if hidden and key in hidden:
                raise KeyError(key)
            return super().__getitem__(key)

        def __iter__(self):  # type: ignore[no-untyped-def]
            hidden = _HIDDEN.get()
            for key in super().__iter__():
                if not hidden or key not in hidden:
                    yield key

        def __len__(self) -> int:
            return sum(1 for _ in self)

        def setdefault(self, key: str, value: str) -> str:
            hidden = _HIDDEN.get()
            if hidden and key in hidden:  # neither shown nor overwritten
                return value
            return super().setdefault(key, value)

    return _CallScopedEnviron


@contextlib.contextmanager
def credential_scope(model: str, api_base: str | None) -> Iterator[None]:
    """For a call to a base that is not the provider's own host (``foreign_base``), hide the
    credential variables of the environment (``endpoints.credential_names``) from litellm for the
    call: only the key the person configured for that base goes there (the API key's placeholder
    in ``_kwargs`` is the same rule for the one credential litellm takes as an argument)."""
    if not foreign_base(model, api_base):
        yield
        return
    scoped = _scoped_environ_class()
    if type(os.environ) is not scoped:
        os.environ.__class__ = scoped  # the same object, so every reference sees the scope
    token = _HIDDEN.set(credential_names(os.environ))
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def _litellm() -> Any:
    """Import and quieten litellm (once; later calls are a dict lookup)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    litellm.set_verbose = False
    litellm.drop_params = True
    if hasattr(litellm, "telemetry"):
        litellm.telemetry = False
    # ERROR, not WARNING: litellm warns on stderr about its own internals (e.g. "LoggingWorker: event
    # loop changed" whenever a second asyncio.run() uses it), which is noise for Vance's users.
    for name in _LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    # litellm's response types warn on stderr when a server sends tool arguments as an object
    # (which parse_response accepts); the warning names pydantic internals, not a user problem.
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
    return litellm


def _error_body(exc: BaseException) -> Any:
    """The provider's error body of a litellm exception: ``body`` when the OpenAI SDK parsed it, else
    the JSON object litellm quotes in its message ("GroqException - {...}")."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        return body
    text = str(getattr(exc, "message", None) or exc)
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        return None
    return value


def _headers_of(exc: BaseException) -> Mapping[str, str] | None:
    headers = getattr(exc, "litellm_response_headers", None)
    if headers:
        return headers
    response = getattr(exc, "response", None)
    return getattr(response, "headers", None)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _is_connect_timeout(exc: BaseException) -> bool:
    import httpx

    return any(isinstance(item, (httpx.ConnectTimeout, httpx.PoolTimeout)) for item in _chain(exc))


def _is_timeout(exc: BaseException) -> bool:
    import httpx

    litellm = _litellm()
    for item in _chain(exc):
        if isinstance(item, (litellm.Timeout, httpx.TimeoutException, asyncio.TimeoutError)):
            return True
        if type(item).__name__ in ("APITimeoutError", "Timeout"):
            return True
    return False


# The sentence litellm (litellm_core_utils/bug_report.py) adds to an error it thinks is its own bug.
_LITELLM_BUG_NOTICE = "This looks like a bug in LiteLLM"


def _litellm_own_failure(exc: BaseException) -> bool:
    """litellm's catch-all wraps an exception of its own request mapping (raised before anything
    is sent, e.g. on a response schema it cannot unpack) as an APIConnectionError with status 500
    and its bug-report notice: not the network and not the server, so never retried as either."""
    import httpx

    chain = _chain(exc)
    if any(isinstance(item, (httpx.HTTPError, ConnectionError)) for item in chain):
        return False
    return any(type(item).__name__ == "APIConnectionError" and _LITELLM_BUG_NOTICE in str(item) for item in chain)


def _is_connection_error(exc: BaseException) -> bool:
    import httpx

    for item in _chain(exc):
        if isinstance(item, (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError, ConnectionError)):
            return True
        if type(item).__name__ == "APIConnectionError":
            return True
    # litellm reports a refused connection to an OpenAI-compatible server as HTTP 500 "Connection error."
    return "Connection error" in str(exc)


def _clean_message(exc: BaseException) -> str:
    text = getattr(exc, "message", None) or str(exc)
    # "litellm.BadRequestError: OpenAIException - fake error 400" -> "fake error 400"
    for marker in ("Exception - ", "Error: "):
        if marker in text:
            text = text.split(marker)[-1]
    return text.strip()


def translate_exception(exc: BaseException, *, model: str, api_base: str | None, timeout: float) -> ModelError:
    """A litellm (or openai/httpx) exception as a Vance TransportError / ModelError."""
    if _is_timeout(exc):
        return timeout_error(model, api_base, timeout, connecting=_is_connect_timeout(exc))
    detail = _clean_message(exc)
    if _litellm_own_failure(exc):
        return ModelError(
            f"{model}: litellm failed before sending the request: {shorten(detail, 300)}",
            hint="set VANCE_DEBUG=1 for the traceback; a different transport or model may avoid it",
        )
    lowered = detail.lower()
    if "missing credentials" in lowered or "api_key client option must be set" in lowered:
        return error_for_status(401, detail, model=model, api_base=api_base)
    if "LLM Provider NOT provided" in str(exc) or "llm provider not provided" in lowered:
        return ModelError(
            f"litellm does not know the provider of {model!r}",
            hint=(
                "use a litellm model string with a provider prefix, e.g. openai/<name> (with VANCE_API_BASE for "
                "OpenAI-compatible servers), anthropic/claude-..., gemini/gemini-..., ollama/<name>"
            ),
        )
    status = getattr(exc, "status_code", None)
    if _is_connection_error(exc) and status in (None, 500):
        return connection_error(model, api_base, detail)
    if isinstance(status, int) and status >= 400:
        return error_for_status(status, detail, model=model, api_base=api_base, retry_after=parse_retry_after(_headers_of(exc)))
    return ModelError(f"{model}: litellm failed: {type(exc).__name__}: {detail}", hint="set VANCE_DEBUG=1 for the traceback")


def _fill_from(completion: Completion, assembled: Completion) -> None:
    """What litellm's stream_chunk_builder drops (a refusal, provider extras), taken from the chunks."""
    completion.refusal = completion.refusal or assembled.refusal
    for key, value in assembled.extras.items():
        completion.extras.setdefault(key, value)
    if completion.extras:
        completion.extras_from = assembled.extras_from
    if len(completion.tool_calls) == len(assembled.tool_calls):
        for call, seen in zip(completion.tool_calls, assembled.tool_calls, strict=True):
            call.extra = call.extra or seen.extra


class LiteLLMModel(WireModel):
    """ChatModel calling ``litellm.acompletion`` (non-streaming)."""

    def _kwargs(self, request: ChatRequest) -> dict[str, Any]:
        # The same fields as the direct transport's body; litellm maps them per provider.
        kwargs = build_body(request, self.name, self.capabilities, source=self.name, max_tokens=self.max_tokens,
                            temperature=self._temperature(request))
        kwargs.update(timeout=self.timeout, num_retries=0)
        if "response_format" in kwargs:
            # litellm may rewrite a response schema in place for its provider; the plan's copy is
            # shared by every call for the same schema (json_call.planned).
            kwargs["response_format"] = copy.deepcopy(kwargs["response_format"])
        if self.api_base:
            kwargs["api_base"] = self.api_base
        api_key = self.api_key
        # No key configured for a base that is not the provider's own host: litellm would read the
        # provider's key from the environment (OPENAI_API_KEY, ...) and send it there. A placeholder
        # goes instead (local servers accept any key; a server that needs one gets VANCE_API_KEY).
        foreign = foreign_base(self.name, self.api_base)
        if api_key is None and (
            foreign or (self.api_base and self.name.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"))
        ):
            api_key = _PLACEHOLDER_KEY
            if foreign:
                # The placeholder is the whole authorization: a provider that would otherwise build
                # its own from elsewhere (watsonx/ exchanges a key for a token at IBM's IAM) sends it
                # to the base as it is. The environment's credentials are hidden (credential_scope).
                kwargs["extra_headers"] = {"Authorization": f"Bearer {_PLACEHOLDER_KEY}"}
        if api_key is not None:
            kwargs["api_key"] = api_key
        return kwargs

    async def complete(self, request: ChatRequest) -> Completion:
        check_request_allowed(self.name, self.api_base)
        litellm = _litellm()
        kwargs = self._kwargs(request)

        async def attempt() -> Completion:
            try:
                with credential_scope(self.name, self.api_base):
                    response = await litellm.acompletion(**kwargs)
            except Exception as exc:
                broken = self._broken_call(exc)
                if broken is not None:
                    return broken
                raise translate_exception(exc, model=self.name, api_base=self.api_base, timeout=self.timeout) from exc
            return self._to_completion(litellm, response, kwargs)

        return await retry_per_settings(
            attempt, self.retries, sleep=self._sleep, describe=self._describe(), announce=self._announce, gate=self.gate,
        )

    def _broken_call(self, exc: BaseException) -> Completion | None:
        """Groq's 400 tool_use_failed as the model's broken call (no error); None for real errors."""
        if getattr(exc, "status_code", None) != 400:
            return None
        return tool_use_failed(_error_body(exc), source=self.name)

    def _to_completion(self, litellm: Any, response: Any, kwargs: Mapping[str, Any]) -> Completion:
        # warnings=False: litellm's response types complain (UserWarning) when a server sends
        # arguments as an object; parse_response copes with that.
        data = response.model_dump(warnings=False) if hasattr(response, "model_dump") else dict(response)
        completion = parse_response(data, model=self.name, source=self.name)
        completion.max_tokens = kwargs.get("max_tokens")
        usage = completion.usage
        # A configured price wins; otherwise litellm's own cost calculation (same model map, its rules).
        if self.profile.price_configured and self.price is not None:
            usage.cost = self.price.cost(usage.prompt_tokens, usage.completion_tokens, cached_prompt_tokens(data))
            return completion
        try:
            usage.cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # noqa: BLE001 - unknown (local) models have no price: cost 0
            usage.cost = 0.0
        return completion

    async def aclose(self) -> None:
        """Nothing to close: litellm owns its HTTP clients."""

    async def prepare(self) -> None:
        """Import litellm (seconds) in a thread: a full-screen app calls this after its first paint."""
        await asyncio.to_thread(_litellm)

    # --- streaming (stream=True) -----------------------------------------------------------------

    async def stream(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        """``complete``, streamed: display deltas to ``on_delta``; the same Completion at the end.

        The chunks go back through ``litellm.stream_chunk_builder`` (which also sums the usage) and
        then ``_to_completion``, so tool calls, usage and cost come out as from ``complete``.
        """
        check_request_allowed(self.name, self.api_base)
        litellm = _litellm()
        kwargs = stream_body(self._kwargs(request))

        async def once(assembler: ChunkAssembler) -> Completion:
            chunks: list[Any] = []
            try:
                with credential_scope(self.name, self.api_base):
                    response = await litellm.acompletion(**kwargs)
                    async for chunk in response:
                        chunks.append(chunk)
                        data = chunk.model_dump(warnings=False) if hasattr(chunk, "model_dump") else dict(chunk)
                        for delta in assembler.add(data):
                            on_delta(delta)
            except ModelError:
                raise
            except Exception as exc:
                broken = self._broken_call(exc)
                if broken is not None:
                    replay(broken, on_delta)
                    return broken
                raise translate_exception(exc, model=self.name, api_base=self.api_base, timeout=self.timeout) from exc
            built = litellm.stream_chunk_builder(chunks, messages=kwargs["messages"]) if chunks else None
            if built is None:
                # nothing to build from: the assembler's body says "empty reply", as complete would
                return parse_response(assembler.body(self.name), model=self.name, source=self.name)
            completion = self._to_completion(litellm, built, kwargs)
            _fill_from(completion, parse_response(assembler.body(self.name), model=self.name, source=self.name))
            return completion

        return await stream_with_retries(once, on_delta, self.retries, sleep=self._sleep,
                                         describe=self._describe(), announce=self._announce, gate=self.gate)

