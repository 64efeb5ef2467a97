"""The ChatModel interface and what a call takes and gives: ChatRequest, Completion, ToolSpec.

The messages themselves (Message, ToolCall, Usage) live on the bottom floor in
vance_cli/messages.py, because the store saves them and the store is below llm/.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from vance_cli.messages import Message, ToolCall, Usage


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


class ChatRequest(BaseModel):
    messages: list[Message]
    tools: list[ToolSpec] = Field(default_factory=list)
    # OpenAI-style response_format: {"type": "json_object"} or
    # {"type": "json_schema", "json_schema": {"name": ..., "schema": ..., "strict": bool}}
    response_format: dict[str, Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    # None: the model's temperature for ``purpose`` (ModelProfile.temperatures); a number wins.
    temperature: float | None = None
    max_tokens: int | None = None
    # The call type (names.CALL_TYPES: chat, worker, controller, structure, summary): it picks the
    # temperature; never sent. None: "chat".
    purpose: Literal["chat", "worker", "controller", "structure", "summary"] | None = None
    # The wire form of ``messages`` as the context check built it, for the body of the same call
    # (llm/wire.py request_wire): (the messages list it was built from, the model, the dicts).
    _wire: tuple[list[Message], str, list[dict[str, Any]]] | None = PrivateAttr(default=None)


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

    # "llama-server": llama.cpp's own server (json_schema becomes a grammar: constrained decoding);
    # "llama-cpp-python": its Python server (rejects json_schema with HTTP 500, takes json_object).
    family: Literal["openai", "anthropic", "gemini", "ollama", "llama-server", "llama-cpp-python", "other"] = "other"
    tools: bool = True
    json_schema: bool = True  # response_format json_schema accepted
    strict_json_schema: bool = False  # provider enforces the schema (OpenAI strict mode)
    json_object: bool = True
    parallel_tool_calls: bool = True
    # How a turn asks for tool calls: "native" (the tools parameter), "schema" (one JSON object
    # that must be one of the offered calls, under response_format), "auto" (the engine decides;
    # the local llama.cpp families).
    tool_mode: Literal["native", "schema", "auto"] = "native"
    # A small model: recipes with a `compact:` section send their compact prompt and tool set.
    # On by default for the local llama.cpp families (llm/capabilities.py).
    compact_prompt: bool = False
    # The model takes a sampling temperature (OpenAI's reasoning models accept only their default).
    temperature: bool = True


@dataclass(frozen=True)
class StreamDelta:
    """One piece of a reply as it arrives (for display only; nothing an engine decides comes from it).

    ``text`` is free text to append; ``tool_index`` with ``tool_name`` (first piece of a call) and
    ``arguments`` (argument text to append) is a tool call growing. ``restart`` says a transport
    retry starts the reply over: drop what was received so far.
    """

    text: str = ""
    tool_index: int | None = None
    tool_name: str | None = None
    arguments: str = ""
    restart: bool = False


OnDelta = Callable[[StreamDelta], None]


def replay(completion: Completion, on_delta: OnDelta) -> None:
    """A finished completion as deltas (for models that cannot stream)."""
    if completion.text:
        on_delta(StreamDelta(text=completion.text))
    for index, call in enumerate(completion.tool_calls):
        on_delta(StreamDelta(tool_index=index, tool_name=call.name, arguments=call.arguments))


class ChatModel(ABC):
    """One async call: a request in, one completion out. Transport retries happen inside.

    Everything the engines use of a model is declared here, so no call site has to probe for it:
    ``complete``; ``stream`` (the same Completion, with display deltas while it arrives); ``aclose``
    (what the model holds open); ``prepare`` (slow set-up, before the first call); and the output
    limits a reply cut off at ``max_tokens`` is asked again within.
    """

    name: str
    capabilities: Capabilities
    # The output limit a request runs with when it sets none, and the most the model can give
    # (litellm's model map); None where nothing says (scripted models, models the map does not know).
    max_tokens: int | None = None
    max_output_tokens: int | None = None
    # Tokens of context (prompt and reply) the model has: llm/profile.py decides it for network
    # models (configured, a local server's /v1/models or /props, litellm's map); None: unknown.
    context_window: int | None = None

    @abstractmethod
    async def complete(self, request: ChatRequest) -> Completion: ...

    async def stream(self, request: ChatRequest, on_delta: OnDelta) -> Completion:
        """``complete``, with display deltas sent to ``on_delta`` while the reply arrives.

        A model that cannot stream (scripted and function models) answers with ``complete`` and
        replays the result as deltas, so a display behaves the same over every model.
        """
        completion = await self.complete(request)
        replay(completion, on_delta)
        return completion

    # Not abstract: most models hold nothing open and need no set-up (B027 is about forgetting that).
    async def aclose(self) -> None:  # noqa: B027
        """Close what the model holds open (HTTP connections); nothing by default."""

    async def prepare(self) -> None:  # noqa: B027
        """Do slow set-up (a heavy import) without blocking the event loop; nothing by default."""
