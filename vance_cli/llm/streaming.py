"""Streaming model calls: the deltas a display shows while the model writes, and the same Completion.

A streamed call ends in exactly the Completion the non-streaming call would have produced: the
chunks are folded back into a chat-completions response body (``ChunkAssembler.body``) and that
body goes through the one response parser (``wire.parse_response``). The deltas are for
display only; nothing an engine decides comes from them.

Engines call ``ChatModel.stream`` (llm/base.py): the transports stream for real; scripted and
function models answer with ``complete`` and replay the result as deltas (``base.replay``), so a
display behaves the same over every model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from vance_cli.errors import ModelError
from vance_cli.llm.base import Completion, OnDelta, StreamDelta
from vance_cli.llm.retry import retry_per_settings
from vance_cli.llm.wire import EXTRA_CALL_KEYS, EXTRA_MESSAGE_KEYS

RESTART = StreamDelta(restart=True)


class ChunkAssembler:
    """Folds OpenAI-style ``chat.completion.chunk`` dicts into one response body.

    ``add(chunk)`` returns the display deltas of that chunk; ``body()`` is the whole response as
    the non-streaming endpoint would have sent it (content, tool calls by index, finish reason,
    usage, model).
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._refusal: list[str] = []
        # Provider fields the reply must carry back (wire.EXTRA_MESSAGE_KEYS): text pieces are
        # joined, lists extended, objects merged.
        self._extras: dict[str, Any] = {}
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self.chunks = 0

    def add(self, chunk: Mapping[str, Any]) -> list[StreamDelta]:
        self.chunks += 1
        error = chunk.get("error")
        if error:
            detail = error.get("message") if isinstance(error, Mapping) else str(error)
            raise ModelError(f"the stream reported an error: {detail}", hint="try again; if it persists, check the server")
        if chunk.get("model"):
            self._model = chunk["model"]
        if chunk.get("usage"):
            self._usage = dict(chunk["usage"])
        deltas: list[StreamDelta] = []
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, Mapping) or (choice.get("index") or 0) != 0:
                continue
            if choice.get("finish_reason"):
                self._finish = choice["finish_reason"]
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(p.get("text") or "" for p in content if isinstance(p, Mapping))
            if content:
                self._text.append(content)
                deltas.append(StreamDelta(text=content))
            if isinstance(delta.get("refusal"), str):
                self._refusal.append(delta["refusal"])
            _merge_extras(self._extras, delta, EXTRA_MESSAGE_KEYS)
            raw_calls = list(delta.get("tool_calls") or [])
            if not raw_calls and isinstance(delta.get("function_call"), Mapping):
                raw_calls = [{"index": 0, "function": delta["function_call"]}]
            for position, raw in enumerate(raw_calls):
                if isinstance(raw, Mapping):
                    deltas.append(self._add_call(raw, position))
        return deltas

    def _add_call(self, raw: Mapping[str, Any], position: int) -> StreamDelta:
        index = raw.get("index")
        index = position if not isinstance(index, int) else index
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": [], "extra": {}})
        if raw.get("id"):
            call["id"] = raw["id"]
        _merge_extras(call["extra"], raw, EXTRA_CALL_KEYS)
        function = raw.get("function") or {}
        name = function.get("name") or None
        if name and not call["name"]:
            call["name"] = name
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # a server that sends the whole object at once
        if arguments:
            call["arguments"].append(arguments)
        return StreamDelta(tool_index=index, tool_name=name, arguments=arguments or "")

    @property
    def finished(self) -> bool:
        """A finish reason arrived (a stream cut short has none)."""
        return self._finish is not None

    def body(self, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._text) or None}
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        message.update(self._extras)
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"]) or "{}"},
                    **call["extra"],
                }
                for _, call in sorted(self._calls.items())
            ]
        return {
            "model": self._model or model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
            "usage": self._usage or {},
        }


def _merge_extras(into: dict[str, Any], delta: Mapping[str, Any], keys: tuple[str, ...]) -> None:
    """Fold the provider fields of one delta (also from litellm's provider_specific_fields) into ``into``."""
    nested = delta.get("provider_specific_fields")
    sources = [delta, nested] if isinstance(nested, Mapping) else [delta]
    for source in sources:
        for key in keys:
            value = source.get(key)
            if value in (None, "", [], {}):
                continue
            have = into.get(key)
            if isinstance(value, (str, list)) and type(have) is type(value):
                into[key] = have + value  # text pieces joined, lists extended
            elif isinstance(value, Mapping) and isinstance(have, Mapping):
                into[key] = {**have, **value}
            else:
                into[key] = value


async def stream_with_retries(
    once: Callable[[ChunkAssembler], Awaitable[Completion]],
    on_delta: OnDelta,
    retries: Mapping[str, float],
    **retry_options: Any,
) -> Completion:
    """Run one streamed call, ``once(assembler)``, with the transport retries of ``retries``.

    Each attempt gets a fresh assembler; a retry first sends RESTART, so the display drops what the
    failed attempt showed. A stream that has sent a chunk (a token, or llama-server's
    prompt-progress chunk while it reads the prompt) is never cut by max_total: it is working, and
    the read timeout (model.timeout between two lines) watches for a stalled one. One that has sent
    no chunk when the budget is spent is cut, so a hung server still ends within max_total; SSE
    comments (": ping", which llama-cpp-python's server sends even while its model is stuck) are
    not progress.
    ``retry_options`` go to ``retry_per_settings`` (sleep, describe, announce).
    """
    attempts = 0
    assembler = ChunkAssembler()

    async def attempt() -> Completion:
        nonlocal attempts, assembler
        attempts += 1
        if attempts > 1:
            on_delta(RESTART)
        assembler = ChunkAssembler()
        return await once(assembler)

    return await retry_per_settings(attempt, retries, cut_attempts=lambda: assembler.chunks == 0, **retry_options)


def sse_data(line: str) -> str | None:
    """The payload of one server-sent-events line (``data: ...``); None for other lines."""
    if not line.startswith("data:"):
        return None  # comments (": keep-alive"), event names, blank separators
    return line[5:].strip()
