"""The ChatModel interface and the message types every engine and model implementation share.

Messages follow the OpenAI chat shape (role, content, tool_calls, tool_call_id) because every
provider litellm speaks maps onto it; ``meta`` carries Vance's own annotations (for example
``{"kind": "correction"}``) and is never sent to a provider.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import AfterValidator, BaseModel, Field

from vance_cli.text import safe_text

Role = Literal["system", "user", "assistant", "tool"]

# Text that enters the history: a lone surrogate (a model's "\ud800", a non-UTF-8 file name in a
# tool result) becomes U+FFFD here, or the process could never be saved or sent again.
SafeStr = Annotated[str, AfterValidator(safe_text)]


class ToolCall(BaseModel):
    id: SafeStr
    name: SafeStr
    # Raw argument text as the model sent it; may be malformed JSON.
    arguments: SafeStr = "{}"
    # Provider fields of this call that must travel back with it (Gemini's OpenAI endpoint puts the
    # thought signature in ``extra_content``); see ``Message.extras``.
    extra: dict[str, Any] = Field(default_factory=dict)
    # Set when the provider itself rejected the call the model made (Groq's ``tool_use_failed``):
    # the engine answers it with the malformed-call correction instead of running it. Never sent.
    error: str | None = None

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a dict; raises ValueError when they are not a JSON object."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments are not valid JSON: {exc.msg} at char {exc.pos}") from exc
        if not isinstance(value, dict):
            raise ValueError("arguments must be a JSON object")
        return value


class Message(BaseModel):
    role: Role
    content: SafeStr | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    # Provider fields of an assistant turn that the provider wants back (DeepSeek's
    # ``reasoning_content``, Anthropic's ``thinking_blocks`` as litellm names them, Gemini's
    # ``extra_content``, OpenRouter's ``reasoning_details``), and the model that produced them:
    # they are only ever sent back to that model (see ``wire_messages``).
    extras: dict[str, Any] = Field(default_factory=dict)
    extras_from: str | None = None

    def is_empty(self) -> bool:
        """No text and no tool call: nothing a provider accepts as a turn."""
        return not (self.content or "").strip() and not self.tool_calls

    def to_openai(self, *, with_extras: bool = False) -> dict[str, Any]:
        """The wire form (OpenAI chat completions), without Vance's meta."""
        out: dict[str, Any] = {"role": self.role}
        if self.role == "assistant" and self.tool_calls:
            out["content"] = self.content or None
            out["tool_calls"] = []
            for c in self.tool_calls:
                call: dict[str, Any] = {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                if with_extras and c.extra:
                    call.update(c.extra)
                out["tool_calls"].append(call)
        else:
            out["content"] = self.content or ""
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
        if with_extras and self.role == "assistant":
            out.update({k: v for k, v in self.extras.items() if k not in out})
        return out


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


class ToolSpec(BaseModel):
    """What the model sees of a tool."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class Usage(BaseModel):
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> Usage:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost += other.cost
        return self


class ChatRequest(BaseModel):
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    # OpenAI-style response_format: {"type": "json_object"} or
    # {"type": "json_schema", "json_schema": {"name": ..., "schema": ..., "strict": bool}}
    response_format: dict[str, Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    temperature: float | None = None
    max_tokens: int | None = None


class Completion(BaseModel):
    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str | None = None
    model: str | None = None
    # The model declined to answer: OpenAI's ``refusal`` text, or a note when the provider's
    # content filter stopped the reply (``finish_reason`` "content_filter" with nothing in it).
    refusal: str | None = None
    # Provider fields to send back with this turn (see Message.extras); ``extras_from`` names
    # the ChatModel that produced them.
    extras: dict[str, Any] = Field(default_factory=dict)
    extras_from: str | None = None
    # The max_tokens the request ran with (so a truncated reply can be retried with more room).
    max_tokens: int | None = None

    @property
    def truncated(self) -> bool:
        """The reply stopped at the output limit (``finish_reason`` "length")."""
        return self.finish_reason == "length"

    def as_message(self) -> Message:
        return Message(
            role="assistant",
            content=self.text,
            tool_calls=list(self.tool_calls),
            extras=dict(self.extras),
            # A call's own extras (Gemini's signature on the call) count: they go back only with a source.
            extras_from=self.extras_from if self.extras or any(c.extra for c in self.tool_calls) else None,
        )


class Capabilities(BaseModel):
    """What a provider/model can do; the defaults are what litellm cannot tell us for local models."""

    family: Literal["openai", "anthropic", "gemini", "ollama", "other"] = "other"
    tools: bool = True
    json_schema: bool = True  # response_format json_schema accepted
    strict_json_schema: bool = False  # provider enforces the schema (OpenAI strict mode)
    json_object: bool = True
    parallel_tool_calls: bool = True


@runtime_checkable
class ChatModel(Protocol):
    """One async call: a request in, one completion out. Transport retries happen inside."""

    name: str
    capabilities: Capabilities

    async def complete(self, request: ChatRequest) -> Completion: ...
