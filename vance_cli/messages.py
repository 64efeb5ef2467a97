"""The messages of a conversation, as a process file keeps them and a model is sent them.

Messages follow the OpenAI chat shape (role, content, tool_calls, tool_call_id) because every
provider litellm speaks maps onto it; ``meta`` carries Vance's own annotations (for example
``{"kind": "correction"}``) and is never sent to a provider.

Data only, on the bottom floor: the store saves them (store/process.py, store/transcript.py), the
models send and build them (llm/), the engines append them; none of those is imported here.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

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
