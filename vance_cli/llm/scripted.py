"""Scripted and function models: deterministic ChatModels for tests, recipe authors and the demo.

``ScriptedModel`` answers from a queue of replies and records a deep copy of every request;
``FunctionModel`` answers with ``fn(request)``. Neither does HTTP, so the model-request guard does
not apply. A reply is a ``Completion``, a ``str`` (a text reply), a dict (the script-file form)::

    {"text": "...", "tool_calls": [{"name": "respond", "arguments": {"message": "hi"}, "id": "call_7"}],
     "finish_reason": "tool_calls", "usage": {"prompt_tokens": 3, "completion_tokens": 2},
     "refusal": null}

or (ScriptedModel only) a callable ``fn(request)`` returning one of those. Tool call ids default
to ``call_1``, ``call_2``, ... (one counter per model). Every reply counts as one call in usage.

Script files (``scripted:PATH`` model strings) are YAML or JSON: a list of replies, or
``{"replies": [...], "capabilities": {...}}``.
"""

from __future__ import annotations

import inspect
import json
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vance_cli.errors import ConfigError, ModelError
from vance_cli.llm.base import Capabilities, ChatModel, ChatRequest, Completion
from vance_cli.messages import ToolCall, Usage


class ToolCallReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] | list[Any] | str = Field(default_factory=dict)
    id: str | None = None


class UsageReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


class Reply(BaseModel):
    """The dict form of one scripted reply."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ToolCallReply] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: UsageReply | None = None
    refusal: str | None = None  # the model declines (OpenAI's refusal field)


class ScriptFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    replies: list[Any]
    capabilities: Capabilities | None = None
    # Tokens of context, to test what does not fit (llm/context.py); None: not checked.
    context_window: int | None = Field(default=None, ge=1)

    @field_validator("capabilities", mode="before")
    @classmethod
    def _known_capabilities(cls, value: Any) -> Any:
        if isinstance(value, dict):
            unknown = sorted(set(value) - set(Capabilities.model_fields))
            if unknown:
                raise ValueError(f"unknown capability {', '.join(unknown)} (known: {', '.join(Capabilities.model_fields)})")
        return value


class Script(list):
    """The replies of a script file, plus the file's capabilities and path (ScriptedModel reads both)."""

    def __init__(
        self,
        replies: Iterable[Any],
        capabilities: Capabilities | None = None,
        source: str | None = None,
        context_window: int | None = None,
    ):
        super().__init__(replies)
        self.context_window = context_window
        self.capabilities = capabilities
        self.source = source


class _IdCounter:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"call_{self.n}"


def _coerce(reply: Any, *, name: str, new_id: Callable[[], str]) -> Completion:
    """Any reply form as a fresh Completion (usage.calls at least 1, model = ``name``)."""
    if isinstance(reply, Completion):
        completion = reply.model_copy(deep=True)
        completion.tool_calls = [c if c.id else c.model_copy(update={"id": new_id()}) for c in completion.tool_calls]
    elif isinstance(reply, str):
        completion = Completion(text=reply, finish_reason="stop")
    elif isinstance(reply, (dict, Reply)):
        try:
            spec = reply if isinstance(reply, Reply) else Reply.model_validate(reply)
        except ValidationError as exc:
            raise ModelError(
                f"{name}: bad scripted reply {reply!r}: {_first_error(exc)}",
                hint="a reply is a string or {text, tool_calls: [{name, arguments, id?}], finish_reason, usage, refusal}",
            ) from exc
        calls = [
            ToolCall(
                id=c.id or new_id(),
                name=c.name,
                arguments=c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
            )
            for c in spec.tool_calls
        ]
        usage = Usage(**spec.usage.model_dump()) if spec.usage else Usage()
        completion = Completion(
            text=spec.text,
            tool_calls=calls,
            usage=usage,
            finish_reason=spec.finish_reason or ("tool_calls" if calls else "stop"),
            refusal=spec.refusal,
        )
    else:
        raise ModelError(
            f"{name}: a scripted reply must be a Completion, str or dict, not {type(reply).__name__}",
            hint="check what the script or reply function returns",
        )
    completion.usage.calls = max(completion.usage.calls, 1)
    completion.model = completion.model or name
    return completion


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    return f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))


async def _resolve(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class ScriptedModel(ChatModel):
    """Answers each ``complete()`` with the next reply of its queue; records every request."""

    def __init__(
        self,
        replies: Iterable[Completion | str | dict | Callable[[ChatRequest], Any]] = (),
        name: str = "scripted",
        capabilities: Capabilities | None = None,
        context_window: int | None = None,
    ) -> None:
        self.name = name
        self.source: str | None = getattr(replies, "source", None)
        self.context_window = context_window or getattr(replies, "context_window", None)
        file_caps = getattr(replies, "capabilities", None)
        self.capabilities = capabilities or file_caps or Capabilities()
        self._queue: deque[Any] = deque(replies)
        self._new_id = _IdCounter()
        self.requests: list[ChatRequest] = []

    def enqueue(self, *replies: Completion | str | dict | Callable[[ChatRequest], Any]) -> None:
        self._queue.extend(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request.model_copy(deep=True))
        if not self._queue:
            used = len(self.requests) - 1
            where = f" ({self.source})" if self.source else ""
            raise ModelError(
                f"scripted model{where} ran out of replies after {used} calls",
                hint="add replies to the script, or check why the engine made more model calls than expected",
            )
        reply = self._queue.popleft()
        if callable(reply) and not isinstance(reply, (Completion, str, dict)):
            reply = await _resolve(reply(request))
        return _coerce(reply, name=self.name, new_id=self._new_id)


class FunctionModel(ChatModel):
    """Answers each ``complete()`` with ``fn(request)`` (sync or async); records every request."""

    def __init__(
        self,
        fn: Callable[[ChatRequest], Any],
        name: str = "function",
        capabilities: Capabilities | None = None,
    ) -> None:
        self.fn = fn
        self.name = name
        self.capabilities = capabilities or Capabilities()
        self._new_id = _IdCounter()
        self.requests: list[ChatRequest] = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    async def complete(self, request: ChatRequest) -> Completion:
        self.requests.append(request.model_copy(deep=True))
        reply = await _resolve(self.fn(request))
        return _coerce(reply, name=self.name, new_id=self._new_id)


def load_script(path: str | Path) -> Script:
    """The replies of a YAML or JSON script file; ConfigError naming the file and the problem."""
    file = Path(path).expanduser()
    hint = 'a script is a list of replies, or {replies: [...], capabilities: {...}}; a reply is a string or {text, tool_calls: [{name, arguments}]}'
    try:
        raw_text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"scripted model: script file {file} not found", hint="check the path after 'scripted:'") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"scripted model: script file {file} is not UTF-8 text (byte {exc.start})", hint="save it as UTF-8") from exc
    except OSError as exc:
        raise ConfigError(f"scripted model: cannot read script file {file}: {exc}", hint="check the path after 'scripted:'") from exc
    try:
        if file.suffix.lower() == ".json":
            data = json.loads(raw_text)
        else:
            import yaml  # only scripts need it; keeps model-layer imports light

            data = yaml.safe_load(raw_text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"script file {file}: invalid JSON at line {exc.lineno}: {exc.msg}", hint=hint) from exc
    except RecursionError as exc:
        raise ConfigError(f"script file {file}: nested too deeply", hint=hint) from exc
    except Exception as exc:  # yaml.YAMLError: line and column are in its text
        raise ConfigError(f"script file {file}: invalid YAML: {' '.join(str(exc).split())}", hint=hint) from exc
    if isinstance(data, list):
        data = {"replies": data}
    if not isinstance(data, dict):
        raise ConfigError(f"script file {file}: expected a list of replies or a mapping, got {type(data).__name__}", hint=hint)
    try:
        script = ScriptFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"script file {file}: {_first_error(exc)}", hint=hint) from exc
    if not script.replies:
        raise ConfigError(f"script file {file}: no replies", hint=hint)
    replies: list[str | Reply] = []
    for number, item in enumerate(script.replies, start=1):
        if isinstance(item, str):
            replies.append(item)
            continue
        if not isinstance(item, dict):
            raise ConfigError(f"script file {file}: reply {number} must be a string or a mapping, got {item!r}", hint=hint)
        try:
            replies.append(Reply.model_validate(item))
        except ValidationError as exc:
            raise ConfigError(f"script file {file}: reply {number}: {_first_error(exc)}", hint=hint) from exc
    return Script(replies, capabilities=script.capabilities, source=str(file), context_window=script.context_window)
