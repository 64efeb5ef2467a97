"""What Ford reads out of a model's plain text (issue 18): tool calls written as text, and replies
that must never reach the person.

Small local models put their tool calls in the text when the server's parser misses them: Qwen's
``<tool_call>{...}</tool_call>``, ``<tools>{...}</tools>``, a fenced ```json block, or a bare JSON
object ``{"name": ..., "arguments": {...}}`` (also ``"parameters"``, arguments as a JSON string).
``recover_calls`` turns those into ToolCalls, only for the names the turn offered; the engine then
handles them exactly as native calls (arguments validated, respond rules, at-most-once effects).

``unusable`` says why a plain-text reply is not an answer: an echo of Vance's own correction
prompt, a tool call written out, a bare tool name. ``best_candidate`` picks what to deliver when
the correction budget is spent.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from vance_cli.messages import ToolCall

# Where the calls were found, for the journal.
TAGGED = re.compile(r"<(tool_call|tools|function_call)>\s*(.*?)\s*(?:</\1>|$)", re.DOTALL | re.IGNORECASE)
FENCED = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_MARKERS = re.compile(r"</?(tool_call|tools|function_call|tool_response)>", re.IGNORECASE)
_NAME_KEYS = ("name", "tool")
_ARG_KEYS = ("arguments", "parameters")


@dataclass(frozen=True)
class Recovered:
    """The calls found in a reply's text, the prose left around them, and where they were found."""

    calls: list[ToolCall]
    prose: str
    where: str  # "a <tool_call> block" (or <tools>), "a fenced JSON block", "a bare JSON object"


def _objects(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object in ``text``: (start, end, value)."""
    decoder = json.JSONDecoder()
    out: list[tuple[int, int, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        out.append((i, end, value))
        i = text.find("{", end)
    return out


def call_shape(value: Any) -> tuple[str, Any] | None:
    """(name, arguments) when ``value`` is a tool call written as JSON, whatever the name; else None.

    Accepted: ``{"name"|"tool": N, "arguments"|"parameters": A}``, ``{"name": N}`` alone, and the
    OpenAI form ``{"type": "function", "function": {...}}``; ``A`` an object or a JSON string."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict) and set(value) <= {"type", "function", "id"}:
        return call_shape(value["function"])
    names = [k for k in _NAME_KEYS if isinstance(value.get(k), str)]
    args = [k for k in _ARG_KEYS if k in value]
    if len(names) != 1 or len(args) > 1:
        return None
    rest = set(value) - {names[0], *args, "id", "type"}
    if rest:
        return None
    return value[names[0]].strip(), value[args[0]] if args else {}


def _arguments_text(arguments: Any) -> str:
    """The argument text of a recovered call: an object as JSON, a string as the model wrote it
    (so a malformed one is corrected like a native malformed call)."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
        return json.dumps(parsed, ensure_ascii=False) if isinstance(parsed, dict) else arguments
    return json.dumps(arguments, ensure_ascii=False)


def _new_id() -> str:
    return f"call_{secrets.token_hex(6)}"


def recover_calls(text: str, offered: Collection[str]) -> Recovered | None:
    """The well-formed tool calls in ``text`` that name an offered tool; None when there are none.

    Tagged blocks come first, then fenced blocks, then bare objects; the first kind that yields a
    call wins, so one call written twice (a fence inside a tag) is recovered once."""
    if not text or not offered:
        return None
    tags = list(TAGGED.finditer(text))
    for where, spans in (
        (f"a <{tags[0].group(1).lower()}> block" if tags else "", [(m.start(), m.end(), m.group(2)) for m in tags]),
        ("a fenced JSON block", [(m.start(), m.end(), m.group(1)) for m in FENCED.finditer(text)]),
        ("a bare JSON object", [(0, len(text), text)]),
    ):
        calls: list[ToolCall] = []
        cut: list[tuple[int, int]] = []
        for start, end, body in spans:
            found = []
            for o_start, o_end, value in _objects(body):
                shape = call_shape(value)
                if shape is not None and shape[0] in offered:
                    found.append((o_start, o_end, shape))
            if not found:
                continue
            for _, _, (name, arguments) in found:
                calls.append(ToolCall(id=_new_id(), name=name, arguments=_arguments_text(arguments)))
            if where == "a bare JSON object":
                cut.extend((s, e) for s, e, _ in found)
            else:
                cut.append((start, end))
        if calls:
            return Recovered(calls=calls, prose=_without(text, cut), where=where)
    return None


def _without(text: str, spans: Iterable[tuple[int, int]]) -> str:
    out, last = [], 0
    for start, end in sorted(spans):
        out.append(text[last:start])
        last = max(last, end)
    out.append(text[last:])
    return _MARKERS.sub("", "".join(out)).strip()


# --- replies that are not answers -------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def _pairs(text: str) -> list[tuple[str, str]]:
    """Consecutive word pairs: an echo repeats the correction's phrases, not only its words."""
    words = _WORD.findall(text.lower())
    return list(zip(words, words[1:], strict=False))


def echoes(text: str, corrections: Iterable[str]) -> bool:
    """True when ``text`` repeats a correction Vance sent (its "VALIDATION CHECK:" marker, its opening,
    or mostly its phrases: 60% of the reply's word pairs). Such a reply is neither an answer nor a
    source of tool calls to recover."""
    body = text.strip()
    lowered = " ".join(body.lower().split())
    texts = [c for c in corrections if c]
    # The correction's own marker as Vance writes it (upper case, a colon), or a reply that opens
    # with it: a reply that only talks about a validation check is an answer (issue 18 review).
    if "VALIDATION CHECK:" in body or lowered.startswith("validation check") or any(" ".join(c.lower().split())[:60] in lowered for c in texts):
        return True
    phrases = {p for c in texts for p in _pairs(c)}
    pairs = _pairs(body)
    return bool(phrases) and len(pairs) >= 4 and sum(p in phrases for p in pairs) >= 0.6 * len(pairs)


def unusable(text: str, corrections: Iterable[str], tool_names: Collection[str]) -> str | None:
    """Why the plain-text reply ``text`` must not be delivered as the person's message, or None.

    - an echo of a correction Vance sent (its "VALIDATION CHECK" line, its opening, or mostly its
      phrases: 60% of the reply's word pairs);
    - a tool call written out as text (a ``<tool_call>``/``<tools>`` marker, or a JSON object of
      the call shape, whatever tool it names: recovery already took the offered ones);
    - only a tool's name (``respond``).
    """
    body = text.strip()
    if not body:
        return "empty"
    if echoes(body, corrections):
        return "an echo of the correction prompt"
    if _MARKERS.search(body) or any(_written_call(v, tool_names) for _, _, v in _objects(body)):
        return "a tool call written as text"
    bare = body.strip("`'\".:!*() \n").lower()
    if bare in {n.lower() for n in tool_names} or bare in ("respond", "tool_call", "function_call"):
        return "only a tool name"
    return None


def _written_call(value: Any, tool_names: Collection[str]) -> bool:
    """A JSON object of the call shape: with arguments whatever it names, or naming a tool
    (``{"name": "Ann"}`` alone is data, not a call)."""
    shape = call_shape(value)
    if shape is None:
        return False
    inner = value.get("function") if isinstance(value.get("function"), dict) else value
    return any(k in inner for k in _ARG_KEYS) or shape[0] in tool_names or shape[0] == "respond"


def best_candidate(candidates: list[tuple[int, str, bool]], corrections: Iterable[str], tool_names: Collection[str]) -> tuple[int, str] | None:
    """The reply to deliver once the correction budget is spent: (history index, text), or None.

    ``candidates`` are the turn's plain-text replies in order, as (index, text, after the last tool
    result of the turn). Unusable ones (``unusable``) are never chosen. The first usable reply
    given with all of the turn's tool results is chosen (a small model's first answer is its real
    one; what it writes after corrections is often an apology or a paraphrase of the correction);
    failing that, the last usable one before them."""
    corrections = list(corrections)
    usable = [(i, t, late) for i, t, late in candidates if unusable(t, corrections, tool_names) is None]
    late = [(i, t) for i, t, is_late in usable if is_late]
    if late:
        return late[0]
    return (usable[-1][0], usable[-1][1]) if usable else None
