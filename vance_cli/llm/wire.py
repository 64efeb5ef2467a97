"""The OpenAI chat-completions wire format, and the one constructor of the models that speak it.

Both transports speak it: ``openai_compat`` posts the body over httpx, ``litellm_model`` hands the
same fields to litellm (which maps them per provider) and reads litellm's reply, which has the same
shape, back through the same parser. What a request body holds (``build_body``, ``wire_messages``),
how a reply reads back (``parse_response``, ``tool_use_failed``, ``cached_prompt_tokens``) and how a
transport is set up from its ModelProfile (``WireModel``) is written here once.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from vance_cli.errors import ModelError
from vance_cli.llm.base import Capabilities, ChatModel, ChatRequest, Completion
from vance_cli.text import shown_url
from vance_cli.llm.profile import ModelProfile
from vance_cli.llm.retry import Announce, SlowDown, announce_on_stderr
from vance_cli.messages import Message, ToolCall, Usage

# Assistant-message fields a provider wants back on the next request of a tool loop (see
# wire_messages), and the same for one tool call; litellm moves unknown ones into
# ``provider_specific_fields``.
EXTRA_MESSAGE_KEYS = ("reasoning_content", "thinking_blocks", "reasoning_details", "extra_content")
EXTRA_CALL_KEYS = ("extra_content",)

# A tool result with no text: Anthropic and Gemini reject empty text parts, and the model should
# know the tool ran and said nothing.
EMPTY_TOOL_RESULT = "(the tool returned no output)"


def wire_messages(messages: list[Message], model: str) -> list[dict[str, Any]]:
    """The messages as sent to ``model``: the one place that decides what reaches a provider.

    - An assistant turn with neither text nor a tool call is never sent: Gemini answers 400
      "empty text parameter", Anthropic 400 "text content blocks must be non-empty" (and litellm
      would otherwise put placeholder text in the model's mouth). The correction that follows it
      says what happened.
    - A system message with no text is never sent (a recipe without a prompt): Gemini gets it as
      an empty text part of ``system_instruction``, and it tells any model nothing.
    - A tool result with no text is sent as ``EMPTY_TOOL_RESULT``.
    - Provider extras of the assistant turns since the last user message (the open tool loop) go
      back to the model that produced them, which is what DeepSeek (``reasoning_content``),
      Anthropic (thinking blocks before a tool_use) and Gemini (thought signatures) require;
      older turns and other models never get them.
    """
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.is_empty():
            continue
        if message.role == "system" and not (message.content or "").strip():
            continue
        with_extras = index > last_user and message.extras_from == model
        wire = message.to_openai(with_extras=with_extras)
        if message.role == "tool" and not (message.content or "").strip():
            wire["content"] = EMPTY_TOOL_RESULT
        out.append(wire)
    return out


def request_wire(request: ChatRequest, model: str, *, keep: bool = False) -> list[dict[str, Any]]:
    """``wire_messages`` of ``request`` for ``model``, built once for the context check and the body.

    The context check (llm/context.py) builds them with ``keep=True``; the body of the same call
    takes them (and drops them: a retry builds its own, the transport may change what it sends).
    A long chat sends every message, so building them twice per call doubled that cost.
    """
    kept = request._wire
    if kept is not None and kept[0] is request.messages and kept[1] == model:
        out = kept[2]
    else:
        out = wire_messages(request.messages, model)
    request._wire = (request.messages, model, out) if keep else None
    return out


CONTENT_FILTER_REFUSAL = "The provider's content filter stopped the reply (finish_reason content_filter)."


def build_body(
    request: ChatRequest,
    model: str,
    capabilities: Capabilities,
    *,
    source: str | None = None,
    max_tokens: int | None = None,
    max_tokens_field: str = "max_tokens",
    temperature: float | None = None,
) -> dict[str, Any]:
    """The chat-completions request body for ``request`` (only the fields that are set).

    ``source`` is the ChatModel's name (whose provider extras may go back, see ``wire_messages``);
    ``max_tokens`` the model's default output limit, used when the request sets none, and sent as
    ``max_tokens_field`` (OpenAI's own API wants ``max_completion_tokens``); ``temperature`` the
    model's for the request's call type (``ModelProfile.temperature_for``), used when the request
    sets none. A model without ``Capabilities.temperature`` gets none.
    """
    body: dict[str, Any] = {"model": model, "messages": request_wire(request, source or model)}
    if request.tools:
        body["tools"] = [t.to_openai() for t in request.tools]
        if request.tool_choice is not None:
            body["tool_choice"] = request.tool_choice
        # Servers that do not know the parameter may reject it, and OpenAI rejects it without tools.
        if request.parallel_tool_calls is not None and capabilities.parallel_tool_calls:
            body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.response_format is not None:
        body["response_format"] = request.response_format
    heat = request.temperature if request.temperature is not None else temperature
    if heat is not None and capabilities.temperature:
        body["temperature"] = heat
    limit = request.max_tokens or max_tokens
    if limit:
        body[max_tokens_field] = int(limit)
    return body


def stream_body(body: dict[str, Any]) -> dict[str, Any]:
    """A request body (``build_body``) asking for server-sent events with a final usage chunk."""
    return {**body, "stream": True, "stream_options": {"include_usage": True}}


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


class WireModel(ChatModel):
    """A ChatModel that speaks the wire format to a provider: the one constructor both transports share.

    Everything it knows about the model comes from its ModelProfile (llm/profile.py), worked out
    once; a transport adds only what is its own (the direct one: a default api_base, the key
    variable of OpenAI proper, the HTTP client).
    """

    def __init__(
        self,
        profile: ModelProfile,
        *,
        announce: Announce | None = announce_on_stderr,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._profile = profile
        self.name = profile.name
        self.api_base = profile.api_base
        self.api_key = profile.api_key
        self.timeout = profile.timeout
        self.retries = dict(profile.retries)
        self.max_tokens = profile.max_tokens
        self.max_output_tokens = profile.max_output_tokens
        self.price = profile.price
        self._announce = announce
        self._sleep = sleep
        # One slow-down for all calls of this client: a batch's N calls in flight share it (retry.SlowDown).
        self.gate = SlowDown()

    @property
    def profile(self) -> ModelProfile:
        """The profile, with what a local server says about itself asked on first use
        (``profile.detected``: once per process, a short timeout, never for a command that calls
        no model, since nothing reads this before it prepares a call)."""
        if self._profile.detect_server:
            from vance_cli.llm.profile import detected

            self._profile = detected(self._profile)
        return self._profile

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        return self.profile.capabilities

    @property
    def context_window(self) -> int | None:
        """Tokens of context for prompt and reply (ModelProfile.context_window); None: unknown."""
        return self.profile.context_window

    def _temperature(self, request: ChatRequest) -> float | None:
        """The temperature of the request's call type (``ModelProfile.temperature_for``)."""
        return self.profile.temperature_for(request.purpose)

    def _describe(self) -> str:
        """The model and where it is, for retry lines and errors (no password or query shown)."""
        return f"{self.name} at {shown_url(self.api_base) or 'the provider'}"
