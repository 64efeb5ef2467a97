"""The ChatModel interface and the message types every engine and model implementation share.

Messages follow the OpenAI chat shape (role, content, tool_calls, tool_call_id) because every
provider litellm speaks maps onto it; ``meta`` carries Vance's own annotations (for example
``{"kind": "correction"}``) and is never sent to a provider.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import AfterValidator, BaseModel, Field

from vance_cli.sanitize import safe_text

Role = Literal["system", "user", "assistant", "tool"]

# Text that enters the history: a lone surrogate (a model's "\ud800", a non-UTF-8 file name in a
# tool result) becomes U+FFFD here, or the process could never be saved or sent again.
SafeStr = Annotated[str, AfterValidator(safe_text)]


class ToolCall(BaseModel):
    id: SafeStr
    name: SafeStr
    # Raw argument text as the model sent it; may be malformed JSON.
    arguments: SafeStr = "{}"

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

    def to_openai(self) -> dict[str, Any]:
        """The wire form (OpenAI chat completions), without Vance's meta."""
        out: dict[str, Any] = {"role": self.role}
        if self.role == "assistant" and self.tool_calls:
            out["content"] = self.content or None
            out["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        else:
            out["content"] = self.content or ""
        if self.role == "tool":
            out["tool_call_id"] = self.tool_call_id
            if self.name:
                out["name"] = self.name
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

    def as_message(self) -> Message:
        return Message(role="assistant", content=self.text, tool_calls=list(self.tool_calls))


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
