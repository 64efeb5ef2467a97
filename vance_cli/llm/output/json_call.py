"""call_for_json: one JSON value from a model, validated locally, with reason-feedback retries.

The content-stage loop of the structure tool (spec structure-tool §4), shared with Benjy's
controller calls: single-shot with a response schema, no tools. Each iteration

1. sends the conversation with the provider-side form of the schema (per capability family, see
   ``vance_cli.llm.output.plan``),
2. parses the reply, unwraps the envelope, detects ``_need`` (when allowed) *before* validation,
3. strips the nulls strict mode forced on absent optional fields,
4. validates against the caller's exact schema (Draft 2020-12, formats asserted).

A failed validation appends the previous output as an assistant message and the §4.1 reason as a
user message, then loops; after ``max_loops`` iterations the result is ``stale`` with the last
errors. When the provider rejects the structured format (HTTP 400 naming response_format/schema)
or answers with non-JSON, the request steps down json_schema → json_object → schema in the prompt,
and each step is recorded in ``format_fallbacks``. A provider's rejection (also an HTTP 500 that
names the request shape, llama-cpp-python's answer to json_schema) is remembered for the model for
the rest of the process (``_FORMAT_STEPS``): the next call starts at the format that was taken. Transport retries happen inside the model; they
are a separate budget and never count as iterations.

Three replies are not format failures and never step down:

- an empty reply gets the not-JSON correction, and is never sent back (``wire_messages`` drops it;
  Gemini and Anthropic reject an empty assistant turn);
- a reply cut off at the output limit (``finish_reason`` "length") is asked again with twice the
  room (up to the model's limit and what its context window leaves, ``MAX_LENGTH_RETRIES`` times;
  each retry is a line in ``notes``; never for a reply that repeats itself: llm/room.py), and only
  when no more room can be had is it corrected like a bad reply;
- a refusal ends the call with status ``refused`` and the refusal text.

This module knows nothing about registries or schema names beyond ``name``; the structure service
and Benjy both call it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, Field

from vance_cli.errors import ModelError, ModelRequestsForbidden, TransportError
from vance_cli.llm.base import Capabilities, ChatModel, ChatRequest
from vance_cli.llm.room import more_room_for
from vance_cli.messages import Message, Usage
from vance_cli.text import shorten

Status = Literal["ok", "need-more-input", "stale", "refused"]

# Retries of a reply cut off at the output limit, each with twice the room (not counted as iterations).
MAX_LENGTH_RETRIES = 2
TRUNCATED_TEXT = (
    "The previous output was cut off at the output limit before it was complete. Reply with the "
    "complete JSON value only, as compactly as you can: no prose, no Markdown code fences."
)

_FORMAT_WORDS = re.compile(r"response_format|json_schema|json_object|schema|structured output|strict", re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.DOTALL)

NEED_RULE = (
    "If — and only if — the input does not contain enough information for a required field, "
    'output {"_need": "<short description of what\'s missing>"} and nothing else. '
    "Do not invent values to satisfy the schema."
)
NEED_RULE_ENVELOPE = (
    "If — and only if — the input does not contain enough information for a required field, "
    'reply {"result": null, "_need": "<short description of what\'s missing>"} instead. '
    "Do not invent values to satisfy the schema."
)


class JsonCallResult(BaseModel):
    """What one call_for_json produced, with everything needed to explain the cost."""

    status: Status
    data: Any = None
    need: str | None = None
    refusal: str | None = None  # status "refused": the model's refusal, as it said it
    errors: list[str] = Field(default_factory=list)
    iterations: int = 0
    usage: Usage = Field(default_factory=Usage)
    schema_downgrades: list[str] = Field(default_factory=list)
    format_fallbacks: list[str] = Field(default_factory=list)
    output_mode: str = ""  # "json_schema:strict" | "json_schema" | "json_object" | "prompt" (last used)
    notes: list[str] = Field(default_factory=list)  # what was retried and why (e.g. a truncated reply)
    messages: list[Message] = Field(default_factory=list)  # the transcript, ending with the last reply


def format_rejected(exc: Exception) -> bool:
    """A definitive "this provider does not accept that response format" answer (not a transient)."""
    if isinstance(exc, ModelRequestsForbidden):
        return False
    if isinstance(exc, TransportError):
        # 400/422, or a 5xx the transport found to be a rejected request shape (not retryable:
        # llama-cpp-python's server answers json_schema with HTTP 500, retry.rejected_request_shape)
        status = exc.status or 0
        return (status in (400, 422) or status >= 500) and not exc.retryable and bool(_FORMAT_WORDS.search(exc.message))
    if isinstance(exc, ModelError):  # e.g. litellm's UnsupportedParamsError, translated at the edge
        return "response_format" in exc.message
    return False


# The format a provider rejected, remembered for the process: model name and api_base -> the mode
# the next call starts at. A rejection is the server's answer to the request shape (it does not
# change between calls), so a later call_for_json to the same model does not ask again what was
# refused; a reply that was not JSON is the model's doing and is not remembered.
_FORMAT_STEPS: dict[tuple[str, str | None], str] = {}


def _format_key(model: ChatModel) -> tuple[str, str | None]:
    return (model.name, getattr(model, "api_base", None))


def remembered_format(model: ChatModel) -> str | None:
    """The response format a provider's rejection stepped this model down to, in this process."""
    return _FORMAT_STEPS.get(_format_key(model))


def forget_formats() -> None:
    """Forget every remembered step (tests)."""
    _FORMAT_STEPS.clear()


# The provider plan and the validator of the last schemas asked for, by the schema object itself
# (a batch asks for the same schema thousands of times: issue 20). An entry holds the schema and
# the capabilities it was made for and is used only while the caller passes those same objects,
# so a schema built anew (or changed in place, which no caller does) is planned anew.
_PLANS: dict[tuple[Any, ...], tuple[Any, Any, Any]] = {}
_VALIDATORS: dict[int, tuple[Any, Any]] = {}
_MEMO_SIZE = 16


def _memo_put(memo: dict, key: Any, entry: Any) -> None:
    if len(memo) >= _MEMO_SIZE:
        memo.pop(next(iter(memo)))
    memo[key] = entry


def planned(schema: Any, caps: Capabilities, mode: str, **options: Any) -> Any:
    """``plan.build_plan`` for ``schema`` under ``caps``, worked out once per schema object."""
    from vance_cli.llm.output import plan as ps

    key = (id(schema), id(caps), mode, *sorted(options.items()))
    entry = _PLANS.get(key)
    if entry is not None and entry[0] is schema and entry[1] is caps:
        return entry[2]
    made = ps.build_plan(schema, caps, mode=mode, **options)
    _memo_put(_PLANS, key, (schema, caps, made))
    return made


def validator_for(schema: Any) -> Any:
    """``reasons.make_validator(schema)``, made once per schema object."""
    from vance_cli.schema.reasons import make_validator

    entry = _VALIDATORS.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    made = make_validator(schema)
    _memo_put(_VALIDATORS, id(schema), (schema, made))
    return made


def parse_reply(text: str) -> tuple[Any, str | None]:
    """The JSON value of a reply, tolerating code fences and prose around one object.

    Returns (value, None) or (None, problem in words).
    """
    body = text.strip()
    if not body:
        return None, "the reply was empty"
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        return json.loads(body), None
    except json.JSONDecodeError as exc:
        problem = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        try:
            return json.loads(body[start : end + 1]), None
        except json.JSONDecodeError:
            pass
    return None, problem


def _declares(schema: Any, key: str) -> bool:
    return isinstance(schema, dict) and isinstance(schema.get("properties"), dict) and key in schema["properties"]


def _unwrap(value: Any, *, envelope: bool, allow_need: bool, schema: Any) -> tuple[Any, str | None]:
    """(data, need) from a parsed reply. Tolerant: a bare target where an envelope was asked is fine."""
    if not isinstance(value, dict):
        return value, None
    need = value.get("_need")
    if allow_need and isinstance(need, str) and need.strip() and not _declares(schema, "_need"):
        return None, need.strip()
    keys = set(value)
    if "result" in value and keys <= {"result", "_need"} and (envelope or not _declares(schema, "result")):
        return value["result"], None
    if "_need" in value and not _declares(schema, "_need") and (need is None or need == ""):
        value = {k: v for k, v in value.items() if k != "_need"}
    return value, None


def _instructions(plan: Any, schema: Any, allow_need: bool) -> str:
    lines: list[str] = []
    if plan.mode == "json_schema":
        if plan.envelope:
            tail = ', "_need": null}' if allow_need else "}"
            lines.append(
                'Reply with one JSON object of the form {"result": <the value the response schema describes>'
                + tail
                + "."
            )
        else:
            lines.append("Reply with one JSON object that conforms to the response schema.")
        if plan.nulls_injected:
            lines.append("Use null for an optional field the input does not give.")
        if allow_need:
            lines.append(NEED_RULE_ENVELOPE if plan.envelope else NEED_RULE)
    else:
        shape = (
            'a JSON object {"result": <value>}, where the value conforms to'
            if plan.envelope
            else "a JSON object that conforms to"
        )
        lines.append(
            f"Reply with only {shape} this JSON Schema (no prose, no Markdown code fences):\n"
            + json.dumps(schema, ensure_ascii=False)
        )
        if allow_need:
            lines.append(NEED_RULE)
    return "\n".join(lines)


def _split_system(messages: list[Message]) -> tuple[list[Message], list[Message]]:
    head = 0
    while head < len(messages) and messages[head].role == "system":
        head += 1
    return list(messages[:head]), list(messages[head:])


async def call_for_json(
    model: ChatModel,
    *,
    messages: list[Message],
    schema: dict[str, Any] | bool,
    capabilities: Capabilities | None = None,
    max_loops: int = 3,
    allow_need: bool = False,
    require_strict: bool = True,
    name: str = "output",
    extra_check: Callable[[Any], list[str]] | None = None,
    temperature: float | None = None,
    purpose: Literal["structure", "controller"] = "structure",
) -> JsonCallResult:
    """Ask ``model`` for one JSON value matching ``schema``; see the module docstring.

    ``extra_check(data)`` may add error lines after schema validation passed (the schema builder
    uses it to insist on a valid Draft 2020-12 schema); they are fed back like schema errors.
    ``purpose`` is the call type that picks the model's temperature (Benjy's stages: "controller");
    ``temperature`` overrides it. Raises ModelError/TransportError when the model call itself fails
    for good.
    """
    from vance_cli.llm.output import plan as ps
    from vance_cli.schema.reasons import (
        error_lines,
        not_json_text,
        reason_text,
    )

    caps = capabilities or model.capabilities
    validator = validator_for(schema)
    chain = ps.format_chain(caps)
    level = 0
    remembered = remembered_format(model)
    if remembered in chain:
        level = chain.index(remembered)  # a rejection earlier in this process (_FORMAT_STEPS)

    def plan_for(level: int) -> ps.ProviderPlan:
        return planned(schema, caps, chain[level], allow_need=allow_need, require_strict=require_strict, name=name)

    plan = plan_for(level)
    system, turns = _split_system(messages)
    usage = Usage()
    fallbacks: list[str] = []
    iterations = 0
    last_errors: list[str] = []
    loops = max(1, int(max_loops))

    def transcript() -> list[Message]:
        return (
            system
            + [Message(role="system", content=_instructions(plan, schema, allow_need), meta={"kind": "format"})]
            + turns
        )

    def step_down(why: str) -> bool:
        nonlocal level, plan
        if level + 1 >= len(chain):
            return False
        fallbacks.append(f"{plan.label} → {chain[level + 1]}: {why}")
        level += 1
        plan = plan_for(level)
        return True

    def result(status: Status, **kw: Any) -> JsonCallResult:
        return JsonCallResult(
            status=status,
            iterations=iterations,
            usage=usage,
            schema_downgrades=list(plan.downgrades),
            format_fallbacks=fallbacks,
            output_mode=plan.label,
            messages=transcript(),
            notes=notes,
            **kw,
        )

    notes: list[str] = []
    max_tokens: int | None = None  # None: the model's own default
    length_retries = 0
    while iterations < loops:
        request = ChatRequest(
            messages=transcript(), response_format=plan.response_format, temperature=temperature, max_tokens=max_tokens,
            purpose=purpose,
        )
        try:
            completion = await model.complete(request)
        except ModelError as exc:
            if format_rejected(exc):
                usage.calls += 1
                reason = shorten(exc.message, 160)
                if step_down(f"rejected by the provider ({reason})"):
                    _FORMAT_STEPS[_format_key(model)] = chain[level]
                    continue
            raise
        spent = completion.usage.model_copy()
        spent.calls = spent.calls or 1
        usage.add(spent)

        if completion.refusal:
            iterations += 1
            turns.append(Message(role="assistant", content=completion.refusal, meta={"kind": "refusal"}))
            return result("refused", refusal=completion.refusal)

        text = completion.text or ""
        if not text.strip() and completion.tool_calls:
            # Some adapters answer a forced JSON tool (litellm's json_tool_call) instead of content.
            text = completion.tool_calls[0].arguments or ""
        value, problem = parse_reply(text)

        room = completion.max_tokens or max_tokens or model.max_tokens
        no_room = ""
        if problem is not None and completion.truncated and length_retries < MAX_LENGTH_RETRIES:
            grown = more_room_for(completion, room, output_limit=model.max_output_tokens,
                                  context_window=model.context_window)
            bigger, no_room = grown.tokens, grown.reason
            if bigger is not None:
                # Truncation, not a format problem: the same request again with more room.
                length_retries += 1
                notes.append(
                    f"the reply was cut off at the output limit (finish_reason length, max_tokens "
                    f"{room if room else 'not set'}); asked again with max_tokens {bigger}"
                )
                max_tokens = bigger
                continue
        iterations += 1

        reply = completion.as_message()
        reply.content, reply.tool_calls = text, []
        if not text.strip():
            reply.meta = {"kind": "empty"}  # kept in the transcript, never sent (wire_messages)
        turns.append(reply)

        if problem is not None and completion.truncated:
            limit = f" (max_tokens {room})" if room else ""
            last_errors = [f"(root): the output was cut off at the output limit{limit} before it was complete"]
            notes.append(f"the reply was cut off at the output limit{limit}; {no_room or 'no more room is available'}")
            turns.append(Message(role="user", content=TRUNCATED_TEXT, meta={"kind": "correction"}))
            continue
        if problem is not None:
            last_errors = [f"(root): output is not valid JSON ({problem})"]
            if text.strip():
                step_down("the reply was not JSON")
            turns.append(
                Message(
                    role="user",
                    content=not_json_text(f"output is not valid JSON ({problem})"),
                    meta={"kind": "correction"},
                )
            )
            continue

        data, need = _unwrap(value, envelope=plan.envelope, allow_need=allow_need, schema=schema)
        if need is not None:
            return result("need-more-input", need=need)
        if plan.nulls_injected:
            data = ps.strip_injected_nulls(data, schema, validator)
        errors = error_lines(schema, data, validator)
        if not errors and extra_check is not None:
            errors = list(extra_check(data))
        if not errors:
            return result("ok", data=data)
        last_errors = errors
        turns.append(Message(role="user", content=reason_text(errors), meta={"kind": "correction"}))

    # The last correction was never sent; drop it so the transcript ends with the last reply.
    if turns and turns[-1].meta.get("kind") == "correction":
        turns.pop()
    return result("stale", errors=last_errors)
